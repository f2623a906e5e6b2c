// A real site box (the service as a child process, collecting from its built-in simulator every second) joins a real
// fleet over HTTPS with `emsctl fleet join`, syncs live, survives the fleet going away and a kill -9 of itself, and a
// restatement of its stored days reaches the fleet. Every comparison is against the site's own SQLite: each meter
// day the fleet acknowledged must be at the fleet with the same intervals (to the last one) and the same rollups; a day
// the collector still holds (it writes hourly, and the sync sends what it holds) is at the fleet with every interval.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, test } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { databasePath } from '../../src/platform/db/client.ts';
import { createEnrolmentCode, revokeSite } from '../../src/fleet/enrolment.ts';
import { selfSignedCertificate } from '../helpers/certificate.ts';
import { runCli } from '../helpers/cli.ts';
import { type FleetInstance, startFleet, startFleetDatabase } from '../helpers/fleet.ts';
import type { PostgresCluster } from '../helpers/postgres.ts';
import { eventually, tempDir } from '../helpers/server.ts';
import { acknowledgedDays, type SiteDay } from '../helpers/siteDays.ts';
import { type ServiceProcess, spawnService } from '../helpers/serviceProcess.ts';
import { testEnv } from '../helpers/testEnv.ts';

let cluster: PostgresCluster;
let fleet: FleetInstance;
let sql: pg.Pool;
let certDir: string;
let tls: { certFile: string; keyFile: string };

before(async () => {
  cluster = await startFleetDatabase();
  certDir = tempDir('ems-fleet-cert-');
  tls = selfSignedCertificate(certDir, 'fleet');
  fleet = await startFleet(cluster.url, { tls });
  sql = new pg.Pool({ connectionString: cluster.url, max: 2 });
});
after(async () => {
  await sql?.end();
  await fleet?.close();
  cluster?.destroy();
  fs.rmSync(certDir, { recursive: true, force: true });
});

/** The site trusts the fleet's self-signed certificate as a customer's box trusts its fleet's CA. */
const siteEnv = () => ({ NODE_EXTRA_CA_CERTS: tls.certFile });

async function startSite(dataDir: string): Promise<ServiceProcess> {
  return spawnService(
    dataDir,
    testEnv(dataDir, { ...siteEnv(), EMS_COLLECT_INTERVAL: '1s', EMS_SIM_METERS: '2', EMS_FLEET_SYNC_INTERVAL: '1s', EMS_FLEET_CATCHUP_DELAY: '1s' }),
  );
}

/** Every acknowledged site day is at the fleet: the same intervals (no more, no fewer) and the same rollups. */
async function assertFleetHolds(siteId: string, days: SiteDay[]): Promise<{ intervals: number }> {
  const fleetIntervals = await sql.query<{ meter_key: string; start: Date; value: number }>(
    'select meter_key, start, value from intervals where site_id = $1',
    [siteId],
  );
  const byKey = new Map(fleetIntervals.rows.map((r) => [`${r.meter_key}|${r.start.getTime()}`, r.value]));
  const rollups = await sql.query<{ meter_key: string; day: string; value: number; cost: number; carbon_kg: number }>(
    'select meter_key, day::text as day, value, cost, carbon_kg from day_rollups where site_id = $1',
    [siteId],
  );
  const rollupOf = new Map(rollups.rows.map((r) => [`${r.meter_key}|${r.day}`, r]));
  let compared = 0;
  for (const day of days) {
    const rollup = rollupOf.get(`${day.meterId}|${day.day}`);
    assert.ok(rollup, `meter ${day.meterId} ${day.day} has its day rollup at the fleet`);
    const stored = fleetIntervals.rows.filter((r) => r.meter_key === String(day.meterId) && r.start.getTime() >= day.from && r.start.getTime() < day.to).length;
    if (live(day)) {
      // A day the site's collector still holds (written hourly; the sync sends what is held between the writes): the
      // fleet is ahead of the row, so its values are the held ones, not the row's (a virtual or export meter's total
      // may move either way: test/fleet/heldRows.test.ts compares them with what is held). Every interval of the row
      // is there.
      for (const start of day.intervals.keys())
        assert.ok(byKey.has(`${day.meterId}|${start}`), `meter ${day.meterId} interval ${new Date(start).toISOString()} at the fleet`);
      assert.ok(stored >= day.intervals.size, `meter ${day.meterId} ${day.day}: the fleet holds at least the row's intervals`);
      continue;
    }
    assert.equal(rollup.value, day.totalKwh, `meter ${day.meterId} ${day.day} total`);
    assert.equal(rollup.cost, day.cost, `meter ${day.meterId} ${day.day} cost`);
    assert.equal(rollup.carbon_kg, day.carbonKg);
    for (const [start, value] of day.intervals) {
      assert.equal(byKey.get(`${day.meterId}|${start}`), value, `meter ${day.meterId} interval ${new Date(start).toISOString()}`);
      compared++;
    }
    // Nothing doubled or invented: within each acknowledged day the fleet holds exactly the site's intervals.
    assert.equal(stored, day.intervals.size, `meter ${day.meterId} ${day.day}: the fleet holds as many intervals as the site`);
  }
  return { intervals: compared };
}

/** A day whose row the collector may still hold counting for (it writes hourly): the day of now, or one ended < 65 min ago. */
function live(day: SiteDay): boolean {
  return day.to > Date.now() - 65 * 60_000;
}

