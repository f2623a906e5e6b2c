// The fleet's ingest limit is counted in the database (issue 55): batches stored at once hold an ingest slot (an
// advisory lock, src/fleet/ingest.ts SLOT_LOCK) for their transaction, so two instances on one database store no more
// at once than one instance does. Sixty batches from sixty sites go at once while a table lock holds every stored batch
// inside its transaction; the batches holding their site's lock are then exactly the limit, with one instance or two.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { SMALL_BATCH_BYTES } from '../../src/fleet/app.ts';
import { enrolSite, type FleetInstance, intervalBatch, METERS, quarterAgo, sendBatch, startFleet, startFleetDatabase } from '../helpers/fleet.ts';
import type { PostgresCluster } from '../helpers/postgres.ts';
import { eventually } from '../helpers/server.ts';

/** EMS_FLEET_MAX_INGESTS of each instance; a small (live) batch may also use the 2 reserved slots. */
const MAX_INGESTS = 2;
const LIMIT = MAX_INGESTS + 2;
const IN_FLIGHT = 60;

let cluster: PostgresCluster;
let fleets: FleetInstance[];
let sql: pg.Pool;

before(async () => {
  cluster = await startFleetDatabase();
  fleets = [await startFleet(cluster.url, { maxConcurrentIngests: MAX_INGESTS }), await startFleet(cluster.url, { maxConcurrentIngests: MAX_INGESTS })];
  sql = new pg.Pool({ connectionString: cluster.url, max: 3 });
});
after(async () => {
  await sql?.end();
  for (const fleet of fleets ?? []) await fleet.close();
  cluster?.destroy();
});

/** Transactions storing a batch now: each holds its site's advisory lock (first key 4_204_303) until it commits. */
async function storing(): Promise<number> {
  const result = await sql.query<{ n: number }>("select count(*)::int as n from pg_locks where locktype = 'advisory' and classid = 4204303 and granted");
  return result.rows[0]!.n;
}

async function sixtyAtOnce(instances: FleetInstance[]): Promise<{ held: number; statuses: number[] }> {
  const sites = [];
  for (let i = 0; i < IN_FLIGHT; i++) {
    const site = await enrolSite(instances[0]!, `Limit ${instances.length}-${i}`);
    const declared = await sendBatch(instances[0]!.url, site.credential, { sentAt: new Date().toISOString(), after: 0, through: 0, meters: METERS });
    assert.equal(declared.status, 200, JSON.stringify(declared.body));
    sites.push(site);
  }
  const batch = intervalBatch({ after: 0, from: quarterAgo(8), count: 4, withMetadata: false });
  assert.ok(JSON.stringify(batch).length < SMALL_BATCH_BYTES, 'a small (live) batch: the reserved slots count too');
  // Every batch that gets into its transaction waits there (its first interval insert counts the day) until released.
  const blocker = await sql.connect();
  await blocker.query('begin');
  await blocker.query('lock table site_day_counts in share row exclusive mode');
  const statuses: number[] = [];
  let released = false;
  try {
    const sends = sites.map(async (site, i) => {
      const response = await sendBatch(instances[i % instances.length]!.url, site.credential, batch);
      statuses.push(response.status);
      if (response.status === 429) assert.ok(Number(response.headers.get('retry-after')) >= 1);
      return response.status;
    });
    // Every request has either been answered (429) or is inside its transaction, holding its site's lock.
    let held = 0;
    await eventually(
      async () => {
        held = await storing();
        return statuses.length + held === IN_FLIGHT ? true : undefined;
      },
      'all sixty answered or storing',
      60_000,
    );
    await blocker.query('commit');
    released = true;
    await Promise.all(sends);
    // The ones turned away come back (as a box does after Retry-After) and every row lands once.
    for (const site of sites) {
      for (;;) {
        const response = await sendBatch(instances[0]!.url, site.credential, batch);
        if (response.status === 200 || response.status === 409) break;
        assert.equal(response.status, 429);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      const stored = await sql.query<{ n: number }>('select count(*)::int as n from intervals where site_id = $1', [site.siteId]);
      assert.equal(stored.rows[0]!.n, 8);
    }
    return { held, statuses };
  } finally {
    if (!released) await blocker.query('rollback').catch(() => {});
    blocker.release();
  }
}

test('sixty batches at once: one instance stores at most its limit at a time, two instances on one database the same limit', { timeout: 240_000 }, async () => {
  const one = await sixtyAtOnce([fleets[0]!]);
  assert.equal(one.held, LIMIT, `one instance: ${one.held} stored at once`);
  assert.ok(!one.statuses.some((s) => s >= 500), one.statuses.join(','));
  const two = await sixtyAtOnce(fleets);
  assert.equal(two.held, LIMIT, `two instances: ${two.held} stored at once (each alone would let ${LIMIT} in)`);
  assert.ok(!two.statuses.some((s) => s >= 500), two.statuses.join(','));
  assert.equal(two.statuses.filter((s) => s === 429).length, IN_FLIGHT - LIMIT);
});
