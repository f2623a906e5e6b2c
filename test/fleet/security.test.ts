// The fleet's security rules against a real PostgreSQL over real HTTP (issue 55): every route checks who calls it and
// the caller's site list; every number a site sends has a range (422 naming the field); partitions are made only for
// the months a batch that passed its checks stores; the fleet's answers carry the box's security headers.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { addUser, FLEET_ROUTES } from '../../src/fleet/app.ts';
import { createEnrolmentCode } from '../../src/fleet/enrolment.ts';
import { RANGES } from '../../src/fleet/schemas.ts';
import { enrolSite, type FleetInstance, intervalBatch, METERS, quarterAgo, sendBatch, startFleet, startFleetDatabase } from '../helpers/fleet.ts';
import type { PostgresCluster } from '../helpers/postgres.ts';

let cluster: PostgresCluster;
let fleet: FleetInstance;
let sql: pg.Pool;

before(async () => {
  cluster = await startFleetDatabase();
  fleet = await startFleet(cluster.url);
  sql = new pg.Pool({ connectionString: cluster.url, max: 2 });
});
after(async () => {
  await sql?.end();
  await fleet?.close();
  cluster?.destroy();
});

async function call(method: string, path: string, token: string | undefined, body?: unknown): Promise<{ status: number; headers: Headers; text: string }> {
  const response = await fetch(`${fleet.url}${path}`, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined,
    redirect: 'manual',
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

async function partitions(): Promise<number> {
  return (await sql.query(`select count(*)::int as n from pg_inherits where inhparent = 'intervals'::regclass`)).rows[0].n;
}

describe('roles that hold', () => {
  test('every route, called as a site-limited admin, a site-limited viewer and a viewer of all sites: only what their role and sites allow', async () => {
    const mine = await enrolSite(fleet, 'Mine');
    const theirs = await enrolSite(fleet, 'Theirs');
    const spare = await enrolSite(fleet, 'Mine too');
    for (const site of [mine, theirs, spare]) {
      assert.equal((await sendBatch(fleet.url, site.credential, intervalBatch({ after: 0, from: quarterAgo(2), count: 2 }))).status, 200);
    }
    // One active alert (number 1) at each of the two first sites, as their boxes would send it.
    const anAlert = {
      id: 1,
      title: 'Boiler fault',
      level: 'critical',
      status: 'active',
      occurredAt: new Date().toISOString(),
      acknowledgedAt: null,
      resolvedAt: null,
      seq: 5,
    };
    for (const site of [mine, theirs]) {
      const batch = { ...intervalBatch({ after: 4, from: quarterAgo(1), count: 0, withMetadata: false }), through: 5, alerts: [anAlert] };
      assert.equal((await sendBatch(fleet.url, site.credential, batch)).status, 200);
    }
    const limitedAdmin = (await addUser(fleet.db.pool, 'limited-admin', 'admin', [mine.siteId, spare.siteId])).token;
    const limitedViewerUser = await addUser(fleet.db.pool, 'limited-viewer', 'viewer', [mine.siteId]);
    const limitedViewer = limitedViewerUser.token;
    const viewer = (await addUser(fleet.db.pool, 'viewer-all', 'viewer')).token;
    const admin = (await addUser(fleet.db.pool, 'admin-all', 'admin')).token;

    // Each route: the calls made and the statuses expected, per caller. A route missing here fails the test.
    type Case = { path: string; body?: unknown; expect: { limitedAdmin: number; limitedViewer: number; viewer: number; admin?: number } };
    const cases: Record<string, Case[]> = {
      'GET /api/fleet/health': [{ path: '/api/fleet/health', expect: { limitedAdmin: 200, limitedViewer: 200, viewer: 200 } }],
      // A user token is not an enrolment code: refused as a code (400), whoever sends it.
      'POST /api/fleet/enrol': [
        { path: '/api/fleet/enrol', body: { code: 'AAAAA-BBBBB-CCCCC-DDDDD' }, expect: { limitedAdmin: 400, limitedViewer: 400, viewer: 400 } },
      ],
      // A user token is not a site credential.
      'POST /api/fleet/ingest': [
        {
          path: '/api/fleet/ingest',
          body: intervalBatch({ after: 2, from: quarterAgo(2), count: 1 }),
          expect: { limitedAdmin: 401, limitedViewer: 401, viewer: 401 },
        },
      ],
      'POST /api/fleet/leave': [{ path: '/api/fleet/leave', body: {}, expect: { limitedAdmin: 401, limitedViewer: 401, viewer: 401 } }],
      // A new site would be outside a limited admin's list: codes are for an admin of every site.
      'POST /api/fleet/enrolment-codes': [
        { path: '/api/fleet/enrolment-codes', body: { siteName: 'New' }, expect: { limitedAdmin: 403, limitedViewer: 403, viewer: 403, admin: 201 } },
      ],
      // Another site reads as no site (404), as for the meters; the admin's own site is revoked (204, last).
      'POST /api/fleet/sites/:id/revoke': [
        { path: `/api/fleet/sites/${theirs.siteId}/revoke`, body: {}, expect: { limitedAdmin: 404, limitedViewer: 403, viewer: 403 } },
        { path: '/api/fleet/sites/not-a-site/revoke', body: {}, expect: { limitedAdmin: 404, limitedViewer: 403, viewer: 403 } },
      ],
      'POST /api/fleet/sites/:id/box': [
        {
          path: `/api/fleet/sites/${theirs.siteId}/box`,
          body: { installId: '0c0c0c0c-0000-4000-8000-00000000000c' },
          expect: { limitedAdmin: 404, limitedViewer: 403, viewer: 403 },
        },
        { path: `/api/fleet/sites/${mine.siteId}/box`, body: { installId: 'nope' }, expect: { limitedAdmin: 400, limitedViewer: 403, viewer: 403 } },
      ],
      // Site administration (issue 55 item 5): another site is 404 to a limited admin, the role is 403 to viewers.
      'POST /api/fleet/sites/:id/readmit': [
        { path: `/api/fleet/sites/${theirs.siteId}/readmit`, body: {}, expect: { limitedAdmin: 404, limitedViewer: 403, viewer: 403 } },
        { path: `/api/fleet/sites/${mine.siteId}/readmit`, body: {}, expect: { limitedAdmin: 204, limitedViewer: 403, viewer: 403 } },
      ],
      'PATCH /api/fleet/sites/:id': [
        { path: `/api/fleet/sites/${theirs.siteId}`, body: { name: 'Taken' }, expect: { limitedAdmin: 404, limitedViewer: 403, viewer: 403 } },
        { path: `/api/fleet/sites/${mine.siteId}`, body: { name: '' }, expect: { limitedAdmin: 400, limitedViewer: 403, viewer: 403 } },
      ],
      'POST /api/fleet/sites/:id/second-box': [
        {
          path: `/api/fleet/sites/${theirs.siteId}/second-box`,
          body: { decision: 'discard', installId: '0c0c0c0c-0000-4000-8000-00000000000c', reason: 'spare' },
          expect: { limitedAdmin: 404, limitedViewer: 403, viewer: 403 },
        },
        {
          path: `/api/fleet/sites/${mine.siteId}/second-box`,
          body: { decision: 'discard', installId: '0c0c0c0c-0000-4000-8000-00000000000c', reason: 'spare' },
          expect: { limitedAdmin: 409, limitedViewer: 403, viewer: 403 },
        },
      ],
      'GET /api/fleet/sites/:id/audit': [
        { path: `/api/fleet/sites/${theirs.siteId}/audit`, expect: { limitedAdmin: 404, limitedViewer: 403, viewer: 403 } },
        { path: `/api/fleet/sites/${mine.siteId}/audit`, expect: { limitedAdmin: 200, limitedViewer: 403, viewer: 403 } },
      ],
      // Signing in is public; the users and their roles are for an admin of every site.
      'GET /api/fleet/auth/options': [{ path: '/api/fleet/auth/options', expect: { limitedAdmin: 200, limitedViewer: 200, viewer: 200 } }],
      'POST /api/fleet/auth/sign-in': [
        {
          path: '/api/fleet/auth/sign-in',
          body: { name: 'nobody', password: 'not a password' },
          expect: { limitedAdmin: 401, limitedViewer: 401, viewer: 401 },
        },
      ],
      'POST /api/fleet/auth/sign-out': [{ path: '/api/fleet/auth/sign-out', body: {}, expect: { limitedAdmin: 204, limitedViewer: 204, viewer: 204 } }],
      'POST /api/fleet/auth/accept': [
        {
          path: '/api/fleet/auth/accept',
          body: { invitation: 'ems_invite_unknown', password: 'long enough' },
          expect: { limitedAdmin: 400, limitedViewer: 400, viewer: 400 },
        },
      ],
      'GET /api/fleet/auth/sso': [{ path: '/api/fleet/auth/sso', expect: { limitedAdmin: 404, limitedViewer: 404, viewer: 404 } }],
      'GET /api/fleet/auth/sso/callback': [
        { path: '/api/fleet/auth/sso/callback?code=x&state=y', expect: { limitedAdmin: 302, limitedViewer: 302, viewer: 302 } },
      ],
      'GET /api/fleet/users': [{ path: '/api/fleet/users', expect: { limitedAdmin: 403, limitedViewer: 403, viewer: 403, admin: 200 } }],
      'POST /api/fleet/users': [
        { path: '/api/fleet/users', body: { name: 'Invited', role: 'viewer' }, expect: { limitedAdmin: 403, limitedViewer: 403, viewer: 403, admin: 201 } },
      ],
      'PATCH /api/fleet/users/:id': [
        {
          path: `/api/fleet/users/${limitedViewerUser.id}`,
          body: { sites: [mine.siteId] },
          expect: { limitedAdmin: 403, limitedViewer: 403, viewer: 403, admin: 204 },
        },
      ],
      'GET /api/fleet/sites': [{ path: '/api/fleet/sites', expect: { limitedAdmin: 200, limitedViewer: 200, viewer: 200 } }],
      'GET /api/fleet/sites/:id/meters': [
        { path: `/api/fleet/sites/${theirs.siteId}/meters`, expect: { limitedAdmin: 404, limitedViewer: 404, viewer: 200 } },
        { path: `/api/fleet/sites/${spare.siteId}/meters`, expect: { limitedAdmin: 200, limitedViewer: 404, viewer: 200 } },
      ],
      'GET /api/fleet/eui': [{ path: '/api/fleet/eui', expect: { limitedAdmin: 200, limitedViewer: 200, viewer: 200 } }],
      'GET /api/fleet/alerts': [{ path: '/api/fleet/alerts?status=all', expect: { limitedAdmin: 200, limitedViewer: 200, viewer: 200 } }],
      // An alert of another site is no alert to a limited admin (404): only an admin of that site acknowledges it.
      'POST /api/fleet/sites/:id/alerts/:alert/acknowledge': [
        { path: `/api/fleet/sites/${theirs.siteId}/alerts/1/acknowledge`, expect: { limitedAdmin: 404, limitedViewer: 403, viewer: 403, admin: 202 } },
        { path: `/api/fleet/sites/${mine.siteId}/alerts/1/acknowledge`, expect: { limitedAdmin: 202, limitedViewer: 403, viewer: 403 } },
        { path: `/api/fleet/sites/${mine.siteId}/alerts/2/acknowledge`, expect: { limitedAdmin: 404, limitedViewer: 403, viewer: 403 } },
      ],
      'GET /api/fleet/me': [{ path: '/api/fleet/me', expect: { limitedAdmin: 200, limitedViewer: 200, viewer: 200 } }],
      'GET /api/fleet/sites.xlsx': [{ path: '/api/fleet/sites.xlsx', expect: { limitedAdmin: 200, limitedViewer: 200, viewer: 200 } }],
      'GET /api/fleet/eui.xlsx': [{ path: '/api/fleet/eui.xlsx', expect: { limitedAdmin: 200, limitedViewer: 200, viewer: 200 } }],
      'GET /api/fleet/alerts.xlsx': [{ path: '/api/fleet/alerts.xlsx', expect: { limitedAdmin: 200, limitedViewer: 200, viewer: 200 } }],
    };
    assert.deepEqual(Object.keys(cases).sort(), FLEET_ROUTES.map((r) => r.key).sort(), 'every route of the fleet has its cases here');
    const callers = { limitedAdmin, limitedViewer, viewer, admin } as const;
    for (const route of FLEET_ROUTES) {
      for (const c of cases[route.key]!) {
        for (const [who, expected] of Object.entries(c.expect)) {
          const answer = await call(route.method, c.path, callers[who as keyof typeof callers], c.body);
          assert.equal(answer.status, expected, `${route.key} (${c.path}) as ${who}: ${answer.text.slice(0, 200)}`);
        }
        // Without a token, every route but the public ones and the sites' own is 401.
        if (route.access !== 'public') assert.equal((await call(route.method, c.path, undefined, c.body)).status, 401, `${route.key} without a token`);
      }
    }
    // Lists hold only the caller's sites.
    const listed = async (token: string) =>
      (JSON.parse((await call('GET', '/api/fleet/sites', token)).text).items as Array<{ id: string }>).map((s) => s.id).sort();
    assert.deepEqual(await listed(limitedAdmin), [mine.siteId, spare.siteId].sort());
    assert.deepEqual(await listed(limitedViewer), [mine.siteId]);
    const alerts = JSON.parse((await call('GET', '/api/fleet/alerts?status=all', limitedViewer)).text).items as Array<{ siteId: string }>;
    assert.ok(alerts.every((a) => a.siteId === mine.siteId));
    // Their alert was asked about by the admin of every site only; the limited admin's own site's by them.
    const asked = await sql.query('select site_id, user_name from alert_ack_requests order by user_name');
    assert.deepEqual(
      asked.rows.map((r) => [r.site_id, r.user_name]),
      [
        [theirs.siteId, 'admin-all'],
        [mine.siteId, 'limited-admin'],
      ],
    );
    // The other site still syncs: the limited admin's refused revoke changed nothing.
    assert.equal((await sendBatch(fleet.url, theirs.credential, intervalBatch({ after: 5, from: quarterAgo(1), count: 1, withMetadata: false }))).status, 200);
    // Its own site it may revoke.
    assert.equal((await call('POST', `/api/fleet/sites/${spare.siteId}/revoke`, limitedAdmin, {})).status, 204);
    assert.equal((await sendBatch(fleet.url, spare.credential, intervalBatch({ after: 4, from: quarterAgo(1), count: 1, withMetadata: false }))).status, 401);
  });
});

describe('bounded inputs', () => {
  test('a batch reaching back 1,200 months, or one for an undeclared meter, or going backwards: refused and no partition made, also 8 at once', async () => {
    const site = await enrolSite(fleet, 'Bomb');
    assert.equal((await sendBatch(fleet.url, site.credential, intervalBatch({ after: 0, from: quarterAgo(4), count: 2, withMetadata: true }))).status, 200);
    assert.equal((await sendBatch(fleet.url, site.credential, intervalBatch({ after: 4, from: quarterAgo(2), count: 1, withMetadata: false }))).status, 200);
    const before = await partitions();
    const months = (from: number, n: number, meter: string) =>
      Array.from({ length: n }, (_, i) => ({
        meter,
        start: new Date(Date.UTC(from + Math.floor(i / 12), i % 12, 1)).toISOString(),
        value: 1,
        quality: 'measured' as const,
        seq: 7 + i,
      }));
    const sentAt = new Date().toISOString();
    // The red team's bomb: 1800-01 … 1899-12, an undeclared meter.
    const bomb = await sendBatch(fleet.url, site.credential, { sentAt, after: 6, through: 1206, intervals: months(1800, 1200, 'nosuch') });
    assert.equal(bomb.status, 422);
    assert.equal(bomb.body.code, 'out_of_range');
    assert.equal(bomb.body.details.field, '/intervals/0/start');
    assert.match(bomb.body.error, /intervals\/0\/start 1800-01-01T00:00:00.000Z is more than 3700 days before/);
    // Inside the history limit (the last 24 months) but for an undeclared meter: refused before any DDL.
    const thisYear = new Date().getUTCFullYear();
    const undeclared = await sendBatch(fleet.url, site.credential, {
      sentAt,
      after: 6,
      through: 30,
      intervals: months(thisYear - 2, 24, 'nosuch'),
    });
    assert.equal(undeclared.status, 422);
    assert.equal(undeclared.body.code, 'unknown_meter');
    // A declared meter but a cursor going back: refused before any DDL too.
    const backwards = await sendBatch(fleet.url, site.credential, {
      sentAt,
      after: 0,
      through: 24,
      intervals: months(thisYear - 2, 24, '1').map((r, i) => ({ ...r, seq: 1 + i })),
    });
    assert.equal(backwards.status, 409);
    // Under parallel load: eight sites, each sending the in-range undeclared batch at once.
    const sites = await Promise.all(Array.from({ length: 8 }, (_, i) => enrolSite(fleet, `Bomb ${i}`)));
    const answers = await Promise.all(
      sites.map((s) =>
        sendBatch(fleet.url, s.credential, {
          sentAt,
          after: 0,
          through: 24,
          intervals: months(thisYear - 2, 24, 'nosuch').map((r, i) => ({ ...r, seq: 1 + i })),
        }),
      ),
    );
    for (const answer of answers) assert.ok(answer.status === 422 || answer.status === 429, `status ${answer.status}`);
    assert.ok(answers.some((a) => a.status === 422));
    assert.equal(await partitions(), before, 'no partition was made for a refused batch');
    // A valid batch makes the partitions of exactly the months it stores (two months of history, the current one already there).
    const valid = await sendBatch(fleet.url, site.credential, {
      sentAt,
      after: 6,
      through: 8,
      intervals: [
        { meter: '1', start: new Date(Date.UTC(thisYear - 3, 0, 1)).toISOString(), value: 1, quality: 'measured', seq: 7 },
        { meter: '1', start: new Date(Date.UTC(thisYear - 3, 5, 1)).toISOString(), value: 1, quality: 'measured', seq: 8 },
      ],
    });
    assert.equal(valid.status, 200);
    assert.equal(await partitions(), before + 2);
  });

  test('every number outside its range is refused whole with 422 naming the field, nothing stored; the edges are taken', async () => {
    const site = await enrolSite(fleet, 'Numbers');
    assert.equal((await sendBatch(fleet.url, site.credential, intervalBatch({ after: 0, from: quarterAgo(4), count: 1, withMetadata: true }))).status, 200);
    const sentAt = new Date().toISOString();
    const day = new Date(quarterAgo(200)).toISOString().slice(0, 10);
    const dayRow = { meter: '1', day, value: 10, cost: 1, carbonKg: 1, seq: 3 };
    const bad: Array<[unknown, string]> = [
      // The red team's two: 1.7e308 kWh in a day, and a floor area of 1e-300 m².
      [{ days: [{ ...dayRow, value: 1.7e308 }] }, '/days/0/value'],
      [{ site: { name: 'x', timezone: 'UTC', floorAreaM2: 1e-300 } }, '/site/floorAreaM2'],
      [{ areas: [{ name: 'Hall', floorAreaM2: 2e7 }] }, '/areas/0/floorAreaM2'],
      [{ days: [{ ...dayRow, cost: -1e11 }] }, '/days/0/cost'],
      [{ days: [{ ...dayRow, carbonKg: 1e10 }] }, '/days/0/carbonKg'],
      [{ days: [{ ...dayRow, kwh: 3e9 }] }, '/days/0/kwh'],
      [{ intervals: [{ meter: '1', start: new Date(quarterAgo(1)).toISOString(), value: 1e7, quality: 'measured', seq: 3 }] }, '/intervals/0/value'],
      [
        { held: { intervals: [{ meter: '1', start: new Date(quarterAgo(1)).toISOString(), value: -1e7, quality: 'measured' }], days: [] } },
        '/held/intervals/0/value',
      ],
      [
        { alerts: [{ id: 1e300, title: 't', level: 'info', status: 'active', occurredAt: sentAt, acknowledgedAt: null, resolvedAt: null, seq: 3 }] },
        '/alerts/0/id',
      ],
      [{ health: { unsentRows: 1e300 } }, '/health/unsentRows'],
      [{ days: [{ ...dayRow, day: '1990-01-01' }] }, '/days/0/day'],
    ];
    for (const [part, field] of bad) {
      const answer = await sendBatch(fleet.url, site.credential, { sentAt, after: 2, through: 3, ...(part as object) });
      assert.equal(answer.status, 422, `${field}: ${JSON.stringify(answer.body)}`);
      assert.equal(answer.body.code, 'out_of_range', field);
      assert.equal(answer.body.details.field, field);
      assert.ok(answer.body.error.includes(field), answer.body.error);
    }
    assert.equal((await sql.query('select count(*)::int as n from day_rollups where site_id = $1', [site.siteId])).rows[0].n, 0);
    assert.equal(
      (await sql.query('select floor_area_m2 from sites where id = $1', [site.siteId])).rows[0].floor_area_m2,
      1000,
      'the area of the first batch stands',
    );
    // The edges of each range are inside it.
    const edges = await sendBatch(fleet.url, site.credential, {
      sentAt,
      after: 2,
      through: 4,
      site: { name: 'Numbers', timezone: 'UTC', floorAreaM2: RANGES.floorAreaM2.minimum },
      meters: METERS,
      days: [{ ...dayRow, value: RANGES.dayValue.maximum, cost: RANGES.dayCost.minimum, carbonKg: RANGES.dayCarbonKg.maximum, kwh: RANGES.dayKwh.maximum }],
      intervals: [{ meter: '1', start: new Date(quarterAgo(1)).toISOString(), value: RANGES.intervalValue.minimum, quality: 'measured', seq: 4 }],
    });
    assert.equal(edges.status, 200, JSON.stringify(edges.body));
    // Not a number at all is still malformed (400), not a range.
    const text = await sendBatch(fleet.url, site.credential, { sentAt, after: 4, through: 5, days: [{ ...dayRow, value: 'much', seq: 5 }] });
    assert.equal(text.status, 400);
  });
});

describe('headers', () => {
  test("the fleet's answers carry the box's security headers, refusals and pages too; API answers are not cached", async () => {
    const admin = (await addUser(fleet.db.pool, 'headers-admin', 'admin')).token;
    const { code } = await createEnrolmentCode(fleet.db.pool, 'Headers');
    const answers = [
      await call('GET', '/api/fleet/sites', admin),
      await call('GET', '/api/fleet/health', undefined),
      await call('GET', '/api/fleet/sites', undefined),
      await call('GET', '/api/fleet/nothing', admin),
      await call('POST', '/api/fleet/enrol', undefined, { code }),
      await call('POST', '/api/fleet/ingest', 'ems_site_nope', {}),
    ];
    assert.deepEqual(
      answers.map((a) => a.status),
      [200, 200, 401, 404, 201, 401],
    );
    for (const answer of answers) {
      assert.equal(answer.headers.get('x-content-type-options'), 'nosniff');
      assert.equal(answer.headers.get('referrer-policy'), 'no-referrer');
      assert.equal(answer.headers.get('x-frame-options'), 'DENY');
      assert.equal(answer.headers.get('cache-control'), 'no-store');
    }
    const page = await fetch(`${fleet.url}/`, { headers: { accept: 'text/html' } });
    await page.text();
    assert.equal(page.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(page.headers.get('x-frame-options'), 'DENY');
  });
});

describe('names and lag', () => {
  test("the enrolment name is the site's name, the box's own beside it; a box whose clock is ahead has a lag of 0, never below", async () => {
    const site = await enrolSite(fleet, 'Depot North');
    const admin = (await addUser(fleet.db.pool, 'names-admin', 'admin')).token;
    // The box calls itself "EMS" (its default) and its clock is 14 minutes ahead: its newest interval starts 10 minutes
    // after the fleet's now (inside the 15 minutes the quarantine allows).
    const ahead = Math.floor((Date.now() + 10 * 60_000) / 900_000) * 900_000;
    const batch = intervalBatch({ after: 0, from: ahead - 900_000, count: 2, sentAt: Date.now() + 14 * 60_000 });
    const answer = await sendBatch(fleet.url, site.credential, { ...batch, site: { name: 'EMS', timezone: 'UTC', floorAreaM2: 100 } });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    const listed = (await getJsonAs(`/api/fleet/sites`, admin)).items.find((s: { id: string }) => s.id === site.siteId);
    assert.equal(listed.name, 'Depot North');
    assert.equal(listed.boxName, 'EMS');
    assert.ok(listed.syncLagSec >= 0, `lag ${listed.syncLagSec}`);
  });
});

async function getJsonAs(path: string, token: string): Promise<any> {
  const answer = await call('GET', path, token);
  return JSON.parse(answer.text);
}
