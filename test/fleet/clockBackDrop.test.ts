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

test('restarted with the clock 1 h back, a disabled meter’s dropped intervals leave the fleet; a collected one’s are replaced once', async (t) => {
  const r = await simulatorRig({ start: TWO });
  t.after(() => r.close());
  clock = r.clock;
  const main = await r.meter({ name: 'Main', code: 'meter.main.kwh', kind: 'energy', site: true });
  const hvac = await r.meter({ name: 'HVAC', code: 'meter.hvac.kwh', kind: 'energy', area: 'HVAC' });
  await r.run(TWO + 2 * 60 * MIN);
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
  await sync.tick();
  const atFleet = async (meterId: number) =>
    new Map(
      (
        await sql.query<{ start: Date; value: number }>(
          "select start, value from intervals where site_id = $1 and meter_key = $2 and start >= '2026-03-10' and start < '2026-03-11'",
          [siteId, String(meterId)],
        )
      ).rows.map((row) => [row.start.getTime(), row.value]),
    );
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
  for (const meter of [main, hvac]) {
    const row = r.dayRows(meter.id).find((d) => d.day === '2026-03-10')!;
    const box = new Map<number, number>();
    row.kwh.forEach((value, i) => {
      if (!Number.isNaN(value)) box.set(dayStart + i * 15 * MIN, value);
    });
    const fleetHolds = await atFleet(meter.id);
    const extra = [...fleetHolds.keys()].filter((start) => !box.has(start)).map((start) => new Date(start).toISOString().slice(11, 16));
    assert.deepEqual(extra, [], `${meter.name}: intervals the fleet holds and the box does not`);
    for (const [start, value] of box)
      assert.ok(
        Math.abs((fleetHolds.get(start) ?? Number.NaN) - value) < 1e-3,
        `${meter.name} ${new Date(start).toISOString()}: ${fleetHolds.get(start)} at the fleet, ${value} on the box`,
      );
  }
  // What the box dropped of HVAC is gone from it (the interval holding the step keeps its part before it).
  const hvacRow = r.dayRows(hvac.id).find((d) => d.day === '2026-03-10')!;
  assert.ok(Number.isNaN(hvacRow.kwh[(TWO + 75 * MIN - dayStart) / (15 * MIN)]!), 'HVAC 03:15 dropped on the box');
});
