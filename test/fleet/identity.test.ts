// One box, one identity (issue 55): the fleet takes a site's rows from one box (its install id), raises a site alarm
// and refuses a second sender until an admin says which box is the site; the fleet's cursor is the end of the last
// batch stored; the box's credential is sealed with a key kept beside the database and never in a backup, so a
// restore on another machine says a re-join is needed and a copy of the credential sends nothing as the site.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { addUser } from '../../src/fleet/app.ts';
import { createEnrolmentCode } from '../../src/fleet/enrolment.ts';
import { IDENTITY_FILE, identityOf, openCredential } from '../../src/fleetSync/identity.ts';
import { joinFleet, readLink, syncState } from '../../src/fleetSync/link.ts';
import { FleetSync } from '../../src/fleetSync/sync.ts';
import { createBackup } from '../../src/operations/backup/archive.ts';
import { closeDatabase, openDatabase } from '../../src/platform/db/client.ts';
import { insertAlert } from '../helpers/facilityRows.ts';
import { enrolSite, type FleetInstance, getJson, intervalBatch, quarterAgo, sendBatch, startFleet, startFleetDatabase } from '../helpers/fleet.ts';
import type { PostgresCluster } from '../helpers/postgres.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let cluster: PostgresCluster;
let fleet: FleetInstance;

before(async () => {
  cluster = await startFleetDatabase();
  fleet = await startFleet(cluster.url);
});
after(async () => {
  await fleet?.close();
  cluster?.destroy();
});

const BOX_A = '0a0a0a0a-0000-4000-8000-00000000000a';
const BOX_B = '0b0b0b0b-0000-4000-8000-00000000000b';

async function storedIntervals(siteId: string): Promise<number> {
  return (await fleet.db.pool.query('select count(*)::int as n from intervals where site_id = $1', [siteId])).rows[0].n;
}

