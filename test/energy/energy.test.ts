// Energy metering end to end: the gateway simulator over real HTTP (on a clock the test moves), the collector, the
// interval store in the real SQLite file, and the figures every energy endpoint answers.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { addDays, dayIntervals, siteDay } from '../../src/platform/time/calendar.ts';
import { FLAG_ESTIMATED, FLAG_RESET, storedFlags, storedKwh } from '../../src/metering/store.ts';
import { fetchRetryingReset, patience, startTestServer, tempDir } from '../helpers/server.ts';
import { DAY, demandWatch, MIN, separateCollector, simulatorRig, type SimulatorRig } from '../helpers/rig.ts';
import { ReportContentBuilder, reportPeriod } from '../../src/reporting/reports/content.ts';
import { siteEnergyFigures } from '../helpers/reportEnergy.ts';
import { renderPdf } from '../../src/reporting/reports/renderPdf.ts';
import { SiteFormat } from '../../src/platform/i18n/format.ts';
import { runTool } from '../helpers/tools.ts';
import fs from 'node:fs';
import path from 'node:path';

type Rig = SimulatorRig & {
  /** The counter the simulator shows at an instant (its clock moved there and back). */
  counterAt(code: string, ms: number): number;
  simCall(path: string, body: unknown): Promise<number>;
};

