// Budgets of the whole bill (issue 51), on data with a known answer: the site draws 1 kWh every 15 minutes in 2029 and
// 1.1 kWh from 2030 (10 % above), at €0.20 with €1.00 a day standing and €10 per kW of the month's peak. The money
// includes standing and demand charges, the forecast scales last year's rest of the year to this year's run rate, and
// a cost centre on a meter with one month of data shows the other months as "no data" and says it cannot forecast.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { addDays } from '../../src/platform/time/calendar.ts';
import type { DayRecord } from '../../src/metering/store.ts';

describe('budgets of the whole bill', () => {
  let server: TestServer;
  let admin: TestUser;
  let main: number;
  let unit: number;
  const written = new Map<string, number>();
  let march = 0;

  const call = async (method: string, path: string, body?: unknown, status = 200) => {
    const response = await server.request(method, path, { token: admin.accessToken, body });
    assert.equal(response.status, status, response.text);
    return response.body;
  };
  const sum = (from: string, to: string) => {
    let total = 0;
    for (let day = from; day < to; day = addDays(day, 1)) total += written.get(day) ?? 0;
    return total;
  };

  before(async () => {
    server = await startTestServer();
    admin = await server.createUser({ role: 'admin' });
    await call('POST', '/api/energy/tariffs', { validFrom: '2029-01-01', price: 0.2, carbonFactor: 0.5, standingChargePerDay: 1, demandChargePerKw: 10 }, 201);
    main = (await call('POST', '/api/meters', { name: 'Main', code: 'm.main', kind: 'energy', site: true }, 201)).id;
    unit = (await call('POST', '/api/meters', { name: 'New unit', code: 'm.new', kind: 'energy', area: 'Tenants' }, 201)).id;
    const { store } = server.service.deps.energy;
    const records: DayRecord[] = [];
    for (let day = '2029-01-01'; day < '2030-04-01'; day = addDays(day, 1)) {
      const record = store.load(main, day);
      record.kwh.fill(day >= '2030-01-01' ? 1.1 : 1);
      written.set(day, (day >= '2030-01-01' ? 1.1 : 1) * record.kwh.length);
      records.push(record);
    }
    // The new unit's meter was fitted in March 2030: 0.5 kWh every 15 minutes since.
    for (let day = '2030-03-01'; day < '2030-04-01'; day = addDays(day, 1)) {
      const record = store.load(unit, day);
      record.kwh.fill(0.5);
      march += 0.5 * record.kwh.length;
      records.push(record);
    }
    store.transaction(() => store.save(records));
  });
  after(() => server?.close());

  test("the site's money counts standing and demand charges; the rest of the year is scaled to this year's run rate", async () => {
    const budget = await call(
      'POST',
      '/api/billing/budgets',
      { year: 2030, utility: 'electricity', scope: 'site', unit: 'kWh', quantity: 35_040, amount: 7_500, phasing: 'even', marginPercent: 5 },
      201,
    );
    const status = await call('GET', `/api/billing/budgets/${budget.id}/status?at=2030-04-01`);
    const q1 = sum('2030-01-01', '2030-04-01');
    // Energy q1 × 0.20; standing 90 days × 1.00; demand 3 months × 4.4 kW × 10 = 132.
    assert.deepEqual(
      [status.ytd.quantity, status.ytd.energy, status.ytd.standing, status.ytd.demand],
      [Math.round(q1 * 1000) / 1000, Math.round(q1 * 0.2 * 100) / 100, 90, 132],
    );
    assert.equal(status.ytd.amount, Math.round((q1 * 0.2 + 90 + 132) * 100) / 100);
    assert.deepEqual(status.months[0].charges, { energy: Math.round(sum('2030-01-01', '2030-02-01') * 0.2 * 100) / 100, standing: 31, demand: 44 });
    assert.equal(status.months[3].data, 'future');
    assert.equal(status.months[3].actualQuantity, null);
    // Rest: April–December 2029 × (q1 ÷ Q1 2029 = 1.1); money: that × 0.20, 275 days × 1.00, demand at 132 ÷ 90 a day.
    const factor = q1 / sum('2029-01-01', '2029-04-01');
    const rest = sum('2029-04-01', '2030-01-01') * factor;
    assert.equal(status.forecast.method, 'last_year_scaled_to_run_rate');
    assert.match(status.forecast.methodNote, /run rate \(1\.1:/);
    assert.ok(Math.abs(status.forecast.quantity - (q1 + rest)) < 0.01, `${status.forecast.quantity} vs ${q1 + rest}`);
    const money = q1 * 0.2 + 90 + 132 + rest * 0.2 + 275 + (132 / 90) * 275;
    assert.ok(Math.abs(status.forecast.amount - money) < 0.01, `${status.forecast.amount} vs ${money}`);
    // 38,544 kWh against 35,040 (+10 %): past the 5 % margin.
    assert.equal(status.forecast.available, true);
    assert.equal(status.alert, true);
  });

  test('a cost centre whose meter is new: months without data are "no data", and no forecast is claimed', async () => {
    const tenant = await call('POST', '/api/billing/tenants', { name: 'New tenant', kind: 'cost_centre' }, 201);
    await call('PUT', `/api/billing/allocations/${unit}`, { method: 'percent', shares: [{ tenantId: tenant.id, value: 100 }] });
    const budget = await call(
      'POST',
      '/api/billing/budgets',
      { year: 2030, utility: 'electricity', scope: 'cost_centre', target: String(tenant.id), unit: 'kWh', quantity: 20_000, amount: 5_000, phasing: 'even' },
      201,
    );
    const status = await call('GET', `/api/billing/budgets/${budget.id}/status?at=2030-04-01`);
    assert.deepEqual(
      status.months.slice(0, 4).map((m: { data: string; actualQuantity: number | null }) => [m.data, m.actualQuantity]),
      [
        ['no_data', null],
        ['no_data', null],
        ['measured', march], // 31 days × 96 × 0.5 = 1,488 kWh (1,486 where the clock goes forward on 31 March)
        ['future', null],
      ],
    );
    assert.equal(status.forecast.available, false);
    assert.equal(status.forecast.method, 'none');
    assert.equal(status.alert, false);
    assert.match(status.message, /cannot be forecast: 2 month\(s\) of the year to date have no data \(2030-01, 2030-02\)/);
  });
});
