// The alerts work-list and maintenance for a viewer, in the fast screen tier (was a Chromium test in alerts.test.ts):
// the viewer is told why there is nothing to do (acknowledging needs an operator), reads an alert's history, and is
// offered no ticks, no Resolve and no maintenance form; an operator gets the ticks the viewer does not. The list is
// the one the stubbed GET /api/alerts gives, shown per tab as the screen sorts it.
import './dom.ts';
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Alert, Answer } from '../../../src/web/app/api/types.ts';
import Alerts from '../../../src/web/app/screens/Alerts.tsx';
import Maintenance from '../../../src/web/app/screens/Maintenance.tsx';
import { $, $$, byText, calls, mount, stubApi, text, unmount, waitFor } from './screen.ts';

after(unmount);

const at = '2026-11-28T08:00:00.000Z';
function alert(id: number, title: string, status: Alert['status'], level: Alert['level'] = 'warning'): Alert {
  return {
    id,
    title,
    message: `Call the contractor about ${title}`,
    level,
    area: 'Plant room',
    source: null,
    status,
    alarmKey: null,
    occurredAt: at,
    createdAt: at,
    updatedAt: at,
    clearedAt: null,
    acknowledgedAt: status === 'active' ? null : at,
    acknowledgedBy: status === 'active' ? null : 1,
    resolvedAt: null,
    resolvedBy: null,
    shelvedBy: null,
    shelvedUntil: null,
    shelveReason: null,
  };
}
const ACTIVE = [alert(1, 'Boiler lockout <img src=x onerror="window.__pwned=1">', 'active', 'critical'), alert(2, 'Chiller 2 tripped', 'active')];
const ACKNOWLEDGED = [alert(6, 'Old warning', 'acknowledged', 'info')];
const counts: Answer<'/api/alerts/counts'> = { active: 2, cleared: 0, acknowledged: 1, shelved: 0, resolved: 0 } as Answer<'/api/alerts/counts'>;
const notes: Answer<'/api/alerts/{id}/notes'> = {
  items: [{ id: 1, alertId: 6, at, kind: 'acknowledge', text: 'seen', userId: 2, username: 'fm' }],
} as Answer<'/api/alerts/{id}/notes'>;

function stubAlerts() {
  stubApi({
    'GET /api/alerts': ({ params }) => {
      const [status] = (params.query?.status as string[]) ?? ['active'];
      const items = status === 'acknowledged' ? ACKNOWLEDGED : status === 'active' ? ACTIVE : [];
      return { items, page: 1, pageSize: 200, total: items.length };
    },
    'GET /api/alerts/counts': () => counts,
    'GET /api/alerts/{id}/notes': () => notes,
    'GET /api/maintenance': () => ({ items: [], page: 1, pageSize: 100, total: 0 }),
  });
}

test('a viewer reads the lists without actions: told why, the history readable, no ticks, no Resolve, no maintenance form', async () => {
  stubAlerts();
  const screen = await mount(Alerts, {}, 'viewer');
  await waitFor(() => $$('li[data-alert-id]', screen).length === 2, 'the active alerts');
  assert.match(text($('[data-hint="viewer"]', screen)), /needs the operator role/);
  // Hostile text stays text.
  assert.equal(text($('li[data-alert-id="1"] .title', screen)), ACTIVE[0].title);
  assert.equal($$('li[data-alert-id="1"] img', screen).length, 0);
  assert.equal($$('input[type="checkbox"]', screen).length, 0);
  // The tab counts are GET /api/alerts/counts.
  assert.equal($('[role="tab"][aria-selected="true"] .count', screen).dataset.count, '2');

  byText('[role="tab"]', /^Acknowledged/, screen)!.click();
  await waitFor(() => $$('li[data-alert-id="6"]', screen).length === 1, 'the acknowledged alert');
  assert.deepEqual(
    calls.filter((c) => c.path === '/api/alerts').map((c) => (c.params.query?.status as string[] | undefined)?.[0]),
    ['active', 'acknowledged'],
  );
  $('li[data-alert-id="6"] .title', screen).click();
  await waitFor(() => byText('h2, h3, h4', 'History', screen), 'the history heading');
  await waitFor(() => text(screen).includes('seen'), "the acknowledgement's note");
  assert.equal(byText('button', 'Resolve', screen), undefined);
  assert.equal($$('input[type="checkbox"]', screen).length, 0);

  const maintenance = await mount(Maintenance, {}, 'viewer');
  await waitFor(() => calls.some((c) => c.path === '/api/maintenance'), 'the maintenance list');
  await waitFor(() => byText('h1', 'Maintenance', maintenance), 'the maintenance heading');
  assert.equal(byText('button', 'Add a maintenance record', maintenance), undefined);
});

test('an operator gets the ticks and the actions the viewer does not', async () => {
  stubAlerts();
  const screen = await mount(Alerts, {}, 'operator');
  await waitFor(() => $$('li[data-alert-id]', screen).length === 2, 'the active alerts');
  assert.equal($$('[data-hint="viewer"]', screen).length, 0);
  assert.equal($$('li[data-alert-id] input[type="checkbox"]', screen).length, 2);
  $('li[data-alert-id="2"] .title', screen).click();
  await waitFor(() => byText('button', /Acknowledge/, screen), 'the acknowledge button');
  const maintenance = await mount(Maintenance, {}, 'operator');
  await waitFor(() => byText('button', 'Add a maintenance record', maintenance), 'the add button');
});