async function rig(options: { start: number; timezone?: string; subMeters?: number }): Promise<Rig> {
  const r = await simulatorRig({ start: options.start, simulator: { subMeters: options.subMeters } });
  if (options.timezone)
    assert.equal((await r.server.request('PUT', '/api/configs', { token: r.admin.accessToken, body: { timezone: options.timezone } })).status, 200);
  return {
    ...r,
    counterAt(code, ms) {
      const saved = r.clock.now;
      r.clock.now = ms;
      const value = r.sim.building.read(code).value as number;
      r.clock.now = saved;
      return value;
    },
    async simCall(path, body) {
      const response = await fetch(r.sim.url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      await response.arrayBuffer();
      return response.status;
    },
  };
}

/** Collects every `stepMs` from the clock's time until `until`, on the rig's collector of the moment (a test swaps it for a restarted one). */
async function run(r: Rig, until: number, stepMs = MIN): Promise<void> {
  while (r.clock.now < until) {
    r.clock.now = Math.min(until, r.clock.now + stepMs);
    await r.collector.collect();
  }
}

function dayRow(r: Rig, meterId: number, day: string): { kwh: Float64Array; flags: Uint8Array; total: number; cost: number } | undefined {
  const row = r.server.service.deps.db.sqlite
    .prepare('SELECT kwh, flags, total_kwh AS total, cost FROM meter_days WHERE meter_id = ? AND day = ?')
    .get(meterId, day) as { kwh: Buffer; flags: Buffer; total: number; cost: number } | undefined;
  if (!row) return undefined;
  const kwh = storedKwh(row.kwh);
  return { kwh, flags: storedFlags(row.flags, row.kwh, kwh.length), total: row.total, cost: row.cost };
}

const sum = (values: ArrayLike<number>) => Array.from(values).reduce((a, b) => a + (Number.isNaN(b) ? 0 : b), 0);
const close = (actual: number, expected: number, tolerance: number, what: string) =>
  assert.ok(Math.abs(actual - expected) <= Math.abs(expected) * tolerance, `${what}: ${actual} vs ${expected} (±${tolerance * 100}%)`);

describe('collection into the interval store', () => {
  // 2026-11-10 12:34:56 UTC: mid-interval, mid-day.
  const start = Date.UTC(2026, 10, 10, 12, 34, 56);
  let r: Rig;
  let main: any;
  let hvac: any;
  before(async () => {
    r = await rig({ start });
    main = await r.meter({ name: 'Main', code: 'meter.main.kwh', kind: 'energy', site: true });
    hvac = await r.meter({ name: 'HVAC', code: 'meter.hvac.kwh', kind: 'energy', area: 'HVAC' });
  });
  after(() => r.close());

  test("a new meter is backfilled 7 days from history; a full day's intervals sum to the counter difference within 0.1%", async () => {
    const result = await r.collector.collect();
    assert.equal(result.meters, 2);
    assert.ok(result.filled > 2 * 7 * 288 * 0.9, `history readings used: ${result.filled}`);
    for (const day of ['2026-11-04', '2026-11-07', '2026-11-09']) {
      const { start: dayStart } = dayIntervals('UTC', day);
      const row = dayRow(r, main.id, day)!;
      assert.equal(row.kwh.length, 96);
      assert.ok(
        row.kwh.every((v) => !Number.isNaN(v) && v > 0),
        'every interval has energy',
      );
      const expected = r.counterAt('meter.main.kwh', dayStart + DAY) - r.counterAt('meter.main.kwh', dayStart);
      close(sum(row.kwh), expected, 0.001, `${day} intervals`);
      close(row.total, expected, 0.001, `${day} rollup`);
    }
    assert.equal(dayRow(r, main.id, '2026-11-02'), undefined, 'nothing before the 7 days');
  });

  test('live readings every minute: intervals over two hours equal the counter difference; no interval negative', async () => {
    const from = r.clock.now;
    await run(r, from + 2 * 3_600_000);
    const row = dayRow(r, hvac.id, '2026-11-10')!;
    const first = Math.floor(from / (15 * MIN)) + 1;
    const dayStart = dayIntervals('UTC', '2026-11-10').start;
    const i0 = first - dayStart / (15 * MIN);
    // Whole intervals from the first boundary after the start to the last one before now.
    const last = Math.floor(r.clock.now / (15 * MIN));
    const window = row.kwh.slice(i0, last - dayStart / (15 * MIN));
    const expected = r.counterAt('meter.hvac.kwh', last * 15 * MIN) - r.counterAt('meter.hvac.kwh', first * 15 * MIN);
    close(sum(window), expected, 0.001, 'two hours of intervals');
    assert.ok(row.kwh.every((v) => Number.isNaN(v) || v >= 0));
  });

  test('a restart mid-interval continues from the stored reading: nothing counted twice, nothing lost', async () => {
    r.clock.now += 7 * MIN + 13_000;
    await r.collector.collect();
    const before = dayRow(r, main.id, '2026-11-10')!.total;
    const at = r.clock.now;
    // A new collector is what a restarted service builds: its state comes from the database only.
    r.collector = separateCollector(r.server, r.clock);
    await run(r, at + 30 * MIN);
    const added = dayRow(r, main.id, '2026-11-10')!.total - before;
    close(added, r.counterAt('meter.main.kwh', r.clock.now) - r.counterAt('meter.main.kwh', at), 0.001, 'energy after the restart');
  });

  test('a 2-hour gateway outage is filled from history when it answers again, nothing counted twice, nothing flagged estimated', async () => {
    const from = r.clock.now;
    const totalBefore = dayRow(r, main.id, '2026-11-10')!.total;
    assert.equal(await r.simCall('/sim/offline', { offline: true }), 200);
    await run(r, from + 2 * 3_600_000, 5 * MIN);
    const status = r.collector.health();
    assert.ok(status.lastError, 'the failure is visible');
    assert.equal(dayRow(r, main.id, '2026-11-10')!.total, totalBefore, 'nothing counted while the gateway is down');
    assert.equal(await r.simCall('/sim/offline', { offline: false }), 200);
    r.clock.now += MIN;
    await r.collector.collect();
    assert.equal(r.collector.health().lastError, null);
    const row = dayRow(r, main.id, '2026-11-10')!;
    close(row.total - totalBefore, r.counterAt('meter.main.kwh', r.clock.now) - r.counterAt('meter.main.kwh', from), 0.001, 'energy over the outage');
    assert.ok(
      row.flags.every((f) => (f & FLAG_ESTIMATED) === 0),
      'filled from history, not estimated',
    );
  });

  test('a counter reset is detected: the interval is flagged, never negative, and counts what the new counter shows', async () => {
    await run(r, r.clock.now + 5 * MIN);
    const at = r.clock.now;
    const totalBefore = dayRow(r, hvac.id, '2026-11-10')!.total;
    assert.equal(await r.simCall('/sim/meters/reset', { code: 'meter.hvac.kwh' }), 200);
    await run(r, at + 20 * MIN);
    const row = dayRow(r, hvac.id, '2026-11-10')!;
    assert.ok(
      row.kwh.every((v) => Number.isNaN(v) || v >= 0),
      'no negative interval',
    );
    assert.ok(
      row.flags.some((f) => f & FLAG_RESET),
      'reset flagged',
    );
    const added = row.total - totalBefore;
    // Energy before the reset in the first minute is lost with the old counter; at most one minute of HVAC load (~2.5 kWh).
    assert.ok(added > 0 && added < 75 * (20 / 60) * 1.6, `energy over the reset window: ${added}`);
    const csv = await r.server.request('GET', `/api/energy/export.csv?meterId=${hvac.id}&from=2026-11-10&to=2026-11-11`, { token: r.admin.accessToken });
    assert.ok(
      csv.text.split('\n').some((line) => line.endsWith(`,${FLAG_RESET},measured`)),
      'the CSV shows the flag',
    );
  });

  test('a giant counter jump (a replaced meter) is not counted as energy', async () => {
    const totalBefore = dayRow(r, main.id, '2026-11-10')!.total;
    const forced = await (async () => {
      const tokenAnswer = await fetch(`${r.sim.url}/auth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'ems', password: 'ems-simulator' }),
      });
      const { token } = (await tokenAnswer.json()) as { token: string };
      const value = r.counterAt('meter.main.kwh', r.clock.now) + 5e9;
      const answer = await fetch(`${r.sim.url}/codes/force-set`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ code: 'meter.main.kwh', value }),
      });
      return answer.status;
    })();
    assert.equal(forced, 200);
    r.clock.now += MIN;
    await r.collector.collect();
    const row = dayRow(r, main.id, '2026-11-10')!;
    // A forced value has quality "forced": flagged bad, not counted.
    assert.ok(row.total - totalBefore < 10, `counted ${row.total - totalBefore} kWh`);
  });
});

describe('sub-meters, virtual meters and the figures', () => {
  const start = Date.UTC(2026, 10, 20, 9, 7, 0);
  let r: Rig;
  const ids: Record<string, number> = {};
  before(async () => {
    r = await rig({ start, subMeters: 8 });
    const main = await r.meter({ name: 'Main', code: 'meter.main.kwh', kind: 'energy', site: true });
    ids.main = main.id;
    const subs = [];
    for (const code of ['meter.hvac.kwh', 'meter.lighting.kwh', 'meter.it.kwh', ...Array.from({ length: 5 }, (_, i) => `meter.sub.00${i + 1}.kwh`)]) {
      subs.push(await r.meter({ name: code, code, kind: 'energy', area: code.startsWith('meter.sub') ? 'Tenants' : 'Plant' }));
    }
    const rest = await r.meter({
      name: 'Rest of building',
      kind: 'virtual',
      area: 'Other',
      terms: [{ meterId: main.id, sign: 1 }, ...subs.map((s) => ({ meterId: s.id, sign: -1 }))],
    });
    ids.rest = rest.id;
    await r.collector.collect();
    await run(r, start + 30 * MIN);
  });
  after(() => r.close());

  test('sub-meters plus "rest of building" equal the main meter in every interval and every day', async () => {
    const token = r.admin.accessToken;
    const series = async (q: string) =>
      (await r.server.request('GET', `/api/energy/series?from=2026-11-15&to=2026-11-21&resolution=15min&${q}`, { token })).body.points;
    const main = await series(`meterId=${ids.main}`);
    const parts = await Promise.all(['area=Plant', 'area=Tenants', 'area=Other'].map(series));
    assert.equal(main.length, 6 * 96);
    let compared = 0;
    main.forEach((point: any, i: number) => {
      if (point.kwh === null) return;
      const total = parts.reduce((s, p) => s + p[i].kwh, 0);
      assert.ok(Math.abs(total - point.kwh) < 0.01, `${point.start}: ${total} vs ${point.kwh}`);
      compared += 1;
    });
    assert.ok(compared > 5 * 96, `compared ${compared} intervals`);
    const summary = (await r.server.request('GET', '/api/energy/summary?from=2026-11-15&to=2026-11-20', { token })).body;
    const areaSum = summary.areas.reduce((s: number, a: any) => s + a.kwh, 0);
    close(areaSum, summary.totalKwh, 0.0001, 'areas vs site');
    assert.deepEqual(
      summary.areas.map((a: any) => a.area),
      ['Other', 'Plant', 'Tenants'],
    );
  });

  test('overview, weekly chart, area cards, series and summary agree with each other', async () => {
    const token = r.admin.accessToken;
    // The API's "today" is the wall clock's; the figures for the simulated days are read by date.
    const summary = (await r.server.request('GET', '/api/energy/summary?from=2026-11-14&to=2026-11-21', { token })).body;
    const days = (await r.server.request('GET', '/api/energy/series?from=2026-11-14&to=2026-11-21&resolution=day', { token })).body.points;
    assert.deepEqual(
      days.map((d: any) => d.kwh),
      summary.days.map((d: any) => d.kwh),
    );
    const hours = (await r.server.request('GET', `/api/energy/series?from=2026-11-19&to=2026-11-20&resolution=hour&meterId=${ids.main}`, { token })).body
      .points;
    assert.equal(hours.length, 24);
    close(sum(hours.map((h: any) => h.kwh)), summary.days.find((d: any) => d.day === '2026-11-19').kwh, 0.0001, 'hours vs day');
    const month = (await r.server.request('GET', '/api/energy/series?from=2026-11-01&to=2026-12-01&resolution=month', { token })).body.points;
    close(month[0].kwh, r.server.service.deps.energy.figures.totals('2026-11-01', '2026-12-01').kwh, 0.0001, 'month rollup');
    // The seeded tariff: 0.25 per kWh, 0.4 kg per kWh, no standing charge.
    for (const day of summary.days.filter((d: any) => d.kwh > 0)) {
      close(day.cost, day.kwh * 0.25, 0.001, `${day.day} cost`);
      close(day.carbonKg, day.kwh * 0.4, 0.001, `${day.day} carbon`);
    }
    const peaks = (await r.server.request('GET', '/api/energy/peaks?month=2026-11', { token })).body;
    assert.ok(peaks.site.kw > 150 && peaks.site.kw < 400, `site peak ${peaks.site.kw}`);
    assert.equal(peaks.meters[0].meterId, ids.main);
    assert.equal(peaks.site.kw, peaks.meters[0].kw, 'one site meter: its peak is the site peak');
    assert.ok(summary.peak.kw <= peaks.site.kw);

    const areas = (await r.server.request('GET', '/api/energy/areas', { token })).body.areas;
    assert.deepEqual(
      areas.map((a: any) => [a.name, a.source]),
      [
        ['Other', 'meters'],
        ['Plant', 'meters'],
        ['Tenants', 'meters'],
      ],
    );
    const stats = (await r.server.request('GET', '/api/overview/stats', { token })).body;
    assert.ok(stats.powerKw > 100, `power now ${stats.powerKw}`);
    const weekly = (await r.server.request('GET', '/api/overview/energy/weekly', { token })).body;
    assert.equal(weekly.days.length, 7);
  });

  test('a virtual meter added after the fact gets its whole history from its terms, and again when its terms change', async () => {
    const token = r.admin.accessToken;
    const meters = (await r.server.request('GET', '/api/meters?pageSize=50', { token })).body.items;
    const plant = meters.filter((m: any) => m.area === 'Plant');
    const late = await r.meter({ name: 'Plant total', kind: 'virtual', terms: plant.map((m: any) => ({ meterId: m.id, sign: 1 })) });
    // Rebuilt after the meter write, in slices (issue 29).
    await r.server.service.deps.energy.store.rebuilds.idle();
    const day = '2026-11-17';
    const sumOf = (ids: number[]) => ids.reduce((s, id) => s + dayRow(r, id, day)!.total, 0);
    close(dayRow(r, late.id, day)!.total, sumOf(plant.map((m: any) => m.id)), 1e-6, 'rebuilt day');
    const month = (await r.server.request('GET', `/api/energy/series?from=2026-11-01&to=2026-12-01&resolution=month&meterId=${late.id}`, { token })).body
      .points[0].kwh;
    const expected = r.server.service.deps.energy.figures.totals('2026-11-01', '2026-12-01', { area: 'Plant' }).kwh;
    close(month, expected, 1e-6, 'month rollup of the rebuilt meter');
    const changed = await r.server.request('PUT', `/api/meters/${late.id}`, { token, body: { terms: [{ meterId: plant[0].id, sign: 1 }] } });
    assert.equal(changed.status, 200);
    await r.server.service.deps.energy.store.rebuilds.idle();
    close(dayRow(r, late.id, day)!.total, dayRow(r, plant[0].id, day)!.total, 1e-6, 'rebuilt after new terms');
    assert.equal((await r.server.request('DELETE', `/api/meters/${late.id}`, { token })).status, 204);
  });

  test("a weekly energy report's PDF carries the metered figures the summary API answers", async () => {
    const { deps } = r.server.service;
    const now = Date.UTC(2026, 10, 20, 9, 30);
    const period = reportPeriod('weekly-energy', 'UTC', now);
    const content = new ReportContentBuilder(deps.db, siteEnergyFigures(deps.db, deps.energy.figures)).build('weekly-energy', 'Weekly energy', now);
    const summary = (await r.server.request('GET', `/api/energy/summary?from=${period.from}&to=${period.to}`, { token: r.admin.accessToken })).body;
    assert.deepEqual(content.energy, summary);
    assert.ok(summary.totalKwh > 1000, `metered energy in the report period: ${summary.totalKwh}`);
    const file = path.join(tempDir(), 'weekly.pdf');
    fs.writeFileSync(file, await renderPdf(content));
    const text = await runTool('pdftotext', ['-layout', file, '-']);
    // The PDF writes the site's locale (en-US by default): grouped, one decimal.
    const site = new SiteFormat({ locale: 'en-US', timezone: 'UTC', currency: 'EUR' });
    assert.ok(text.includes(site.kwh(summary.totalKwh)), 'the period total');
    for (const area of summary.areas)
      assert.match(text, new RegExp(`${area.area}\\s+${site.number(area.kwh, 1).replace(/[.,]/g, '\\$&')}\\s`), `area ${area.area}`);
    assert.ok(text.includes(site.kw(summary.peak.kw)), 'the peak');
  });

  test('a month-to-date report covers the first of this month up to and including today, and carries its metered figures', async () => {
    const { deps } = r.server.service;
    const now = Date.UTC(2026, 10, 20, 9, 30);
    const period = reportPeriod('month-to-date', 'UTC', now);
    assert.deepEqual(period, { from: '2026-11-01', to: '2026-11-21' });
    const content = new ReportContentBuilder(deps.db, siteEnergyFigures(deps.db, deps.energy.figures)).build('month-to-date', 'Month to date', now);
    const summary = (await r.server.request('GET', `/api/energy/summary?from=${period.from}&to=${period.to}`, { token: r.admin.accessToken })).body;
    assert.deepEqual(content.energy, summary);
    assert.ok(summary.totalKwh > 1000, `metered energy so far this month: ${summary.totalKwh}`);
    const text = await runTool('pdftotext', ['-layout', '-', '-'], { input: await renderPdf(content) });
    assert.ok(text.includes(new SiteFormat({ locale: 'en-US', timezone: 'UTC', currency: 'EUR' }).kwh(summary.totalKwh)), 'the total so far');
    const templates = (await r.server.request('GET', '/api/reports/templates', { token: r.admin.accessToken })).body.items;
    assert.ok(templates.some((template: { key: string }) => template.key === 'month-to-date'));
  });

  test('a year of 15-minute CSV streams one line per interval with its flags', async () => {
    const response = await fetchRetryingReset(`${r.server.url}/api/energy/export.csv?meterId=${ids.rest}&from=2026-11-15&to=2026-11-20`, {
      headers: { authorization: `Bearer ${r.admin.accessToken}` },
    });
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type')!, /text\/csv/);
    assert.match(response.headers.get('content-disposition')!, /attachment/);
    const lines = (await response.text()).trim().split('\n');
    assert.equal(lines[0], 'start,end,kwh,mean_kw,flags,quality');
    assert.equal(lines.length, 1 + 5 * 96);
    assert.match(lines[1], /^2026-11-15T00:00:00\.000Z,2026-11-15T00:15:00\.000Z,\d+(\.\d+)?,\d+(\.\d+)?,0,measured$/);
  });

  test('bad queries are 400 with the field named, an unknown meter 404', async () => {
    const token = r.admin.accessToken;
    const cases: [string, number, string][] = [
      ['/api/energy/series?from=2026-11-20&to=2026-11-10&resolution=day', 400, 'query.to'],
      ['/api/energy/series?from=2026-11-01&to=2026-11-02&resolution=week', 400, 'query.resolution'],
      ['/api/energy/series?from=2020-01-01&to=2026-01-01&resolution=15min', 400, 'query.to'],
      ['/api/energy/series?from=2026-11-01&to=2026-11-02&resolution=day&meterId=9999', 404, ''],
      ['/api/energy/export.csv?meterId=9999&from=2026-11-01&to=2026-11-02', 404, ''],
      ['/api/energy/summary?from=2026-13-01&to=2026-11-02', 400, 'query.from'],
      ['/api/energy/peaks?month=2026-13', 400, 'query.month'],
    ];
    for (const [path, status, field] of cases) {
      const response = await r.server.request('GET', path, { token });
      assert.equal(response.status, status, `${path}: ${response.text}`);
      if (field)
        assert.ok(
          response.body.details.some((d: any) => d.path === field),
          `${path}: ${response.text}`,
        );
    }
  });

  test('meters: virtual terms checked, names and codes unique, a meter in use cannot go, viewers read but do not write', async () => {
    const token = r.admin.accessToken;
    const post = (body: unknown) => r.server.request('POST', '/api/meters', { token, body });
    assert.equal((await post({ name: 'Bad', kind: 'virtual', terms: [{ meterId: ids.rest, sign: 1 }] })).status, 400);
    assert.equal((await post({ name: 'Bad', kind: 'virtual', terms: [{ meterId: 99999, sign: 1 }] })).status, 400);
    assert.equal((await post({ name: 'Bad', kind: 'virtual', code: 'x', terms: [{ meterId: ids.main, sign: 1 }] })).status, 400);
    assert.equal((await post({ name: 'Bad', kind: 'energy' })).status, 400, 'a gateway meter needs its code');
    assert.equal((await post({ name: 'main', code: 'other.kwh', kind: 'energy' })).status, 409, 'names are unique, case-insensitively');
    assert.equal((await post({ name: 'Again', code: 'meter.main.kwh', kind: 'energy' })).status, 409);
    assert.equal((await r.server.request('PUT', `/api/meters/${ids.main}`, { token, body: { kind: 'power' } })).status, 400);
    assert.equal((await r.server.request('DELETE', `/api/meters/${ids.main}`, { token })).status, 409, 'rest of building is built on it');
    const viewer = await r.server.createUser({ role: 'viewer' });
    assert.equal((await r.server.request('GET', '/api/meters', { token: viewer.accessToken })).status, 200);
    assert.equal((await r.server.request('POST', '/api/meters', { token: viewer.accessToken, body: { name: 'V', code: 'v', kind: 'energy' } })).status, 403);
  });
});

describe('site days in the platform time zone', () => {
  test('siteDay answers what Intl does for every instant, going forward, backward and between zones (it keeps the last day per zone)', () => {
    const zones = ['Europe/Berlin', 'America/Santiago', 'Pacific/Chatham', 'Asia/Kathmandu', 'UTC'];
    const fresh = (zone: string, ms: number) =>
      new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date(ms));
    // Around both 2026 changes of the northern and southern zones, every 7.5 minutes, the zones interleaved.
    const spans = [Date.UTC(2026, 2, 27), Date.UTC(2026, 3, 3), Date.UTC(2026, 8, 4), Date.UTC(2026, 9, 23)];
    let checked = 0;
    for (const from of spans) {
      const instants = Array.from({ length: (4 * 86_400_000) / 450_000 }, (_, i) => from + i * 450_000);
      for (const ms of [...instants, ...instants.reverse()]) {
        for (const zone of zones) {
          assert.equal(siteDay(zone, new Date(ms)), fresh(zone, ms), `${zone} at ${new Date(ms).toISOString()}`);
          checked += 1;
        }
      }
    }
    assert.equal(checked, 4 * 2 * 768 * zones.length);
  });

  test('the autumn DST day has 100 intervals, the spring one 92, each summing to the counter difference between local midnights', async () => {
    const r = await rig({ start: Date.UTC(2026, 2, 30, 12, 0, 0), timezone: 'Europe/Berlin' });
    try {
      const meter = await r.meter({ name: 'Main', code: 'meter.main.kwh', kind: 'energy', site: true });
      await r.collector.collect();
      const spring = dayRow(r, meter.id, '2026-03-29')!;
      assert.equal(spring.kwh.length, 92);
      const { start: s0 } = dayIntervals('Europe/Berlin', '2026-03-29');
      assert.equal(new Date(s0).toISOString(), '2026-03-28T23:00:00.000Z');
      close(
        spring.total,
        r.counterAt('meter.main.kwh', dayIntervals('Europe/Berlin', '2026-03-30').start) - r.counterAt('meter.main.kwh', s0),
        0.001,
        'spring day',
      );
      assert.equal(dayRow(r, meter.id, '2026-03-28')!.kwh.length, 96);
      // The autumn change: the clock moves on, and the gap is filled from history.
      r.clock.now = Date.UTC(2026, 9, 26, 12, 0, 0);
      await r.collector.collect();
      const autumn = dayRow(r, meter.id, '2026-10-25')!;
      assert.equal(autumn.kwh.length, 100);
      const { start: a0 } = dayIntervals('Europe/Berlin', '2026-10-25');
      close(
        autumn.total,
        r.counterAt('meter.main.kwh', dayIntervals('Europe/Berlin', '2026-10-26').start) - r.counterAt('meter.main.kwh', a0),
        0.001,
        'autumn day',
      );
      const points = (
        await r.server.request('GET', `/api/energy/series?from=2026-10-25&to=2026-10-26&resolution=15min&meterId=${meter.id}`, { token: r.admin.accessToken })
      ).body.points;
      assert.equal(points.length, 100);
    } finally {
      await r.close();
    }
  });
});

describe('tariffs', () => {
  test('time-of-use bands price each interval; a new version never changes a past cost; versions in effect are frozen', async () => {
    const r = await rig({ start: Date.UTC(2026, 10, 18, 6, 0, 0) });
    try {
      const token = r.admin.accessToken;
      const meter = await r.meter({ name: 'Main', code: 'meter.main.kwh', kind: 'energy', site: true });
      await r.collector.collect();
      const before = (await r.server.request('GET', '/api/energy/summary?from=2026-11-11&to=2026-11-18', { token })).body;
      assert.ok(before.cost > 0);
      const today = r.server.service.deps.energy.figures.today();
      const tomorrow = new Date(Date.parse(today) + DAY).toISOString().slice(0, 10);
      // A version from today or earlier is a back-dated one (restates the days it covers): test/pricing/backdatedPrices.test.ts.
      assert.ok(today < tomorrow);
      const version = {
        validFrom: tomorrow,
        price: 0.3,
        carbonFactor: 0.2,
        standingChargePerDay: 5,
        bands: [
          { name: 'night', days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun', 'holiday'], from: '22:00', to: '06:00', price: 0.1 },
          { name: 'weekday peak', days: ['mon', 'tue', 'wed', 'thu', 'fri'], from: '08:00', to: '20:00', price: 0.5 },
        ],
        holidays: [],
      };
      const created = await r.server.request('POST', '/api/energy/tariffs', { token, body: version });
      assert.equal(created.status, 201, created.text);
      const after = (await r.server.request('GET', '/api/energy/summary?from=2026-11-11&to=2026-11-18', { token })).body;
      assert.deepEqual(after, before, 'last week costs what it cost');
      const seeded = (await r.server.request('GET', '/api/energy/tariffs', { token })).body.items[0];
      assert.equal((await r.server.request('PUT', `/api/energy/tariffs/${seeded.id}`, { token, body: { price: 9 } })).status, 409);
      assert.equal((await r.server.request('DELETE', `/api/energy/tariffs/${seeded.id}`, { token })).status, 409);
      assert.equal(
        (await r.server.request('PUT', `/api/energy/tariffs/${created.body.id}`, { token, body: { note: 'signed' } })).status,
        200,
        'a future version can still change',
      );

      // Prices per interval of a weekday under the new version, checked against the interval energies.
      const tariffs = r.server.service.deps.energy.tariffs;
      const day = '2030-01-02'; // a Wednesday, under the new version
      const { start, count } = dayIntervals('UTC', day);
      const { prices, version: applied } = tariffs.prices('UTC', day, start, count);
      assert.equal(applied.id, created.body.id);
      assert.equal(prices[0], 0.1, '00:00 night');
      assert.equal(prices[7 * 4], 0.3, '07:00 between bands');
      assert.equal(prices[12 * 4], 0.5, '12:00 weekday peak');
      assert.equal(prices[23 * 4], 0.1, '23:00 night');
      const saturday = tariffs.prices('UTC', '2030-01-05', dayIntervals('UTC', '2030-01-05').start, 96).prices;
      assert.equal(saturday[12 * 4], 0.3, 'no weekday peak on Saturday');
      void meter;
    } finally {
      await r.close();
    }
  });
});

describe('discovery from the gateway catalogue', () => {
  test("the simulator's catalogue proposes its counters and power points, marking those already metered", async () => {
    const r = await rig({ start: Date.now(), subMeters: 5 });
    try {
      await r.meter({ name: 'Main', code: 'meter.main.kwh', kind: 'energy', site: true });
      const found = await r.server.request('GET', '/api/meters/discover', { token: r.admin.accessToken });
      assert.equal(found.status, 200);
      assert.equal(found.body.catalogue, true);
      const byCode = new Map(found.body.proposals.map((p: any) => [p.code, p]));
      assert.deepEqual(byCode.get('meter.main.kwh'), {
        code: 'meter.main.kwh',
        name: 'Main incomer energy',
        unit: 'kWh',
        kind: 'energy',
        site: true,
        known: true,
        commodity: 'electricity',
        role: 'import',
        sameMeterAs: null,
      });
      assert.equal((byCode.get('meter.main.kw') as any).kind, 'power');
      assert.equal((byCode.get('meter.sub.002.kwh') as any).known, false);
      assert.ok(!byCode.has('temp.outdoor'), 'only energy and power points');
      const operator = await r.server.createUser({ role: 'operator' });
      assert.equal((await r.server.request('GET', '/api/meters/discover', { token: operator.accessToken })).status, 403);
    } finally {
      await r.close();
    }
  });

  test('a gateway without a catalogue (404) answers catalogue: false', async () => {
    const gateway = http.createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      if (req.url === '/auth/token') res.end(JSON.stringify({ token: 't', expiresIn: 3600 }));
      else {
        res.statusCode = 404;
        res.end(JSON.stringify({ error: 'not found' }));
      }
    });
    await new Promise<void>((resolve) => gateway.listen(0, '127.0.0.1', resolve));
    const server = await startTestServer({
      EMS_IOT_BASE_URL: `http://127.0.0.1:${(gateway.address() as AddressInfo).port}`,
      EMS_IOT_USERNAME: 'u',
      EMS_IOT_PASSWORD: 'p',
    });
    try {
      const admin = await server.createUser({ role: 'admin' });
      const found = await server.request('GET', '/api/meters/discover', { token: admin.accessToken });
      assert.equal(found.status, 200);
      assert.deepEqual(found.body, { catalogue: false, proposals: [] });
    } finally {
      await server.close();
      gateway.close();
    }
  });
});

describe('a fresh start with the built-in simulator', () => {
  test('meters the building and shows non-zero, consistent power, energy, cost, carbon, weekly chart and area cards at once', async () => {
    const server = await startTestServer({ EMS_COLLECT_INTERVAL: '60s' });
    try {
      const admin = await server.createUser({ role: 'admin' });
      const token = admin.accessToken;
      const deadline = Date.now() + 30_000 * patience();
      let stats: any;
      while (Date.now() < deadline) {
        stats = (await server.request('GET', '/api/overview/stats', { token })).body;
        if (stats.energyTodayKwh > 0) break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      const building = server.service.deps.iot.simulator!.building;
      assert.ok(stats.energyTodayKwh > 0, JSON.stringify(stats));
      // Demand is the mean over the last two readings; the simulated load moves by a few kW per 5-minute slot at most.
      const load = building.read('meter.main.kw').value as number;
      close(stats.powerKw, load, 0.15, "demand vs the simulated building's load now");
      assert.ok(stats.energyMonthKwh >= stats.energyTodayKwh);
      // Costs are rounded to the cent: just after midnight today's cost is a few cents, so a cent is allowed too.
      assert.ok(
        Math.abs(stats.costToday - stats.energyTodayKwh * 0.25) <= Math.max(0.01 * stats.energyTodayKwh * 0.25, 0.006),
        `cost today at the seeded price: ${stats.costToday} vs ${stats.energyTodayKwh * 0.25}`,
      );
      close(stats.carbonTodayKg, stats.energyTodayKwh * 0.4, 0.01, 'carbon today at the seeded factor');
      const weekly = (await server.request('GET', '/api/overview/energy/weekly', { token })).body;
      // Every whole day of the backfilled week is what the simulated main counter ran between the day's midnights.
      for (const d of weekly.days.slice(0, 6)) {
        const start = Date.parse(`${d.day}T00:00:00Z`);
        close(d.kwh, building.counterAt('meter.main.kwh', start + DAY)! - building.counterAt('meter.main.kwh', start)!, 0.001, `weekly chart ${d.day}`);
      }
      const meters = (await server.request('GET', '/api/meters', { token })).body.items;
      assert.deepEqual(meters.map((m: any) => m.name).sort(), [
        'Gas meter',
        'Grid export',
        'HVAC',
        'Lighting',
        'Main incomer',
        'PV generation',
        'Rest of building',
        'Server room',
        'Water meter',
      ]);
      const areas = (await server.request('GET', '/api/energy/areas', { token })).body.areas;
      assert.ok(
        areas.every((a: any) => a.source === 'meters' && a.todayKwh > 0),
        JSON.stringify(areas),
      );
      const today = new Date().toISOString().slice(0, 10);
      // The areas share the building's consumption (grid import + PV − export); the site figure is the grid import.
      const consumption = async (from: string) =>
        (await server.request('GET', `/api/energy/commodities?from=${from}&to=${addDays(today, 1)}`, { token })).body.electricity;
      const [day, month] = [await consumption(today), await consumption(`${today.slice(0, 8)}01`)];
      close(day.importKwh, stats.energyTodayKwh, 0.001, 'the site is the grid import');
      close(
        areas.reduce((s: number, a: any) => s + a.todayKwh, 0),
        day.consumptionKwh,
        0.001,
        'areas add up to the consumption',
      );
      close(
        areas.reduce((s: number, a: any) => s + a.monthKwh, 0),
        month.consumptionKwh,
        0.001,
        'month: areas add up to the consumption',
      );
      // On the 1st the month is today alone (an empty range is refused).
      const byDay = today.endsWith('-01')
        ? []
        : (await server.request('GET', `/api/energy/series?from=${today.slice(0, 8)}01&to=${today}&resolution=day`, { token })).body.points;
      const monthByDays = byDay.reduce((s: number, p: any) => s + (p.kwh ?? 0), 0) + stats.energyTodayKwh;
      close(stats.energyMonthKwh, monthByDays, 0.001, 'month rollup = its days');
      const dashboard = (await server.request('GET', '/api/dashboard')).body;
      assert.equal(dashboard.overview.energyTodayKwh, stats.energyTodayKwh);
      assert.ok(dashboard.overview.costMonth > 0);
    } finally {
      await server.close();
    }
  });
});

describe('site demand against the contracted peak', () => {
  test('a running 15-minute mean above the contract raises one alert per episode, kept across a restart, cleared below it', async () => {
    // The simulated clock runs two days ahead of the wall clock, where a version added "from tomorrow" is in effect.
    const r = await rig({ start: Date.now() + 2 * DAY });
    try {
      const token = r.admin.accessToken;
      await r.meter({ name: 'Main', code: 'meter.main.kwh', kind: 'energy', site: true });
      await r.collector.collect();
      await run(r, r.clock.now + 20 * MIN);
      const tomorrow = new Date(Date.now() + DAY).toISOString().slice(0, 10);
      const version = await r.server.request('POST', '/api/energy/tariffs', {
        token,
        body: { validFrom: tomorrow, price: 0.25, carbonFactor: 0.4, contractedPeakKw: 50 },
      });
      assert.equal(version.status, 201, version.text);
      const watch = () => demandWatch(r.server);
      const demand = watch().runningDemandKw(r.clock.now)!;
      const truth = (r.counterAt('meter.main.kwh', r.clock.now) - r.counterAt('meter.main.kwh', r.clock.now - 15 * MIN)) / 0.25;
      close(demand, truth, 0.02, 'running 15-minute mean');
      const nextBoundary = Math.ceil(r.clock.now / (15 * MIN)) * 15 * MIN;
      assert.ok(watch().runningDemandKw(nextBoundary + 1000)! > 0, 'an interval with no reading yet: the window is the one before');
      assert.equal(watch().check(r.clock.now), 'raised');
      await run(r, r.clock.now + MIN);
      assert.equal(watch().check(r.clock.now), 'unchanged', 'a restarted watch finds the open episode');
      const alerts = (await r.server.request('GET', `/api/alerts?q=${encodeURIComponent('contracted')}`, { token })).body;
      assert.equal(alerts.total, 1);
      assert.match(alerts.items[0].title, /^Site demand \d+(\.\d)? kW above the contracted 50 kW/);
      assert.equal((await r.server.request('PUT', `/api/energy/tariffs/${version.body.id}`, { token, body: { contractedPeakKw: 100_000 } })).status, 200);
      await run(r, r.clock.now + MIN);
      assert.equal(watch().check(r.clock.now), 'cleared');
      const cleared = (await r.server.request('GET', `/api/alerts/${alerts.items[0].id}`, { token })).body;
      assert.ok(cleared.clearedAt, 'cleared, still to be acknowledged');
      assert.equal(cleared.status, 'active');
    } finally {
      await r.close();
    }
  });
});

describe('power meters', () => {
  test("readings are integrated into energy matching the counter of the same load; each interval's highest reading is kept", async () => {
    const r = await rig({ start: Date.UTC(2026, 10, 12, 10, 3, 0) });
    try {
      const power = await r.meter({ name: 'Main power', code: 'meter.main.kw', kind: 'power' });
      const counter = await r.meter({ name: 'Main energy', code: 'meter.main.kwh', kind: 'energy' });
      await r.collector.collect();
      const a = dayRow(r, power.id, '2026-11-10')!;
      const b = dayRow(r, counter.id, '2026-11-10')!;
      close(a.total, b.total, 0.02, 'integrated power vs counter over a day (2 % reading noise)');
      const points = (
        await r.server.request('GET', `/api/energy/series?from=2026-11-10&to=2026-11-11&resolution=15min&meterId=${power.id}`, { token: r.admin.accessToken })
      ).body.points;
      assert.equal(points.length, 96);
      for (const point of points) assert.ok(point.maxKw >= point.kwh * 4 * 0.999, `${point.start}: max ${point.maxKw} below mean ${point.kwh * 4}`);
      const counterPoints = (
        await r.server.request('GET', `/api/energy/series?from=2026-11-10&to=2026-11-11&resolution=15min&meterId=${counter.id}`, { token: r.admin.accessToken })
      ).body.points;
      assert.ok(
        counterPoints.every((p: any) => !('maxKw' in p)),
        'a counter has no readings of demand',
      );
    } finally {
      await r.close();
    }
  });
});
