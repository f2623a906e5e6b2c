// An interval the box drops after its clock stepped back leaves the fleet too (issue 56: the soak's week ended with meter
// 7's 2 Nov at 96 intervals at the fleet and 95 on the box). A missing interval is never sent, so the fleet kept what it
// had stored there; a sequenced day row now names the runs of intervals it does not hold (`missing`), and the fleet
// removes what it stored there under a lower sequence. A box on the built-in simulator syncs to a real PostgreSQL fleet
// over HTTP; it is restarted with its clock 1 h back while one meter is disabled (its intervals after the new "now"
// dropped and never counted again) and the other collects on (its intervals counted again, once).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import pino from 'pino';
import { createEnrolmentCode } from '../../src/fleet/enrolment.ts';
import { joinFleet } from '../../src/fleetSync/link.ts';
import { FleetSync } from '../../src/fleetSync/sync.ts';
import { startFleet, startFleetDatabase, type FleetInstance } from '../helpers/fleet.ts';
import type { PostgresCluster } from '../helpers/postgres.ts';
import { MIN, separateCollector, simulatorRig } from '../helpers/rig.ts';

// A fixed day long past: the box, its collectors and the fleet run on the test's clock.
const TWO = Date.parse('2026-03-10T02:00:00Z');
let clock = { now: TWO };
let cluster: PostgresCluster;
let fleet: FleetInstance;
let sql: pg.Pool;

before(async () => {
  cluster = await startFleetDatabase();
  fleet = await startFleet(cluster.url, { now: () => clock.now });
  sql = new pg.Pool({ connectionString: cluster.url, max: 2 });
});
after(async () => {
  await sql?.end();
  await fleet?.close();
  cluster?.destroy();
});

type Rig = Awaited<ReturnType<typeof simulatorRig>>;

/** The box joined to the fleet, with a sync on the box's clock (ticked by the test). */
async function joined(r: Rig): Promise<{ siteId: string; sync: FleetSync }> {
  const { db } = r.server.service.deps;
  const { code } = await createEnrolmentCode(fleet.db.pool, 'Stepped back');
  const { siteId } = await joinFleet(db, fleet.url, code, new Date(r.clock.now));
  const sync = new FleetSync({
    db,
    logger: pino({ level: 'silent' }),
    catchUpDelayMs: 0,
    intervalMs: 0,
    now: () => r.clock.now,
    health: () => ({ version: 'test', collector: 'ok', gateway: 'reachable', lastBackupAt: new Date(r.clock.now).toISOString() }),
  });
  return { siteId, sync };
}

/** A meter's intervals of one UTC day at the fleet, by start. */
async function fleetIntervals(siteId: string, meterId: number, day: string): Promise<Map<number, number>> {
  const { rows } = await sql.query<{ start: Date; value: number }>(
    "select start, value from intervals where site_id = $1 and meter_key = $2 and start >= $3::date and start < $3::date + interval '1 day'",
    [siteId, String(meterId), day],
  );
  return new Map(rows.map((row) => [row.start.getTime(), row.value]));
}

/** The fleet holds the meter's day as the box does: the same intervals, no more, no fewer, and the day row's total (none without one). */
async function assertFleetHoldsBoxDay(r: Rig, siteId: string, meter: { id: number; name: string }, day: string): Promise<void> {
  const dayStart = Date.parse(`${day}T00:00:00Z`);
  const row = r.dayRows(meter.id).find((d) => d.day === day);
  const box = new Map<number, number>();
  row?.kwh.forEach((value, i) => {
    if (!Number.isNaN(value)) box.set(dayStart + i * 15 * MIN, value);
  });
  const fleetHolds = await fleetIntervals(siteId, meter.id, day);
  const extra = [...fleetHolds.keys()].filter((start) => !box.has(start)).map((start) => new Date(start).toISOString().slice(11, 16));
  assert.deepEqual(extra, [], `${meter.name} ${day}: intervals the fleet holds and the box does not`);
  for (const [start, value] of box)
    assert.ok(
      Math.abs((fleetHolds.get(start) ?? Number.NaN) - value) < 1e-3,
      `${meter.name} ${new Date(start).toISOString()}: ${fleetHolds.get(start)} at the fleet, ${value} on the box`,
    );
  const { rows } = await sql.query<{ value: number }>('select value from day_rollups where site_id = $1 and meter_key = $2 and day = $3', [
    siteId,
    String(meter.id),
    day,
  ]);
  if (!row) assert.equal(rows.length, 0, `${meter.name} ${day}: the fleet keeps a day row the box does not have`);
  else assert.ok(Math.abs((rows[0]?.value ?? Number.NaN) - row.total) < 1e-3, `${meter.name} ${day}: ${rows[0]?.value} at the fleet, ${row.total} on the box`);
}