async function health(site: ServiceProcess): Promise<{ fleet: { state: string; unsentRows: number; lastError: string | null; lastSuccessAt: string | null } }> {
  return (await (await fetch(`${site.url}/api/health`)).json()) as never;
}

test('join with two commands, live sync, the fleet away and back, kill -9 mid-sync, a restatement, a revocation', { timeout: 300_000 }, async (t) => {
  const dataDir = tempDir();
  let site = await startSite(dataDir);
  t.after(async () => {
    site.child.kill('SIGKILL');
    await site.exited;
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  // Off by default.
  assert.equal((await health(site)).fleet.state, 'off');

  const { code } = await createEnrolmentCode(fleet.db.pool, 'Site over HTTPS');
  const joined = await runCli(['--data-dir', dataDir, 'fleet', 'join', fleet.url, code, '--json'], { env: siteEnv() });
  assert.equal(joined.code, 0, joined.stderr);
  const { siteId } = JSON.parse(joined.stdout) as { siteId: string };
  // A second join is refused clearly; so is the used code.
  const again = await runCli(['--data-dir', dataDir, 'fleet', 'join', fleet.url, code], { env: siteEnv() });
  assert.notEqual(again.code, 0);
  assert.match(again.stderr, /already joined/);

  // Live sync: metadata first, then intervals; the site's health says ok.
  await eventually(
    async () => ((await health(site)).fleet.state === 'ok' && (await health(site)).fleet.lastSuccessAt ? true : undefined),
    'the first stored batch',
    60_000,
  );
  await eventually(
    async () => ((await sql.query('select 1 from intervals where site_id = $1 limit 1', [siteId])).rowCount ? true : undefined),
    'intervals at the fleet',
    60_000,
  );
  const meters = await sql.query('select key, commodity, unit from site_meters where site_id = $1 order by key', [siteId]);
  assert.ok(meters.rowCount! >= 3, 'the simulator meters were declared');
  let ack = acknowledgedDays(dataDir);
  assert.ok(ack.days.length > 0);
  assert.ok((await assertFleetHolds(siteId, ack.days)).intervals > 0);

  const status = await runCli(['--data-dir', dataDir, 'fleet', 'status', '--json']);
  assert.equal(status.code, 0, status.stderr);
  const state = JSON.parse(status.stdout) as { state: string; fleetUrl: string; siteId: string };
  assert.deepEqual([state.state, state.fleetUrl, state.siteId], ['ok', fleet.url, siteId]);
  const overall = await runCli(['--data-dir', dataDir, 'status']);
  assert.match(overall.stdout, /fleet sync\s+OK to https:\/\/127\.0\.0\.1:\d+; \d+ rows unsent/);

  // The fleet goes away: the site keeps collecting, says why in its health, keeps every row.
  const port = Number(new URL(fleet.url).port);
  await fleet.close();
  await eventually(async () => ((await health(site)).fleet.state === 'failing' ? true : undefined), 'the site noticing', 30_000);
  assert.match((await health(site)).fleet.lastError!, /cannot be reached/);
  const seqBefore = acknowledgedDays(dataDir).cursor;
  await new Promise((resolve) => setTimeout(resolve, 3000));
  // …and kill -9 while it waits: the cursor is in SQLite, nothing is in memory only.
  site.child.kill('SIGKILL');
  await site.exited;
  site = await startSite(dataDir);
  assert.equal(acknowledgedDays(dataDir).cursor, seqBefore, 'the cursor did not move while the fleet was away');
  fleet = await startFleet(cluster.url, { tls, port });
  // Back: the backlog drains (the site backs off up to ~10 s after the failures), and what was acknowledged is all there.
  await eventually(
    async () => {
      const now = acknowledgedDays(dataDir);
      return now.cursor > seqBefore && (await health(site)).fleet.state === 'ok' ? now : undefined;
    },
    'the catch-up',
    90_000,
  );
  ack = acknowledgedDays(dataDir);
  await assertFleetHolds(siteId, ack.days);

  // A restatement: the site's stored day is re-priced (as a tariff change does): a new sequence, the fleet follows.
  // A day done with (the collector holds nothing of it): a held day's cost is the collector's, at its tariff.
  const restated = ack.days.find((day) => !live(day))!;
  const siteDb = new Database(databasePath(dataDir), { fileMustExist: true });
  siteDb.pragma('busy_timeout = 5000');
  siteDb.prepare('UPDATE meter_days SET cost = cost + 100 WHERE meter_id = ? AND day = ?').run(restated.meterId, restated.day);
  siteDb.close();
  await eventually(
    async () => {
      const row = await sql.query('select cost from day_rollups where site_id = $1 and meter_key = $2 and day = $3', [
        siteId,
        String(restated.meterId),
        restated.day,
      ]);
      return Math.abs(row.rows[0].cost - (restated.cost + 100)) < 1e-9 ? true : undefined;
    },
    'the restated cost at the fleet',
    30_000,
  );

  // Revoked: the site keeps its rows and says it was refused.
  await revokeSite(fleet.db.pool, siteId);
  await eventually(async () => ((await health(site)).fleet.state === 'refused' ? true : undefined), 'the refusal in the site health', 30_000);
  assert.match((await health(site)).fleet.lastError!, /unknown or revoked/);
  const left = await runCli(['--data-dir', dataDir, 'fleet', 'leave', '--json'], { env: siteEnv() });
  assert.equal(left.code, 0, left.stderr);
  assert.equal((await health(site)).fleet.state, 'off');
});
