// The point mapping (issue 54) in the fast screen tier (written before the screen was split into parts, issue 57 item
// 3, to hold its behaviour; Chromium's faultRules.test.ts keeps the mapping through the real API): each code GET
// /api/fdd/points/suggestions gives with its suggestion and state; "select the suggestions" picks the unmapped ones with
// a guess; a row edited is selected; confirming sends one PUT per selected row, a refused row saying why and staying
// selected.
import './dom.ts';
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import type { Answer } from '../../../src/web/app/api/types.ts';
import FddMapping from '../../../src/web/app/screens/FddMapping.tsx';
import { $, $$, byText, calls, fill, mount, refuse, stubApi, text, unmount, waitFor } from './screen.ts';

after(unmount);

type Suggestion = Answer<'/api/fdd/points/suggestions'>[number];
const suggestion = (code: string, extra: Partial<Suggestion> = {}): Suggestion => ({
  code,
  name: null,
  equipment: 'AHU-1',
  equipmentType: 'AHU',
  brickClass: 'Supply_Air_Temperature_Sensor',
  unit: '°C',
  mapped: false,
  ...extra,
});

test('the codes with their suggestion and state; the suggestions selected, an edited row selected, a refused row says why', async () => {
  const points = [
    suggestion('ahu1.sat', { name: 'Supply air' }),
    suggestion('ahu1.fan', { brickClass: 'Fan_Status', unit: '', mapped: true }),
    suggestion('misc.x', { equipment: null, equipmentType: null, brickClass: null }),
  ];
  stubApi({
    'GET /api/fdd/points/suggestions': () => points,
    'PUT /api/fdd/points/{code}': (call) =>
      call.params.path?.code === 'misc.x' ? refuse(400, 'the unit °C does not fit Fan_Status', [{ path: '/unit', message: 'no' }]) : { ok: true },
  });
  const screen = await mount(FddMapping, {}, 'admin');
  await waitFor(() => $$('tr[data-code]', screen).length === 3, 'the codes');
  assert.deepEqual($$('tr[data-code] td:last-child', screen).map(text), ['suggested', 'confirmed', 'no suggestion']);
  assert.match(text($('tr[data-code="ahu1.sat"]', screen)), /Supply air/);
  assert.deepEqual(
    $$('#fdd-classes option', screen).map((o) => o.getAttribute('value')),
    ['Fan_Status', 'Supply_Air_Temperature_Sensor'],
  );

  byText('button', 'Select the 1 suggestions', screen)!.click();
  await waitFor(() => byText('button', 'Confirm 1 selected', screen), 'one selected');
  await fill($('input[aria-label="Brick class misc.x"]', screen), 'Fan_Status');
  await waitFor(() => byText('button', 'Confirm 2 selected', screen), 'the edited row selected too');
  byText('button', 'Confirm 2 selected', screen)!.click();
  await waitFor(() => text($('p.done', screen)) === '1 points confirmed.', 'the confirmation');
  assert.equal(text($('p.problem', screen)), '1 rows were refused; each says why.');
  assert.match(text($('tr[data-code="misc.x"] [role="alert"]', screen)), /does not fit/);
  assert.deepEqual(
    calls.filter((c) => c.method === 'PUT').map((c) => [c.params.path?.code, (c.body as { brickClass: string }).brickClass]),
    [
      ['ahu1.sat', 'Supply_Air_Temperature_Sensor'],
      ['misc.x', 'Fan_Status'],
    ],
  );
  assert.ok(byText('button', 'Confirm 1 selected', screen), 'the refused row stays selected');
});
