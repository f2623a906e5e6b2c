// The desk's own tariffs (issue 51) in the fast screen tier (written before the form was split into parts, issue 57
// item 3, to hold its behaviour; Chromium's desk.test.ts keeps the journey through the real API): which tariff prices
// each tenant's share today (its own, else the meter's, else the site's); a meter's version priced in the meter's
// utility; a tenant's version with a band and its own standing charge sent as typed; a bad band refused before asking.
import './dom.ts';
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import type { Answer, Meter } from '../../../src/web/app/api/types.ts';
import { OwnTariffs } from '../../../src/web/app/screens/DeskOwnTariffs.tsx';
import { $, $$, byText, calls, fill, labelled, mount, stubApi, text, unmount, waitFor } from './screen.ts';

after(unmount);

type Own = Answer<'/api/billing/tariffs'>['items'][number];
const meter = (id: number, name: string, commodity: Meter['commodity']) => ({ id, name, commodity, role: 'import' }) as Meter;
const own = {
  id: 11,
  tenantId: null,
  meterId: 2,
  commodity: 'gas',
  validFrom: '2020-01-01',
  price: 0.09,
  bands: [],
  standingChargePerDay: 0,
  note: null,
  createdAt: '2020-01-01T00:00:00.000Z',
} as unknown as Own;

test("who prices each share, a meter's utility, a tenant's version with a band sent as typed, a bad band refused", async () => {
  stubApi({
    'GET /api/billing/tariffs': () => ({ items: [own] }),
    'GET /api/billing/tenants': () => ({ items: [{ id: 5, name: 'Bakery' }] }),
    'GET /api/billing/allocations': () => ({
      items: [
        { meterId: 1, fractions: [{ tenantId: 5, fraction: 0.5 }] },
        { meterId: 2, fractions: [{ tenantId: 5, fraction: 1 }] },
      ],
    }),
    'GET /api/meters': () => ({ items: [meter(1, 'Main', 'electricity'), meter(2, 'Gas', 'gas')], page: 1, pageSize: 200, total: 2 }),
    'POST /api/billing/tariffs': (call) => ({ ...own, id: 12, validFrom: (call.body as { validFrom: string }).validFrom }),
  });
  const screen = await mount(OwnTariffs, {}, 'admin');
  await waitFor(() => $$('tr[data-priced]', screen).length === 2 && $$('form', screen).length === 1, 'the shares and the form');
  assert.deepEqual($$('tr[data-priced] [data-field="source"]', screen).map(text), ["the site's tariff", "the meter's tariff (from 2020-01-01)"]);
  assert.match(text($('li[data-own="11"]', screen)), /^Meter Gas · Gas · from 2020-01-01/);

  await fill(labelled('For'), 'm2');
  assert.equal(text(byText('p.muted', /^Priced in the meter's utility/, screen)), "Priced in the meter's utility: Gas.");
  assert.equal($$('fieldset', screen).length, 0, 'gas has no bands');
  await fill(labelled('For'), 't5');
  await fill(labelled('Valid from'), '2099-01-01');
  await fill(labelled('Price outside the bands (EUR/kWh)'), '0.21');
  byText('button', 'Add a band', screen)!.click();
  await waitFor(() => $$('.line-row', screen).length === 1, 'a band');
  byText('button', 'Save the tariff', screen)!.click();
  await waitFor(() => text($('form p.problem', screen)) !== '', 'the unnamed band refused');
  assert.equal(calls.filter((c) => c.method === 'POST').length, 0);
  await fill($('[aria-label="Name of band 1"]', screen), 'day');
  await fill($('[aria-label="Days of band 1"]', screen), 'all');
  await fill($('[aria-label="Price of band 1 (EUR)"]', screen), '0,25');
  await fill(labelled('Own standing charge (EUR a day)'), '1.5');
  byText('button', 'Save the tariff', screen)!.click();
  await waitFor(() => text($('p.done', screen)) === 'The tariff from 2099-01-01 is saved.', 'the tariff saved');
  assert.deepEqual(calls.find((c) => c.method === 'POST')!.body, {
    tenantId: 5,
    commodity: 'electricity',
    validFrom: '2099-01-01',
    price: 0.21,
    bands: [{ name: 'day', days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], from: '08:00', to: '20:00', price: 0.25 }],
    standingChargePerDay: 1.5,
  });
  assert.equal($$('.line-row', screen).length, 0, 'the bands emptied');
});
