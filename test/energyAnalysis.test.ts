// Energy management on a simulated year, over real HTTP: comparisons, demand charges, baselines, EnPIs and anomalies,
// each checked against what the simulated building's counters and climate say (the known answers).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { addDays, dayIntervals } from '../src/energy/calendar.ts';
import { DAY, energyRig, type EnergyRig } from './helpers/energyRig.ts';

const close = (actual: number, expected: number, tolerance: number, what: string) =>
  assert.ok(Math.abs(actual - expected) <= Math.abs(expected) * tolerance + 1e-9, `${what}: ${actual} vs ${expected} (±${tolerance * 100}%)`);
const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const midnight = (day: string) => dayIntervals('UTC', day).start;

/** A year and a bit of the simulated building, collected a week at a time up to the wall clock's now. */
describe('a simulated year', () => {
  let r: EnergyRig;
  let main: any;
  let hvac: any;
  let lighting: any;
  let end: number;
  before(async () => {
    end = Date.now();
    r = await energyRig({ start: end - 400 * DAY });
    main = await r.meter({ name: 'Main', code: 'meter.main.kwh', kind: 'energy', site: true });
    hvac = await r.meter({ name: 'HVAC', code: 'meter.hvac.kwh', kind: 'energy', area: 'HVAC' });
    await r.collector.collect();
    await r.run(end, 7 * DAY);
    // Lighting is metered only now: its past is a backfilled week, the year before it has nothing.
    lighting = await r.meter({ name: 'Lighting', code: 'meter.lighting.kwh', kind: 'energy', area: 'Lighting' });
    await r.collector.collect();
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
      for (const part of [body.current, body.previous, body.lastYear]) assert.ok(part.complete && !part.partial && part.coverage === 1 && part.missingDays.length === 0, JSON.stringify(part));
      close(body.change.previous.percent, ((body.current.kwh - body.previous.kwh) / body.previous.kwh) * 100, 0.001, 'percent');
    });

    test('the running week is compared like for like: the same elapsed days and intervals of last week and of the week a year earlier', async () => {
      const body = await r.get('/api/analysis/compare?period=week');
      const through = Date.parse(body.current.through);
      assert.ok(through <= end && through > end - 30 * 60_000, `through ${body.current.through}, data to ${new Date(end).toISOString()}`);
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
        if (path) assert.ok(response.body.details?.some((d: any) => d.path === path), `${query}: ${response.text}`);
      }
      assert.equal((await ask(`period=month&meterId=${hvac.id}`)).body.target.meters, 1);
      assert.ok(lighting.id > 0);
    });
  });
});
