// The one app frame (issue 57 item 2, components/AppFrame.tsx) in the fast screen tier: the site's app and the fleet's
// both render it — the same skip link, header, navigation (each built from its own screen registry, for the person's
// role), tools and main landmark — and neither app's source declares a header, a navigation or a main of its own.
import './dom.ts';
import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { h, render } from 'preact';
import { App } from '../../../src/web/app/App.tsx';
import type { User } from '../../../src/web/app/api/types.ts';
import { FleetApp } from '../../../src/web/app/fleet/FleetApp.tsx';
import { fleetReady, fleetUser } from '../../../src/web/app/fleet/session.ts';
import type { FleetUser } from '../../../src/web/app/fleet/types.ts';
import { loadLanguage } from '../../../src/web/app/i18n/index.ts';
import { liveState } from '../../../src/web/app/state/live.ts';
import { navigate } from '../../../src/web/app/state/router.ts';
import { ready, user } from '../../../src/web/app/state/session.ts';
import { $, $$, text, waitFor } from './screen.ts';

const APP = path.resolve(import.meta.dirname, '../../../src/web/app');
let root: HTMLElement | null = null;

/** Unmounts the app rendered last. */
function close(): void {
  if (root) render(null, root);
  root?.remove();
  root = null;
}

afterEach(() => {
  close();
  user.value = null;
  fleetUser.value = null;
  liveState.value = 'off';
  navigate('/', true);
});

function person(role: User['role']): User {
  return { id: 1, username: `${role}-one`, email: `${role}@example.test`, role, displayName: null, mustChangePassword: false } as User;
}

/** The app at this path, as this person (null: signed out), in a page of its own. */
async function open(app: 'site' | 'fleet', at: string, as: User['role'] | FleetUser['role'] | null): Promise<HTMLElement> {
  await loadLanguage('en');
  navigate(at, true);
  if (app === 'site') {
    ready.value = true;
    user.value = as && person(as);
    // The live stream counts as open: the frame's badge shows, and no stream is opened towards a service that is not there.
    if (as) liveState.value = 'live';
  } else {
    fleetReady.value = true;
    fleetUser.value = as && { name: 'Dana Fleet', role: as as FleetUser['role'], sites: null };
  }
  root = document.createElement('div');
  document.body.append(root);
  render(h(app === 'site' ? App : FleetApp, {}), root);
  await waitFor(() => root?.querySelector('main#main h1'), `the ${app} app's main heading`);
  return root;
}

/**
 * The frame's outline: each element of the header and the landmarks as tag.class#id at its depth, without text, main's
 * content or the number of links. The site's own tool (the live badge) is left out, and the person's name is `.who`:
 * a link to the account on the site, plain text at the fleet (which has no account screen).
 */
function outline(page: HTMLElement): string[] {
  const seen = new Set<string>();
  const walk = (element: Element, depth: number): void => {
    if (element.classList.contains('live-badge')) return;
    const id = element.id ? `#${element.id}` : '';
    const classes = [...element.classList].map((c) => `.${c}`).join('');
    const tag = element.classList.contains('who') ? '' : element.tagName.toLowerCase();
    seen.add(`${'  '.repeat(depth)}${tag}${classes}${id}`);
    if (element.tagName !== 'MAIN') for (const child of element.children) walk(child, depth + 1);
  };
  for (const child of page.children) walk(child, 0);
  return [...seen];
}

const links = (page: HTMLElement) => $$('nav#nav a', page).map(text);
const current = (page: HTMLElement) => $$('nav#nav a[aria-current="page"]', page).map(text);

test('the site and the fleet render the same frame: skip link, header with brand, menu, navigation and tools, main', async () => {
  const box = await open('site', '/nowhere', 'admin');
  const site = outline(box);
  assert.equal(text($('a.skip', box)), 'Skip to content');
  assert.equal($('a.skip', box).getAttribute('href'), '#main');
  assert.equal($('nav#nav', box).getAttribute('aria-label'), 'Main');
  assert.equal($('a.who', box).getAttribute('href'), '/account');
  assert.equal(text($('main#main h1', box)), 'Page not found');
  await waitFor(() => document.title === 'Page not found · EMS', "the site's document title");
  assert.equal($('[data-field="siteName"]', box).textContent, 'EMS');
  assert.deepEqual(links(box), [
    'Overview',
    'Energy',
    'Analysis',
    'Alerts',
    'Faults',
    'Maintenance',
    'Reports',
    'Exports',
    'Billing',
    'Site settings',
    'Admin',
  ]);
  close();

  const fleet = await open('fleet', '/nowhere', 'admin');
  assert.deepEqual(outline(fleet), site, "the fleet app renders the site app's frame, element for element");
  assert.equal(text($('a.skip', fleet)), 'Skip to content');
  assert.equal($('nav#nav', fleet).getAttribute('aria-label'), 'Main');
  assert.deepEqual(links(fleet), ['Fleet health', 'EUI ranking', 'Alerts across sites', 'Administration']);
  assert.equal(text($('.who', fleet)), 'Dana Fleet');
  assert.equal($('.who', fleet).getAttribute('title'), 'Fleet admin');
  await waitFor(() => document.title === 'Page not found · EMS fleet', "the fleet's document title");
  // Not found links to the registry's first link, in each app.
  assert.equal($('main#main p a', fleet).getAttribute('href'), '/');
  assert.equal(text($('main#main p a', fleet)), 'Fleet health');
});

test('each app’s navigation comes from its registry, for the role, with the current link marked', async () => {
  const viewer = await open('site', '/analysis/nowhere', 'viewer');
  assert.deepEqual(links(viewer), ['Overview', 'Energy', 'Analysis', 'Alerts', 'Faults', 'Maintenance', 'Reports', 'Exports', 'Billing']);
  assert.deepEqual(current(viewer), ['Analysis'], 'a path under a link marks it');
  close();

  const fleetViewer = await open('fleet', '/sites/nowhere', 'viewer');
  assert.deepEqual(links(fleetViewer), ['Fleet health', 'EUI ranking', 'Alerts across sites']);
  assert.deepEqual(current(fleetViewer), ['Fleet health'], 'a site is under the health list');
  close();

  // A fleet viewer at the admin screen is told so by the frame, as on the site (the screen's chunk is not loaded).
  const refused = await open('fleet', '/admin', 'viewer');
  assert.equal(text($('main#main h1', refused)), 'Not allowed');
  assert.deepEqual(current(refused), []);
});

test('signed out: no navigation, no sign-out; the site offers the wallboard', async () => {
  const page = await open('site', '/nowhere', null);
  assert.equal($$('nav#nav', page).length, 0);
  assert.equal($$('button.menu-toggle', page).length, 0);
  assert.equal(text($('.tools a', page)), 'Lobby wallboard');
  assert.ok($('header.top', page) && $('main#main', page));
});

test('only the frame declares the header, the navigation, the skip link and main: neither app does', () => {
  const sources = fs
    .readdirSync(APP, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.tsx') && file !== path.join('components', 'AppFrame.tsx'));
  const declaring = sources.filter((file) => /<(header|main)\b|<nav\b(?![^>]*class="tabs")|class="skip"/.test(fs.readFileSync(path.join(APP, file), 'utf8')));
  assert.deepEqual(declaring, [], 'the frame is components/AppFrame.tsx; an app hands it its registry and session');
  for (const app of ['App.tsx', path.join('fleet', 'FleetApp.tsx')]) {
    assert.match(fs.readFileSync(path.join(APP, app), 'utf8'), /<AppFrame\b/, `${app} renders the one frame`);
  }
});
