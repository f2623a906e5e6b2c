// Energy management on a simulated year, over real HTTP: comparisons, demand charges, baselines, EnPIs and anomalies,
// each checked against what the simulated building's counters and climate say (the known answers).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { addDays, dayIntervals } from '../../src/platform/time/calendar.ts';
import { DAY, simulatorRig, type SimulatorRig } from '../helpers/rig.ts';
import { COOLING_BASE_C, HEATING_BASE_C, HOLIDAYS } from '../../src/gateway/simulator/climate.ts';

const close = (actual: number, expected: number, tolerance: number, what: string) =>
  assert.ok(Math.abs(actual - expected) <= Math.abs(expected) * tolerance + 1e-9, `${what}: ${actual} vs ${expected} (±${tolerance * 100}%)`);
const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const midnight = (day: string) => dayIntervals('UTC', day).start;
const QUARTER = 15 * 60_000;
const monthAfter = (month: string) => addDays(`${month}-28`, 7).slice(0, 7);
const monthBefore = (month: string) => addDays(`${month}-01`, -1).slice(0, 7);

/** The site's highest 15-minute mean in a month, from the simulated main counter alone (the hand computation). */
function handPeak(r: SimulatorRig, month: string, dataFrom: number, dataTo: number): number {
  let best = 0;
  for (let t = Math.max(midnight(`${month}-01`), dataFrom); t + QUARTER <= Math.min(midnight(`${monthAfter(month)}-01`), dataTo); t += QUARTER) {
    best = Math.max(best, (r.counter('meter.main.kwh', t + QUARTER) - r.counter('meter.main.kwh', t)) * 4);
  }
  return best;
}

/**
 * A year and a bit of the simulated building, collected a week at a time up to the wall clock's now, then on into the
 * next two months, which two tariff versions with demand charges (added now, as versions must be) will bill.
 */
