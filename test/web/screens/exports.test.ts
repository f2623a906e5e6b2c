// Exports in the fast screen tier (written before the screen was split into parts, issue 57 item 3, to hold its
// behaviour; Chromium's exports.test.ts keeps the downloads through the real API): "meters I choose" lists GET
// /api/meters, none ticked is refused before asking, a backwards period too; the query sent names the ticked meters
// sorted, the day after the last, and the CSV's byte order mark; the service's refusal is shown.
import './dom.ts';
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import type { Meter } from '../../../src/web/app/api/types.ts';
import Exports from '../../../src/web/app/screens/Exports.tsx';
import { $, $$, byText, calls, fill, labelled, mount, refuse, rendered, stubApi, text, unmount, waitFor } from './screen.ts';

after(unmount);

const meter = (id: number, name: string, area: string | null) => ({ id, name, area }) as Meter;

test('the meters chosen, refusals before asking, the query as sent and the refusal the service gives', async () => {
  stubApi({
    'GET /api/meters': () => ({ items: [meter(9, 'Chiller', 'Plant'), meter(3, 'Main', null)], page: 1, pageSize: 200, total: 2 }),
    'GET /api/energy/areas': () => ({ areas: [{ name: 'Plant', todayKwh: 1, monthKwh: 2 }] }),
    'GET /api/exports/energy': () => refuse(400, '15-minute exports cover at most 31 days'),
  });
  const screen = await mount(Exports, {});
  byText('label.check', 'Meters I choose', screen)!.querySelector('input')!.click();
  await waitFor(() => $$('fieldset.meters label', screen).length === 2, 'the meters to tick');
  assert.equal(text($('fieldset.meters label', screen)), 'Chiller · Plant');
  byText('button', 'Download', screen)!.click();
  await waitFor(() => text($('p.problem', screen)) === 'Tick at least one meter.', 'none ticked refused');

  for (const label of $$('fieldset.meters label', screen).reverse()) {
    label.querySelector('input')!.click();
    await rendered();
  }
  assert.deepEqual(
    $$('fieldset.meters input', screen).map((input) => (input as HTMLInputElement).checked),
    [true, true],
  );
  await fill(labelled('First day'), '2026-03-01');
  await fill(labelled('Last day (included)'), '2026-02-01');
  byText('button', 'Download', screen)!.click();
  await waitFor(() => /last day cannot be before the first/.test(text($('p.problem', screen))), 'a backwards period refused');
  assert.equal(calls.filter((c) => c.path === '/api/exports/energy').length, 0);

  await fill(labelled('Last day (included)'), '2026-03-31');
  await fill(labelled('Resolution'), '15min');
  await fill(labelled('File type'), 'csv');
  byText('button', 'Download', screen)!.click();
  await waitFor(() => text($('p.problem', screen)) === '15-minute exports cover at most 31 days', "the service's refusal");
  assert.deepEqual(calls.find((c) => c.path === '/api/exports/energy')!.params.query, {
    from: '2026-03-01',
    to: '2026-04-01',
    resolution: '15min',
    layout: 'wide',
    format: 'csv',
    bom: true,
    meterIds: '3,9',
  });
});
