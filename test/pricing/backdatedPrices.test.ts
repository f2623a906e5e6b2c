// Back-dated tariffs and calorific values (issue 41, item 4): an admin enters the versions of past bills, and the
// stored costs of the days they cover are restated (audited). Known answers by hand: 1 kWh (electricity) and 0.1 m³
// (gas) every quarter hour of ten past days (UTC), so 96 kWh and 9.6 m³ a day.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { addDays, dayIntervals, siteDay } from '../../src/platform/time/calendar.ts';
import type { DayRecord } from '../../src/metering/store.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

describe('back-dated versions restate the stored costs of the days they cover', () => {
  let server: TestServer;
  let token: string;
  let main: number;
  let gas: number;
  const today = siteDay('UTC', new Date());
  const first = addDays(today, -20);
  const change = addDays(today, -15);
  const end = addDays(today, -10);
  const sql = (query: string, ...args: unknown[]) =>
    server.service.deps.db.sqlite
      .prepare(query)
      .pluck()
      .get(...args) as number;
  const dayCost = (meterId: number, from: string, to: string) =>
    sql('SELECT sum(cost) FROM meter_days WHERE meter_id = ? AND day >= ? AND day < ?', meterId, from, to);
  before(async () => {
    server = await startTestServer();
    token = (await server.createUser({ role: 'admin' })).accessToken;
    const { energy, db } = server.service.deps;
    main = energy.meters.create({ name: 'Main', code: 'meter.main.kwh', kind: 'energy', site: true }, null).id;
    gas = energy.meters.create({ name: 'Gas', code: 'meter.gas.m3', kind: 'energy', commodity: 'gas' }, null).id;
    for (let day = first; day < end; day = addDays(day, 1)) {
      const { start, count } = dayIntervals('UTC', day);
      const rows: DayRecord[] = [
        { meterId: main, day, start, kwh: new Float32Array(count).fill(1), flags: new Uint8Array(count), maxKw: null },
        { meterId: gas, day, start, kwh: new Float32Array(count).fill(0.1), flags: new Uint8Array(count), maxKw: null },
      ];
      db.sqlite.transaction(() => energy.store.save(rows))();
    }
  });
  after(() => server?.close());

  const post = async (path: string, body: Record<string, unknown>) => {
    const response = await server.request('POST', path, { token, body });
    assert.equal(response.status, 201, response.text);
    return response.body;
  };

  test('an electricity version from 15 days ago: those days at its price, the earlier ones as they were; month rollups follow; audited', async (t) => {
    const seeded = (await server.request('GET', '/api/energy/tariffs', { token })).body.items[0];
    const p0 = seeded.price;
    const s0 = seeded.standingChargePerDay;
    const summaryBefore = (await server.request('GET', `/api/energy/summary?from=${first}&to=${end}`, { token })).body;
    assert.ok(Math.abs(summaryBefore.cost - (10 * 96 * p0 + 10 * s0)) < 0.01, `${summaryBefore.cost}`);
    const version = await post('/api/energy/tariffs', {
      validFrom: change,
      price: 0.4,
      carbonFactor: 0.2,
      standingChargePerDay: 2,
      note: 'bill of last month',
    });
    // By hand: 5 days × 96 kWh × p0 (+ its standing charge) and 5 days × (96 × 0.40 + 2.00).
    const expected = 5 * (96 * p0 + s0) + 5 * (96 * 0.4 + 2);
    const summary = (await server.request('GET', `/api/energy/summary?from=${first}&to=${end}`, { token })).body;
    t.diagnostic(`cost of the ten days: ${summaryBefore.cost} before the bill's version, ${summary.cost} after (hand: ${expected.toFixed(2)})`);
    assert.ok(Math.abs(summary.cost - expected) < 0.01, `${summary.cost} vs ${expected}`);
    assert.ok(Math.abs(dayCost(main, change, end) - 5 * 96 * 0.4) < 0.001);
    assert.ok(Math.abs(dayCost(main, first, change) - 5 * 96 * p0) < 0.001);
    assert.ok(Math.abs(summary.carbonKg - (5 * 96 * seeded.carbonFactor + 5 * 96 * 0.2)) < 0.01, `carbon ${summary.carbonKg}`);
    // Every month rollup equals its days (the restatement moved them by the difference).
    for (const month of new Set([first.slice(0, 7), addDays(end, -1).slice(0, 7)])) {
      const rollup = sql('SELECT cost FROM meter_months WHERE meter_id = ? AND month = ?', main, month);
      const days = sql("SELECT sum(cost) FROM meter_days WHERE meter_id = ? AND day LIKE ? || '-%'", main, month);
      assert.ok(Math.abs(rollup - days) < 1e-6, `${month}: ${rollup} vs ${days}`);
    }
    const audit = server.service.deps.db.sqlite
      .prepare("SELECT action, resource_id AS id, before, after FROM audit_log WHERE resource = 'tariff_versions' ORDER BY id")
      .all() as { action: string; id: string; before: string; after: string }[];
    assert.deepEqual(
      audit.map((row) => row.action),
      ['create', 'restate_costs'],
    );
    assert.equal(audit[1].id, String(version.id));
    assert.deepEqual(JSON.parse(audit[1].after), { dayRows: 5, cost: Math.round(5 * 96 * 0.4 * 100) / 100 });
    // The version in effect still cannot be changed: a correction is a new version.
    assert.equal((await server.request('PUT', `/api/energy/tariffs/${version.id}`, { token, body: { price: 9 } })).status, 409);
    // Operators may not back-date.
    const operator = (await server.createUser({ role: 'operator' })).accessToken;
    assert.equal((await server.request('POST', '/api/energy/tariffs', { token: operator, body: { validFrom: first, price: 1, carbonFactor: 0 } })).status, 403);
  });

  test('a gas tariff and then a calorific value entered for the past: gas days priced per kWh at the value in force each day', async () => {
    const before = dayCost(gas, first, end);
    assert.equal(before, 0, 'gas without a gas tariff is unpriced');
    await post('/api/energy/tariffs', { validFrom: first, commodity: 'gas', price: 0.09, carbonFactor: 0.202 });
    const seeded = (await server.request('GET', '/api/energy/calorific-values', { token })).body.items[0];
    const k0 = seeded.kwhPerM3 * seeded.correctionFactor;
    assert.ok(Math.abs(dayCost(gas, first, end) - 10 * 9.6 * k0 * 0.09) < 0.001, 'every gas day at the seeded calorific value');
    await post('/api/energy/calorific-values', { validFrom: change, kwhPerM3: 10.6, correctionFactor: 1 });
    // By hand: 5 days × 9.6 m³ × k0 × 0.09 + 5 days × 9.6 m³ × 10.6 × 0.09.
    assert.ok(Math.abs(dayCost(gas, first, change) - 5 * 9.6 * k0 * 0.09) < 0.001);
    assert.ok(Math.abs(dayCost(gas, change, end) - 5 * 9.6 * 10.6 * 0.09) < 0.001, `${dayCost(gas, change, end)}`);
    const commodities = (await server.request('GET', `/api/energy/commodities?from=${first}&to=${end}`, { token })).body;
    const gasFigures = commodities.gas ?? commodities.commodities?.find((c: any) => c.commodity === 'gas');
    assert.ok(gasFigures, JSON.stringify(commodities).slice(0, 300));
    assert.ok(Math.abs(gasFigures.kwh - (5 * 9.6 * k0 + 5 * 9.6 * 10.6)) < 0.01, JSON.stringify(gasFigures));
  });
});
