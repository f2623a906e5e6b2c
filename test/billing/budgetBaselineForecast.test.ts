// A budget's year-end forecast from the weather-normalised baseline (issue 51 item 6): a site whose daily use is
// 100 kWh + 8 kWh per heating degree day − 20 kWh on weekends, with a year of outdoor temperatures. The rest of the
// year is the baseline's model under last year's weather of the same dates, each day with its own day type (a known
// sum, worked out here from the generator); where the baseline fails its guard rails (nine months of data) the
// forecast is the run rate, and its note says why there is no baseline.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { addDays, daysBetween } from '../../src/platform/time/calendar.ts';
import type { DayRecord } from '../../src/metering/store.ts';

// Last year's budget, with the year before it: whole days in the past whatever the day the test runs.
const Y = new Date().getUTCFullYear() - 1;
const FIRST = `${Y - 1}-01-01`;
const AT = `${Y}-04-01`;
const LAST = AT;
const weekend = (day: string) => [0, 6].includes(new Date(`${day}T00:00:00Z`).getUTCDay());
/** The outdoor temperature of a day (°C, below the 21 °C cooling base all year), as a 24-hour Float32 row stores it. */
const temperatureOf = (i: number) => Math.fround(8 + 9 * Math.sin((2 * Math.PI * i) / 47));
const use = (day: string, t: number) => 100 + 8 * Math.max(0, 15.5 - t) - (weekend(day) ? 20 : 0);

describe("a budget's forecast from the weather-normalised baseline", () => {
  let server: TestServer;
  let admin: TestUser;
  const temps = new Map<string, number>();
  const call = async (method: string, path: string, body?: unknown, status = 200) => {
    const response = await server.request(method, path, { token: admin.accessToken, body });
    assert.equal(response.status, status, response.text);
    return response.body;
  };

  before(async () => {
    server = await startTestServer();
    admin = await server.createUser({ role: 'admin' });
    const main = (await call('POST', '/api/meters', { name: 'Main', code: 'm.main', kind: 'energy', site: true }, 201)).id;
    const { energy, db } = server.service.deps;
    const insert = db.sqlite.prepare('INSERT INTO outdoor_days (code, day, hourly_c, samples) VALUES (?, ?, ?, ?)');
    const records: DayRecord[] = [];
    db.sqlite.transaction(() => {
      daysBetween(FIRST, LAST).forEach((day, i) => {
        const t = temperatureOf(i);
        temps.set(day, t);
        insert.run('temp.outdoor', day, Buffer.from(new Float32Array(24).fill(t).buffer), 240);
        const record = energy.store.load(main, day);
        record.kwh.fill(use(day, t) / record.kwh.length);
        records.push(record);
      });
    })();
    energy.store.transaction(() => energy.store.save(records));
  });
  after(() => server?.close());

  test('the rest of the year is the baseline under last year’s weather, each day with its own day type', async () => {
    const budget = await call(
      'POST',
      '/api/billing/budgets',
      { year: Y, utility: 'electricity', scope: 'site', unit: 'kWh', quantity: 40000, amount: 10000, phasing: 'even' },
      201,
    );
    const status = await call('GET', `/api/billing/budgets/${budget.id}/status?at=${AT}`);
    assert.equal(status.forecast.method, 'weather_normalised_baseline', status.forecast.methodNote);
    const ytd = daysBetween(`${Y}-01-01`, AT).reduce((sum, day) => sum + use(day, temps.get(day)!), 0);
    const rest = daysBetween(AT, `${Y + 1}-01-01`).reduce((sum, day) => sum + use(day, temps.get(addDays(day, -365))!), 0);
    assert.ok(Math.abs(status.ytd.quantity - ytd) < 0.5, `${status.ytd.quantity} vs ${ytd}`);
    assert.ok(Math.abs(status.forecast.quantity - (ytd + rest)) < 1, `${status.forecast.quantity} vs ${ytd + rest}`);
    assert.match(
      status.forecast.methodNote,
      new RegExp(
        `^the rest of the year from the weather-normalised baseline \\(${addDays(AT, -365)} – ${addDays(AT, -1)}: 100(\\.\\d+)? \\+ 8(\\.\\d+)? × HDD \\+ 0 × CDD − 20(\\.\\d+)? on weekends, kWh a day`,
      ),
    );
    // Not what the run rate or last year's days scaled to it would give.
    const runRate = ytd + (ytd / daysBetween(`${Y}-01-01`, AT).length) * daysBetween(AT, `${Y + 1}-01-01`).length;
    assert.ok(Math.abs(status.forecast.quantity - runRate) > 100, `${status.forecast.quantity} is not the run rate ${runRate}`);
  });

  test('a baseline that fails its guard rails (nine months) leaves the forecast at the run rate, saying why', async () => {
    const budget = await call(
      'POST',
      '/api/billing/budgets',
      { year: Y - 1, utility: 'electricity', scope: 'site', unit: 'kWh', quantity: 40000, amount: 10000, phasing: 'even' },
      201,
    );
    const status = await call('GET', `/api/billing/budgets/${budget.id}/status?at=${Y - 1}-10-01`);
    assert.equal(status.forecast.method, 'run_rate');
    assert.match(status.forecast.methodNote, /\(no weather-normalised baseline: .+\)$/);
    const ytd = daysBetween(FIRST, `${Y - 1}-10-01`).reduce((sum, day) => sum + use(day, temps.get(day)!), 0);
    const [past, left] = [daysBetween(FIRST, `${Y - 1}-10-01`).length, daysBetween(`${Y - 1}-10-01`, `${Y}-01-01`).length];
    assert.ok(Math.abs(status.forecast.quantity - (ytd + (ytd / past) * left)) < 1);
  });
});
