// Admin → load shedding in the fast screen tier (written before the screen was split into parts, issue 57 item 3, to
// hold its behaviour; Chromium's adminLoadShedding.test.ts keeps the journey through the real API): the settings and
// points GET /api/analysis/load-shedding gives, each point's state now (shed since, an unconfirmed write); a point added
// without a code refused before asking; the replacement sent in seconds and numbers.
import './dom.ts';
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import type { Answer } from '../../../src/web/app/api/types.ts';
import AdminLoadShedding from '../../../src/web/app/screens/AdminLoadShedding.tsx';
import { $, $$, byText, calls, fill, labelled, mount, stubApi, text, unmount, waitFor } from './screen.ts';

after(unmount);

type View = Answer<'/api/analysis/load-shedding'>;
const point = (code: string, priority: number, extra: object = {}) => ({
  code,
  priority,
  shedValue: 0,
  restoreValue: 1,
  shed: false,
  shedAt: null,
  lastError: null,
  lastErrorAt: null,
  ...extra,
});
const view = {
  enabled: true,
  minOffSec: 300,
  maxShedSec: 1800,
  points: [
    point('ahu1.enable', 1, { shed: true, shedAt: '2026-11-28T08:00:00.000Z' }),
    point('pump2.enable', 2, { lastError: 'HTTP 502', lastErrorAt: '2026-11-28T07:00:00.000Z' }),
  ],
} as unknown as View;

test('the points with their state now, a point without a code refused, the replacement sent in seconds', async () => {
  stubApi({
    'GET /api/analysis/load-shedding': () => view,
    'PUT /api/analysis/load-shedding': (call) => ({ ...view, ...(call.body as object) }),
  });
  const screen = await mount(AdminLoadShedding, {}, 'admin');
  await waitFor(() => $$('tr[data-point]', screen).length === 2, 'the points');
  assert.equal((labelled('Shed at most (minutes)') as HTMLInputElement).value, '30');
  const states = $$('[data-field="state"]', screen).map(text);
  assert.match(states[0], /^shed since /);
  assert.match(states[1], /^normal · unconfirmed write: HTTP 502/);

  byText('button', 'Add a point', screen)!.click();
  await waitFor(() => $$('tr[data-point]', screen).length === 3, 'a third row');
  assert.equal(($('[aria-label="Priority of row 3"]', screen) as HTMLInputElement).value, '3');
  assert.equal(text($$('[data-field="state"]', screen)[2]), 'not saved yet');
  byText('button', 'Save load shedding', screen)!.click();
  await waitFor(() => /^Every point needs a code/.test(text($('p.problem', screen))), 'the missing code refused');
  await fill($('[aria-label="Gateway point of row 3"]', screen), ' chiller.enable ');
  await fill($('[aria-label="Value when shed, row 3"]', screen), '0,5');
  byText('button', 'Remove row 1', screen)!.click();
  await waitFor(() => $$('tr[data-point]', screen).length === 2, 'the first row removed');
  await fill(labelled('Shed at least (minutes)'), '2.5');
  byText('button', 'Save load shedding', screen)!.click();
  await waitFor(() => text($('p.done', screen)) === 'Saved: load shedding runs.', 'saved');
  assert.deepEqual(calls.find((c) => c.method === 'PUT')!.body, {
    enabled: true,
    minOffSec: 150,
    maxShedSec: 1800,
    points: [
      { code: 'pump2.enable', priority: 2, shedValue: 0, restoreValue: 1 },
      { code: 'chiller.enable', priority: 3, shedValue: 0.5, restoreValue: 1 },
    ],
  });
});
