// PostgreSQL as the fleet's distributed part (docs/fleet.md "Replica and failover"): two local clusters with streaming
// replication (test/helpers/postgresReplica.ts). The fleet writes to the primary and reads the portfolio from the
// standby; the instance's clock does not decide staleness or quarantine (the primary's does); and the failover drill:
// real boxes (the service as a child process, its built-in simulator) sync to the fleet on the primary, the standby
// falls behind (cut off its WAL) while the primary acknowledges more batches, the primary crashes (kill -9), the standby
// is promoted without them and the fleet restarted on it; the boxes keep their queues, are told the fleet lost batches
// (409 sequence_gap) and send them again, and every complete day at the fleet equals each box's own SQLite to the cent,
// with no interval lost or doubled.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, test } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { databasePath } from '../../src/platform/db/client.ts';
import { DatabaseClock } from '../../src/fleet/clock.ts';
import { migrateFleetDb } from '../../src/fleet/db.ts';
import { createEnrolmentCode } from '../../src/fleet/enrolment.ts';
import { runCli } from '../helpers/cli.ts';
import { adminToken, enrolSite, type FleetInstance, getJson, intervalBatch, quarterAgo, sendBatch, startFleet } from '../helpers/fleet.ts';
import { type ReplicatedPostgres, startReplicatedPostgres } from '../helpers/postgresReplica.ts';
import { eventually, tempDir } from '../helpers/server.ts';
import { type ServiceProcess, spawnService } from '../helpers/serviceProcess.ts';
import { testEnv } from '../helpers/testEnv.ts';
import { acknowledgedDays, assertFleetHolds, liveDay } from '../helpers/siteDays.ts';

let pgs: ReplicatedPostgres;
let fleet: FleetInstance;

before(async () => {
  pgs = await startReplicatedPostgres();
  await migrateFleetDb(pgs.primary.url);
  fleet = await startFleet(pgs.primary.url, { readDatabaseUrl: pgs.standby.url });
});
after(async () => {
  await fleet?.close();
  pgs?.destroy();
});

async function one<T extends pg.QueryResultRow>(url: string, sql: string, values: unknown[] = []): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql, values)).rows[0]!;
  } finally {
    await client.end();
  }
}

test('the portfolio answers from the replica while the primary takes writes; it sees them once replayed', { timeout: 180_000 }, async () => {
  assert.equal(await pgs.inRecovery(pgs.standby.url), true, 'the read side is a standby');
  const token = await adminToken(fleet.db);
  const site = await enrolSite(fleet, 'Replica read');
  const from = quarterAgo(5);
  assert.equal((await sendBatch(fleet.url, site.credential, intervalBatch({ after: 0, from, count: 4 }))).status, 200);
  await pgs.waitForReplay();
  const first = await getJson(`${fleet.url}/api/fleet/sites`, token);
  assert.equal(first.status, 200);
  const row = first.body.items.find((item: { id: string }) => item.id === site.siteId);
  assert.ok(row, 'the enrolled site is listed from the replica');
  assert.equal(row.status, 'ok');
  const nameBefore = row.name as string;

  // Replay paused on the standby: the primary takes a write (the site renamed) the portfolio does not show yet; a read
  // on the primary would. Resumed and caught up (by LSN), the portfolio shows it.
  await one(pgs.standby.url, 'select pg_wal_replay_pause()');
  try {
    await fleet.db.pool.query('update sites set name = $2 where id = $1', [site.siteId, 'Renamed on the primary']);
    // A second batch stored meanwhile: ingest writes to the primary while the replica lags.
    assert.equal(
      (await sendBatch(fleet.url, site.credential, intervalBatch({ after: 8, from: from + 4 * 900_000, count: 2, withMetadata: false }))).status,
      200,
    );
    const primaryName = (await one<{ name: string }>(pgs.primary.url, 'select name from sites where id = $1', [site.siteId])).name;
    assert.equal(primaryName, 'Renamed on the primary');
    const during = await getJson(`${fleet.url}/api/fleet/sites`, token);
    assert.equal(during.body.items.find((item: { id: string }) => item.id === site.siteId).name, nameBefore, 'read from the paused replica');
  } finally {
    await one(pgs.standby.url, 'select pg_wal_replay_resume()');
  }
  await pgs.waitForReplay();
  const later = await getJson(`${fleet.url}/api/fleet/sites`, token);
  assert.equal(later.body.items.find((item: { id: string }) => item.id === site.siteId).name, 'Renamed on the primary');
  const stored = await one<{ n: string }>(pgs.standby.url, 'select count(*)::text as n from intervals where site_id = $1', [site.siteId]);
  assert.equal(Number(stored.n), 12, 'both batches replicated: 6 quarter hours × 2 meters');
});

