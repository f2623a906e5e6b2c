// The fleet process's upkeep job (issue 55 round 8, src/fleet/upkeep.ts) on a real PostgreSQL: EMS_FLEET_KEEP_RAW_MONTHS
// drops the old raw months at the job's first run and once a day after (timed on a monotonic clock the test moves), and
// sites that sent nothing since the month turned get this month's EUI figures, so the ranking's page is read from the
// index again. Months are counted back from the database's UTC month at the start, as in retention.test.ts.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { SITE_LOCK } from '../../src/fleet/ingest.ts';
import { euiRanking } from '../../src/fleet/portfolio.ts';
import { keptEuiPage } from '../../src/fleet/portfolioKept.ts';
import { fleetUpkeep, keepEuiCurrent } from '../../src/fleet/upkeep.ts';
import { enrolSite, type FleetInstance, intervalBatch, sendBatch, startFleet, startFleetDatabase } from '../helpers/fleet.ts';
import { patience } from '../helpers/patience.ts';
import type { PostgresCluster } from '../helpers/postgres.ts';

let cluster: PostgresCluster;
let fleet: FleetInstance;
let sql: pg.Pool;
let dbNow: number;

before(async () => {
  cluster = await startFleetDatabase();
  fleet = await startFleet(cluster.url);
  sql = new pg.Pool({ connectionString: cluster.url, max: 3 });
  dbNow = Number((await sql.query('select extract(epoch from now()) * 1000 as ms')).rows[0].ms);
});
after(async () => {
  await sql?.end();
  await fleet?.close();
  cluster?.destroy();
});

/** The 10th, noon UTC, of the month `back` months before the database's. */
function month(back: number): { name: string; ms: number; day: string } {
  const now = new Date(dbNow);
  const ms = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - back, 10, 12);
  return { name: new Date(ms).toISOString().slice(0, 7), ms, day: new Date(ms).toISOString().slice(0, 10) };
}

/** Polls `check` every 20 ms until it holds, for up to 30 s × patience(). */
async function waitFor(check: () => boolean, what: string): Promise<void> {
  const until = Date.now() + 30_000 * patience();
  while (!check()) {
    if (Date.now() > until) throw new Error(`gave up waiting: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const partitions = async () =>
  (
    await sql.query<{ name: string }>(
      `select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = 'intervals'::regclass`,
    )
  ).rows.map((r) => r.name.slice(10).replace('_', '-'));

test('EMS_FLEET_KEEP_RAW_MONTHS: the upkeep drops the old raw months at its first run and then once a day, not at every run', async () => {
  const site = await enrolSite(fleet, 'Upkeep retention');
  const [old, recent] = [month(3), month(0)];
  const first = intervalBatch({ after: 0, from: old.ms, count: 2 });
  const second = intervalBatch({ after: first.through, from: recent.ms, count: 2, withMetadata: false });
  for (const batch of [first, second]) assert.equal((await sendBatch(fleet.url, site.credential, batch)).status, 200);
  assert.ok((await partitions()).includes(old.name));

  const drops: Array<{ rawFrom: string; dropped: string[] }> = [];
  let monotonic = 0;
  const logger = {
    info: (fields: object, message: string) => {
      if (message.startsWith('fleet upkeep: raw intervals')) drops.push(fields as { rawFrom: string; dropped: string[] });
    },
    error: (fields: object, message: string) => assert.fail(`${message}: ${JSON.stringify(fields)}`),
  };
  const job = fleetUpkeep(fleet.db.pool, { keepRawMonths: 2, logger, now: () => Date.now(), monotonic: () => monotonic, everyMs: 20 });
  job.start();
  try {
    await waitFor(() => drops.length === 1, 'the first run drops');
    assert.ok(drops[0]!.dropped.includes(old.name), JSON.stringify(drops));
    assert.ok(!(await partitions()).includes(old.name), 'the old month’s partition is gone');
    const limit = (await sql.query('select raw_from::text as f from fleet_retention')).rows[0].f;
    assert.equal(limit, drops[0]!.rawFrom);
    assert.ok(limit > `${old.name}-01` && limit <= `${recent.name}-01`, limit);
    // Runs go on every 20 ms; within the day none drops again.
    const runs = job.state().runs;
    await waitFor(() => job.state().runs >= runs + 5, 'five more runs');
    assert.equal(drops.length, 1, 'no second drop within the day');
    monotonic += 24 * 3_600_000;
    await waitFor(() => drops.length === 2, 'a day later it drops again');
    assert.equal(drops[1]!.rawFrom, limit, 'the same limit (the month has not turned)');
  } finally {
    await job.stop();
  }
  assert.equal(job.state().failures, 0);
});

test('a site that sent nothing since the month turned gets this month’s EUI figures from the upkeep, skipped while its batch holds its lock', async () => {
  const quiet = await enrolSite(fleet, 'Upkeep EUI');
  const days = Array.from({ length: 60 }, (_, i) => {
    const day = new Date(month(3).ms + i * 86_400_000).toISOString().slice(0, 10);
    return { meter: '1', day, value: 100, cost: 30, carbonKg: 40, seq: i + 1 };
  });
  const batch = { ...intervalBatch({ after: 0, from: month(0).ms, count: 0 }), days, through: days.length };
  assert.equal((await sendBatch(fleet.url, quiet.credential, batch)).status, 200);
  const mine = [quiet.siteId];
  const kept = await keptEuiPage(sql, mine, dbNow, 0, 10);
  assert.equal(kept.stale, 0, 'kept for this month by its batch');
  const expected = await euiRanking(sql, mine, dbNow);
  assert.ok(expected[0]!.eui! > 0);
  // The month turned since: its figures are a month old (and wrong, to be sure they are made again, not kept).
  await sql.query(`update sites set eui_month = (eui_month - interval '1 month')::date, eui_kwh = 1 where id = $1`, [quiet.siteId]);
  assert.equal((await keptEuiPage(sql, mine, dbNow, 0, 10)).stale, 1);

  // While a batch of the site is being stored (its ingest lock held), the upkeep leaves it to that batch.
  const holder = await sql.connect();
  try {
    await holder.query('begin');
    await holder.query('select pg_advisory_xact_lock($1, hashtext($2))', [SITE_LOCK, quiet.siteId]);
    const skipped = await keepEuiCurrent(fleet.db.pool, dbNow);
    assert.ok(skipped.skipped >= 1, JSON.stringify(skipped));
    assert.equal((await keptEuiPage(sql, mine, dbNow, 0, 10)).stale, 1);
  } finally {
    await holder.query('rollback');
    holder.release();
  }
  const done = await keepEuiCurrent(fleet.db.pool, dbNow);
  assert.ok(done.refreshed >= 1, JSON.stringify(done));
  const page = await keptEuiPage(sql, mine, dbNow, 0, 10);
  assert.equal(page.stale, 0, 'kept for this month again: the page reads the index');
  assert.equal(page.rows[0]!.eui, expected[0]!.eui, 'the figures made again from the monthly totals');
  assert.deepEqual(await keepEuiCurrent(fleet.db.pool, dbNow), { refreshed: 0, skipped: 0 }, 'nothing left to do');
});
