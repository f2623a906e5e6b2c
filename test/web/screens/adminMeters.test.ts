// Admin → meters and areas in the fast screen tier (written before the screen was split into parts, issue 57 item 3,
// to hold its behaviour; Chromium's adminMeters.test.ts keeps the journey through the real API): every meter GET
// /api/meters gives with its point, kind and utility; a field changed in place sends only that field; a meter added by
// hand is sent as typed and the form emptied; the areas GET /api/energy/areas gives with their figures.
import './dom.ts';
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import type { Meter } from '../../../src/web/app/api/types.ts';
import AdminMeters from '../../../src/web/app/screens/AdminMeters.tsx';
import { $, $$, byText, calls, fill, labelled, mount, stubApi, text, unmount, waitFor } from './screen.ts';

after(unmount);

const meter = (id: number, name: string, code: string | null, extra: Partial<Meter> = {}) =>
  ({
    id,
    name,
    code,
    kind: 'energy',
    commodity: 'electricity',
    role: 'import',
    site: false,
    area: 'Hall',
    enabled: true,
    terms: [],
    updatedAt: '2026-01-01T00:00:00.000Z',
    ...extra,
  }) as Meter;

test('the meters and areas as listed, a field changed in place sends that field, a meter added is sent as typed', async () => {
  const meters = [meter(1, 'Main', 'meter.main.kwh', { site: true }), meter(2, 'Gas boiler', 'gas.boiler', { commodity: 'gas', area: null })];
  stubApi({
    'GET /api/meters': () => ({ items: meters, page: 1, pageSize: 200, total: meters.length }),
    'GET /api/energy/areas': () => ({ areas: [{ name: 'Hall', todayKwh: 12.5, monthKwh: 340 }] }),
    'PUT /api/meters/{id}': (call) => ({ ...meters.find((m) => m.id === call.params.path?.id)!, ...(call.body as object) }),
    'POST /api/meters': (call) => meter(3, (call.body as { name: string }).name, 'meter.new'),
  });
  const screen = await mount(AdminMeters, {}, 'admin');
  await waitFor(() => $$('tr[data-meter]', screen).length === 2 && $$('tr[data-area]', screen).length === 1, 'the meters and areas');
  assert.equal(text($('tr[data-meter="1"] code', screen)), 'meter.main.kwh');
  assert.match(text($('tr[data-meter="2"]', screen)), /Energy counter\s*Gas, import/);
  assert.equal(($('input[aria-label="Main is a site meter"]', screen) as HTMLInputElement).checked, true);
  assert.deepEqual($$('tr[data-area="Hall"] td', screen).map(text), ['12.5 kWh', '340.0 kWh']);
  assert.deepEqual(
    $$('#area-names option', screen).map((o) => o.getAttribute('value')),
    ['Hall'],
  );

  await fill($('input[aria-label="Area of Gas boiler"]', screen), ' Plant room ');
  await waitFor(() => text($('p.done', screen)) === 'Gas boiler saved.', 'the saved notice');
  assert.deepEqual(calls.find((c) => c.method === 'PUT')!.body, { area: 'Plant room' });

  await fill(labelled('Name'), 'Sub-meter 3');
  await fill(labelled('Gateway point'), 'meter.new');
  await fill(labelled('Utility'), 'water');
  byText('button', 'Add a meter', screen)!.click();
  await waitFor(() => /^Sub-meter 3 added/.test(text($('p.done', screen))), 'the added notice');
  assert.deepEqual(calls.find((c) => c.method === 'POST')!.body, {
    name: 'Sub-meter 3',
    code: 'meter.new',
    kind: 'energy',
    commodity: 'water',
    role: 'import',
    site: false,
  });
  assert.equal((labelled('Name') as HTMLInputElement).value, '');
});
