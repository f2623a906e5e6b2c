// No data is never zero, against a misbehaving gateway over real HTTP: after a gap the history cannot fill, the energy
// is estimated and says so, days without data read as missing (null, or 0 with missing = 1 where a number is required),
// the completeness endpoint gives the shares per meter and day, the CSV marks each interval, and the area cards show
// the site's unallocated energy.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { addDays, siteDay } from '../../src/platform/time/calendar.ts';
import { MIN, misbehavingRig, type MisbehavingRig } from '../helpers/rig.ts';
import { noonZone } from '../helpers/siteClock.ts';

const INTERVAL = 15 * MIN;

describe('missing, estimated and measured', () => {
  let r: MisbehavingRig;
  let main: { id: number };
  let hvac: { id: number };
  // The 3 hours before now must lie in the site's today whatever the hour of the run: the site's zone is one where it
  // is about noon now.
  const zone = noonZone();
  const today = siteDay(zone);
  const yesterday = addDays(today, -1);
  const tomorrow = addDays(today, 1);

  before(async () => {
    const start = Math.floor(Date.now() / INTERVAL) * INTERVAL - 3 * 60 * MIN;
    r = await misbehavingRig({ start });
    const zoned = await r.server.request('PUT', '/api/configs', { token: r.admin.accessToken, body: { timezone: zone } });
    assert.equal(zoned.status, 200, zoned.text);
    main = await r.meter({ name: 'Main', code: 'meter.main.kwh', kind: 'energy', site: true });
    hvac = await r.meter({ name: 'HVAC', code: 'meter.hvac.kwh', kind: 'energy', area: 'HVAC' });
    // The gateway keeps 5-minute history, except for the hour it could not be read.
    for (const [code, base, kw] of [
      ['meter.main.kwh', 1000, 10],
      ['meter.hvac.kwh', 500, 4],
    ] as const) {
      const rows = [];
      for (let at = start + 5 * MIN; at <= start + 3 * 60 * MIN; at += 5 * MIN)
        if (at <= start + 60 * MIN || at >= start + 120 * MIN) rows.push({ at, value: base + (kw * (at - start)) / 3_600_000 });
      r.gateway.history.set(code, rows);
    }
    const read = async () => {
      const hours = (r.clock.now - start) / 3_600_000;
      r.gateway.set('meter.main.kwh', { value: 1000 + 10 * hours });
      r.gateway.set('meter.hvac.kwh', { value: 500 + 4 * hours });
      await r.collector.collect();
    };
    // An hour measured, an hour the gateway cannot be read (and has no history for), an hour measured.
    for (let i = 0; i <= 4; i += 1) {
      if (i) r.clock.now += INTERVAL;
      await read();
    }
    r.gateway.readStatus = 503;
    for (let i = 0; i < 4; i += 1) {
      r.clock.now += INTERVAL;
      await r.collector.collect();
    }
    r.gateway.readStatus = null;
    await read();
    for (let i = 0; i < 4; i += 1) {
      r.clock.now += INTERVAL;
      await read();
    }
  });
  after(() => r.close());

  const counts = (body: { days: { intervals: number; measured: number; estimated: number; missing: number }[] }) => ({
    measured: Math.round(body.days.reduce((sum, day) => sum + day.measured * day.intervals, 0)),
    estimated: Math.round(body.days.reduce((sum, day) => sum + day.estimated * day.intervals, 0)),
    missing: Math.round(body.days.reduce((sum, day) => sum + day.missing * day.intervals, 0)),
  });

  test('the completeness endpoint: per meter and day, and for the site', async () => {
    const body = await r.get(`/api/energy/completeness?from=${yesterday}&to=${tomorrow}`);
    const mainRow = body.meters.find((meter: { meterId: number }) => meter.meterId === main.id);
    assert.deepEqual({ ...counts(mainRow), missing: undefined }, { measured: 8, estimated: 4, missing: undefined });
    const yesterdayRow = mainRow.days.find((day: { day: string }) => day.day === yesterday);
    assert.equal(yesterdayRow.intervals, 96);
    assert.equal(yesterdayRow.missing, 1);
    for (const day of mainRow.days) assert.ok(Math.abs(day.measured + day.estimated + day.missing - 1) < 1e-3, `${day.day} shares add up`);
    assert.deepEqual({ ...counts(body.site), missing: undefined }, { measured: 8, estimated: 4, missing: undefined });
    assert.ok(body.site.missing > 0 && body.site.missing < 1);
    // Nothing that has not happened counts.
    assert.equal(mainRow.days.length, 2);
    assert.ok(mainRow.days[1].intervals <= 96 && mainRow.days[1].intervals >= 12);

    const one = await r.get(`/api/energy/completeness?from=${yesterday}&to=${tomorrow}&meterId=${hvac.id}`);
    assert.equal(one.site, null);
    assert.equal(one.meters.length, 1);
    assert.equal(counts(one.meters[0]).estimated, 4);
    const bad = await r.server.request('GET', `/api/energy/completeness?from=${today}&to=${yesterday}`, { token: r.admin.accessToken });
    assert.equal(bad.status, 400);
    const unknown = await r.server.request('GET', `/api/energy/completeness?from=${yesterday}&to=${today}&meterId=99999`, { token: r.admin.accessToken });
    assert.equal(unknown.status, 404);
  });

  test('series, summary and CSV tell missing from zero', async () => {
    const series = await r.get(`/api/energy/series?from=${yesterday}&to=${tomorrow}&resolution=day&meterId=${main.id}`);
    assert.equal(series.points[0].kwh, null, 'a day without data is null, not 0');
    assert.equal(series.points[0].missing, 1);
    assert.ok(series.points[1].estimated > 0, 'today is partly estimated');
    assert.ok(Math.abs(series.points[1].kwh - 30) < 0.01, `3 h at 10 kW: ${series.points[1].kwh}`);

    const month = await r.get(`/api/energy/series?from=${addDays(today, -40)}&to=${addDays(today, -35)}&resolution=month`);
    assert.equal(month.points[0].kwh, null, 'a month span without data is null');
    assert.equal(month.points[0].missing, 1);

    const summary = await r.get(`/api/energy/summary?from=${yesterday}&to=${tomorrow}`);
    assert.equal(summary.days[0].missing, 1, 'yesterday: all of it missing');
    assert.deepEqual([summary.days[0].kwh, summary.days[0].cost, summary.days[0].carbonKg], [null, null, null], 'yesterday: no data, never 0');
    assert.equal(typeof summary.days[1].kwh, 'number', 'today: measured and estimated, a number');
    // The weekly chart says the same: yesterday null and missing, today with its shares.
    const weekly = await r.get('/api/overview/energy/weekly');
    assert.deepEqual(weekly.days[5], { day: yesterday, kwh: null, measured: 0, estimated: 0, missing: 1 });
    assert.equal(weekly.days[6].kwh, summary.days[1].kwh);
    assert.ok(weekly.days[6].estimated > 0 && weekly.days[6].measured > 0);
    assert.ok(weekly.completeness.missing > 0.8 && weekly.completeness.estimated > 0);
    assert.equal(weekly.totalKwh, summary.days[1].kwh);
    assert.ok(summary.completeness.estimated > 0 && summary.completeness.missing > 0);

    const csv = await r.server.request('GET', `/api/energy/export.csv?meterId=${main.id}&from=${yesterday}&to=${tomorrow}`, { token: r.admin.accessToken });
    assert.equal(csv.status, 200);
    const lines = csv.text.trim().split('\n');
    assert.equal(lines[0], 'start,end,kwh,mean_kw,flags,quality');
    const rows = lines.slice(1).map((line) => line.split(','));
    assert.equal(rows.filter((row) => row[5] === 'measured').length, 8);
    assert.equal(rows.filter((row) => row[5] === 'estimated').length, 4);
    const missing = rows.filter((row) => row[5] === 'missing');
    assert.ok(missing.length >= 96, 'yesterday is listed, as missing');
    assert.ok(
      missing.every((row) => row[2] === ''),
      'a missing interval is empty, never 0',
    );
    assert.ok(
      rows.every((row) => Date.parse(row[0]) < Date.now()),
      'no interval that has not happened',
    );
  });

  test("area cards show the site's unallocated energy", async () => {
    const body = await r.get('/api/energy/areas');
    const card = body.areas.find((area: { name: string }) => area.name === 'HVAC');
    assert.ok(Math.abs(card.todayKwh - 12) < 0.01, `HVAC 3 h at 4 kW: ${card.todayKwh}`);
    assert.ok(Math.abs(body.unallocated.todayKwh - 18) < 0.01, `site 30 − HVAC 12: ${body.unallocated.todayKwh}`);
  });
});

