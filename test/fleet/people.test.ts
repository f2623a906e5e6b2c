// Fleet users who sign in (issue 55 item 5), against a real PostgreSQL over real HTTP: an invitation accepted with a
// password, the box's lockout rules under parallel guesses, roles and sites per user, and single sign-on with
// oauth2-mock-server as the organisation's OIDC issuer (the box's provider code, as in test/access/oauth.test.ts).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type MutableResponse, OAuth2Server } from 'oauth2-mock-server';
import pg from 'pg';
import { MAX_FAILURES_PER_USER } from '../../src/access/index.ts';
import { addUser } from '../../src/fleet/app.ts';
import { inTransaction } from '../../src/fleet/db.ts';
import { FleetError } from '../../src/fleet/errors.ts';
import { enrolSite, type FleetInstance, intervalBatch, quarterAgo, sendBatch, startFleet, startFleetDatabase } from '../helpers/fleet.ts';
import type { PostgresCluster } from '../helpers/postgres.ts';

let cluster: PostgresCluster;
let fleet: FleetInstance;
let issuer: OAuth2Server;
let admin: string;
/** What the issuer's userinfo says about the person signing in. */
let person: Record<string, unknown> = {};

before(async () => {
  issuer = new OAuth2Server();
  await issuer.issuer.keys.generate('RS256');
  await issuer.start(0, '127.0.0.1');
  issuer.issuer.url = `http://127.0.0.1:${issuer.address().port}`;
  issuer.service.on('beforeUserinfo', (response: MutableResponse) => {
    response.body = { ...person };
  });
  issuer.service.on('beforeTokenSigning', (token: { payload: Record<string, unknown> }) => {
    token.payload.sub = person.sub;
  });
  cluster = await startFleetDatabase();
  fleet = await startFleet(cluster.url, {
    sso: { issuer: issuer.issuer.url!, clientId: 'ems-fleet', clientSecret: 'ems-fleet-secret', displayName: 'Corp SSO' },
  });
  admin = (await addUser(fleet.db.pool, 'first-admin', 'admin')).token;
});
after(async () => {
  await fleet?.close();
  cluster?.destroy();
  if (issuer?.listening) await issuer.stop();
});

async function call(method: string, path: string, token?: string, body?: unknown): Promise<{ status: number; body: any; headers: Headers }> {
  const response = await fetch(`${fleet.url}${path}`, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined,
    redirect: 'manual',
  });
  const text = await response.text();
  return { status: response.status, body: text && response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text, headers: response.headers };
}

