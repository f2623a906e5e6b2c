// Suspect runs (issue 52) through the history import over real HTTP: an empty kwh cell is a missing interval; a flat
// zero on a site incomer whose week before read more is listed by the dry run, recorded by the import, one alert per
// run, read as suspect through StoredDays (flags and per-day counts) until a person confirms it through the API; the
// per-commodity rule leaves a water meter's nights and a constant load alone.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { addDays, dayIntervals, siteDay } from '../../src/platform/time/calendar.ts';
import { FLAG_SUSPECT } from '../../src/metering/store.ts';
import { findSuspectRuns, SUSPECT_RUN_INTERVALS } from '../../src/metering/suspectRuns.ts';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { noonZone } from '../helpers/siteClock.ts';
import { DAY, MIN, misbehavingRig, type MisbehavingRig } from '../helpers/rig.ts';
import { CLEAR_AFTER_CHECKS, CLEAR_AFTER_MS } from '../../src/metering/dataAlertDamping.ts';

const Q = 15 * 60_000;
const ZONE = noonZone();
const today = siteDay(ZONE);
const day = (offset: number) => addDays(today, offset);
const iso = (ms: number) => new Date(ms).toISOString();

/** A CSV of one value per interval of `days`; `kwh` answers a number, or '' for an empty cell. */
function csvOf(code: string, days: string[], kwh: (d: string, i: number) => number | ''): string {
  const lines = ['meter,start,kwh'];
  for (const d of days) {
    const { start, count } = dayIntervals(ZONE, d);
    for (let i = 0; i < count; i += 1) lines.push(`${code},${iso(start + i * Q)},${kwh(d, i)}`);
  }
  return `${lines.join('\n')}\n`;
}

/** An office load: more by day than by night, never flat. */
const office = (i: number) => (i >= 28 && i < 76 ? 6 : 2) + (i % 7) * 0.1;

describe('suspect runs: the detector', () => {
  test('a flat zero after a week that read more is one run; too short, too early or a load at its mean is none', () => {
    const week = Array.from({ length: 672 }, (_, i) => office(i % 96));
    const zeros = Array(200).fill(0);
    const series = [...week, ...zeros, ...week.slice(0, 50)];
    const start = Date.UTC(2025, 0, 1);
    assert.deepEqual(findSuspectRuns(start, series, SUSPECT_RUN_INTERVALS.incomer), [{ startAt: start + 672 * Q, intervals: 200, value: 0 }]);
    // Shorter than the meter's rule: none.
    assert.deepEqual(findSuspectRuns(start, [...week, ...Array(15).fill(0), ...week], SUSPECT_RUN_INTERVALS.incomer), []);
    // No day of history before it: nothing to hold it against.
    assert.deepEqual(findSuspectRuns(start, [...week.slice(0, 95), ...zeros], SUSPECT_RUN_INTERVALS.incomer), []);
    // A constant load at the meter's own level (a server room) is not suspect, however long.
    assert.deepEqual(findSuspectRuns(start, [...Array(672).fill(2.5), ...Array(400).fill(2.5)], SUSPECT_RUN_INTERVALS.incomer), []);
    // A stuck non-zero value well under what the meter reads is.
    assert.equal(findSuspectRuns(start, [...week, ...Array(20).fill(0.5)], SUSPECT_RUN_INTERVALS.incomer).length, 1);
    // A missing interval ends a run: two pieces of 10 are each too short.
    assert.deepEqual(findSuspectRuns(start, [...week, ...Array(10).fill(0), NaN, ...Array(10).fill(0)], SUSPECT_RUN_INTERVALS.incomer), []);
    // A second dead stretch after a blip is held against the week before the first, not against the zeros.
    const twice = [...week, ...zeros, 3, ...zeros];
    assert.equal(findSuspectRuns(start, twice, SUSPECT_RUN_INTERVALS.incomer).length, 2);
  });
});

