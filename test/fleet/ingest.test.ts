// The fleet's ingest against a real PostgreSQL cluster over real HTTP: enrolment, the one idempotent write path, every
// refusal storing nothing, the site clock quarantine, restatements, back-pressure, two instances and a database restart.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { SMALL_BATCH_BYTES } from '../../src/fleet/app.ts';
import { createEnrolmentCode, revokeSite } from '../../src/fleet/enrolment.ts';
import {
  adminToken,
  enrolSite,
  type FleetInstance,
  getJson,
  intervalBatch,
  METERS,
  quarterAgo,
  sendBatch,
  startFleet,
  startFleetDatabase,
} from '../helpers/fleet.ts';
import type { PostgresCluster } from '../helpers/postgres.ts';

let cluster: PostgresCluster;
let fleet: FleetInstance;
let sql: pg.Pool;

before(async () => {
  cluster = await startFleetDatabase();
  fleet = await startFleet(cluster.url);
  sql = new pg.Pool({ connectionString: cluster.url, max: 2 });
  sql.on('error', () => {}); // idle connections die when the restart test stops the cluster
});
after(async () => {
  await sql?.end();
  await fleet?.close();
  cluster?.destroy();
});

async function count(table: string, siteId: string): Promise<number> {
  const result = await sql.query(`select count(*)::int as n from ${table} where site_id = $1`, [siteId]);
  return result.rows[0].n;
}

describe('enrolment', () => {
  test('a one-time code becomes a credential once; the code is void after, and only the hash is stored', async () => {
    const { code } = await createEnrolmentCode(fleet.db.pool, 'Depot North');
    const enrolOnce = () =>
      fetch(`${fleet.url}/api/fleet/enrol`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ code: code.toLowerCase() }),
      });
    // Five sites racing with one code: exactly one wins.
    const responses = await Promise.all(Array.from({ length: 5 }, enrolOnce));
    const statuses = responses.map((r) => r.status).sort();
    assert.deepEqual(statuses, [201, 400, 400, 400, 400]);
    const winner = (await responses.find((r) => r.status === 201)!.json()) as { siteId: string; credential: string; siteName: string };
    assert.equal(winner.siteName, 'Depot North');
    assert.match(winner.credential, /^ems_site_/);
    const refused = (await responses.find((r) => r.status === 400)!.json()) as { code: string };
    assert.equal(refused.code, 'enrolment_code_invalid');
    const stored = await sql.query('select credential_hash from sites where id = $1', [winner.siteId]);
    assert.notEqual(stored.rows[0].credential_hash, winner.credential);
    assert.match(stored.rows[0].credential_hash, /^[0-9a-f]{64}$/);
  });

  test('an unknown code, a malformed body and an expired code are refused with 400', async () => {
    const post = (body: string) => fetch(`${fleet.url}/api/fleet/enrol`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    assert.equal((await post(JSON.stringify({ code: 'AAAAA-BBBBB-CCCCC-DDDDD' }))).status, 400);
    assert.equal((await post('{not json')).status, 400);
    assert.equal((await post(JSON.stringify({ code: 'AAAAA-BBBBB', siteId: 'x' }))).status, 400);
    const { code } = await createEnrolmentCode(fleet.db.pool, 'Old');
    await sql.query(`update enrolment_codes set expires_at = now() - interval '1 second' where site_name = 'Old'`);
    const expired = await post(JSON.stringify({ code }));
    assert.equal(expired.status, 400);
  });

  test('admins make codes over the API; viewers and strangers cannot', async () => {
    const admin = await adminToken(fleet.db);
    const make = (token: string) =>
      fetch(`${fleet.url}/api/fleet/enrolment-codes`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ siteName: 'School 7' }),
      });
    const made = await make(admin);
    assert.equal(made.status, 201);
    assert.match(((await made.json()) as { code: string }).code, /^[0-9A-Z]{5}(-[0-9A-Z]{5}){3}$/);
    const { addUser } = await import('../../src/fleet/app.ts');
    const viewer = await addUser(fleet.db.pool, 'viewer-codes', 'viewer');
    assert.equal((await make(viewer.token)).status, 403);
    assert.equal((await make('ems_user_not-a-real-token-at-all')).status, 401);
  });
});

