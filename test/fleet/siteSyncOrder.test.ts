// The site box's sync job in-process, against an in-process fleet on a real PostgreSQL, with its clock and its random
// draw in the test's hands: bounded batches oldest-first with a cursor that moves only on acknowledgement, the fleet
// away (the cursor stays, the rows stay), then after the outage the newest day first, a random delay, then the history.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { and, eq } from 'drizzle-orm';
import pg from 'pg';
import pino from 'pino';
import { createEnrolmentCode } from '../../src/fleet/enrolment.ts';
import { joinFleet, readLink, syncState } from '../../src/fleetSync/link.ts';
import { FleetSync } from '../../src/fleetSync/sync.ts';
import { encodeFlags, encodeValues, KWH_SCALE } from '../../src/metering/intervalCodec.ts';
import { meterDays } from '../../src/platform/db/schema/index.ts';
import { addDays, dayIntervals, siteDay } from '../../src/platform/time/calendar.ts';
import { type FleetInstance, startFleet, startFleetDatabase } from '../helpers/fleet.ts';
import type { PostgresCluster } from '../helpers/postgres.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let cluster: PostgresCluster;
let fleet: FleetInstance;
let site: TestServer;
let sql: pg.Pool;

before(async () => {
  cluster = await startFleetDatabase();
  fleet = await startFleet(cluster.url);
  site = await startTestServer();
  sql = new pg.Pool({ connectionString: cluster.url, max: 2 });
});
after(async () => {
  await sql?.end();
  await site?.close();
  await fleet?.close();
  cluster?.destroy();
});

test('bounded batches oldest-first; the fleet away; after the outage the newest day first, then the history', async () => {
  const { db } = site.service.deps;
  const timezone = site.service.deps.energy.timezone();
  const meters = [1, 2].map((n) => site.service.deps.energy.meters.create({ name: `Order ${n}`, code: `order.${n}.kwh`, kind: 'energy', site: n === 1 }, null));
  let now = Date.now();
  const today = siteDay(timezone, new Date(now));
  // The test moves its clock 20.5 minutes on: kept inside today, so "the newest day" stays today late in the evening.
  now = Math.min(now, dayIntervals(timezone, addDays(today, 1)).start - 30 * 60_000);
  const days = [4, 3, 2, 1, 0].map((back) => addDays(today, -back));
  const write = (day: string, meterId: number, kwhPerInterval: number) => {
    const values = new Float64Array(96).fill(kwhPerInterval);
    if (day === today) values.fill(Number.NaN, 40); // the rest of today is not measured yet: never sent as 0
    const row = {
      kwh: encodeValues(values, KWH_SCALE),
      flags: encodeFlags(new Uint8Array(96)),
      totalKwh: kwhPerInterval * (day === today ? 40 : 96),
      cost: 1,
      carbonKg: 1,
    };
    db.orm
      .insert(meterDays)
      .values({ meterId, day, ...row })
      .onConflictDoUpdate({ target: [meterDays.day, meterDays.meterId], set: row })
      .run();
  };
  for (const day of days) for (const meter of meters) write(day, meter.id, 0.25);

  const { code } = await createEnrolmentCode(fleet.db.pool, 'Order');
  const { siteId } = await joinFleet(db, fleet.url, code);
  const draws: number[] = [];
  const sync = new FleetSync({
    db,
    logger: pino({ level: 'silent' }),
    catchUpDelayMs: 60_000,
    daysPerBatch: 3,
    maxBatchesPerTick: 1,
    now: () => now,
    random: () => {
      draws.push(0.5);
      return 0.5;
    },
    health: () => ({ version: 'test', collector: 'ok', gateway: 'reachable', lastBackupAt: null }),
  });
  const fleetDays = async () =>
    (await sql.query('select meter_key, day::text as day, value from day_rollups where site_id = $1 order by day, meter_key', [siteId])).rows as Array<{
      meter_key: string;
      day: string;
      value: number;
    }>;

  // Bounded and oldest-first: one tick sends 3 meter days (the oldest), the cursor moves to the third one's sequence.
  await sync.tick();
  const first = await fleetDays();
  assert.deepEqual(
    first.map((r) => r.day),
    [days[0], days[0], days[1]],
  );
  const seqOf = (day: string, meterId: number) =>
    db.orm
      .select({ seq: meterDays.syncSeq })
      .from(meterDays)
      .where(and(eq(meterDays.day, day), eq(meterDays.meterId, meterId)))
      .get()!.seq;
  assert.equal(readLink(db)!.cursor, seqOf(days[1]!, meters[0]!.id));
  for (let i = 0; i < 5; i++) await sync.tick();
  assert.equal((await fleetDays()).length, 10);
  assert.equal(syncState(db).unsentRows, 0);
  // Missing intervals were not sent: 40 of today's 96 per meter.
  const todays = await sql.query(`select count(*)::int as n from intervals where site_id = $1 and start >= $2`, [
    siteId,
    new Date(Date.parse(`${today}T00:00:00Z`) - 86_400_000),
  ]);
  assert.ok(todays.rows[0].n > 0);
  const zeros = await sql.query('select count(*)::int as n from intervals where site_id = $1 and value = 0', [siteId]);
  assert.equal(zeros.rows[0].n, 0);

  // The fleet goes away; meanwhile every day is restated (0.5 kWh per interval) and today goes on.
  const port = Number(new URL(fleet.url).port);
  await fleet.close();
  for (const day of days) for (const meter of meters) write(day, meter.id, 0.5);
  const cursorBefore = readLink(db)!.cursor;
  await sync.tick();
  assert.equal(readLink(db)!.cursor, cursorBefore, 'no acknowledgement, no move');
  assert.equal(syncState(db).state, 'failing');
  assert.equal(syncState(db).unsentRows, 10);

  // 20 minutes later the fleet is back: the newest day goes first, the cursor stays, the history waits a random delay.
  now += 20 * 60_000;
  fleet = await startFleet(cluster.url, { port });
  await sync.tick();
  const afterAhead = await fleetDays();
  assert.deepEqual(
    afterAhead.filter((r) => r.value === 20).map((r) => r.day),
    [today, today],
    'only the newest day is restated at the fleet so far',
  );
  assert.equal(readLink(db)!.cursor, cursorBefore);
  assert.equal(readLink(db)!.notBefore, now + 30_000, 'half of the 60 s catch-up delay (the random draw was 0.5)');
  await sync.tick();
  assert.equal((await fleetDays()).filter((r) => r.value === 20).length, 2, 'nothing before the delay');
  now += 31_000;
  for (let i = 0; i < 5; i++) await sync.tick();
  const final = await fleetDays();
  assert.deepEqual(
    final.map((r) => r.value),
    final.map((r) => (r.day === today ? 20 : 48)),
  );
  assert.equal(syncState(db).unsentRows, 0);
  assert.equal(syncState(db).state, 'ok');
});