describe('suspect runs: history import', () => {
  let server: TestServer;
  let admin: TestUser;
  let viewer: TestUser;
  let main: { id: number };
  let water: { id: number };

  const post = (csv: string, query = '') =>
    server.request('POST', `/api/energy/import${query}`, { token: admin.accessToken, raw: csv, headers: { 'content-type': 'text/csv' } });
  const get = async (path: string, token = admin.accessToken) => {
    const response = await server.request('GET', path, { token });
    assert.equal(response.status, 200, `${path}: ${response.text}`);
    return response.body;
  };
  const suspectAlerts = async (meterId: number) =>
    (await get('/api/alerts?pageSize=100')).items.filter((alert: { source: string }) => alert.source.startsWith(`energy.meter.${meterId}.suspect.`));

  before(async () => {
    server = await startTestServer();
    admin = await server.createUser({ role: 'admin' });
    viewer = await server.createUser({ role: 'viewer' });
    const zoned = await server.request('PUT', '/api/configs', { token: admin.accessToken, body: { timezone: ZONE } });
    assert.equal(zoned.status, 200, zoned.text);
    const meter = async (body: Record<string, unknown>) => {
      const response = await server.request('POST', '/api/meters', { token: admin.accessToken, body });
      assert.equal(response.status, 201, response.text);
      return response.body;
    };
    main = await meter({ name: 'Main', code: 'meter.main.kwh', kind: 'energy', site: true });
    water = await meter({ name: 'Water', code: 'water.main.m3', kind: 'energy', commodity: 'water' });
  });
  after(() => server.close());

  test('an empty kwh cell is a missing interval, not a bad row', async () => {
    const d = day(-40);
    const csv = csvOf('meter.main.kwh', [d], (_d, i) => (i >= 40 && i < 44 ? '' : 1));
    const dry = await post(csv, '?dryRun=true');
    assert.equal(dry.status, 200, dry.text);
    assert.equal(dry.body.meters[0].intervals.new, 92);
    const done = await post(csv);
    assert.equal(done.status, 200, done.text);
    const completeness = await get(`/api/energy/completeness?from=${d}&to=${addDays(d, 1)}&meterId=${main.id}`);
    assert.equal(Math.round(completeness.meters[0].days[0].missing * 96), 4, 'the four empty cells are missing intervals');
    // A counter's empty reading is still a bad row: a counter has no gap form.
    const counter = await post(`meter,time,reading\nmeter.main.kwh,${iso(dayIntervals(ZONE, day(-50)).start)},\n`, '?dryRun=true');
    assert.equal(counter.status, 400, counter.text);
    assert.match(JSON.stringify(counter.body.details), /line 2/);
  });

  test('a flat zero on the incomer: listed by the dry run, recorded by the import, one alert, suspect until confirmed', async () => {
    const days = Array.from({ length: 10 }, (_, k) => day(-12 + k)); // day -12 … day -3
    const dead = new Set([day(-5), day(-4)]);
    const csv = csvOf('meter.main.kwh', days, (d, i) => (dead.has(d) ? 0 : office(i)));
    const deadStart = dayIntervals(ZONE, day(-5)).start;
    const deadEnd = dayIntervals(ZONE, day(-3)).start;
    const intervals = (deadEnd - deadStart) / Q;

    const dry = await post(csv, '?dryRun=true');
    assert.equal(dry.status, 200, dry.text);
    assert.deepEqual(dry.body.meters[0].suspect, {
      runs: 1,
      intervals,
      listed: [{ startAt: iso(deadStart), endAt: iso(deadEnd), intervals, value: 0 }],
    });
    assert.equal((await get('/api/energy/suspect-runs')).items.length, 0, 'a dry run records nothing');

    const done = await post(csv);
    assert.equal(done.status, 200, done.text);
    assert.equal(done.body.meters[0].suspect.runs, 1);
    const [run, ...more] = (await get(`/api/energy/suspect-runs?meterId=${main.id}`, viewer.accessToken)).items;
    assert.equal(more.length, 0);
    assert.deepEqual(
      { startAt: run.startAt, endAt: run.endAt, intervals: run.intervals, source: run.source, confirmedAt: run.confirmedAt },
      { startAt: iso(deadStart), endAt: iso(deadEnd), intervals, source: 'import', confirmedAt: null },
    );

    // One data-problem alert for the run, naming its start and length; the same file again (replace) adds none.
    const [alert, ...others] = await suspectAlerts(main.id);
    assert.equal(others.length, 0);
    assert.equal(alert.level, 'warning');
    assert.match(alert.title, new RegExp(`Meter "Main": the same value \\(0\\) for 2 days from ${iso(deadStart).replace(/\./g, '\\.')}`));
    assert.match(alert.message, new RegExp(`/api/energy/suspect-runs/${run.id}/confirm`));
    const again = await post(csv, '?replace=true');
    assert.equal(again.status, 200, again.text);
    assert.equal((await get(`/api/energy/suspect-runs?meterId=${main.id}`)).items.length, 1, 'the same run, not a second');
    assert.equal((await suspectAlerts(main.id)).length, 1);

    // Suspect through the read door: the intervals' flags and the per-day count analysis asks.
    const { days: stored } = server.service.deps.energy;
    const ids = JSON.stringify([main.id]);
    const perDay = stored.suspectPerDay(ids, day(-12), day(-2));
    assert.deepEqual([...perDay].sort(), [
      [day(-5), dayIntervals(ZONE, day(-5)).count],
      [day(-4), dayIntervals(ZONE, day(-4)).count],
    ]);
    const flags = stored.dayOf(main.id, day(-5))!.flags;
    assert.ok(flags.every((flag) => flag & FLAG_SUSPECT));
    assert.ok(stored.dayOf(main.id, day(-6))!.flags.every((flag) => !(flag & FLAG_SUSPECT)));

    // Confirming needs an operator; then the run counts as measured.
    const refused = await server.request('POST', `/api/energy/suspect-runs/${run.id}/confirm`, { token: viewer.accessToken });
    assert.equal(refused.status, 403, refused.text);
    const missing = await server.request('POST', '/api/energy/suspect-runs/999999/confirm', { token: admin.accessToken });
    assert.equal(missing.status, 404, missing.text);
    const confirmed = await server.request('POST', `/api/energy/suspect-runs/${run.id}/confirm`, { token: admin.accessToken });
    assert.equal(confirmed.status, 200, confirmed.text);
    assert.ok(confirmed.body.confirmedAt);
    assert.equal(confirmed.body.confirmedBy, admin.user.id);
    assert.equal(stored.suspectPerDay(ids, day(-12), day(-2)).size, 0);
    assert.ok(stored.dayOf(main.id, day(-5))!.flags.every((flag) => !(flag & FLAG_SUSPECT)));
    assert.equal((await get('/api/energy/suspect-runs?state=open')).items.length, 0);
    const audit = await get('/api/audit?resource=meter_suspect_runs&action=confirm');
    assert.equal(audit.items.length, 1);
    // Confirmed stays confirmed: the same file again finds no new run over it.
    assert.equal((await post(csv, '?replace=true')).status, 200);
    assert.equal((await get(`/api/energy/suspect-runs?meterId=${main.id}`)).items.length, 1);
  });

  test("a water meter's nights and weekends at 0 are not suspect", async () => {
    const days = Array.from({ length: 14 }, (_, k) => day(-30 + k));
    // Water by day only, nothing at night; a whole weekend (two days and the nights around them) at 0.
    const weekend = new Set([day(-22), day(-21)]);
    const csv = csvOf('water.main.m3', days, (d, i) => (weekend.has(d) || i < 24 || i >= 80 ? 0 : 0.05));
    const dry = await post(csv, '?dryRun=true');
    assert.equal(dry.status, 200, dry.text);
    assert.equal(dry.body.meters[0].meterId, water.id);
    assert.deepEqual(dry.body.meters[0].suspect, { runs: 0, intervals: 0, listed: [] });
  });
});

