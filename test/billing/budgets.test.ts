// Budgets on data made to overspend: a site that used twice as much in winter in 2029 uses 1.5 times as much in the
// first quarter of 2030. Phased by last year's profile, the year-end forecast (year to date + last year's rest) passes
// the budget by more than its margin and alerts once; a cost centre's budget with room stays quiet; a budget in a unit
// or a utility its meters do not measure is 400.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { addDays, daysBetween } from '../../src/platform/time/calendar.ts';
import type { DayRecord } from '../../src/metering/store.ts';

describe('budgets and their year-end forecast', () => {
  let server: TestServer;
  let admin: TestUser;
  let viewer: TestUser;
  let main: number;
  const written = new Map<string, number>();

  const call = async (user: TestUser, method: string, path: string, body?: unknown, status = 200) => {
    const response = await server.request(method, path, { token: user.accessToken, body });
    assert.equal(response.status, status, response.text);
    return response.body;
  };
  const sum = (from: string, to: string) => daysBetween(from, to).reduce((total, day) => total + (written.get(day) ?? 0), 0);

  before(async () => {
    server = await startTestServer();
    admin = await server.createUser({ role: 'admin' });
    viewer = await server.createUser({ role: 'viewer' });
    main = (await call(admin, 'POST', '/api/meters', { name: 'Main', code: 'm.main', kind: 'energy', site: true }, 201)).id;
    const { store } = server.service.deps.energy;
    const records: DayRecord[] = [];
    for (let day = '2029-01-01'; day < '2030-04-01'; day = addDays(day, 1)) {
      const winter = ['01', '02', '12'].includes(day.slice(5, 7));
      const value = (winter ? 2 : 1) * (day >= '2030-01-01' ? 1.5 : 1);
      const record = store.load(main, day);
      record.kwh.fill(value);
      written.set(day, value * record.kwh.length);
      records.push(record);
    }
    store.transaction(() => store.save(records));
  });
  after(() => server?.close());

  test('a site forecast past its budget by more than the margin alerts, once', async () => {
    const lastYear = sum('2029-01-01', '2030-01-01');
    const cost = server.service.deps.energy.figures.totals('2029-01-01', '2030-01-01', { meterId: main }).cost;
    const budget = await call(
      admin,
      'POST',
      '/api/billing/budgets',
      { year: 2030, utility: 'electricity', scope: 'site', unit: 'kWh', quantity: lastYear, amount: cost, phasing: 'last_year', marginPercent: 10 },
      201,
    );
    const status = await call(viewer, 'GET', `/api/billing/budgets/${budget.id}/status?at=2030-04-01`);
    assert.equal(status.phasingUsed, 'last_year');
    // January's share of the budget is January's share of 2029.
    assert.ok(Math.abs(status.months[0].budgetQuantity - (lastYear * sum('2029-01-01', '2029-02-01')) / lastYear) < 0.01);
    const q1 = sum('2030-01-01', '2030-04-01');
    assert.ok(Math.abs(status.ytd.quantity - q1) < 0.01, `${status.ytd.quantity} vs ${q1}`);
    // Forecast: the first quarter as used (1.5 × last year's) + April to December as last year.
    // The rest of the year: last year's April–December scaled to this year's run rate (Q1 against last year's Q1, 1.5).
    const factor = q1 / sum('2029-01-01', '2029-04-01');
    const forecast = q1 + sum('2029-04-01', '2030-01-01') * factor;
    assert.ok(Math.abs(status.forecast.quantity - forecast) < 0.01, `${status.forecast.quantity} vs ${forecast}`);
    assert.equal(status.forecast.method, 'last_year_scaled_to_run_rate');
    assert.ok(status.forecast.quantityPercentOfBudget > 145);
    assert.equal(status.alert, true);
    assert.match(status.message, /forecast at 1[45]\d(\.\d+)? % of its kWh/);

    const checked = await call(admin, 'POST', '/api/billing/budgets/check?at=2030-04-01');
    assert.deepEqual(
      checked.items.map((item: any) => [item.budget.id, item.alert]),
      [[budget.id, true]],
    );
    await call(admin, 'POST', '/api/billing/budgets/check?at=2030-04-02');
    const alerts = server.service.deps.db.sqlite.prepare("SELECT title FROM alerts WHERE source = 'billing.budget.overspend'").all() as { title: string }[];
    assert.equal(alerts.length, 1);
    assert.match(alerts[0].title, /The 2030 electricity budget of the site is forecast at/);
  });

  test("a cost centre's budget with room for the overspend does not alert", async () => {
    const tenant = await call(admin, 'POST', '/api/billing/tenants', { name: 'Office', kind: 'cost_centre' }, 201);
    await call(admin, 'PUT', `/api/billing/allocations/${main}`, { method: 'percent', shares: [{ tenantId: tenant.id, value: 50 }], landlordValue: 50 });
    // Its half of the site runs 1.5 × last year, forecast so to the year's end: a budget of 1.6 × last year's half has room.
    const half = sum('2029-01-01', '2030-01-01') / 2;
    const budget = await call(
      admin,
      'POST',
      '/api/billing/budgets',
      { year: 2030, utility: 'electricity', scope: 'cost_centre', target: String(tenant.id), unit: 'kWh', quantity: half * 1.6, amount: 1e6, marginPercent: 0 },
      201,
    );
    const status = await call(viewer, 'GET', `/api/billing/budgets/${budget.id}/status?at=2030-04-01`);
    assert.ok(Math.abs(status.ytd.quantity - sum('2030-01-01', '2030-04-01') / 2) < 0.01);
    assert.equal(status.alert, false);
    assert.ok(status.forecast.quantityPercentOfBudget < 100);
  });

  test('a budget in a unit or utility its meters do not measure is 400 with the reason; a second one for the same target is 409', async () => {
    const m3 = await server.request('POST', '/api/billing/budgets', {
      token: admin.accessToken,
      body: { year: 2031, utility: 'electricity', scope: 'site', unit: 'm³', quantity: 1, amount: 1 },
    });
    assert.equal(m3.status, 400);
    assert.match(m3.body.details[0].message, /electricity is measured in kWh, not m³/);
    const gas = await server.request('POST', '/api/billing/budgets', {
      token: admin.accessToken,
      body: { year: 2031, utility: 'gas', scope: 'site', unit: 'm³', quantity: 1, amount: 1 },
    });
    assert.equal(gas.status, 400);
    assert.match(gas.body.details[0].message, /the site has no gas meter/);
    const area = await server.request('POST', '/api/billing/budgets', {
      token: admin.accessToken,
      body: { year: 2031, utility: 'electricity', scope: 'area', target: 'Nowhere', unit: 'kWh', quantity: 1, amount: 1 },
    });
    assert.equal(area.status, 400);
    const again = await server.request('POST', '/api/billing/budgets', {
      token: admin.accessToken,
      body: { year: 2030, utility: 'electricity', scope: 'site', unit: 'kWh', quantity: 1, amount: 1 },
    });
    assert.equal(again.status, 409);
    const viewerTry = await server.request('POST', '/api/billing/budgets', {
      token: viewer.accessToken,
      body: { year: 2032, utility: 'electricity', scope: 'site', unit: 'kWh', quantity: 1, amount: 1 },
    });
    assert.equal(viewerTry.status, 403);
  });
});
