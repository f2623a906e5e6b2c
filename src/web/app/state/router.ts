// Client-side routes: the path is the state (a reload or a shared link opens the same screen); the service answers
// index.html for each of them (src/web/serve.ts).
import { signal } from '@preact/signals';

export const route = signal(location.pathname + location.search);

export function navigate(to: string, replace = false): void {
  if (to === route.value) return;
  if (replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  route.value = to;
  window.scrollTo(0, 0);
}

window.addEventListener('popstate', () => {
  route.value = location.pathname + location.search;
});

/** Same-origin link clicks move inside the app without a page load (modifier keys keep the browser's meaning). */
document.addEventListener('click', (event) => {
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  const link = (event.target as Element).closest?.('a[href]') as HTMLAnchorElement | null;
  if (!link || link.target || link.hasAttribute('download') || link.origin !== location.origin || link.dataset.external !== undefined) return;
  if (/^\/(api|documentation|wallboard|static)(\/|$)/.test(link.pathname)) return;
  event.preventDefault();
  navigate(link.pathname + link.search);
});

export function pathOf(value: string): string {
  return value.split('?')[0];
}

export function queryOf(value: string): URLSearchParams {
  return new URLSearchParams(value.split('?')[1] ?? '');
}