describe('passwords and invitations', () => {
  test('an invited person sets a password, signs in, sees only their sites; signing out ends the session', async () => {
    const a = await enrolSite(fleet, 'Invited A');
    const b = await enrolSite(fleet, 'Invited B');
    for (const site of [a, b]) await sendBatch(fleet.url, site.credential, intervalBatch({ after: 0, from: quarterAgo(2), count: 1 }));
    const invited = await call('POST', '/api/fleet/users', admin, { name: 'Dana', email: 'dana@corp.example', role: 'viewer', sites: [a.siteId] });
    assert.equal(invited.status, 201);
    assert.match(invited.body.invitation, /^ems_invite_/);
    // Before it is accepted there is no way in.
    assert.equal((await call('POST', '/api/fleet/auth/sign-in', undefined, { name: 'Dana', password: 'whatever it is' })).status, 401);
    assert.equal(
      (await call('POST', '/api/fleet/auth/accept', undefined, { invitation: invited.body.invitation, password: 'short' })).body.details.field,
      '/password',
    );
    const tooLong = await call('POST', '/api/fleet/auth/accept', undefined, { invitation: invited.body.invitation, password: 'ü'.repeat(40) });
    assert.equal(tooLong.status, 400, 'over 72 bytes (bcrypt would ignore the rest)');
    const accepted = await call('POST', '/api/fleet/auth/accept', undefined, { invitation: invited.body.invitation, password: 'correct horse battery' });
    assert.equal(accepted.status, 201);
    // Used once.
    assert.equal(
      (await call('POST', '/api/fleet/auth/accept', undefined, { invitation: invited.body.invitation, password: 'another password' })).body.code,
      'invitation_invalid',
    );

    const signedIn = await call('POST', '/api/fleet/auth/sign-in', undefined, { name: 'dana@corp.example', password: 'correct horse battery' });
    assert.equal(signedIn.status, 201);
    const session = signedIn.body.token as string;
    assert.deepEqual((await call('GET', '/api/fleet/me', session)).body, { name: 'Dana', role: 'viewer', sites: [a.siteId] });
    assert.deepEqual(
      (await call('GET', '/api/fleet/sites', session)).body.items.map((s: { id: string }) => s.id),
      [a.siteId],
    );
    // The admin moves her to the other site: her next page shows it.
    const dana = (await call('GET', '/api/fleet/users', admin)).body.items.find((u: { name: string }) => u.name === 'Dana');
    assert.deepEqual([dana.signIn, dana.invitationOpen], [['password'], false]);
    assert.equal((await call('PATCH', `/api/fleet/users/${dana.id}`, admin, { sites: [b.siteId] })).status, 204);
    assert.deepEqual(
      (await call('GET', '/api/fleet/sites', session)).body.items.map((s: { id: string }) => s.id),
      [b.siteId],
    );
    assert.equal((await call('PATCH', `/api/fleet/users/${dana.id}`, admin, { sites: ['00000000-0000-4000-8000-000000000000'] })).body.details.field, '/sites');
    // A viewer administers nothing.
    assert.equal((await call('POST', '/api/fleet/users', session, { name: 'Eve', role: 'admin' })).status, 403);
    assert.equal((await call('POST', '/api/fleet/auth/sign-out', session)).status, 204);
    assert.equal((await call('GET', '/api/fleet/me', session)).status, 401);
  });

  test('the last admin of every site cannot be demoted or limited; the printed token stays the bootstrap', async () => {
    const users = (await call('GET', '/api/fleet/users', admin)).body.items as Array<{ id: number; name: string; role: string; sites: string[] | null }>;
    const first = users.find((u) => u.name === 'first-admin')!;
    assert.deepEqual((await call('GET', '/api/fleet/users', admin)).body.items.find((u: { name: string }) => u.name === 'first-admin').signIn, ['token']);
    const others = users.filter((u) => u.role === 'admin' && u.sites === null && u.id !== first.id);
    assert.deepEqual(others, [], 'the first admin is the only admin of every site here');
    const demoted = await call('PATCH', `/api/fleet/users/${first.id}`, admin, { role: 'viewer' });
    assert.equal(demoted.status, 409);
    assert.equal(demoted.body.code, 'last_admin');
    assert.equal((await call('GET', '/api/fleet/me', admin)).body.role, 'admin', 'nothing changed');
  });

  test("20 guesses at once at one account: the box's budget of 10 holds, the rest and then the right password get 429", async () => {
    const invited = await call('POST', '/api/fleet/users', admin, { name: 'Guessed', role: 'viewer' });
    await call('POST', '/api/fleet/auth/accept', undefined, { invitation: invited.body.invitation, password: 'the right password' });
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => call('POST', '/api/fleet/auth/sign-in', undefined, { name: 'Guessed', password: `wrong guess ${i}` })),
    );
    const statuses = answers.map((a) => a.status).sort();
    assert.equal(statuses.filter((s) => s === 401).length, MAX_FAILURES_PER_USER);
    assert.equal(statuses.filter((s) => s === 429).length, 20 - MAX_FAILURES_PER_USER);
    const refused = answers.find((a) => a.status === 429)!;
    assert.equal(refused.body.code, 'throttled');
    assert.ok(Number(refused.headers.get('retry-after')) > 60, 'Retry-After: the rest of the 15-minute window');
    assert.equal((await call('POST', '/api/fleet/auth/sign-in', undefined, { name: 'Guessed', password: 'the right password' })).status, 429);
    // Another account from the same address is not locked (its budget is its own; the address's is 100).
    const other = await call('POST', '/api/fleet/users', admin, { name: 'Unguessed', role: 'viewer' });
    await call('POST', '/api/fleet/auth/accept', undefined, { invitation: other.body.invitation, password: 'another right one' });
    assert.equal((await call('POST', '/api/fleet/auth/sign-in', undefined, { name: 'Unguessed', password: 'another right one' })).status, 201);
  });
});