test('staleness and quarantine follow the primary database clock, not an instance clock two hours off', { timeout: 120_000 }, async () => {
  const local = () => Date.now() - 2 * 3_600_000;
  const clock = new DatabaseClock(fleet.db.pool, local);
  const skewed = await startFleet(pgs.primary.url, { readDatabaseUrl: pgs.standby.url, clock });
  try {
    const token = await adminToken(skewed.db);
    const site = await enrolSite(skewed, 'Clock');
    // Rows up to the last quarter hour by the real (database) clock: by the instance's own clock they would be two hours
    // in the future and quarantined.
    const batch = intervalBatch({ after: 0, from: quarterAgo(3), count: 3 });
    const stored = await sendBatch(skewed.url, site.credential, batch);
    assert.equal(stored.status, 200, JSON.stringify(stored.body));
    assert.equal(stored.body.quarantined, 0, 'nothing quarantined by the database clock');
    assert.equal(stored.body.stored.intervals, 6);
    assert.ok(Math.abs(clock.offset - 2 * 3_600_000) < 60_000, `the measured offset is the instance's error (${clock.offset} ms)`);
    await pgs.waitForReplay();
    const health = await getJson(`${skewed.url}/api/fleet/sites`, token);
    const row = health.body.items.find((item: { id: string }) => item.id === site.siteId);
    assert.equal(row.status, 'ok');
    assert.ok(row.syncLagSec >= 0 && row.syncLagSec < 3600, `lag by the database clock (${row.syncLagSec} s)`);
    // Rows an hour ahead of the database clock are quarantined whatever the instance believes.
    const ahead = intervalBatch({ after: 6, from: quarterAgo(-4), count: 1, withMetadata: false });
    const refused = await sendBatch(skewed.url, site.credential, ahead);
    assert.equal(refused.status, 200);
    assert.equal(refused.body.quarantined, 2);
  } finally {
    await skewed.close();
  }
});

/** The box's fleet sync state from its health endpoint. */
type SyncState = { state: string; unsentRows: number; lastError: string | null; lastSuccessAt: string | null };
async function syncState(box: ServiceProcess): Promise<SyncState> {
  return ((await (await fetch(`${box.url}/api/health`)).json()) as { fleet: SyncState }).fleet;
}

