// The site intensity (issue 41 item 7): whole-site energy over all fuels (electricity consumption with the self-consumed
// PV, gas converted, heat; never water) per the site's own floor area, a site setting (PUT /api/configs floorAreaM2),
// not the sum of the end-use areas' floor areas. Known answers by hand: every 15 minutes of the last whole month (UTC)
// 2 kWh of grid import, 1 kWh of PV of which 0.25 kWh exported, 0.1 m³ of gas at 10 kWh/m³, 0.5 kWh of heat, 0.01 m³
// of water.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { addDays, dayIntervals, daysBetween } from '../../src/platform/time/calendar.ts';
import type { DayRecord } from '../../src/metering/store.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { lastWholeMonth } from '../helpers/seededYear.ts';

const TIMEZONE = 'UTC';

describe('site intensity: all fuels per the site floor area', () => {
  let server: TestServer;
  let token: string;
  const month = lastWholeMonth(TIMEZONE);
  const days = daysBetween(month.from, month.to).length;
  const query = `/api/analysis/enpi?from=${month.from.slice(0, 7)}&to=${month.to.slice(0, 7)}`;

  before(async () => {
    server = await startTestServer();
    token = (await server.createUser({ role: 'admin' })).accessToken;
    assert.equal((await server.request('PUT', '/api/configs', { token, body: { timezone: TIMEZONE } })).status, 200);
    const calorific = await server.request('POST', '/api/energy/calorific-values', {
      token,
      body: { validFrom: addDays(month.from, -3), kwhPerM3: 10, correctionFactor: 1 },
    });
    assert.equal(calorific.status, 201, calorific.text);
    const { energy, db } = server.service.deps;
    const meter = (body: Record<string, unknown>) => energy.meters.create({ kind: 'energy', ...body } as never, null).id;
    const per = [
      { id: meter({ name: 'Grid import', code: 'meter.main.kwh', site: true, area: 'HVAC' }), value: 2 },
      { id: meter({ name: 'PV', code: 'meter.pv.kwh', role: 'generation' }), value: 1 },
      { id: meter({ name: 'Export', code: 'meter.export.kwh', role: 'export' }), value: 0.25 },
      { id: meter({ name: 'Gas', code: 'meter.gas.m3', commodity: 'gas' }), value: 0.1 },
      { id: meter({ name: 'Heat', code: 'meter.heat.kwh', commodity: 'heat' }), value: 0.5 },
      { id: meter({ name: 'Water', code: 'meter.water.m3', commodity: 'water' }), value: 0.01 },
    ];
    for (let day = month.from; day < month.to; day = addDays(day, 1)) {
      const { start, count } = dayIntervals(TIMEZONE, day);
      const rows: DayRecord[] = per.map(({ id, value }) => ({
        meterId: id,
        day,
        start,
        kwh: new Float32Array(count).fill(value),
        flags: new Uint8Array(count),
        maxKw: null,
        stored: null,
      }));
      db.sqlite.transaction(() => energy.store.save(rows))();
    }
    // An end-use area's floor area: what the site figure used to be divided by.
    assert.equal((await server.request('PUT', '/api/analysis/floor-areas', { token, body: { areas: [{ area: 'HVAC', floorAreaM2: 300 }] } })).status, 200);
  });
  after(() => server?.close());

  test('siteEnergyKwh = grid import − export + PV + gas kWh + heat; siteKwhPerM2 divides by the site setting; null until it is set', async () => {
    // By hand: per interval 2 − 0.25 + 1 (consumption 2.75) + 0.1 × 10 (gas) + 0.5 (heat) = 4.25 kWh; 96 a day.
    const allFuels = 96 * 4.25 * days;
    const unset = await server.request('GET', query, { token });
    assert.equal(unset.status, 200, unset.text);
    assert.equal(unset.body.siteFloorAreaM2, null);
    assert.equal(unset.body.months.length, 1);
    assert.ok(Math.abs(unset.body.months[0].siteEnergyKwh - allFuels) < 0.01, `${unset.body.months[0].siteEnergyKwh} vs ${allFuels}`);
    assert.equal(unset.body.months[0].siteKwhPerM2, null, 'no site floor area: no intensity (never the end-use areas summed)');
    // The grid-import figure beside it stays what it was.
    assert.ok(Math.abs(unset.body.months[0].kwh - 96 * 2 * days) < 0.01);

    const set = await server.request('PUT', '/api/configs', { token, body: { floorAreaM2: 1250 } });
    assert.equal(set.status, 200, set.text);
    assert.equal(set.body.floorAreaM2, 1250);
    const answer = (await server.request('GET', query, { token })).body;
    assert.equal(answer.siteFloorAreaM2, 1250);
    assert.ok(Math.abs(answer.months[0].siteKwhPerM2 - allFuels / 1250) < 1e-4, `${answer.months[0].siteKwhPerM2} vs ${allFuels / 1250}`);
    // An area's EnPI has no site intensity.
    const area = (await server.request('GET', `${query}&area=HVAC`, { token })).body;
    assert.equal(area.siteFloorAreaM2, null);
    assert.equal(area.months[0].siteKwhPerM2, null);
  });

  test('a floor area of 0, below 0 or not a number is a 400 naming the field; null clears it', async () => {
    for (const floorAreaM2 of [0, -5, 'big', 1e9]) {
      const response = await server.request('PUT', '/api/configs', { token, body: { floorAreaM2 } });
      assert.equal(response.status, 400, `${floorAreaM2}: ${response.text}`);
      assert.match(response.text, /floorAreaM2/);
    }
    const cleared = await server.request('PUT', '/api/configs', { token, body: { floorAreaM2: null } });
    assert.equal(cleared.status, 200, cleared.text);
    assert.equal(cleared.body.floorAreaM2, null);
  });
});