describe('ingest', () => {
  test('metadata then intervals are stored; the same batch again (its answer lost) changes nothing and is refused with the cursor at its end', async () => {
    const site = await enrolSite(fleet, 'Live');
    const batch = intervalBatch({ after: 0, from: quarterAgo(8), count: 8 });
    const first = await sendBatch(fleet.url, site.credential, batch);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.equal(first.body.acknowledged, 16);
    assert.equal(first.body.stored.intervals, 16);
    const before = await sql.query('select meter_key, start, value, quality, seq from intervals where site_id = $1 order by 1, 2', [site.siteId]);
    assert.equal(first.body.after, 0);
    assert.equal(first.body.siteId, site.siteId, 'the acknowledgement names the site and the range');
    // The fleet's cursor is the batch's end: the same batch again is a box going back (it re-stamps above 16).
    const again = await sendBatch(fleet.url, site.credential, batch);
    assert.equal(again.status, 409);
    assert.equal(again.body.code, 'sequence_backwards');
    assert.equal(again.body.details.cursor, 16);
    const afterRows = await sql.query('select meter_key, start, value, quality, seq from intervals where site_id = $1 order by 1, 2', [site.siteId]);
    assert.deepEqual(afterRows.rows, before.rows);
    assert.equal(afterRows.rowCount, 16);
    // Counted once for completeness although written twice.
    const counted = await sql.query('select sum(rows)::int as n from site_day_counts where site_id = $1', [site.siteId]);
    assert.equal(counted.rows[0].n, 16);
    // The enrolment name stays the site's name; the box's own name ('Site') is kept beside it.
    const meta = await sql.query('select name, box_name, floor_area_m2 from sites where id = $1', [site.siteId]);
    assert.deepEqual(meta.rows[0], { name: 'Live', box_name: 'Site', floor_area_m2: 1000 });
    assert.equal(await count('site_meters', site.siteId), 3);
    // The month's partition exists and holds the rows.
    const partition = `intervals_${new Date(quarterAgo(8)).toISOString().slice(0, 7).replace('-', '_')}`;
    const inPartition = await sql.query(`select count(*)::int as n from ${partition} where site_id = $1`, [site.siteId]);
    assert.ok(inPartition.rows[0].n > 0);
  });

  test('a restatement (higher sequence) replaces a row; an older version re-sent later does not undo it', async () => {
    const site = await enrolSite(fleet, 'Restated');
    const from = quarterAgo(4);
    assert.equal((await sendBatch(fleet.url, site.credential, intervalBatch({ after: 0, from, count: 4, meters: ['1'] }))).status, 200);
    const restated = {
      sentAt: new Date().toISOString(),
      after: 4,
      through: 5,
      intervals: [{ meter: '1', start: new Date(from).toISOString(), value: 42.5, quality: 'imported', seq: 5 }],
    };
    assert.equal((await sendBatch(fleet.url, site.credential, restated)).status, 200);
    // The site's cursor is now 5 (the end of the last batch stored). A batch from below it means its sequence went
    // backwards (a restore from an older backup, even one batch old): refused, nothing stored.
    for (const after of [0, 4]) {
      const stale = await sendBatch(fleet.url, site.credential, {
        sentAt: new Date().toISOString(),
        after,
        through: 6,
        intervals: [{ meter: '1', start: new Date(from).toISOString(), value: 1234, quality: 'measured', seq: 6 }],
      });
      assert.equal(stale.status, 409);
      assert.equal(stale.body.code, 'sequence_backwards');
      assert.equal(stale.body.details.cursor, 5);
    }
    // A later version (re-stamped above the cursor) replaces it.
    const later = {
      sentAt: new Date().toISOString(),
      after: 5,
      through: 7,
      intervals: [
        { meter: '1', start: new Date(from).toISOString(), value: 1, quality: 'measured', seq: 6 },
        { meter: '1', start: new Date(from + 900_000).toISOString(), value: 7, quality: 'estimated', seq: 7 },
      ],
    };
    assert.equal((await sendBatch(fleet.url, site.credential, later)).status, 200);
    const rows = await sql.query('select value, quality, seq from intervals where site_id = $1 order by start', [site.siteId]);
    assert.deepEqual(rows.rows.slice(0, 2), [
      { value: 1, quality: 'measured', seq: '6' },
      { value: 7, quality: 'estimated', seq: '7' },
    ]);
  });

  test('refused whole, nothing stored: undeclared meter, malformed, oversized, missing sent as a value, out-of-range sequence', async () => {
    const site = await enrolSite(fleet, 'Refusals');
    const good = intervalBatch({ after: 0, from: quarterAgo(4), count: 4 });
    const cases: Array<[string, unknown, number, string]> = [
      [
        'undeclared meter',
        { ...good, intervals: [...good.intervals!, { meter: '99', start: good.intervals![0]!.start, value: 1, quality: 'measured', seq: 8 }] },
        422,
        'unknown_meter',
      ],
      ['not JSON', '{"sentAt": ', 400, 'invalid_batch'],
      ['a site id in the payload', { ...good, siteId: '00000000-0000-0000-0000-000000000000' }, 400, 'invalid_batch'],
      ['quality missing', { ...good, intervals: [{ ...good.intervals![0]!, quality: 'missing' }] }, 400, 'invalid_batch'],
      ['value null', { ...good, intervals: [{ ...good.intervals![0]!, value: null }] }, 400, 'invalid_batch'],
      [
        'start off the quarter hour',
        { ...good, intervals: [{ ...good.intervals![0]!, start: new Date(quarterAgo(1) + 60_000).toISOString() }] },
        400,
        'invalid_batch',
      ],
      ['sequence above through', { ...good, through: 3 }, 400, 'invalid_batch'],
      ['the same row twice', { ...good, intervals: [good.intervals![0]!, { ...good.intervals![0]!, seq: 2 }] }, 400, 'invalid_batch'],
      ['too many rows', intervalBatch({ after: 0, from: quarterAgo(20_001), count: 10_001 }), 413, 'batch_too_large'],
    ];
    for (const [name, body, status, code] of cases) {
      const response = await sendBatch(fleet.url, site.credential, body);
      assert.equal(response.status, status, `${name}: ${JSON.stringify(response.body)}`);
      assert.equal(response.body.code, code, name);
      assert.equal(typeof response.body.error, 'string');
    }
    assert.equal(await count('intervals', site.siteId), 0);
    assert.equal(await count('site_meters', site.siteId), 0, 'the undeclared-meter batch declared meters too: rolled back');
    // The refusal is visible in the portfolio.
    const health = await getJson(`${fleet.url}/api/fleet/sites`, await adminToken(fleet.db));
    const row = health.body.items.find((s: { id: string }) => s.id === site.siteId);
    assert.equal(row.status, 'refusing');
    assert.match(row.lastRefusal, /never declared: 99/);
  });

  test('an unknown or revoked credential is refused and stores nothing; leaving revokes too', async () => {
    const site = await enrolSite(fleet, 'Revoked');
    const batch = intervalBatch({ after: 0, from: quarterAgo(2), count: 2 });
    assert.equal((await sendBatch(fleet.url, 'ems_site_unknown-credential-000000000000', batch)).status, 401);
    await revokeSite(fleet.db.pool, site.siteId);
    const refused = await sendBatch(fleet.url, site.credential, batch);
    assert.equal(refused.status, 401);
    assert.equal(refused.body.code, 'unauthenticated');
    assert.equal(await count('intervals', site.siteId), 0);
    const leaving = await enrolSite(fleet, 'Leaving');
    const left = await fetch(`${fleet.url}/api/fleet/leave`, { method: 'POST', headers: { authorization: `Bearer ${leaving.credential}` } });
    assert.equal(left.status, 204);
    assert.equal((await sendBatch(fleet.url, leaving.credential, batch)).status, 401);
  });

  test("a site cannot write another site's rows: the credential decides, meter keys are per site", async () => {
    const a = await enrolSite(fleet, 'A');
    const b = await enrolSite(fleet, 'B');
    const from = quarterAgo(2);
    assert.equal((await sendBatch(fleet.url, a.credential, intervalBatch({ after: 0, from, count: 2, value: () => 5 }))).status, 200);
    // B sends rows for the same meter keys and times, and tries to smuggle in A's site id.
    assert.equal(
      (
        await sendBatch(fleet.url, b.credential, {
          ...intervalBatch({ after: 0, from, count: 2, value: () => 999 }),
          site: { name: 'A', timezone: 'UTC', floorAreaM2: 1, id: a.siteId },
        })
      ).status,
      400,
    );
    assert.equal((await sendBatch(fleet.url, b.credential, intervalBatch({ after: 0, from, count: 2, value: () => 999 }))).status, 200);
    const aRows = await sql.query('select distinct value from intervals where site_id = $1', [a.siteId]);
    assert.deepEqual(aRows.rows, [{ value: 5 }]);
    assert.equal(await count('intervals', b.siteId), 4);
    // B cannot declare meters without data either: meters it declares land under B.
    assert.equal(await count('site_meters', a.siteId), METERS.length);
  });

  test('a site clock 3 h ahead: its rows are quarantined (not dropped) and the site clock alarm is raised, then cleared', async () => {
    let now = Date.now();
    const skewed = await startFleet(cluster.url, { now: () => now });
    try {
      const site = await enrolSite(skewed, 'Clock');
      const ahead = now + 3 * 3_600_000;
      const batch = intervalBatch({ after: 0, from: quarterAgo(4, ahead), count: 4, sentAt: ahead });
      const response = await sendBatch(skewed.url, site.credential, batch);
      assert.equal(response.status, 200);
      assert.equal(response.body.quarantined, 8);
      assert.equal(response.body.stored.intervals, 0);
      assert.ok(Math.abs(response.body.clockSkewMs - 3 * 3_600_000) < 5_000);
      assert.equal(await count('quarantined_intervals', site.siteId), 8);
      assert.equal(await count('intervals', site.siteId), 0);
      const admin = await adminToken(skewed.db);
      const alerts = await getJson(`${skewed.url}/api/fleet/alerts`, admin);
      const alarm = alerts.body.items.find((a: { siteId: string }) => a.siteId === site.siteId);
      assert.equal(alarm.source, 'fleet');
      assert.match(alarm.title, /site clock: the site's clock is 3\.0 h ahead/);
      const health = await getJson(`${skewed.url}/api/fleet/sites`, admin);
      const row = health.body.items.find((s: { id: string }) => s.id === site.siteId);
      assert.equal(row.status, 'clock');
      assert.ok(Math.abs(row.clockSkewSec - 10_800) < 5);
      // The site's clock is put right: the next batch clears the alarm.
      now = Date.now();
      const fixed = intervalBatch({ after: 8, from: quarterAgo(1), count: 1, withMetadata: false });
      assert.equal((await sendBatch(skewed.url, site.credential, fixed)).status, 200);
      const open = await sql.query('select count(*)::int as n from fleet_alarms where site_id = $1 and cleared_at is null', [site.siteId]);
      assert.equal(open.rows[0].n, 0);
      assert.equal(await count('quarantined_intervals', site.siteId), 8, 'quarantined rows stay until an operator acts');
    } finally {
      await skewed.close();
    }
  });

  test('back-pressure: parallel batches get 429 with Retry-After, never a 500; retried, every row lands once', async () => {
    const site = await enrolSite(fleet, 'Parallel');
    assert.equal((await sendBatch(fleet.url, site.credential, { sentAt: new Date().toISOString(), after: 0, through: 0, meters: METERS })).status, 200);
    const batches = Array.from({ length: 12 }, (_, i) => intervalBatch({ after: i * 400, from: quarterAgo(200 * (12 - i)), count: 200, withMetadata: false }));
    const statuses: number[] = [];
    await Promise.all(
      batches.map(async (batch) => {
        for (;;) {
          const response = await sendBatch(fleet.url, site.credential, batch);
          statuses.push(response.status);
          if (response.status === 200 || response.status === 409) return;
          assert.equal(response.status, 429, JSON.stringify(response.body));
          assert.ok(Number(response.headers.get('retry-after')) >= 1);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      }),
    );
    assert.ok(statuses.includes(429), `some were turned away: ${statuses.join(',')}`);
    assert.ok(!statuses.some((s) => s >= 500));
    // Batches that lost the race to a later one were refused as going backwards (409) and are the site's to re-chunk;
    // every accepted row is stored exactly once.
    const stored = await count('intervals', site.siteId);
    const accepted = statuses.filter((s) => s === 200).length;
    assert.ok(accepted >= 1);
    const distinct = await sql.query('select count(distinct (meter_key, start))::int as n from intervals where site_id = $1', [site.siteId]);
    assert.equal(stored, distinct.rows[0].n);
  });

  test('small (live) batches have slots of their own: a live batch is stored while catch-up batches fill the rest', async () => {
    const one = await startFleet(cluster.url, { maxConcurrentIngests: 1 });
    try {
      const [catching, other, live] = [await enrolSite(one, 'Catching up'), await enrolSite(one, 'Catching up too'), await enrolSite(one, 'Live one')];
      for (const site of [catching, other, live]) {
        assert.equal((await sendBatch(one.url, site.credential, { sentAt: new Date().toISOString(), after: 0, through: 0, meters: METERS })).status, 200);
      }
      // A catch-up batch over the small size holds the one slot: its body arrives slowly (half now, half later).
      const big = JSON.stringify(intervalBatch({ after: 0, from: quarterAgo(2_900), count: 2_880, withMetadata: false }));
      assert.ok(Buffer.byteLength(big) > SMALL_BATCH_BYTES);
      const { port } = new URL(one.url);
      const held = new Promise<number>((resolve, reject) => {
        const request = http.request(
          {
            host: '127.0.0.1',
            port,
            path: '/api/fleet/ingest',
            method: 'POST',
            headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(big), authorization: `Bearer ${catching.credential}` },
          },
          (response) => {
            response.resume();
            resolve(response.statusCode ?? 0);
          },
        );
        request.on('error', reject);
        request.write(big.slice(0, big.length / 2));
        setTimeout(() => request.end(big.slice(big.length / 2)), 1_000);
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      // Another large batch meanwhile is turned away; a small live batch goes in.
      const turnedAway = await sendBatch(one.url, other.credential, big);
      assert.equal(turnedAway.status, 429);
      const small = await sendBatch(one.url, live.credential, intervalBatch({ after: 0, from: quarterAgo(4), count: 4, withMetadata: false }));
      assert.equal(small.status, 200, JSON.stringify(small.body));
      assert.equal(await held, 200);
      assert.equal(await count('intervals', catching.siteId), 2 * 2_880);
    } finally {
      await one.close();
    }
  });

  test('two fleet instances on one database take batches for sites spread over both', async () => {
    const second = await startFleet(cluster.url);
    try {
      const sites = await Promise.all(Array.from({ length: 6 }, (_, i) => enrolSite(i % 2 ? second : fleet, `Pair ${i}`)));
      await Promise.all(
        sites.map(async (site, i) => {
          const via = i % 2 ? fleet : second;
          const response = await sendBatch(via.url, site.credential, intervalBatch({ after: 0, from: quarterAgo(96), count: 96 }));
          assert.equal(response.status, 200, JSON.stringify(response.body));
        }),
      );
      for (const site of sites) assert.equal(await count('intervals', site.siteId), 192);
    } finally {
      await second.close();
    }
  });

  test('PostgreSQL restarted between batches: 503 with Retry-After while it is down, then the same batch is stored', async () => {
    const site = await enrolSite(fleet, 'Restart');
    const batch = intervalBatch({ after: 0, from: quarterAgo(4), count: 4 });
    cluster.stop();
    try {
      const down = await sendBatch(fleet.url, site.credential, batch);
      assert.equal(down.status, 503, JSON.stringify(down.body));
      assert.equal(down.headers.get('retry-after'), '5');
    } finally {
      cluster.start();
    }
    let response = await sendBatch(fleet.url, site.credential, batch);
    // The pool's old connections died with the server; the first try may meet one.
    if (response.status === 503) response = await sendBatch(fleet.url, site.credential, batch);
    assert.equal(response.status, 200, JSON.stringify(response.body));
    assert.equal(await count('intervals', site.siteId), 8);
  });
});

describe('deleted alerts', () => {
  test('a deletion removes the stored alert unless a later version of that id is stored; out of range it is refused', async () => {
    const site = await enrolSite(fleet, 'Deletions');
    const alert = (id: number, seq: number) => ({
      id,
      title: `Alert ${id}`,
      level: 'warning',
      status: 'active',
      occurredAt: new Date(quarterAgo(2)).toISOString(),
      acknowledgedAt: null,
      resolvedAt: null,
      seq,
    });
    const base = { sentAt: new Date().toISOString(), intervals: [], days: [] };
    assert.equal((await sendBatch(fleet.url, site.credential, { ...base, after: 0, through: 2, alerts: [alert(1, 1), alert(2, 2)] })).status, 200);
    // Alert 2 deleted on the box (seq 3); alert 1 deleted (seq 4) but its id taken again by a new alert (seq 5) first.
    assert.equal((await sendBatch(fleet.url, site.credential, { ...base, after: 2, through: 3, deletedAlerts: [{ id: 2, seq: 3 }] })).status, 200);
    const reused = await sendBatch(fleet.url, site.credential, { ...base, after: 3, through: 5, alerts: [alert(1, 5)], deletedAlerts: [{ id: 1, seq: 4 }] });
    assert.equal(reused.status, 200, JSON.stringify(reused.body));
    const stored = await sql.query('select alert_id::int as id, seq::int as seq from site_alerts where site_id = $1 order by alert_id', [site.siteId]);
    assert.deepEqual(stored.rows, [{ id: 1, seq: 5 }]);
    const refused = await sendBatch(fleet.url, site.credential, { ...base, after: 5, through: 6, deletedAlerts: [{ id: 1, seq: 9 }] });
    assert.equal(refused.status, 400);
    assert.match(refused.body.error, /deletedAlerts\/0 has sequence 9/);
    assert.equal(await count('site_alerts', site.siteId), 1, 'nothing of the refused batch');
  });
});

describe('PostgreSQL restarted mid-batch', () => {
  test('a batch in flight when the server restarts is stored whole or not at all; sent again, it is stored once', async () => {
    const site = await enrolSite(fleet, 'Mid-batch');
    const batch = intervalBatch({ after: 0, from: quarterAgo(6_000), count: 6_000 });
    const inFlight = sendBatch(fleet.url, site.credential, batch);
    await new Promise((resolve) => setTimeout(resolve, 40));
    cluster.restart();
    const first = await inFlight;
    assert.ok(first.status === 200 || first.status === 503, `${first.status} ${JSON.stringify(first.body)}`);
    const stored = await count('intervals', site.siteId);
    assert.ok(stored === 0 || stored === 12_000, `all or nothing: ${stored}`);
    let again = await sendBatch(fleet.url, site.credential, batch);
    for (let i = 0; i < 3 && again.status === 503; i++) again = await sendBatch(fleet.url, site.credential, batch);
    // Stored before the restart (its answer maybe lost): the same batch again is refused with the cursor at its end,
    // and the box would re-stamp; not stored: it is stored now.
    if (stored === 12_000) {
      assert.equal(again.status, 409, JSON.stringify(again.body));
      assert.equal(again.body.details.cursor, batch.through);
    } else assert.equal(again.status, 200, JSON.stringify(again.body));
    assert.equal(await count('intervals', site.siteId), 12_000);
    const counted = await sql.query('select sum(rows)::int as n from site_day_counts where site_id = $1', [site.siteId]);
    assert.equal(counted.rows[0].n, 12_000, 'completeness counted each row once');
  });
});
