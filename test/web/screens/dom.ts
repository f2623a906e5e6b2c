// The fast screen tier's browser: a happy-dom window whose globals (document, navigator, localStorage, the element
// classes…) are set on Node's global before any screen module is loaded. Import it first: i18n and the API client
// read the document and the location when they load.
import { Window } from 'happy-dom';
import { Fragment, h } from 'preact';

export const window = new Window({
  url: 'http://127.0.0.1:8080/',
  width: 1280,
  height: 800,
  settings: { disableJavaScriptFileLoading: true, disableCSSFileLoading: true, navigator: { userAgent: 'EMS fast screen tier' } },
});
window.document.documentElement.dataset.siteTimezone = 'Europe/Berlin';
window.document.documentElement.dataset.siteCurrency = 'EUR';

const global = globalThis as unknown as Record<string, unknown>;
const source = window as unknown as Record<string, unknown>;
// Node's own fetch, URL, timers, streams and events stay; everything else the window has that Node lacks is the page's.
const names = new Set<string>([...Object.getOwnPropertyNames(window), ...Object.getOwnPropertyNames(Object.getPrototypeOf(window))]);
for (const name of names) {
  if (name in global || name === 'constructor' || name.startsWith('_')) continue;
  global[name] = source[name];
}
for (const name of ['window', 'self', 'document', 'navigator', 'location', 'localStorage', 'sessionStorage', 'Event', 'CustomEvent']) {
  Object.defineProperty(globalThis, name, { value: source[name], configurable: true, writable: true });
}

// tsx compiles the app's .tsx with the root tsconfig, which leaves src/web/app to the app's own (Vite: the automatic
// preact runtime); its classic transform calls React.createElement, which preact's h answers the same way.
(globalThis as unknown as { React: unknown }).React = { createElement: h, Fragment };
