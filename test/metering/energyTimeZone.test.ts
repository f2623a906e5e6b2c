// A site time-zone change mid-day (issue 23): the stored energy is re-keyed into the new zone's days, so no row is
// dated after the new zone's today, every interval keeps its absolute time and its kWh, month rollups follow, new
// readings land where they belong, and a move cut short by a stop is finished at the next start.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { dayIntervals, INTERVAL_MS, siteDay } from '../../src/platform/time/calendar.ts';
import { startTestServer, tempDir } from '../helpers/server.ts';
import { MIN, misbehavingRig, type MisbehavingRig } from '../helpers/rig.ts';

const CODE = 'meter.zone.kwh';

/** Absolute interval start → kWh of a meter's stored rows, read in the zone they are keyed in. */
function byTime(r: MisbehavingRig, meterId: number, timezone: string): Map<number, number> {
  const intervals = new Map<number, number>();
  for (const row of r.dayRows(meterId)) {
    const { start } = dayIntervals(timezone, row.day);
    row.kwh.forEach((kwh, i) => {
      if (!Number.isNaN(kwh)) intervals.set(start + i * INTERVAL_MS, kwh);
    });
  }
  return intervals;
}

async function setZone(r: MisbehavingRig, timezone: string): Promise<void> {
  const response = await r.server.request('PUT', '/api/configs', { token: r.admin.accessToken, body: { timezone } });
  assert.equal(response.status, 200, response.text);
  assert.equal(response.body.timezone, timezone);
}

/** One reading a minute for `minutes`, the counter rising 1 kWh a minute. */
async function collectFor(r: MisbehavingRig, counter: { value: number }, minutes: number): Promise<void> {
  for (let i = 0; i < minutes; i += 1) {
    r.gateway.set(CODE, { value: counter.value });
    await r.collector.collect();
    r.clock.now += MIN;
    counter.value += 1;
  }
}

/** The month rollups as every reader sees them (metering's StoredDays: a month's row of whole days plus its open days). */
const monthTotals = (r: MisbehavingRig, meterId: number) =>
  r.server.service.deps.energy.days
    .rollupsByMonth(JSON.stringify([meterId]), '0000-01', '9999-12')
    .sort((a, b) => a.month.localeCompare(b.month))
    .map((row) => ({ month: row.month, total: Math.round(row.kwh * 10_000) / 10_000 }));

const dayTotalsByMonth = (r: MisbehavingRig, meterId: number) => {
  const months = new Map<string, number>();
  for (const row of r.dayRows(meterId)) months.set(row.day.slice(0, 7), (months.get(row.day.slice(0, 7)) ?? 0) + row.total);
  return [...months].map(([month, total]) => ({ month, total: Math.round(total * 10_000) / 10_000 }));
};

test('UTC+14 to UTC−10 at 02:00 local on the 1st: the rows move to the new zone, no row for tomorrow, nothing lost', async () => {
  // 2026-11-30T12:00Z is 2026-12-01 02:00 in Kiritimati (UTC+14) and 2026-11-30 02:00 in Honolulu (UTC−10).
  const r = await misbehavingRig({ start: Date.parse('2026-11-30T11:00:00Z') });
  try {
    await setZone(r, 'Pacific/Kiritimati');
    const meter = await r.meter({ name: 'Zone', code: CODE, kind: 'energy' });
    const counter = { value: 1000 };
    await collectFor(r, counter, 90);
    const before = byTime(r, meter.id, 'Pacific/Kiritimati');
    assert.ok(
      r.dayRows(meter.id).some((row) => row.day === '2026-12-01'),
      'a December row in the old zone',
    );

    // Analysis's outdoor days are keyed by the old zone's site days: the move drops them (its port ZoneKeyedDays).
    const outdoor = () => r.server.service.deps.db.sqlite.prepare('SELECT count(*) FROM outdoor_days').pluck().get();
    r.server.service.deps.db.sqlite
      .prepare("INSERT INTO outdoor_days (code, day, hourly_c, samples) VALUES ('temp.outdoor', '2026-12-01', ?, 24)")
      .run(Buffer.from(new Float32Array(24).fill(4).buffer));
    assert.equal(outdoor(), 1);

    await setZone(r, 'Pacific/Honolulu');
    const today = siteDay('Pacific/Honolulu', new Date(r.clock.now));
    assert.equal(today, '2026-11-30');
    assert.equal(outdoor(), 0, "the old zone's outdoor days are dropped in the move");
    const rows = r.dayRows(meter.id);
    assert.deepEqual(
      rows.map((row) => row.day),
      ['2026-11-30'],
      'one row, the new zone today; none for tomorrow',
    );
    assert.deepEqual(byTime(r, meter.id, 'Pacific/Honolulu'), before, 'every interval at its absolute time with its kWh');
    assert.deepEqual(monthTotals(r, meter.id), dayTotalsByMonth(r, meter.id), 'the month rows follow the days (December is gone)');

    // New readings land at their times in the new zone, beside the moved ones.
    await collectFor(r, counter, 30);
    const after = byTime(r, meter.id, 'Pacific/Honolulu');
    // The interval open at the change goes on filling; every earlier one is as it was.
    const open = Math.max(...before.keys());
    for (const [at, kwh] of before) if (at < open) assert.equal(after.get(at), kwh);
    const total = [...after.values()].reduce((sum, kwh) => sum + kwh, 0);
    assert.ok(Math.abs(total - 119) < 1e-6, `119 kWh between the first and the last reading, got ${total}`);
    assert.ok(r.dayRows(meter.id).every((row) => row.day <= siteDay('Pacific/Honolulu', new Date(r.clock.now))));
    assert.deepEqual(monthTotals(r, meter.id), dayTotalsByMonth(r, meter.id));
    // The day's figures in the new zone read the moved energy.
    const summary = await r.get(`/api/energy/series?from=2026-11-30&to=2026-12-01&resolution=day&meterId=${meter.id}`);
    assert.ok(Math.abs(summary.points[0].kwh - 119) < 1e-3, JSON.stringify(summary.points));
  } finally {
    await r.close();
  }
});