describe("suspect runs: the collector's watch", () => {
  let r: MisbehavingRig;
  const code = 'meter.main.kwh';
  before(async () => {
    r = await misbehavingRig({ start: Math.floor(Date.now() / (5 * MIN)) * 5 * MIN });
  });
  after(() => r.close());

  const alertsOf = async (meterId: number) =>
    (await r.get('/api/alerts?pageSize=100')).items.filter((alert: { source: string }) => alert.source.startsWith(`energy.meter.${meterId}.suspect.`));

  test('a counter that stops moving: one alert with the run, growing with it, not flapping; confirmed, it clears after the hold-off', async () => {
    // Seven days of an office's counter in the gateway's history (a reading every 5 minutes), the last 5 hours flat.
    const flatFrom = r.clock.now - 5 * 60 * MIN;
    const readings: { at: number; value: number }[] = [];
    let value = 10_000;
    for (let at = r.clock.now - 7 * DAY + 5 * MIN; at <= r.clock.now; at += 5 * MIN) {
      if (at <= flatFrom) value += office(Math.floor((at % DAY) / Q)) / 3;
      readings.push({ at, value: Math.round(value * 1000) / 1000 });
    }
    r.gateway.history.set(code, readings);
    r.gateway.set(code, { value: readings[readings.length - 1].value });
    const main = await r.meter({ name: 'Main', code, kind: 'energy', site: true });
    await r.collector.collect();

    const [run, ...more] = (await r.get(`/api/energy/suspect-runs?meterId=${main.id}`)).items;
    assert.equal(more.length, 0, 'one run');
    assert.equal(run.source, 'collector');
    assert.equal(run.value, 0);
    assert.ok(Date.parse(run.startAt) >= flatFrom && Date.parse(run.startAt) <= flatFrom + Q, `the run starts where the counter stopped (${run.startAt})`);
    assert.ok(run.intervals >= 19, `about 5 hours (${run.intervals} intervals)`);
    const [alert, ...others] = await alertsOf(main.id);
    assert.equal(others.length, 0, 'one alert per run');
    assert.match(alert.title, new RegExp(`the same value \\(0\\) for ${run.hours} h from ${run.startAt.replace(/\./g, '\\.')}`));
    assert.equal(alert.clearedAt, null);

    // The counter stays where it is for another hour: the same run grows, still one alert.
    await r.run(r.clock.now + 60 * MIN);
    const grown = (await r.get(`/api/energy/suspect-runs?meterId=${main.id}`)).items;
    assert.equal(grown.length, 1);
    assert.ok(grown[0].intervals >= run.intervals + 3, `grown: ${grown[0].intervals} against ${run.intervals}`);
    assert.equal((await alertsOf(main.id)).length, 1, 'no second alert while it goes on');
    const today = siteDay('UTC', new Date(r.clock.now));
    assert.ok((r.server.service.deps.energy.days.suspectPerDay(JSON.stringify([main.id]), addDays(today, -1), addDays(today, 1)).size ?? 0) >= 1);

    // A person says the building was closed: the run is confirmed, the alert clears after the hold-off, not at once.
    const confirmed = await r.server.request('POST', `/api/energy/suspect-runs/${run.id}/confirm`, { token: r.admin.accessToken });
    assert.equal(confirmed.status, 200, confirmed.text);
    r.gateway.set(code, { value: readings[readings.length - 1].value + 5 });
    await r.run(r.clock.now + MIN);
    assert.equal((await alertsOf(main.id))[0].clearedAt, null, 'the hold-off first');
    await r.run(r.clock.now + Math.max(CLEAR_AFTER_CHECKS * MIN, CLEAR_AFTER_MS) + MIN);
    const after = await alertsOf(main.id);
    assert.equal(after.length, 1);
    assert.ok(after[0].clearedAt, 'cleared once confirmed and the hold-off passed');
    assert.equal(r.server.service.deps.energy.days.suspectPerDay(JSON.stringify([main.id]), addDays(today, -1), addDays(today, 1)).size, 0);
  });
});