describe('at the fleet', () => {
  test('a second box with the same credential is refused with a site alarm until an admin says which box is the site', async () => {
    const site = await enrolSite(fleet, 'One box');
    const admin = (await addUser(fleet.db.pool, 'box-admin', 'admin')).token;
    const a1 = await sendBatch(fleet.url, site.credential, { ...intervalBatch({ after: 0, from: quarterAgo(4), count: 2 }), installId: BOX_A });
    assert.equal(a1.status, 200);
    const stored = await storedIntervals(site.siteId);
    // Box B (a spare prepared from A's backup) sends with the same credential: refused whole, nothing stored.
    const b1 = await sendBatch(fleet.url, site.credential, {
      ...intervalBatch({ after: 4, from: quarterAgo(2), count: 1, withMetadata: false }),
      installId: BOX_B,
    });
    assert.equal(b1.status, 409);
    assert.equal(b1.body.code, 'second_box');
    assert.ok(!JSON.stringify(b1.body).includes(BOX_A), "the refusal does not tell the other box the site's install id");
    assert.equal(await storedIntervals(site.siteId), stored);
    // A box without an install id (older software) is a second box too, once the site has one.
    const old = await sendBatch(fleet.url, site.credential, intervalBatch({ after: 4, from: quarterAgo(2), count: 1, withMetadata: false }));
    assert.equal(old.status, 409);
    // The alarm, in the alert list and on the site.
    const alerts = await getJson(`${fleet.url}/api/fleet/alerts`, admin);
    const alarm = alerts.body.items.find((x: { siteId: string; source: string; title: string }) => x.siteId === site.siteId && x.source === 'fleet');
    assert.ok(alarm, 'a fleet alarm for the site');
    assert.match(alarm.title, /second box/);
    assert.ok(alarm.title.includes(BOX_A), 'the alarm names the site box');
    const health = (await getJson(`${fleet.url}/api/fleet/sites`, admin)).body.items.find((s: { id: string }) => s.id === site.siteId);
    assert.equal(health.status, 'refusing');
    assert.equal(health.installId, BOX_A);
    // A keeps sending.
    assert.equal(
      (await sendBatch(fleet.url, site.credential, { ...intervalBatch({ after: 4, from: quarterAgo(2), count: 1, withMetadata: false }), installId: BOX_A }))
        .status,
      200,
    );
    // The admin says B is the site now: the alarm clears, A is refused, B is taken (from the fleet's cursor on).
    const choose = await fetch(`${fleet.url}/api/fleet/sites/${site.siteId}/box`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${admin}` },
      body: JSON.stringify({ installId: BOX_B }),
    });
    assert.equal(choose.status, 204);
    const bad = await fetch(`${fleet.url}/api/fleet/sites/${site.siteId}/box`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${admin}` },
      body: JSON.stringify({ installId: 'not-an-id' }),
    });
    assert.equal(bad.status, 400);
    assert.ok(
      !(await getJson(`${fleet.url}/api/fleet/alerts`, admin)).body.items.some(
        (x: { siteId: string; source: string }) => x.siteId === site.siteId && x.source === 'fleet',
      ),
    );
    assert.equal(
      (await sendBatch(fleet.url, site.credential, { ...intervalBatch({ after: 6, from: quarterAgo(1), count: 1, withMetadata: false }), installId: BOX_A }))
        .status,
      409,
    );
    assert.equal(
      (await sendBatch(fleet.url, site.credential, { ...intervalBatch({ after: 6, from: quarterAgo(1), count: 1, withMetadata: false }), installId: BOX_B }))
        .status,
      200,
    );
  });

  test("the fleet's cursor is the end of the last batch stored: a box restored from a backup one batch old is seen going back", async () => {
    const site = await enrolSite(fleet, 'Cursor');
    assert.equal((await sendBatch(fleet.url, site.credential, intervalBatch({ after: 0, from: quarterAgo(4), count: 2 }))).status, 200);
    // The box's next batch (sequences 5-8) is stored; its answer is lost, and the box is restored from a backup taken
    // before it: its next batch re-uses sequences 5-6 for other rows.
    assert.equal((await sendBatch(fleet.url, site.credential, intervalBatch({ after: 4, from: quarterAgo(2), count: 2, withMetadata: false }))).status, 200);
    const restored = await sendBatch(
      fleet.url,
      site.credential,
      intervalBatch({ after: 4, from: quarterAgo(2), count: 1, withMetadata: false, value: () => 9 }),
    );
    assert.equal(restored.status, 409);
    assert.equal(restored.body.code, 'sequence_backwards');
    assert.equal(restored.body.details.cursor, 8);
    // Re-stamped above the fleet's cursor, the box's rows win.
    const restamped = intervalBatch({ after: 8, from: quarterAgo(2), count: 1, withMetadata: false, value: () => 9 });
    assert.equal((await sendBatch(fleet.url, site.credential, restamped)).status, 200);
    const values = (
      await fleet.db.pool.query('select value from intervals where site_id = $1 and start = $2 order by meter_key', [site.siteId, new Date(quarterAgo(2))])
    ).rows.map((r: { value: number }) => r.value);
    assert.deepEqual(values, [9, 9]);
    // After an outage the newest day goes ahead of the history (`ahead`: not every row up to its `through`): the cursor
    // stays, and the history from the same cursor is taken.
    const newest = { ...intervalBatch({ after: 20, from: quarterAgo(1), count: 1, withMetadata: false }), after: 10, ahead: true as const };
    assert.equal((await sendBatch(fleet.url, site.credential, newest)).status, 200);
    const history = intervalBatch({ after: 10, from: quarterAgo(3), count: 1, withMetadata: false });
    assert.equal((await sendBatch(fleet.url, site.credential, history)).status, 200, 'the history after the newest day is taken');
    assert.equal((await fleet.db.pool.query('select site_cursor::int as c from sites where id = $1', [site.siteId])).rows[0].c, 12);
  });
});

