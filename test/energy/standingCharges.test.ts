// Standing charges (issue 41, item 5): one rule on every route — a site day with data carries its standing charge,
// a day without data carries nothing (no data is never a cost) — so a period without data costs 0, a whole month
// with a gap day costs its data days' charges, and the running month's cost-to-date is the same on the summary,
// the comparison, the overview and the demand-charge answer. Known answers by hand: 1 kWh every quarter hour (96 kWh
// a day), a back-dated version at 0.30 per kWh and 2.00 a day.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { addDays, dayIntervals, daysBetween, siteDay } from '../../src/platform/time/calendar.ts';
import type { DayRecord } from '../../src/metering/store.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { lastWholeMonth } from '../helpers/seededYear.ts';

const DAY_COST = 96 * 0.3 + 2;

describe('standing charges: days with data only, on every route', () => {
  let server: TestServer;
  let token: string;
  const today = siteDay('UTC', new Date());
  const month = lastWholeMonth('UTC');
  const first = addDays(month.from, -40);
  const gap = addDays(month.from, 9);
  const get = async (path: string) => {
    const response = await server.request('GET', path, { token });
    assert.equal(response.status, 200, `${path}: ${response.text}`);
    return response.body;
  };
  before(async () => {
    server = await startTestServer();
    token = (await server.createUser({ role: 'admin' })).accessToken;
    const { energy, db } = server.service.deps;
    const main = energy.meters.create({ name: 'Main', code: 'meter.main.kwh', kind: 'energy', site: true }, null).id;
    // Data from `first` to yesterday, but for one day of the last whole month; today has none yet.
    for (let day = first; day < today; day = addDays(day, 1)) {
      if (day === gap) continue;
      const { start, count } = dayIntervals('UTC', day);
      const rows: DayRecord[] = [{ meterId: main, day, start, kwh: new Float32Array(count).fill(1), flags: new Uint8Array(count), maxKw: null }];
      db.sqlite.transaction(() => energy.store.save(rows))();
    }
    const version = await server.request('POST', '/api/energy/tariffs', {
      token,
      body: { validFrom: addDays(first, -60), price: 0.3, carbonFactor: 0.2, standingChargePerDay: 2, note: 'bill' },
    });
    assert.equal(version.status, 201, version.text);
  });
  after(() => server?.close());

  test('a custom period without data (a whole month before the data) costs 0, not its standing charges', async () => {
    const from = `${addDays(first, -45).slice(0, 7)}-01`;
    const to = addDays(`${addDays(from, 40).slice(0, 7)}-01`, 3);
    assert.ok(to <= first, `${to} before ${first}`);
    const compare = await get(`/api/analysis/compare?period=custom&from=${from}&to=${to}`);
    assert.equal(compare.current.kwh, 0);
    assert.equal(compare.current.cost, 0, JSON.stringify(compare.current));
    const summary = await get(`/api/energy/summary?from=${from}&to=${to}`);
    assert.equal(summary.cost, 0);
  });

  test('the last whole month with one day missing: (days − 1) × (96 × 0.30 + 2.00) on the month path and day by day', async () => {
    const days = daysBetween(month.from, month.to).length;
    const expected = (days - 1) * DAY_COST;
    const compare = await get(`/api/analysis/compare?period=custom&from=${month.from}&to=${month.to}`);
    const summary = await get(`/api/energy/summary?from=${month.from}&to=${month.to}`);
    const byDay = summary.days.reduce((sum: number, day: any) => sum + (day.cost ?? 0), 0);
    assert.ok(Math.abs(compare.current.cost - expected) < 0.01, `compare ${compare.current.cost} vs ${expected}`);
    assert.ok(Math.abs(summary.cost - expected) < 0.01, `summary ${summary.cost} vs ${expected}`);
    assert.ok(Math.abs(byDay - expected) < 0.01, `days ${byDay} vs ${expected}`);
    // A year earlier has no data at all: no change against it (before: the whole current figure), the previous period has one.
    assert.equal(compare.lastYear.coverage, 0);
    assert.deepEqual(compare.change.lastYear, { kwh: null, percent: null, cost: null });
    assert.equal(typeof compare.change.previous.kwh, 'number');
  });

  test("the running month's cost to date agrees on the summary, the comparison, the overview and the demand charge", async (t) => {
    const monthStart = `${today.slice(0, 7)}-01`;
    const dataDays = daysBetween(monthStart, today).length;
    const expected = dataDays * DAY_COST;
    const summary = await get(`/api/energy/summary?from=${monthStart}&to=${addDays(today, 1)}`);
    const compare = await get('/api/analysis/compare?period=month');
    const stats = await get('/api/overview/stats');
    const month = today.slice(0, 7);
    const charge = await get(`/api/analysis/demand-charges?month=${month}`);
    const overviewEnergy = stats.costMonth - (stats.demandChargeMonth ?? 0);
    t.diagnostic(
      `month to date (${dataDays} days with data, today none): summary ${summary.cost}, compare ${compare.current.cost}, overview ${overviewEnergy}, demand-charges energyCost ${charge.energyCost}; hand ${expected.toFixed(2)}`,
    );
    for (const [what, value] of [
      ['summary', summary.cost],
      ['compare', compare.current.cost],
      ['overview', overviewEnergy],
      ['demand charges', charge.energyCost],
    ] as const)
      assert.ok(Math.abs(value - expected) < 0.011, `${what}: ${value} vs ${expected}`);
  });
});