describe("a new meter's first reading while the gateway's history fails", () => {
  let r: MisbehavingRig;
  before(async () => {
    r = await misbehavingRig({ start: Math.floor(Date.now() / INTERVAL) * INTERVAL });
  });
  after(() => r.close());

  // A 2 kW load for the last 3 hours, in the gateway's 5-minute history.
  const history = (code: string, start: number) => {
    const rows = [];
    for (let at = start - 3 * 60 * MIN; at <= start; at += 5 * MIN) rows.push({ at, value: 100 + (2 * (at - (start - 3 * 60 * MIN))) / 3_600_000 });
    r.gateway.history.set(code, rows);
    r.gateway.set(code, { value: 106 });
  };
  const stored = (meterId: number) => r.dayRows(meterId).reduce((sum, row) => sum + Array.from(row.kwh).reduce((a, b) => a + (Number.isNaN(b) ? 0 : b), 0), 0);

  test('waits for the history instead of starting without it: the backfill is not lost', async () => {
    const code = 'meter.slowhistory.kwh';
    const meter = await r.meter({ name: 'Slow history', code, kind: 'energy' });
    history(code, r.clock.now);
    r.gateway.historyStatus = 503;
    for (let i = 0; i < 3; i += 1) {
      await r.collector.collect();
      assert.equal((await r.meterState(meter.id))?.lastReadingAt ?? null, null, 'not started while its history fails');
    }
    r.gateway.historyStatus = null;
    await r.collector.collect();
    assert.ok((await r.meterState(meter.id)).lastReadingAt, 'started once the history answers');
    // The 3 hours before the first reading, 6 kWh, are in the store.
    assert.ok(Math.abs(stored(meter.id) - 6) < 0.01, `6 kWh backfilled, got ${stored(meter.id)}`);
  });

  test('a gateway that never answers history: the meter starts without it after 5 collections', async () => {
    const code = 'meter.nohistory.kwh';
    const meter = await r.meter({ name: 'No history', code, kind: 'energy' });
    history(code, r.clock.now);
    r.gateway.historyStatus = 503;
    try {
      for (let i = 0; i < 5; i += 1) await r.collector.collect();
      assert.equal((await r.meterState(meter.id))?.lastReadingAt ?? null, null);
      await r.collector.collect();
      const state = await r.meterState(meter.id);
      assert.ok(state.lastReadingAt, 'started on the sixth collection');
      assert.equal(state.lastValue, 106);
    } finally {
      r.gateway.historyStatus = null;
    }
  });
});