test('restarted with the clock 1 h back, a disabled meter’s dropped intervals leave the fleet; a collected one’s are replaced once', async (t) => {
  const r = await simulatorRig({ start: TWO });
  t.after(() => r.close());
  clock = r.clock;
  const main = await r.meter({ name: 'Main', code: 'meter.main.kwh', kind: 'energy', site: true });
  const hvac = await r.meter({ name: 'HVAC', code: 'meter.hvac.kwh', kind: 'energy', area: 'HVAC' });
  await r.run(TWO + 2 * 60 * MIN);
  const { siteId, sync } = await joined(r);
  await sync.tick();
  const atFleet = (meterId: number) => fleetIntervals(siteId, meterId, '2026-03-10');
  const dayStart = Date.parse('2026-03-10T00:00:00Z');
  assert.ok((await atFleet(hvac.id)).has(TWO + 105 * MIN), 'the fleet holds HVAC’s 03:45 before the step');

  // Killed at 04:00; HVAC disabled; restarted with the clock at 03:07; Main collected to 04:30.
  const disabled = await r.server.request('PUT', `/api/meters/${hvac.id}`, { token: r.admin.accessToken, body: { enabled: false } });
  assert.equal(disabled.status, 200, disabled.text);
  r.clock.now = TWO + 67 * MIN;
  const restarted = separateCollector(r.server, r.clock);
  for (; r.clock.now <= TWO + 150 * MIN; r.clock.now += MIN) {
    await restarted.collect();
    if (r.clock.now % (15 * MIN) === 0) await sync.tick();
  }
  await sync.tick();

  // The fleet holds each meter's day as the box does: the same intervals, no more, no fewer.
  for (const meter of [main, hvac]) await assertFleetHoldsBoxDay(r, siteId, meter, '2026-03-10');
  // What the box dropped of HVAC is gone from it (the interval holding the step keeps its part before it).
  const hvacRow = r.dayRows(hvac.id).find((d) => d.day === '2026-03-10')!;
  assert.ok(Number.isNaN(hvacRow.kwh[(TWO + 75 * MIN - dayStart) / (15 * MIN)]!), 'HVAC 03:15 dropped on the box');
});

// A clock step back across midnight deletes the later day's rows whole on the box (clockStep.ts dropAfter), so no day
// row is left to name that day's intervals as missing: the box records the drop (meter_days_dropped) and sends it as
// `deletedDays`; the fleet removes the meter day stored under a lower sequence, with its month's total and the site's EUI.
test('restarted 1 h 15 min back across midnight: the day the box deleted whole leaves the fleet (intervals, day row, month, EUI); counted again, it wins', async (t) => {
  const tenPm = Date.parse('2026-03-10T22:00:00Z');
  const r = await simulatorRig({ start: tenPm });
  t.after(() => r.close());
  // The fleet's clock in April: March is a complete month, so its total is in the site's EUI sums.
  clock = { now: Date.parse('2026-04-02T12:00:00Z') };
  const main = await r.meter({ name: 'Main', code: 'meter.main.kwh', kind: 'energy', site: true });
  const hvac = await r.meter({ name: 'HVAC', code: 'meter.hvac.kwh', kind: 'energy', area: 'HVAC' });
  await r.run(tenPm + 165 * MIN);
  const { siteId, sync } = await joined(r);
  await sync.tick();
  assert.ok((await fleetIntervals(siteId, main.id, '2026-03-11')).has(Date.parse('2026-03-11T00:30:00Z')), 'the fleet holds Main’s 00:30 before the step');
  const figures = async () => {
    const month = await sql.query<{ value: number }>(
      "select value from site_months where site_id = $1 and commodity = 'electricity' and month = '2026-03-01'",
      [siteId],
    );
    const site = await sql.query<{ eui_kwh: number }>('select eui_kwh from sites where id = $1', [siteId]);
    const box = r.dayRows(main.id).reduce((sum, row) => sum + (row.day.startsWith('2026-03') ? row.total : 0), 0);
    return { month: month.rows[0]?.value, eui: site.rows[0]?.eui_kwh, box };
  };
  const before = await figures();
  assert.ok(Math.abs(before.month! - before.box) < 1e-3, `March at the fleet ${before.month}, on the box ${before.box}`);

  // Killed at 00:45 with Main disabled; restarted with the clock at 23:30 on the 10th: the 11th is deleted whole.
  const disabled = await r.server.request('PUT', `/api/meters/${main.id}`, { token: r.admin.accessToken, body: { enabled: false } });
  assert.equal(disabled.status, 200, disabled.text);
  r.clock.now = tenPm + 90 * MIN;
  const restarted = separateCollector(r.server, r.clock);
  await restarted.collect();
  assert.equal(
    r.dayRows(main.id).some((row) => row.day === '2026-03-11'),
    false,
    'the box deleted Main’s 11th',
  );
  await sync.tick();
  for (const meter of [main, hvac]) for (const day of ['2026-03-10', '2026-03-11']) await assertFleetHoldsBoxDay(r, siteId, meter, day);
  const after = await figures();
  assert.ok(after.box < before.box, 'the box’s March lost the 11th');
  assert.ok(Math.abs(after.month! - after.box) < 1e-3, `March at the fleet ${after.month}, on the box ${after.box}`);
  assert.ok(Math.abs(after.eui! - after.box) < 1e-3, `the site's kept EUI energy ${after.eui}, the box's March ${after.box}`);

  // HVAC collects on past midnight: its 11th, deleted at the fleet under the drop's sequence, is counted again above it.
  for (r.clock.now += MIN; r.clock.now <= tenPm + 210 * MIN; r.clock.now += MIN) {
    await restarted.collect();
    if (r.clock.now % (15 * MIN) === 0) await sync.tick();
  }
  restarted.flush();
  await sync.tick();
  assert.ok(
    r.dayRows(hvac.id).some((row) => row.day === '2026-03-11'),
    'HVAC’s 11th is counted again on the box',
  );
  for (const meter of [main, hvac]) for (const day of ['2026-03-10', '2026-03-11']) await assertFleetHoldsBoxDay(r, siteId, meter, day);
  const { rows } = await sql.query<{ rows: number }>("select rows from site_day_counts where site_id = $1 and day = '2026-03-11'", [siteId]);
  const boxRows = r
    .dayRows(hvac.id)
    .find((row) => row.day === '2026-03-11')!
    .kwh.filter((value) => !Number.isNaN(value)).length;
  assert.equal(rows[0]?.rows, boxRows, 'the fleet counts the 11th’s intervals the box holds');
});