describe('on the box', () => {
  let box: TestServer;
  before(async () => {
    box = await startTestServer();
  });
  after(async () => {
    await box?.close();
  });

  test('an install id made at first start and sent with every batch; the credential sealed; a restore on another machine needs a re-join; a copied credential is refused as a second box', async (t) => {
    const { db } = box.service.deps;
    const dataDir = path.dirname(db.sqlite.name);
    const identityFile = path.join(dataDir, IDENTITY_FILE);
    assert.ok(fs.existsSync(identityFile), 'made at the first start');
    assert.equal(fs.statSync(identityFile).mode & 0o077, 0, 'readable by the service only');
    const identity = identityOf(db);
    insertAlert(db.sqlite, { title: 'first' });
    const { siteId } = await joinFleet(db, fleet.url, (await createEnrolmentCode(fleet.db.pool, 'Sealed')).code);
    const link = readLink(db)!;
    assert.doesNotMatch(link.credential, /ems_site_/, 'the credential is not in the database in clear');
    const sent: Array<{ installId?: string }> = [];
    const real = globalThis.fetch;
    globalThis.fetch = (async (input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]) => {
      if (String(input).endsWith('/api/fleet/ingest') && typeof init?.body === 'string') sent.push(JSON.parse(init.body));
      return real(input, init);
    }) as typeof fetch;
    t.after(() => {
      globalThis.fetch = real;
    });
    const options = {
      logger: pino({ level: 'silent' }),
      catchUpDelayMs: 0,
      health: () => ({ version: 'test', collector: 'ok', gateway: 'reachable', lastBackupAt: null }),
    };
    await new FleetSync({ db, ...options }).tick();
    assert.equal(syncState(db).state, 'ok', String(syncState(db).lastError));
    assert.ok(sent.length > 0 && sent.every((b) => b.installId === identity.installId), 'every batch names the box');
    assert.equal((await fleet.db.pool.query('select install_id from sites where id = $1', [siteId])).rows[0].install_id, identity.installId);

    // A backup carries the database, never the identity file.
    const backedUpCursor = readLink(db)!.cursor;
    assert.ok(backedUpCursor > 0);
    const backup = await createBackup(db.sqlite, dataDir, { retention: { daily: 7, weekly: 4, monthly: 6 }, purpose: 'test' });
    const backupFiles = [backup.file, ...(backup.filesDir ? fs.readdirSync(backup.filesDir, { recursive: true, encoding: 'utf8' }) : [])];
    assert.ok(!backupFiles.some((f) => f.includes(IDENTITY_FILE)));
    // Restored on another machine (the backup's database in a data dir of its own): a re-join is needed, nothing is sent.
    const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'ems-elsewhere-'));
    t.after(() => fs.rmSync(elsewhere, { recursive: true, force: true }));
    fs.copyFileSync(backup.file, path.join(elsewhere, 'ems.db'));
    const spare = openDatabase(path.join(elsewhere, 'ems.db'), { migrate: true });
    t.after(() => closeDatabase(spare));
    assert.notEqual(identityOf(spare).installId, identity.installId, 'the other machine has its own install id');
    const spareState = syncState(spare);
    assert.equal(spareState.rejoinNeeded, true);
    assert.equal(spareState.state, 'refused');
    assert.equal(spareState.lastErrorCode, 'rejoin_needed');
    assert.match(spareState.lastError!, /re-join is needed/);
    // emsctl fleet status says so (the real CLI, from source).
    const launcher = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../cli/emsctl.js');
    const env = { ...process.env };
    delete env.NODE_OPTIONS;
    const status = spawnSync(process.execPath, [launcher, '--data-dir', elsewhere, 'fleet', 'status'], { encoding: 'utf8', env, timeout: 120_000 });
    assert.equal(status.status, 0, status.stderr);
    assert.match(status.stdout, /fleet sync: refused\nRE-JOIN NEEDED: emsctl fleet leave --force, then emsctl fleet join/);
    assert.ok(status.stdout.includes(`install id ${identityOf(spare).installId}`), status.stdout);
    insertAlert(spare.sqlite, { title: 'on the spare' });
    sent.length = 0;
    await new FleetSync({ db: spare, ...options }).tick();
    assert.equal(sent.length, 0, 'the spare sends nothing');
    assert.equal(syncState(spare).lastErrorCode, 'rejoin_needed');
    // The same spare with the credential in clear (copied from an older box, which stored it so): the fleet refuses it as a second box; its rows stay on it.
    const credential = openCredential(identity, link.siteId, link.credential)!;
    spare.sqlite.prepare('UPDATE fleet_link SET credential = ?, last_error = NULL, last_error_code = NULL').run(credential);
    await new FleetSync({ db: spare, ...options }).tick();
    const refused = syncState(spare);
    assert.equal(refused.state, 'refused');
    assert.equal(refused.lastErrorCode, 'second_box');
    assert.ok(refused.unsentRows > 0, 'the spare keeps its rows');
    assert.equal(readLink(spare)!.cursor, backedUpCursor, 'its cursor unmoved');
    // The real box goes on.
    insertAlert(db.sqlite, { title: 'second' });
    await new FleetSync({ db, ...options }).tick();
    assert.equal(syncState(db).state, 'ok', String(syncState(db).lastError));
    assert.equal(syncState(db).unsentRows, 0, JSON.stringify(syncState(db)));
  });
});