test('the same zone again, or a change with no stored energy, re-keys nothing', async () => {
  const r = await misbehavingRig({ start: Date.parse('2026-11-20T08:00:00Z') });
  try {
    await setZone(r, 'Europe/Berlin');
    const meter = await r.meter({ name: 'Zone', code: CODE, kind: 'energy' });
    await collectFor(r, { value: 10 }, 20);
    const rows = r.dayRows(meter.id);
    await setZone(r, 'Europe/Berlin');
    assert.deepEqual(r.dayRows(meter.id), rows);
    assert.equal(r.server.service.deps.zoneMove.pending(), false);
  } finally {
    await r.close();
  }
});

test('a move cut short by a stop is finished at the next start, before the first collection', async () => {
  const dataDir = tempDir('ems-zone-');
  const r = await misbehavingRig({ start: Date.parse('2026-11-20T22:00:00Z'), env: { EMS_DATA_DIR: dataDir } });
  let meterId = 0;
  let before = new Map<number, number>();
  try {
    const meter = await r.meter({ name: 'Zone', code: CODE, kind: 'energy' });
    meterId = meter.id;
    await collectFor(r, { value: 500 }, 150);
    before = byTime(r, meter.id, 'UTC');
    // As if the service stopped right after the zone was changed: the new zone and the marker are stored, no row moved.
    const { sqlite } = r.server.service.deps.db;
    sqlite.prepare("UPDATE platform_config SET timezone = 'Asia/Kathmandu' WHERE id = 1").run();
    sqlite
      .prepare("INSERT INTO app_settings (key, value, updated_at) VALUES ('energy_time_zone_move', ?, '2026-11-21T00:30:00Z')")
      .run(JSON.stringify({ from: 'UTC', to: 'Asia/Kathmandu', after: 0 }));
    await r.server.service.close();
  } finally {
    await r.gateway.close();
  }
  const server = await startTestServer({ EMS_DATA_DIR: dataDir });
  try {
    const { sqlite } = server.service.deps.db;
    assert.equal(sqlite.prepare("SELECT count(*) FROM app_settings WHERE key = 'energy_time_zone_move'").pluck().get(), 0);
    const rows = sqlite.prepare('SELECT day FROM meter_days WHERE meter_id = ? ORDER BY day').pluck().all(meterId);
    // 22:00–00:30 UTC is 03:45–06:15 in Kathmandu (UTC+5:45): one day there.
    assert.deepEqual(rows, ['2026-11-21']);
    const moved = new Map<number, number>();
    const { start } = dayIntervals('Asia/Kathmandu', '2026-11-21');
    server.service.deps.energy.store.load(meterId, '2026-11-21').kwh.forEach((kwh, i) => {
      if (!Number.isNaN(kwh)) moved.set(start + i * INTERVAL_MS, kwh);
    });
    assert.deepEqual(moved, before);
  } finally {
    await server.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});

test('siteDay answers instants that alternate between days (a backfill meter by meter) with each one its own day', () => {
  // The last days asked are kept with the instants they span; instants around Berlin's spring change, at and either
  // side of each midnight, asked in an order that keeps going back to earlier days.
  const oracle = new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Berlin', year: 'numeric', month: '2-digit', day: '2-digit' });
  const base = Date.UTC(2026, 2, 27, 22, 0); // 2026-03-27 23:00 in Berlin; DST starts 2026-03-29
  const instants: number[] = [];
  for (let meter = 0; meter < 5; meter += 1)
    for (let step = 0; step < 4 * 24 * 4; step += 7) instants.push(base + step * INTERVAL_MS + meter * 60_000 - (step % 3) * 3_600_000);
  for (const ms of [...instants, ...instants.reverse()])
    assert.equal(siteDay('Europe/Berlin', new Date(ms)), oracle.format(new Date(ms)), new Date(ms).toISOString());
});