describe('single sign-on', () => {
  /** The browser's part: start at the fleet, follow the issuer, come back to the fleet's callback; where it sends us. */
  async function signInWithIssuer(): Promise<URL> {
    const start = await call('GET', '/api/fleet/auth/sso');
    assert.equal(start.status, 302);
    const atIssuer = await fetch(start.headers.get('location')!, { redirect: 'manual' });
    assert.equal(atIssuer.status, 302);
    const back = new URL(atIssuer.headers.get('location')!);
    assert.equal(back.origin + back.pathname, `${fleet.url}/api/fleet/auth/sso/callback`);
    const callback = await call('GET', back.pathname + back.search);
    assert.equal(callback.status, 302);
    assert.doesNotMatch(callback.body, /ems_session_/, 'the session is never in a body');
    return new URL(callback.headers.get('location')!, fleet.url);
  }

  test('the options name the issuer; someone the fleet does not know is sent back with the reason, nobody is created', async () => {
    assert.deepEqual((await call('GET', '/api/fleet/auth/options')).body, { password: true, sso: { name: 'Corp SSO' } });
    person = { sub: 'stranger-1', email: 'stranger@corp.example', email_verified: true };
    assert.equal((await signInWithIssuer()).hash, '#sso-error=sso_unknown_user');
    const names = (await call('GET', '/api/fleet/users', admin)).body.items.map((u: { email: string | null }) => u.email);
    assert.ok(!names.includes('stranger@corp.example'));
    // A callback with a state the fleet never gave (or gave and took back) is refused.
    assert.equal(
      new URL((await call('GET', '/api/fleet/auth/sso/callback?code=abc&state=forged')).headers.get('location')!, fleet.url).hash,
      '#sso-error=sso_failed',
    );
  });

  test('an invited person signs in with the issuer by their verified email, then by their subject; an unverified email is not taken', async () => {
    const site = await enrolSite(fleet, 'SSO site');
    const invited = await call('POST', '/api/fleet/users', admin, { name: 'Sam', email: 'Sam@Corp.example', role: 'admin', sites: [site.siteId] });
    assert.equal(invited.status, 201);
    person = { sub: 'sam-sub', email: 'sam@corp.example', email_verified: false };
    assert.equal((await signInWithIssuer()).hash, '#sso-error=sso_unknown_user');
    person = { sub: 'sam-sub', email: 'sam@corp.example', email_verified: true };
    const landed = await signInWithIssuer();
    const token = decodeURIComponent(landed.hash.replace(/^#session=/, ''));
    assert.match(token, /^ems_session_/);
    assert.deepEqual((await call('GET', '/api/fleet/me', token)).body, { name: 'Sam', role: 'admin', sites: [site.siteId] });
    // The invitation is closed by the sign-in; the subject is remembered, whatever the email says later.
    const sam = (await call('GET', '/api/fleet/users', admin)).body.items.find((u: { name: string }) => u.name === 'Sam');
    assert.deepEqual([sam.signIn, sam.invitationOpen], [['sso'], false]);
    assert.equal((await call('POST', '/api/fleet/auth/accept', undefined, { invitation: invited.body.invitation, password: 'too late now' })).status, 400);
    person = { sub: 'sam-sub', email: 'sam.new@corp.example', email_verified: true };
    const again = decodeURIComponent((await signInWithIssuer()).hash.replace(/^#session=/, ''));
    assert.equal((await call('GET', '/api/fleet/me', again)).body.name, 'Sam');
  });
});

describe('one transaction helper (src/fleet/db.ts inTransaction)', () => {
  test('an invitation naming a site that does not exist is a 400 on /sites and leaves nobody behind; the name stays free', async () => {
    const refused = await call('POST', '/api/fleet/users', admin, { name: 'Frank', role: 'viewer', sites: ['00000000-0000-4000-8000-000000000000'] });
    assert.equal(refused.status, 400);
    assert.deepEqual([refused.body.code, refused.body.details.field], ['invalid_request', '/sites']);
    assert.match(refused.body.error, /does not exist/);
    const names = async () => ((await call('GET', '/api/fleet/users', admin)).body.items as Array<{ name: string }>).map((u) => u.name);
    assert.ok(!(await names()).includes('Frank'), 'the user row went with the rollback');
    assert.equal((await call('POST', '/api/fleet/users', admin, { name: 'Frank', role: 'viewer' })).status, 201);
    const twice = await call('POST', '/api/fleet/users', admin, { name: 'Frank', role: 'viewer' });
    assert.deepEqual([twice.status, twice.body.details.field], [400, '/name']);
    await assert.rejects(addUser(fleet.db.pool, 'Grace', 'viewer', ['00000000-0000-4000-8000-000000000000']), /sites names a site that does not exist/);
    assert.ok(!(await names()).includes('Grace'));
  });

  test('commits what returns, rolls back what throws; a refusal keeps the connection pooled, a failed statement destroys it', async () => {
    const pool = new pg.Pool({ connectionString: cluster.url, max: 1 });
    try {
      const backend = () => inTransaction(pool, async (client) => (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid);
      const count = async (name: string) => Number((await pool.query('select count(*) from fleet_users where name = $1', [name])).rows[0].count);
      const first = await backend();
      await inTransaction(pool, (client) => client.query("insert into fleet_users (name, role) values ('Kept', 'viewer')"));
      assert.equal(await count('Kept'), 1);
      await assert.rejects(
        inTransaction(pool, async (client) => {
          await client.query("insert into fleet_users (name, role) values ('Refused', 'viewer')");
          throw new FleetError('not_found', 'refused on purpose');
        }),
        FleetError,
      );
      assert.equal(await count('Refused'), 0, 'rolled back');
      assert.equal(await backend(), first, 'a refusal leaves the connection in the pool');
      await assert.rejects(
        inTransaction(pool, (client) => client.query('select 1 / 0')),
        /division by zero/,
      );
      assert.notEqual(await backend(), first, 'a failed statement destroys the connection');
    } finally {
      await pool.end();
    }
  });
});
