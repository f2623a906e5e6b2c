// Retention of raw intervals at the fleet (issue 55 item 3, round 7), against a real PostgreSQL over real HTTP: the
// months before the kept ones lose their raw rows (their partitions), their day rollups stay, and no box can make such
// a month again, also when its batches race the drop. Months are counted back from the database's UTC month at the
// start (the clock the drop reads), and every assertion allows that month to have turned meanwhile.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { dropRawMonths } from '../../src/fleet/retention.ts';
import { fleetUpkeep } from '../../src/fleet/upkeep.ts';
import type { Batch } from '../../src/fleet/schemas.ts';
import { enrolSite, type FleetInstance, intervalBatch, sendBatch, startFleet, startFleetDatabase } from '../helpers/fleet.ts';
import { patience } from '../helpers/patience.ts';
import type { PostgresCluster } from '../helpers/postgres.ts';

let cluster: PostgresCluster;
let fleet: FleetInstance;
let sql: pg.Pool;
/** The database's clock when the file started (ms). */
let dbNow: number;

before(async () => {
  cluster = await startFleetDatabase();
  fleet = await startFleet(cluster.url);
  sql = new pg.Pool({ connectionString: cluster.url, max: 2 });
  dbNow = Number((await sql.query('select extract(epoch from now()) * 1000 as ms')).rows[0].ms);
});
after(async () => {
  await sql?.end();
  await fleet?.close();
  cluster?.destroy();
});

/** The 10th, noon UTC, of the month `back` months before the database's: 'YYYY-MM', the instant, its day. */
function month(back: number): { name: string; ms: number; day: string } {
  const now = new Date(dbNow);
  const ms = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - back, 10, 12);
  return { name: new Date(ms).toISOString().slice(0, 7), ms, day: new Date(ms).toISOString().slice(0, 10) };
}

/** One batch after `after`: four quarter hours of meters 1 and 2 in each month given, a day row of meter 1 in each. */
function batchOf(after: number, months: Array<{ ms: number; day: string }>, value: number): Batch {
  const parts = months.map((m, i) => intervalBatch({ after: after + i * 9, from: m.ms, count: 4, value: () => value, withMetadata: i === 0 }));
  const days = months.map((m, i) => ({ meter: '1', day: m.day, value: value * 10, cost: value, carbonKg: value, seq: after + i * 9 + 9 }));
  return { ...parts[0]!, intervals: parts.flatMap((p) => p.intervals ?? []), days, through: after + months.length * 9 };
}

const partitions = async () =>
  (
    await sql.query<{ name: string }>(
      `select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = 'intervals'::regclass`,
    )
  ).rows
    .map((r) => r.name.slice(10).replace('_', '-'))
    .sort();
const intervalsIn = async (siteId: string, name: string) =>
  (await sql.query('select count(*)::int as n from intervals where site_id = $1 and to_char(start at time zone $3, $4) = $2', [siteId, name, 'UTC', 'YYYY-MM']))
    .rows[0].n;

/** Polls `check` every 20 ms until it holds, for up to 30 s × patience(). */
async function waitFor(check: () => boolean, what: string): Promise<void> {
  const until = Date.now() + 30_000 * patience();
  while (!check()) {
    if (Date.now() > until) throw new Error(`gave up waiting: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

// First in the file: the limit only moves forward, and the tests after it keep fewer months.
test('EMS_FLEET_KEEP_RAW_MONTHS: the fleet’s upkeep job drops the old raw months at its first run and then once a day, not at every run', async () => {
  const site = await enrolSite(fleet, 'Upkeep retention');
  const [old, recent] = [month(6), month(0)];
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
  const job = fleetUpkeep(fleet.db.pool, { keepRawMonths: 5, logger, now: () => Date.now(), monotonic: () => monotonic, everyMs: 20 });
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

test('the months before the kept ones lose their raw rows, keep their days, and a box sending them again makes nothing', async () => {
  const site = await enrolSite(fleet, 'Retention');
  const [old, older, recent] = [month(3), month(4), month(1)];
  assert.equal((await sendBatch(fleet.url, site.credential, batchOf(0, [older, old, recent], 1))).status, 200);
  const made = await partitions();
  assert.ok(
    [older.name, old.name, recent.name].every((m) => made.includes(m)),
    made.join(),
  );
  assert.equal(await intervalsIn(site.siteId, old.name), 8);

  const first = await dropRawMonths(fleet.db.pool, 2);
  assert.ok(first.dropped.includes(older.name) && first.dropped.includes(old.name), JSON.stringify(first));
  assert.ok(first.rawFrom > `${old.name}-01` && first.rawFrom <= `${recent.name}-01`, first.rawFrom);
  assert.ok(!(await partitions()).includes(old.name));
  assert.equal(await intervalsIn(site.siteId, recent.name), 8, 'the kept month keeps its rows');
  const daysOf = async () =>
    (await sql.query('select day::text, value from day_rollups where site_id = $1 order by day', [site.siteId])).rows.map((r) => [r.day, r.value]);
  assert.deepEqual(await daysOf(), [
    [older.day, 10],
    [old.day, 10],
    [recent.day, 10],
  ]);

  // The box restates its history (a restore, a restatement): the days are stored, the dropped months' raw rows are not,
  // and their partitions are not made again.
  const again = await sendBatch(fleet.url, site.credential, batchOf(27, [older, old, recent], 2));
  assert.equal(again.status, 200, JSON.stringify(again.body));
  assert.equal(again.body.acknowledged, 54);
  assert.ok(!(await partitions()).includes(old.name) && !(await partitions()).includes(older.name), (await partitions()).join());
  assert.equal(await intervalsIn(site.siteId, old.name), 0);
  assert.deepEqual(await daysOf(), [
    [older.day, 20],
    [old.day, 20],
    [recent.day, 20],
  ]);
  // The limit never moves back: keeping more months later does not open the dropped ones again.
  assert.equal((await dropRawMonths(fleet.db.pool, 12)).rawFrom, first.rawFrom);
  await assert.rejects(dropRawMonths(fleet.db.pool, 0), /keepMonths must be/);
});

test('batches racing the drop of their month: none makes the month again, every one is taken', async () => {
  const month2 = month(2);
  const sites = await Promise.all(Array.from({ length: 8 }, (_, i) => enrolSite(fleet, `Racing ${i}`)));
  // Each site has the month already (so the race is about storing into it, not only making it).
  for (const site of sites) assert.equal((await sendBatch(fleet.url, site.credential, batchOf(0, [month2], 1))).status, 200);
  assert.ok((await partitions()).includes(month2.name));
  const sends = sites.map(async (site) => {
    for (;;) {
      const answer = await sendBatch(fleet.url, site.credential, batchOf(9, [month2, month(1)], 3));
      if (answer.status !== 429) return answer.status;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });
  const [dropped, ...statuses] = await Promise.all([dropRawMonths(fleet.db.pool, 1), ...sends]);
  assert.ok(dropped.rawFrom > `${month2.name}-01`);
  assert.deepEqual(statuses, Array(8).fill(200));
  assert.ok(!(await partitions()).includes(month2.name), (await partitions()).join());
  for (const site of sites) assert.equal(await intervalsIn(site.siteId, month2.name), 0);
});
