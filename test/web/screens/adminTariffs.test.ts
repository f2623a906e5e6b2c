// Admin → tariffs in the fast screen tier (written before the screen was split into parts, issue 57 item 3, to hold
// its behaviour; Chromium's adminTariffs.test.ts keeps the journey through the real API): the versions GET
// /api/energy/tariffs gives, newest first per utility, with price, bands and demand charge; a version not yet in effect
// offers its removal, one in effect does not; a new version with a band is sent as typed; the calorific values below.
import './dom.ts';
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import type { Answer } from '../../../src/web/app/api/types.ts';
import AdminTariffs from '../../../src/web/app/screens/AdminTariffs.tsx';
import { $, $$, byText, calls, fill, labelled, mount, stubApi, text, unmount, waitFor } from './screen.ts';

after(unmount);

type Version = Answer<'/api/energy/tariffs'>['items'][number];
const version = (id: number, validFrom: string, price: number, extra: Partial<Version> = {}) =>
  ({
    id,
    commodity: 'electricity',
    validFrom,
    price,
    standingChargePerDay: 1.2,
    carbonFactor: 0.4,
    demandChargePerKw: 0,
    demandChargeBasis: 'monthly',
    contractedPeakKw: null,
    note: '',
    bands: [],
    ...extra,
  }) as Version;

test('the versions as listed with price and bands, removal only before a version applies, a new version with a band sent as typed', async () => {
  const past = version(1, '2020-01-01', 0.25, {
    bands: [{ name: 'peak', days: ['mon', 'tue'], from: '08:00', to: '20:00', price: 0.31 }],
    demandChargePerKw: 9.5,
  } as Partial<Version>);
  const future = version(2, '2099-01-01', 0.28, { note: 'from the new contract' });
  stubApi({
    'GET /api/energy/tariffs': () => ({ items: [past, future], page: 1, pageSize: 200, total: 2 }),
    'GET /api/energy/calorific-values': () => ({
      items: [{ id: 4, validFrom: '2020-01-01', kwhPerM3: 10.35, correctionFactor: 0.9636, note: 'bill 12' }],
      page: 1,
      pageSize: 200,
      total: 1,
    }),
    'POST /api/energy/tariffs': (call) => ({ ...version(3, (call.body as { validFrom: string }).validFrom, 0.3) }),
  });
  const screen = await mount(AdminTariffs, {}, 'admin');
  await waitFor(() => $$('li[data-tariff]', screen).length === 2 && $$('tr[data-calorific]', screen).length === 1, 'the versions and calorific values');
  // Newest first.
  assert.deepEqual(
    $$('li[data-tariff]', screen).map((li) => li.dataset.tariff),
    ['2', '1'],
  );
  assert.equal(text($('li[data-tariff="1"] [data-field="price"]', screen)), '0.2500 EUR');
  assert.deepEqual($$('table[data-bands="1"] tbody td', screen).map(text), ['Mon, Tue', '08:00–20:00', '0.3100']);
  assert.match(text($('li[data-tariff="1"]', screen)), /Demand charge/);
  assert.match(text($('li[data-tariff="2"]', screen)), /from the new contract/);
  assert.ok(byText('button', 'Remove the version from 2099-01-01', screen));
  assert.equal(byText('button', 'Remove the version from 2020-01-01', screen), undefined);
  assert.equal(text($('tr[data-calorific="4"] [data-field="kwhPerM3"]', screen)), '10.350');

  await fill(labelled('Applies from'), '2099-02-01');
  await fill(labelled('Price per unit (EUR)'), '0,30');
  const band = byText('label.check', 'With a time-of-use band', screen)!.querySelector('input')!;
  band.click();
  await waitFor(() => $$('fieldset.choice', screen).length === 2, 'the band fields');
  await fill(labelled('Band price per unit (EUR)'), '0.35');
  byText('button', 'Add a tariff version', screen)!.click();
  await waitFor(() => text($('p.done', screen)) === 'A version from 2099-02-01 is added.', 'the confirmation');
  const sent = calls.find((c) => c.method === 'POST')!.body as { price: number; bands: { name: string; days: string[]; price: number }[] };
  assert.equal(sent.price, 0.3);
  assert.deepEqual(sent.bands, [{ name: 'peak', days: ['mon', 'tue', 'wed', 'thu', 'fri'], from: '08:00', to: '20:00', price: 0.35 }]);
  await waitFor(() => calls.filter((c) => c.path === '/api/energy/tariffs' && c.method === 'GET').length === 2, 'the list read again');
});