test('failover drill: the primary crashes (kill -9) with acknowledged batches the standby never got; promoted, the boxes send them again, nothing lost or doubled', {
  timeout: 600_000,
}, async (t) => {
  const boxes: Array<{ dataDir: string; box: ServiceProcess; siteId: string }> = [];
  t.after(async () => {
    for (const { box, dataDir } of boxes) {
      box.child.kill('SIGKILL');
      await box.exited;
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
  for (const name of ['Box A', 'Box B']) {
    const dataDir = tempDir();
    const box = await spawnService(
      dataDir,
      testEnv(dataDir, { EMS_COLLECT_INTERVAL: '1s', EMS_SIM_METERS: '2', EMS_FLEET_SYNC_INTERVAL: '1s', EMS_FLEET_CATCHUP_DELAY: '1s' }),
    );
    const { code } = await createEnrolmentCode(fleet.db.pool, name);
    const joined = await runCli(['--data-dir', dataDir, 'fleet', 'join', fleet.url, code, '--json']);
    assert.equal(joined.code, 0, joined.stderr);
    boxes.push({ dataDir, box, siteId: (JSON.parse(joined.stdout) as { siteId: string }).siteId });
  }
  // Both boxes synced their history to the primary, and the replica has it.
  for (const { dataDir, box } of boxes)
    await eventually(
      async () => {
        const state = await syncState(box);
        const ack = acknowledgedDays(dataDir);
        return state.state === 'ok' && ack.unsent === 0 && ack.cursor > 0 ? true : undefined;
      },
      'a box caught up with the fleet on the primary',
      180_000,
    );
  const before = boxes.map(({ dataDir }) => acknowledgedDays(dataDir).cursor);
  await pgs.waitForReplay();

  // The standby falls behind (cut off the WAL); the primary goes on acknowledging: each box restates a complete day (as
  // a tariff change does: a new sequence) and the fleet on the primary stores it. The standby never gets those batches.
  await pgs.detachStandby();
  const acked: number[] = [];
  for (const [i, { dataDir }] of boxes.entries()) {
    const day = acknowledgedDays(dataDir)
      .days.filter((d) => !liveDay(d))
      .at(-1)!;
    const siteDb = new Database(databasePath(dataDir), { fileMustExist: true });
    siteDb.pragma('busy_timeout = 5000');
    siteDb.prepare('UPDATE meter_days SET cost = cost + 7.31 WHERE meter_id = ? AND day = ?').run(day.meterId, day.day);
    siteDb.close();
    await eventually(
      async () => {
        const ack = acknowledgedDays(dataDir);
        return ack.cursor > before[i]! && ack.unsent === 0 ? true : undefined;
      },
      'the restated day acknowledged by the primary',
      120_000,
    );
    acked.push(acknowledgedDays(dataDir).cursor);
  }
  for (const [i, { siteId }] of boxes.entries()) {
    const onStandby = await one<{ site_cursor: string }>(pgs.standby.url, 'select site_cursor from sites where id = $1', [siteId]);
    assert.ok(Number(onStandby.site_cursor) < acked[i]!, `the standby lacks acknowledged batches (${onStandby.site_cursor} < ${acked[i]})`);
  }

  // The primary crashes: nothing more reaches the standby; the fleet loses its database.
  const port = Number(new URL(fleet.url).port);
  await pgs.primary.crash();
  for (const { box } of boxes) await eventually(async () => ((await syncState(box)).state !== 'ok' ? true : undefined), 'the box noticing', 120_000);
  // The boxes keep collecting and queue; the fleet is restarted on the promoted standby at the same address.
  await fleet.close();
  pgs.promote();
  assert.equal(await pgs.inRecovery(pgs.standby.url), false, 'the standby is the primary now');
  // Meanwhile each box restates a complete day (as a tariff change does: a new sequence), which queues on the box.
  for (const [i, { dataDir }] of boxes.entries()) {
    const day = acknowledgedDays(dataDir).days.find((d) => !liveDay(d))!;
    // (the oldest complete day; the one restated before the crash is the newest)
    const siteDb = new Database(databasePath(dataDir), { fileMustExist: true });
    siteDb.pragma('busy_timeout = 5000');
    siteDb.prepare('UPDATE meter_days SET cost = cost + 100 WHERE meter_id = ? AND day = ?').run(day.meterId, day.day);
    siteDb.close();
    await eventually(async () => (acknowledgedDays(dataDir).unsent > 0 ? true : undefined), 'the restated day queued on the box', 60_000);
    assert.equal(acknowledgedDays(dataDir).cursor, acked[i], 'nothing acknowledged while the fleet is away');
  }
  const restartedAt = Date.now();
  fleet = await startFleet(pgs.standby.url, { port });
  assert.equal(fleet.url, `http://127.0.0.1:${port}`);

  for (const [i, { dataDir, box }] of boxes.entries()) {
    let last = '';
    await eventually(
      async () => {
        const state = await syncState(box);
        const ack = acknowledgedDays(dataDir);
        last = JSON.stringify({ ...state, cursor: ack.cursor, acked: acked[i], unsent: ack.unsent });
        const fresh = state.lastSuccessAt !== null && Date.parse(state.lastSuccessAt) > restartedAt;
        return state.state === 'ok' && fresh && ack.cursor > acked[i]! && ack.unsent === 0 ? true : undefined;
      },
      'a box caught up with the fleet on the promoted standby',
      240_000,
    ).catch((error: Error) => {
      throw new Error(`${error.message}: ${last}`);
    });
  }
  const sql = new pg.Pool({ connectionString: pgs.standby.url, max: 2 });
  try {
    for (const { dataDir, siteId } of boxes) {
      const ack = acknowledgedDays(dataDir);
      const held = await assertFleetHolds(sql, siteId, ack.days);
      assert.ok(held.completeDays > 0 && held.intervals > 0, `complete days compared for ${siteId}: ${JSON.stringify(held)}`);
      const cursor = await sql.query<{ site_cursor: string }>('select site_cursor from sites where id = $1', [siteId]);
      assert.ok(Number(cursor.rows[0]!.site_cursor) <= ack.cursor, 'the fleet cursor is not ahead of the box');
    }
  } finally {
    await sql.end();
  }
});

test('the database clock keeps its last offset when the primary cannot be asked (a failover under way)', async () => {
  const gone = new pg.Pool({ connectionString: 'postgresql://postgres@127.0.0.1:1/ems_fleet', connectionTimeoutMillis: 5_000 });
  gone.on('error', () => {});
  try {
    const local = () => 1_000_000_000_000;
    const clock = new DatabaseClock(gone, local);
    assert.equal(await clock.now(), local(), 'no offset measured yet: the instance clock, no error');
    assert.equal(clock.offset, 0);
  } finally {
    await gone.end();
  }
});
