// Sites administered from the fleet app (issue 55 item 5), against a real PostgreSQL over real HTTP: rename, revoke
// and re-admit, and a second box's quarantine released or discarded with the reason in the site's audit trail.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { addUser } from '../../src/fleet/app.ts';
import { enrolSite, type FleetInstance, intervalBatch, quarterAgo, sendBatch, startFleet, startFleetDatabase } from '../helpers/fleet.ts';
import type { PostgresCluster } from '../helpers/postgres.ts';

let cluster: PostgresCluster;
let fleet: FleetInstance;
let admin: string;

before(async () => {
  cluster = await startFleetDatabase();
  fleet = await startFleet(cluster.url);
  admin = (await addUser(fleet.db.pool, 'site-admin', 'admin')).token;
});
after(async () => {
  await fleet?.close();
  cluster?.destroy();
});

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${fleet.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${admin}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

const BOX_A = 'aaaaaaaa-0000-4000-8000-00000000000a';
const BOX_B = 'bbbbbbbb-0000-4000-8000-00000000000b';

async function openAlarms(siteId: string): Promise<number> {
  return (await fleet.db.pool.query(`select count(*)::int as n from fleet_alarms where site_id = $1 and kind = 'second_box' and cleared_at is null`, [siteId]))
    .rows[0].n;
}

test('a site renamed, revoked and re-admitted: the list shows the new name, the box is refused then taken again, each step audited', async () => {
  const site = await enrolSite(fleet, 'Depot North');
  assert.equal((await sendBatch(fleet.url, site.credential, intervalBatch({ after: 0, from: quarterAgo(2), count: 2 }))).status, 200);
  assert.equal((await call('PATCH', `/api/fleet/sites/${site.siteId}`, { name: '  Depot North (old wing) ' })).status, 204);
  const row = (await call('GET', `/api/fleet/sites?site=${site.siteId}`)).body.items[0];
  assert.equal(row.name, 'Depot North (old wing)');
  const blank = await call('PATCH', `/api/fleet/sites/${site.siteId}`, { name: '   ' });
  assert.equal(blank.status, 400);
  assert.equal(blank.body.details.field, '/name');

  assert.equal((await call('POST', `/api/fleet/sites/${site.siteId}/revoke`)).status, 204);
  assert.equal((await sendBatch(fleet.url, site.credential, intervalBatch({ after: 4, from: quarterAgo(1), count: 1, withMetadata: false }))).status, 401);
  assert.equal((await call('GET', `/api/fleet/sites?site=${site.siteId}`)).body.items[0].status, 'revoked');
  assert.equal((await call('POST', `/api/fleet/sites/${site.siteId}/readmit`)).status, 204);
  assert.equal((await sendBatch(fleet.url, site.credential, intervalBatch({ after: 4, from: quarterAgo(1), count: 1, withMetadata: false }))).status, 200);
  // Re-admitting a site that is not revoked changes nothing and audits nothing.
  assert.equal((await call('POST', `/api/fleet/sites/${site.siteId}/readmit`)).status, 204);

  const audit = (await call('GET', `/api/fleet/sites/${site.siteId}/audit`)).body;
  assert.deepEqual(
    audit.items.map((entry: { action: string; user: string }) => `${entry.action} by ${entry.user}`),
    ['readmit by site-admin', 'revoke by site-admin', 'rename by site-admin'],
  );
  assert.deepEqual(audit.items[2].detail, { from: 'Depot North', to: 'Depot North (old wing)' });
  assert.equal(audit.total, 3);
});

test("a second box discarded with a reason: its batches stay refused and raise the alarm no more; another released becomes the site's box", async () => {
  const site = await enrolSite(fleet, 'School');
  const batch = (after: number, installId: string) => ({ ...intervalBatch({ after, from: quarterAgo(2), count: 1 }), installId });
  assert.equal((await sendBatch(fleet.url, site.credential, batch(0, BOX_A))).status, 200);
  // Nothing quarantined yet: nothing to decide.
  const early = await call('POST', `/api/fleet/sites/${site.siteId}/second-box`, { decision: 'discard', installId: BOX_B, reason: 'spare unit' });
  assert.equal(early.status, 409);
  assert.equal(early.body.code, 'nothing_to_decide');

  assert.equal((await sendBatch(fleet.url, site.credential, batch(2, BOX_B))).body.code, 'second_box');
  assert.equal(await openAlarms(site.siteId), 1);
  // The reason is required, and discarding the site's own box is refused.
  assert.equal((await call('POST', `/api/fleet/sites/${site.siteId}/second-box`, { decision: 'discard', installId: BOX_B })).status, 400);
  const own = await call('POST', `/api/fleet/sites/${site.siteId}/second-box`, { decision: 'discard', installId: BOX_A, reason: 'x' });
  assert.equal(own.status, 400);
  assert.equal(own.body.details.field, '/installId');
  assert.equal(
    (await call('POST', `/api/fleet/sites/${site.siteId}/second-box`, { decision: 'discard', installId: BOX_B, reason: 'spare unit restored from a backup' }))
      .status,
    204,
  );
  assert.equal(await openAlarms(site.siteId), 0);
  // The discarded box is still refused, and raises no alarm again; the site's box goes on.
  assert.equal((await sendBatch(fleet.url, site.credential, batch(2, BOX_B))).body.code, 'second_box');
  assert.equal(await openAlarms(site.siteId), 0);
  assert.equal((await sendBatch(fleet.url, site.credential, batch(2, BOX_A))).status, 200);

  // A third box: released, it is the site's box from then on and the first is refused.
  const BOX_C = 'cccccccc-0000-4000-8000-00000000000c';
  assert.equal((await sendBatch(fleet.url, site.credential, batch(4, BOX_C))).body.code, 'second_box');
  assert.equal(await openAlarms(site.siteId), 1);
  assert.equal(
    (await call('POST', `/api/fleet/sites/${site.siteId}/second-box`, { decision: 'release', installId: BOX_C, reason: 'the old unit was replaced' })).status,
    204,
  );
  assert.equal(await openAlarms(site.siteId), 0);
  assert.equal((await sendBatch(fleet.url, site.credential, batch(4, BOX_C))).status, 200);
  assert.equal((await sendBatch(fleet.url, site.credential, batch(6, BOX_A))).body.code, 'second_box');
  assert.equal((await call('GET', `/api/fleet/sites?site=${site.siteId}`)).body.items[0].installId, BOX_C);

  const audit = (await call('GET', `/api/fleet/sites/${site.siteId}/audit?pageSize=1&page=2`)).body;
  assert.equal(audit.total, 2);
  assert.deepEqual(
    { action: audit.items[0].action, reason: audit.items[0].reason, detail: audit.items[0].detail },
    { action: 'discard-second-box', reason: 'spare unit restored from a backup', detail: { installId: BOX_B, kept: BOX_A } },
  );
  const newest = (await call('GET', `/api/fleet/sites/${site.siteId}/audit`)).body.items[0];
  assert.deepEqual([newest.action, newest.reason, newest.detail.previous], ['release-second-box', 'the old unit was replaced', BOX_A]);
});