describe('a simulated year', () => {
  let r: SimulatorRig;
  let main: any;
  let hvac: any;
  let lighting: any;
  let end: number;
  let dataFrom: number;
  let dataTo: number;
  let m1: string;
  let m2: string;
  before(async () => {
    end = Date.now();
    r = await simulatorRig({ start: end - 400 * DAY });
    dataFrom = Math.ceil((end - 407 * DAY) / QUARTER) * QUARTER + QUARTER;
    main = await r.meter({ name: 'Main', code: 'meter.main.kwh', kind: 'energy', site: true });
    hvac = await r.meter({ name: 'HVAC', code: 'meter.hvac.kwh', kind: 'energy', area: 'HVAC' });
    await r.collector.collect();
    await r.run(end, 7 * DAY);
    // Lighting is metered only now: its past is a backfilled week, the year before it has nothing.
    lighting = await r.meter({ name: 'Lighting', code: 'meter.lighting.kwh', kind: 'energy', area: 'Lighting' });
    await r.collector.collect();
    m1 = monthAfter(utcDay(end).slice(0, 7));
    m2 = monthAfter(m1);
    const token = r.admin.accessToken;
    const tariff = async (body: Record<string, unknown>) => {
      const response = await r.server.request('POST', '/api/energy/tariffs', { token, body: { price: 0.25, carbonFactor: 0.4, ...body } });
      assert.equal(response.status, 201, response.text);
    };
    await tariff({ validFrom: `${m1}-01`, demandChargePerKw: 8.5 });
    await tariff({ validFrom: `${m2}-01`, demandChargePerKw: 4, demandChargeBasis: 'rolling_12_month_average', demandChargeMinimumKw: 2.5 });
    dataTo = midnight(`${m2}-04`);
    await r.run(dataTo, 7 * DAY);
  });
  after(() => r?.close());

  describe('comparisons', () => {
    test('a past day against the day before and 364 days earlier: each the simulated counter difference, complete', async () => {
      const day = utcDay(end - 9 * DAY);
      const body = await r.get(`/api/analysis/compare?period=day&at=${day}`);
      const kwh = (from: string) => r.counter('meter.main.kwh', midnight(addDays(from, 1))) - r.counter('meter.main.kwh', midnight(from));
      assert.equal(body.target.kind, 'site');
      assert.deepEqual([body.current.from, body.previous.from, body.lastYear.from], [day, addDays(day, -1), addDays(day, -364)]);
      close(body.current.kwh, kwh(day), 0.0005, 'current');
      close(body.previous.kwh, kwh(addDays(day, -1)), 0.0005, 'previous');
      close(body.lastYear.kwh, kwh(addDays(day, -364)), 0.0005, 'last year');
      for (const part of [body.current, body.previous, body.lastYear])
        assert.ok(part.complete && !part.partial && part.coverage === 1 && part.missingDays.length === 0, JSON.stringify(part));
      // The API rounds a percentage to 2 decimals: compare against the rounding, not with a relative tolerance (a change
      // near 1 % missed ±0.1 % by the rounding alone on some run dates).
      const percent = ((body.current.kwh - body.previous.kwh) / body.previous.kwh) * 100;
      assert.ok(Math.abs(body.change.previous.percent - percent) <= 0.005 + 1e-9, `percent: ${body.change.previous.percent} vs ${percent}`);
    });

    test('the running week is compared like for like: the same elapsed days and intervals of last week and of the week a year earlier', async () => {
      const body = await r.get('/api/analysis/compare?period=week');
      const through = Date.parse(body.current.through);
      assert.equal(through, Math.floor(Date.now() / QUARTER) * QUARTER, 'cut at the last finished interval');
      const elapsed = through - midnight(body.current.from);
      for (const part of [body.current, body.previous, body.lastYear]) {
        assert.equal(part.partial, true);
        const start = midnight(part.from);
        close(part.kwh, r.counter('meter.main.kwh', start + elapsed) - r.counter('meter.main.kwh', start), 0.0005, `${part.from} like for like`);
        assert.equal(Date.parse(part.through) - start, elapsed);
      }
    });

    test('an area metered only lately: the year-earlier week is marked incomplete with its days named; the overview carries the site comparison', async () => {
      const body = await r.get(`/api/analysis/compare?period=custom&from=${utcDay(end - 6 * DAY)}&to=${utcDay(end - DAY)}&area=Lighting`);
      assert.equal(body.target.kind, 'area');
      assert.equal(body.current.complete, true);
      assert.equal(body.lastYear.complete, false);
      assert.equal(body.lastYear.coverage, 0);
      assert.equal(body.lastYear.missingDays.length, 5);
      assert.equal(body.change.lastYear.percent, null, 'no reference energy: no percentage');
      const stats = await r.get('/api/overview/stats');
      const day = await r.get('/api/analysis/compare?period=day');
      assert.equal(stats.comparison.todayVsYesterdayPercent, day.change.previous.percent);
      assert.equal(stats.comparison.todayVsLastYearPercent, day.change.lastYear.percent);
    });

    test('bad questions are 400 with the field named, an unknown meter or area 404', async () => {
      const token = r.admin.accessToken;
      const ask = (query: string) => r.server.request('GET', `/api/analysis/compare?${query}`, { token });
      const cases: [string, number, string | null][] = [
        ['period=fortnight', 400, 'query.period'],
        ['period=custom&from=2026-01-01', 400, 'query.from'],
        ['period=custom&from=2026-02-01&to=2026-01-01', 400, 'query.to'],
        ['period=day&at=2999-01-01', 400, 'query.at'],
        ['period=day&from=2026-01-01', 400, 'query.from'],
        [`period=day&meterId=${main.id}&area=HVAC`, 400, 'query.area'],
        ['period=day&meterId=99999', 404, null],
        ['period=day&area=Nowhere', 404, null],
      ];
      for (const [query, status, path] of cases) {
        const response = await ask(query);
        assert.equal(response.status, status, `${query}: ${response.text}`);
        if (path)
          assert.ok(
            response.body.details?.some((d: any) => d.path === path),
            `${query}: ${response.text}`,
          );
      }
      assert.equal((await ask(`period=month&meterId=${hvac.id}`)).body.target.meters, 1);
      assert.ok(lighting.id > 0);
    });
  });

  describe('demand charges', () => {
    test("a month on the monthly peak: 8.5 per kW of the site's highest 15-minute mean, as computed by hand from the counters; its cost includes it", async () => {
      const body = await r.get(`/api/analysis/demand-charges?month=${m1}`);
      const peak = handPeak(r, m1, dataFrom, dataTo);
      assert.equal(body.version.basis, 'monthly_peak');
      close(body.peak.kw, peak, 0.0001, 'peak');
      close(body.billedKw, peak, 0.0001, 'billed');
      close(body.demandCharge, 8.5 * peak, 0.0001, 'charge');
      const summary = await r.get(`/api/energy/summary?from=${m1}-01&to=${m2}-01`);
      close(body.energyCost, summary.cost, 0.0001, 'energy cost = the summary cost');
      close(body.totalCost, summary.cost + 8.5 * peak, 0.0001, 'total');
      const past = await r.get(`/api/analysis/demand-charges?month=${monthBefore(utcDay(end).slice(0, 7))}`);
      assert.equal(past.running, false);
      assert.equal(past.demandCharge, 0, 'before the versions with a demand price: none');
    });

    test('a month on the rolling 12-month average (Flemish): the mean of 12 hand-computed monthly peaks; the running month shows its charge so far, also in the overview', async () => {
      const body = await r.get(`/api/analysis/demand-charges?month=${m2}`);
      const months = [m2];
      while (months.length < 12) months.unshift(monthBefore(months[0]));
      const peaks = months.map((month) => handPeak(r, month, dataFrom, dataTo));
      const mean = peaks.reduce((a, b) => a + b, 0) / 12;
      assert.deepEqual(
        body.monthlyPeaks.map((p: any) => p.month),
        months,
      );
      body.monthlyPeaks.forEach((p: any, i: number) => close(p.kw, peaks[i], 0.0001, p.month));
      close(body.rollingAverageKw, mean, 0.0001, 'rolling average');
      close(body.demandCharge, 4 * Math.max(2.5, mean), 0.0001, 'charge');
      assert.equal(body.running, true);
      const { deps } = r.server.service;
      const { OverviewService } = await import('../../src/screens/overview/service.ts');
      const stats = new OverviewService(deps.db, deps.energy.figures, deps.analysis.comparisons, deps.analysis.demandCharges).stats(
        new Date(midnight(`${m2}-03`) + 12 * 3_600_000),
      );
      assert.equal(stats.demandChargeMonth, body.demandCharge);
      close(stats.costMonth, body.totalCost, 0.0001, 'the month card includes the demand charge');
      const bad = await r.server.request('GET', '/api/analysis/demand-charges?month=2026-13', { token: r.admin.accessToken });
      assert.equal(bad.status, 400);
    });
  });

  describe('baselines', () => {
    /** The simulated building's holidays over the years the fixture spans. */
    const holidays = () => [0, 1, 2].flatMap((k) => HOLIDAYS.map((mmdd) => `${new Date(end).getUTCFullYear() - 1 + k}-${mmdd}`));

    test("a year's baseline of HVAC recovers the simulator's heating slope (5 kW/K × 24 h = 120 kWh per degree day) within 2 %; its G14 statistics match a hand computation; the month after it is on the baseline", async (t) => {
      const baselineFrom = utcDay(end - 399 * DAY);
      const baselineTo = addDays(baselineFrom, 365);
      const query = new URLSearchParams({
        meterId: String(hvac.id),
        baselineFrom,
        baselineTo,
        reportFrom: baselineTo,
        reportTo: utcDay(end),
        heatingBaseC: String(HEATING_BASE_C),
        coolingBaseC: String(COOLING_BASE_C),
      });
      for (const day of holidays()) query.append('holidays', day);
      const body = await r.get(`/api/analysis/baseline?${query}`);
      t.diagnostic(`HVAC baseline: ${JSON.stringify(body.model.coefficients)} ${JSON.stringify(body.statistics)}`);
      close(body.model.coefficients.perHdd, 120, 0.02, 'kWh per heating degree day');
      assert.ok(body.temperatureDaysFetched >= 365, 'read from the gateway history');
      assert.equal(body.statistics.n, 365);
      // G14 by hand from the days the answer lists.
      const y = body.baselineDays.map((d: any) => d.actualKwh);
      const yHat = body.baselineDays.map((d: any) => d.expectedKwh);
      const n = y.length;
      const p = body.statistics.p;
      const mean = y.reduce((a: number, b: number) => a + b, 0) / n;
      const ssRes = y.reduce((sum: number, v: number, i: number) => sum + (v - yHat[i]) ** 2, 0);
      const ssTot = y.reduce((sum: number, v: number) => sum + (v - mean) ** 2, 0);
      const bias = y.reduce((sum: number, v: number, i: number) => sum + (v - yHat[i]), 0);
      close(body.statistics.cvRmsePercent, (Math.sqrt(ssRes / (n - p)) / mean) * 100, 0.001, 'CV(RMSE)');
      close(body.statistics.r2, 1 - ssRes / ssTot, 0.001, 'R²');
      assert.ok(Math.abs(body.statistics.nmbePercent - (bias / ((n - p) * mean)) * 100) < 0.001, 'NMBE');
      assert.equal(
        body.statistics.pass.all,
        body.statistics.cvRmsePercent <= 20 && Math.abs(body.statistics.nmbePercent) <= 0.005 && body.statistics.r2 >= 0.75,
      );
      assert.equal(body.statistics.pass.all, true);
      // A day's HDD against the simulated climate's own, from its 5-minute slots.
      const sample = body.baselineDays.find((d: any) => d.hdd > 3);
      let exact = 0;
      for (let k = 0; k < 288; k += 1) exact += Math.max(0, HEATING_BASE_C - r.sim.building.conditions(midnight(sample.day) + k * 300_000 + 150_000).outdoorC);
      assert.ok(Math.abs(sample.hdd - exact / 288) < 0.15, `${sample.day}: HDD ${sample.hdd} vs ${exact / 288}`);
      // The building did not change: the month after the baseline is within a few % of what it predicts; CUSUM is the running sum.
      const report = body.report;
      assert.ok(Math.abs(report.savingsPercent) < 5, `savings ${report.savingsPercent} %`);
      let cusum = 0;
      for (const d of report.days) {
        cusum += d.actualKwh - d.expectedKwh;
        assert.ok(Math.abs(d.cusumKwh - cusum) < 0.01 * report.days.length, `${d.day}: CUSUM ${d.cusumKwh} vs ${cusum}`);
      }
      close(report.savingsKwh, report.expectedKwh - report.actualKwh, 0.0001, 'savings');
      // Asked again: the temperatures are kept, nothing is read from the gateway.
      const again = await r.get(`/api/analysis/baseline?${query}`);
      assert.equal(again.temperatureDaysFetched, 0);
      assert.deepEqual(again.model, body.model);
    });

    test('bad baseline questions are 400 with the field named', async () => {
      const token = r.admin.accessToken;
      const ask = (query: string) => r.server.request('GET', `/api/analysis/baseline?${query}`, { token });
      const from = utcDay(end - 300 * DAY);
      const cases: [string, string][] = [
        [`baselineFrom=${from}&baselineTo=${from}`, 'query.baselineTo'],
        [`baselineFrom=${from}&baselineTo=${addDays(from, 10)}`, 'query.baselineFrom'],
        [`baselineFrom=${from}&baselineTo=${addDays(from, 60)}&reportFrom=${addDays(from, 30)}`, 'query.reportFrom'],
        [`baselineFrom=${from}&baselineTo=${addDays(from, 60)}&temperatureCode=no.such.point`, 'query.temperatureCode'],
        [`baselineFrom=${from}&baselineTo=${addDays(from, 60)}&heatingBaseC=hot`, 'query.heatingBaseC'],
      ];
      for (const [query, path] of cases) {
        const response = await ask(query);
        assert.equal(response.status, 400, `${query}: ${response.text}`);
        assert.ok(
          response.body.details?.some((d: any) => d.path === path),
          `${query}: ${response.text}`,
        );
      }
    });
  });

  describe('EnPIs', () => {
    test('kWh per m², per degree day and per desk-day by month equal the simulated counters divided by the entered figures; viewers cannot enter them', async () => {
      const token = r.admin.accessToken;
      const floors = await r.server.request('PUT', '/api/analysis/floor-areas', {
        token,
        body: {
          areas: [
            { area: 'HVAC', floorAreaM2: 1200 },
            { area: 'Lighting', floorAreaM2: 800 },
          ],
        },
      });
      assert.equal(floors.status, 200, floors.text);
      const first = monthBefore(monthBefore(utcDay(end).slice(0, 7)));
      const second = monthAfter(first);
      const drivers = await r.server.request('PUT', '/api/analysis/drivers', {
        token,
        body: {
          values: [
            { name: 'desk-days', month: first, value: 2100, unit: 'desk-days' },
            { name: 'desk-days', month: second, value: 1900, unit: 'desk-days' },
          ],
        },
      });
      assert.equal(drivers.status, 200, drivers.text);
      const body = await r.get(`/api/analysis/enpi?area=HVAC&from=${first}&to=${monthAfter(second)}&driver=desk-days`);
      assert.equal(body.floorAreaM2, 1200);
      assert.equal(body.months.length, 2);
      for (const [i, month] of [first, second].entries()) {
        const row = body.months[i];
        const kwh = r.counter('meter.hvac.kwh', midnight(`${monthAfter(month)}-01`)) - r.counter('meter.hvac.kwh', midnight(`${month}-01`));
        close(row.kwh, kwh, 0.0005, `${month} kWh`);
        close(row.kwhPerM2, kwh / 1200, 0.001, `${month} kWh/m²`);
        close(row.kwhPerDriverUnit, kwh / [2100, 1900][i], 0.001, `${month} kWh/desk-day`);
        assert.ok(row.temperatureDays >= 28 && row.hdd > 0, JSON.stringify(row));
        close(row.kwhPerDegreeDay, row.kwh / (row.hdd + row.cdd), 0.001, `${month} kWh/degree day`);
      }
      const site = await r.get(`/api/analysis/enpi?from=${first}&to=${second}`);
      assert.equal(site.floorAreaM2, 2000, "the site's floor area is its areas'");
      const viewer = await r.server.createUser({ role: 'viewer' });
      assert.equal((await r.server.request('PUT', '/api/analysis/floor-areas', { token: viewer.accessToken, body: { areas: [] } })).status, 403);
      assert.equal(
        (await r.server.request('PUT', '/api/analysis/drivers', { token, body: { values: [{ name: 'x', month: '2026-13', value: 1 }] } })).status,
        400,
      );
      assert.equal((await r.server.request('GET', `/api/analysis/enpi?from=${second}&to=${first}`, { token })).status, 400);
    });
  });
});
