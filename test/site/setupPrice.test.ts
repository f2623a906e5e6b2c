// The set-up's energy price prices (issue 52): PUT /api/configs electricityPrice makes the site's electricity tariff
// from the day it is entered while the site has none of its own (today's stored costs restated), entered again the same
// day it reprices that version, and the settings answer says which price is in force; once an admin has entered a
// tariff version, the settings price no longer touches the tariffs. Against a gateway over real HTTP, the collector
// counting today's intervals first at the seeded 0.25/kWh.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { addDays, siteDay } from '../../src/platform/time/calendar.ts';
import { MIN, misbehavingRig, type MisbehavingRig } from '../helpers/rig.ts';
import { noonZone } from '../helpers/siteClock.ts';

const ZONE = noonZone();
const SEEDED_PRICE = 0.25;

describe('the set-up price prices', () => {
  let r: MisbehavingRig;
  const today = siteDay(ZONE);
  const put = (body: Record<string, unknown>) => r.server.request('PUT', '/api/configs', { token: r.admin.accessToken, body });
  const todayFigures = async () => {
    const summary = await r.get(`/api/energy/summary?from=${today}&to=${addDays(today, 1)}`);
    return { kwh: summary.days[0].kwh as number, cost: summary.days[0].cost as number };
  };

  before(async () => {
    // Forty minutes of today counted at the seeded price: 0.5 kWh a minute on the site meter.
    r = await misbehavingRig({ start: Date.now() - 40 * MIN });
    const zoned = await put({ timezone: ZONE });
    assert.equal(zoned.status, 200, zoned.text);
    await r.meter({ name: 'Main', code: 'meter.main.kwh', kind: 'energy', site: true });
    for (let i = 0; i <= 40; i += 1) {
      r.gateway.set('meter.main.kwh', { value: 1000 + i * 0.5 });
      await r.collector.collect();
      r.clock.now += MIN;
    }
    r.collector.flush();
  });
  after(() => r?.close());

  test("a price entered at set-up is today's tariff and today's cost; entered again, it reprices; an admin's tariff wins", async () => {
    const first = await todayFigures();
    assert.ok(first.kwh >= 15, `today's energy: ${first.kwh} kWh`);
    assert.ok(Math.abs(first.cost - first.kwh * SEEDED_PRICE) < 0.01, `at the seeded price: ${JSON.stringify(first)}`);
    const before = (await r.get('/api/configs')).priceInForce;
    assert.deepEqual({ price: before.price, source: before.source }, { price: SEEDED_PRICE, source: 'install' });

    const set = await put({ electricityPrice: 0.4 });
    assert.equal(set.status, 200, set.text);
    assert.equal(set.body.electricityPrice, 0.4);
    assert.deepEqual(
      { price: set.body.priceInForce.price, validFrom: set.body.priceInForce.validFrom, source: set.body.priceInForce.source },
      {
        price: 0.4,
        validFrom: today,
        source: 'setup',
      },
    );
    const priced = await todayFigures();
    assert.ok(Math.abs(priced.cost - priced.kwh * 0.4) < 0.01, `today at the entered price: ${JSON.stringify(priced)}`);
    // The days before keep their price: the tariff applies from the day the price was entered.
    const versions = (await r.get('/api/energy/tariffs?pageSize=100')).items;
    assert.deepEqual(
      versions.map((v: { validFrom: string; price: number }) => [v.validFrom, v.price]),
      [
        ['2000-01-01', SEEDED_PRICE],
        [today, 0.4],
      ],
    );

    // Saved again unchanged (the settings form sends the price every time): nothing written, nothing restated.
    const restatedBefore = (await r.get('/api/audit?resource=tariff_versions&action=restate_costs')).items.length;
    assert.equal((await put({ electricityPrice: 0.4, siteName: 'North Campus' })).status, 200);
    assert.equal((await r.get('/api/audit?resource=tariff_versions&action=restate_costs')).items.length, restatedBefore);
    assert.equal((await r.get('/api/energy/tariffs?pageSize=100')).items.length, 2);

    // Corrected the same day: the same version, repriced (no second version of one day).
    const again = await put({ electricityPrice: 0.5 });
    assert.equal(again.status, 200, again.text);
    assert.equal(again.body.priceInForce.price, 0.5);
    assert.equal((await r.get('/api/energy/tariffs?pageSize=100')).items.length, 2);
    const repriced = await todayFigures();
    assert.ok(Math.abs(repriced.cost - repriced.kwh * 0.5) < 0.01, `today at the corrected price: ${JSON.stringify(repriced)}`);
    const restated = await r.get('/api/audit?resource=tariff_versions&action=restate_costs');
    assert.ok(restated.items.length >= 2, `each change restated today, audited (${restated.items.length})`);

    // An admin enters the real tariff (from tomorrow): from then on the settings price prices nothing.
    const tariff = await r.server.request('POST', '/api/energy/tariffs', {
      token: r.admin.accessToken,
      body: { validFrom: addDays(today, 1), price: 0.31, carbonFactor: 0.3 },
    });
    assert.equal(tariff.status, 201, tariff.text);
    const ignored = await put({ electricityPrice: 0.9 });
    assert.equal(ignored.status, 200, ignored.text);
    assert.equal(ignored.body.electricityPrice, 0.9);
    assert.equal(ignored.body.priceInForce.price, 0.5, 'still the version in force today');
    assert.equal((await r.get('/api/energy/tariffs?pageSize=100')).items.length, 3, 'no version from the settings price once a tariff was entered');
    const kept = await todayFigures();
    assert.ok(Math.abs(kept.cost - kept.kwh * 0.5) < 0.01, JSON.stringify(kept));
  });
});
