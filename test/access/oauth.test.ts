// Provider sign-in over real HTTP: oauth2-mock-server as the OIDC issuer, a GitHub-shaped fake, the real service.
import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync, sign as rsaSign } from 'node:crypto';
import vm from 'node:vm';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { OAuth2Issuer, OAuth2Server, OAuth2Service, type MutableResponse, type MutableToken } from 'oauth2-mock-server';
import { startTestServer, TEST_PASSWORD, type TestServer } from '../helpers/server.ts';
import { startFakeGithub, type FakeGithub, type FakeGithubUser } from '../helpers/fakeGithub.ts';
import { ExpiringStore } from '../../src/access/oauth/expiringStore.ts';

const OIDC_CLIENT_ID = 'ems-appliance';
const OIDC_CLIENT_SECRET = 'ems-appliance-secret';

type Issuer = { server: OAuth2Server; url: string; env: Record<string, string> };

async function startIssuer(t: TestContext, claims: Record<string, unknown> = {}): Promise<Issuer> {
  const server = new OAuth2Server();
  await server.issuer.keys.generate('RS256');
  await server.start(0, '127.0.0.1');
  // The mock names itself "localhost"; pin the address it really listens on.
  const url = `http://127.0.0.1:${server.address().port}`;
  server.issuer.url = url;
  // The mock's userinfo only knows `sub`; a real issuer also sends the profile claims.
  server.service.on('beforeUserinfo', (response: MutableResponse) => {
    response.body = { sub: 'johndoe', preferred_username: 'john.doe', email: 'john.doe@corp.example', email_verified: true, name: 'John Doe', ...claims };
  });
  t.after(async () => {
    if (server.listening) await server.stop();
  });
  return {
    server,
    url,
    env: {
      EMS_OAUTH_OIDC_ISSUER: url,
      EMS_OAUTH_OIDC_CLIENT_ID: OIDC_CLIENT_ID,
      EMS_OAUTH_OIDC_CLIENT_SECRET: OIDC_CLIENT_SECRET,
      EMS_OAUTH_OIDC_NAME: 'Corp SSO',
    },
  };
}

async function startGithub(t: TestContext): Promise<FakeGithub> {
  const github = await startFakeGithub();
  t.after(() => github.close());
  return github;
}

async function startServer(t: TestContext, env: Record<string, string>): Promise<TestServer> {
  const server = await startTestServer(env);
  t.after(() => server.close());
  return server;
}

let githubIds = 1000;
function githubUser(overrides: Partial<FakeGithubUser> = {}): FakeGithubUser {
  const id = ++githubIds;
  return { id, login: `octo-${id}`, name: `Octo ${id}`, emails: [{ email: `octo-${id}@users.example`, primary: true, verified: true }], ...overrides };
}

/** The browser's part: ask the service for the URL, follow it at the provider, read back where the provider redirects. */
async function providerRedirect(server: TestServer, provider: string): Promise<URL> {
  const authorize = await server.request('GET', `/api/auth/oauth/${provider}/authorize`);
  assert.equal(authorize.status, 200, authorize.text);
  const atProvider = await fetch(authorize.body.url, { redirect: 'manual' });
  assert.equal(atProvider.status, 302, `provider authorize answered ${atProvider.status}`);
  const location = new URL(atProvider.headers.get('location')!);
  assert.equal(location.pathname, `/api/auth/oauth/${provider}/callback`);
  return location;
}

function callback(server: TestServer, provider: string, search: string, accept = 'application/json') {
  return server.request('GET', `/api/auth/oauth/${provider}/callback${search}`, { headers: { accept } });
}

async function signIn(server: TestServer, provider: string) {
  const location = await providerRedirect(server, provider);
  return callback(server, provider, location.search);
}

function auditActions(server: TestServer, action: string): Array<{ resourceId: string; before: string | null; after: string | null }> {
  return server.service.deps.db.sqlite
    .prepare('SELECT resource_id AS resourceId, before, after FROM audit_log WHERE action = ? ORDER BY id')
    .all(action) as Array<{ resourceId: string; before: string | null; after: string | null }>;
}

/** The popup page's inline script, run with a stand-in opener: what it posts, and to which origin. */
/**
 * Runs the popup's script against an opener at `openerOrigin` (default: the first origin the page posts to) the way a
 * browser does: a postMessage whose target origin is not the opener's is dropped. Exactly one must arrive.
 */
function runPopupScript(html: string, openerOrigin?: string): { message: any; targetOrigin: string; targets: string[]; closed: boolean } {
  const delivered = popupDeliveries(html, openerOrigin);
  assert.equal(delivered.received.length, 1, `posted to ${delivered.targets.join(', ')}`);
  return {
    message: JSON.parse(JSON.stringify(delivered.received[0])),
    targetOrigin: delivered.received.length ? (openerOrigin ?? delivered.targets[0]!) : '',
    targets: delivered.targets,
    closed: delivered.closed,
  };
}

function popupDeliveries(html: string, openerOrigin?: string): { received: unknown[]; targets: string[]; closed: boolean } {
  const script = /<script nonce="[^"]+">([\s\S]*?)<\/script>/.exec(html);
  assert.ok(script, 'the page has one nonce-carrying inline script');
  const posted: Array<{ message: unknown; targetOrigin: string }> = [];
  let closed = false;
  const window = {
    opener: { closed: false, postMessage: (message: unknown, targetOrigin: string) => posted.push({ message, targetOrigin }) },
    close: () => (closed = true),
  };
  vm.runInNewContext(script[1], { window, document: { getElementById: () => ({}) } });
  const targets = posted.map((post) => post.targetOrigin);
  const opener = openerOrigin ?? targets[0];
  return { received: posted.filter((post) => post.targetOrigin === opener).map((post) => post.message), targets, closed };
}

const base64url = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('providers', () => {
  test('the list reflects the configuration, and only listed providers can be used', async (t) => {
    const github = await startGithub(t);
    const issuer = await startIssuer(t);

    const none = await startServer(t, {});
    const empty = await none.request('GET', '/api/auth/oauth/providers');
    assert.equal(empty.status, 200);
    assert.deepEqual(empty.body, { providers: [] });
    assert.equal((await none.request('GET', '/api/auth/oauth/github/authorize')).status, 404);

    const githubOnly = await startServer(t, github.env);
    assert.deepEqual((await githubOnly.request('GET', '/api/auth/oauth/providers')).body, { providers: [{ name: 'github', displayName: 'GitHub' }] });
    const unconfigured = await githubOnly.request('GET', '/api/auth/oauth/oidc/authorize');
    assert.equal(unconfigured.status, 404);
    assert.equal(typeof unconfigured.body.error, 'string');
    assert.equal((await githubOnly.request('GET', '/api/auth/oauth/facebook/authorize')).status, 404);
    assert.equal((await githubOnly.request('GET', '/api/auth/oauth/facebook/callback?code=x&state=y')).status, 404);

    const both = await startServer(t, { ...github.env, ...issuer.env });
    assert.deepEqual((await both.request('GET', '/api/auth/oauth/providers')).body, {
      providers: [
        { name: 'github', displayName: 'GitHub' },
        { name: 'oidc', displayName: 'Corp SSO' },
      ],
    });
  });

  test('the service starts while the OIDC issuer is down; authorize is a 502 until it is back', async (t) => {
    // The mock's request handler behind a switch: "down" resets every connection, as a dead issuer host would.
    const issuer = new OAuth2Issuer();
    await issuer.keys.generate('RS256');
    const service = new OAuth2Service(issuer);
    let up = false;
    const host = http.createServer((req, res) => (up ? service.requestHandler(req, res) : req.socket.destroy()));
    await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve));
    t.after(
      () =>
        new Promise<void>((resolve) => {
          host.closeAllConnections();
          host.close(() => resolve());
        }),
    );
    issuer.url = `http://127.0.0.1:${(host.address() as AddressInfo).port}`;
    const server = await startServer(t, {
      EMS_OAUTH_OIDC_ISSUER: issuer.url,
      EMS_OAUTH_OIDC_CLIENT_ID: OIDC_CLIENT_ID,
      EMS_OAUTH_OIDC_CLIENT_SECRET: OIDC_CLIENT_SECRET,
    });

    assert.deepEqual(
      (await server.request('GET', '/api/auth/oauth/providers')).body.providers.map((p: { name: string }) => p.name),
      ['oidc'],
    );
    const refused = await server.request('GET', '/api/auth/oauth/oidc/authorize');
    assert.equal(refused.status, 502);
    assert.match(refused.body.error, /could not be reached/);

    // Discovery failures are not cached: once the issuer answers again, sign-in works.
    up = true;
    const authorize = await server.request('GET', '/api/auth/oauth/oidc/authorize');
    assert.equal(authorize.status, 200, authorize.text);
    assert.ok(authorize.body.url.startsWith(`${issuer.url}/authorize?`));
  });
});

describe('oidc', () => {
  test('first sign-in → bind_required → register-and-bind → next sign-in linked, with the refresh rules of login', async (t) => {
    const issuer = await startIssuer(t);
    const server = await startServer(t, issuer.env);

    const authorize = await server.request('GET', '/api/auth/oauth/oidc/authorize');
    const url = new URL(authorize.body.url);
    assert.equal(url.origin + url.pathname, `${issuer.url}/authorize`);
    assert.equal(url.searchParams.get('client_id'), OIDC_CLIENT_ID);
    assert.equal(url.searchParams.get('response_type'), 'code');
    assert.equal(url.searchParams.get('code_challenge_method'), 'S256');
    assert.match(url.searchParams.get('code_challenge')!, /^[A-Za-z0-9_-]{43}$/);
    assert.ok(url.searchParams.get('nonce'));
    assert.ok(url.searchParams.get('state'));
    assert.equal(url.searchParams.get('code_verifier'), null, 'the PKCE verifier stays on the server');
    assert.match(url.searchParams.get('scope')!, /\bopenid\b/);
    assert.equal(url.searchParams.get('redirect_uri'), 'http://localhost:3000/api/auth/oauth/oidc/callback');

    const first = await signIn(server, 'oidc');
    assert.equal(first.status, 200, first.text);
    assert.equal(first.headers.get('cache-control'), 'no-store');
    assert.equal(first.body.status, 'bind_required');
    assert.deepEqual(first.body.profile, {
      provider: 'oidc',
      providerUserId: 'johndoe',
      username: 'john.doe',
      email: 'john.doe@corp.example',
      name: 'John Doe',
    });
    assert.equal(first.body.accessToken, undefined);

    const created = await server.request('POST', '/api/auth/oauth/register-and-bind', { body: { bindToken: first.body.bindToken } });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.user.username, 'john.doe');
    assert.equal(created.body.user.email, 'john.doe@corp.example');
    assert.equal(created.body.user.displayName, 'John Doe');
    assert.equal(created.body.user.role, 'viewer');
    const me = await server.request('GET', '/api/auth/me', { token: created.body.accessToken });
    assert.equal(me.body.id, created.body.user.id);

    const next = await signIn(server, 'oidc');
    assert.equal(next.status, 200, next.text);
    assert.equal(next.body.status, 'linked');
    assert.equal(next.body.user.id, created.body.user.id);
    assert.equal(next.body.bindToken, undefined);
    assert.equal((await server.request('GET', '/api/auth/me', { token: next.body.accessToken })).body.id, created.body.user.id);
    // Same rule as login: the earlier refresh token is gone, the new one works.
    assert.equal((await server.request('POST', '/api/auth/refresh', { body: { refreshToken: created.body.refreshToken } })).status, 401);
    assert.equal((await server.request('POST', '/api/auth/refresh', { body: { refreshToken: next.body.refreshToken } })).status, 200);

    const links = auditActions(server, 'oauth_link');
    assert.equal(links.length, 1);
    assert.equal(links[0].resourceId, String(created.body.user.id));
    assert.deepEqual(JSON.parse(links[0].after!), { provider: 'oidc', providerUserId: 'johndoe' });
  });

  test('a forged id_token is refused: wrong key, wrong audience, wrong issuer, expired, wrong nonce', async (t) => {
    const issuer = await startIssuer(t);
    const server = await startServer(t, issuer.env);
    const now = () => Math.floor(Date.now() / 1000);
    // Only the id_token carries `aud` in the mock's code grant: the access token is left alone.
    const onIdToken = (change: (token: MutableToken) => void) => {
      const listener = (token: MutableToken) => {
        if (!token.payload.aud) return;
        issuer.server.service.off('beforeTokenSigning', listener);
        change(token);
      };
      issuer.server.service.on('beforeTokenSigning', listener);
    };
    const foreignKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    const resignWithForeignKey = () =>
      issuer.server.service.once('beforeResponse', (response: MutableResponse) => {
        const body = response.body as Record<string, string>;
        // Same header (kid and all) and claims, signed by a key the issuer never published.
        const [header, payload] = body.id_token.split('.');
        const signature = rsaSign('sha256', Buffer.from(`${header}.${payload}`), foreignKey).toString('base64url');
        body.id_token = `${header}.${payload}.${signature}`;
      });

    const forgeries: Array<[string, () => void]> = [
      ['wrong key', resignWithForeignKey],
      ['wrong audience', () => onIdToken((token) => (token.payload.aud = 'some-other-client'))],
      ['wrong issuer', () => onIdToken((token) => (token.payload.iss = 'http://127.0.0.1:1/evil'))],
      [
        'expired',
        () =>
          onIdToken((token) => {
            token.payload.iat = now() - 7200;
            token.payload.exp = now() - 3600;
          }),
      ],
      ['wrong nonce', () => onIdToken((token) => (token.payload.nonce = 'not-the-nonce-we-sent'))],
      [
        'no signature',
        () =>
          issuer.server.service.once('beforeResponse', (response: MutableResponse) => {
            const body = response.body as Record<string, string>;
            const [, payload] = body.id_token.split('.');
            body.id_token = `${base64url({ alg: 'none', typ: 'JWT' })}.${payload}.`;
          }),
      ],
    ];
    for (const [name, forge] of forgeries) {
      const location = await providerRedirect(server, 'oidc');
      forge();
      const response = await callback(server, 'oidc', location.search);
      assert.equal(response.status, 502, `${name}: ${response.text}`);
      assert.match(response.body.error, /ID token failed verification|refused/, name);
      assert.equal(response.body.bindToken, undefined, name);
      assert.equal(response.body.accessToken, undefined, name);
    }
    assert.equal(issuer.server.service.listenerCount('beforeTokenSigning'), 0, 'every forgery hook was used');

    // The same issuer with an honest token still signs in: the refusals above were the forgeries.
    const honest = await signIn(server, 'oidc');
    assert.equal(honest.status, 200, honest.text);
    assert.equal(honest.body.status, 'bind_required');
  });

  test('an unverified email is not offered; the token endpoint refusing the code is a 502', async (t) => {
    const issuer = await startIssuer(t, { email_verified: false, preferred_username: 'x' });
    const server = await startServer(t, issuer.env);
    const first = await signIn(server, 'oidc');
    assert.equal(first.body.status, 'bind_required');
    assert.deepEqual(first.body.profile, { provider: 'oidc', providerUserId: 'johndoe', name: 'John Doe' });
    const missing = await server.request('POST', '/api/auth/oauth/register-and-bind', { body: { bindToken: first.body.bindToken } });
    assert.equal(missing.status, 400);
    assert.ok(missing.body.details.some((detail: { path: string }) => detail.path === 'body.username'));

    const location = await providerRedirect(server, 'oidc');
    issuer.server.service.once('beforeResponse', (response: MutableResponse) => {
      response.statusCode = 400;
      response.body = { error: 'invalid_grant' };
    });
    const refused = await callback(server, 'oidc', location.search);
    assert.equal(refused.status, 502);
    assert.match(refused.body.error, /invalid_grant/);
  });
});

describe('github', () => {
  test('bind to an existing account: afterwards password login and provider login give the same user', async (t) => {
    const github = await startGithub(t);
    const server = await startServer(t, { ...github.env, EMS_PUBLIC_URL: 'https://ems.example.test' });
    const existing = await server.createUser({ role: 'operator' });
    const octo = githubUser();
    github.signInAs(octo);

    const authorize = await server.request('GET', '/api/auth/oauth/github/authorize');
    const url = new URL(authorize.body.url);
    assert.equal(url.searchParams.get('client_id'), github.clientId);
    assert.equal(url.searchParams.get('redirect_uri'), 'https://ems.example.test/api/auth/oauth/github/callback');
    assert.equal(url.searchParams.get('code_challenge_method'), 'S256');

    const first = await signIn(server, 'github');
    assert.equal(first.status, 200, first.text);
    assert.equal(first.body.status, 'bind_required');
    assert.deepEqual(first.body.profile, {
      provider: 'github',
      providerUserId: String(octo.id),
      username: octo.login,
      email: octo.emails![0].email,
      name: octo.name,
    });
    const tokenRequest = github.tokenRequests.at(-1)!;
    assert.equal(tokenRequest.get('redirect_uri'), 'https://ems.example.test/api/auth/oauth/github/callback');
    assert.match(tokenRequest.get('code_verifier')!, /^[A-Za-z0-9_-]{43,128}$/);

    // The login name may be the email.
    const bound = await server.request('POST', '/api/auth/oauth/bind', {
      body: { bindToken: first.body.bindToken, username: existing.user.email, password: TEST_PASSWORD },
    });
    assert.equal(bound.status, 200, bound.text);
    assert.equal(bound.body.user.id, existing.user.id);
    assert.equal(bound.body.user.role, 'operator');
    assert.equal((await server.request('GET', '/api/auth/me', { token: bound.body.accessToken })).body.id, existing.user.id);

    const password = await server.request('POST', '/api/auth/login', { body: { username: existing.user.username, password: TEST_PASSWORD } });
    assert.equal(password.status, 200);
    const provider = await signIn(server, 'github');
    assert.equal(provider.body.status, 'linked');
    assert.equal(provider.body.user.id, password.body.user.id);
    assert.equal(provider.body.user.id, existing.user.id);
    // The provider sign-in replaced the password sign-in's refresh token, as a second login would.
    assert.equal((await server.request('POST', '/api/auth/refresh', { body: { refreshToken: password.body.refreshToken } })).status, 401);
  });

  test('a wrong password on bind is 401 and links nothing; the token survives a typo but not reuse', async (t) => {
    const github = await startGithub(t);
    const server = await startServer(t, github.env);
    const existing = await server.createUser();
    github.signInAs(githubUser());
    const first = await signIn(server, 'github');

    const wrong = await server.request('POST', '/api/auth/oauth/bind', {
      body: { bindToken: first.body.bindToken, username: existing.user.username, password: 'not-the-password' },
    });
    assert.equal(wrong.status, 401);
    assert.equal(typeof wrong.body.error, 'string');
    assert.equal(wrong.body.accessToken, undefined);
    assert.equal((await server.request('GET', `/api/users/${existing.user.id}/oauth-links`, { token: existing.accessToken })).body.total, 0);
    assert.equal(auditActions(server, 'oauth_link').length, 0);

    const right = await server.request('POST', '/api/auth/oauth/bind', {
      body: { bindToken: first.body.bindToken, username: existing.user.username, password: TEST_PASSWORD },
    });
    assert.equal(right.status, 200, right.text);
    const reused = await server.request('POST', '/api/auth/oauth/bind', {
      body: { bindToken: first.body.bindToken, username: existing.user.username, password: TEST_PASSWORD },
    });
    assert.equal(reused.status, 400);
    assert.match(reused.body.error, /bind token/);

    // Guessing is bounded per token: after 5 wrong passwords even the right one is too late.
    const other = await server.createUser();
    github.signInAs(githubUser());
    const second = await signIn(server, 'github');
    for (let i = 0; i < 5; i++) {
      const miss = await server.request('POST', '/api/auth/oauth/bind', {
        body: { bindToken: second.body.bindToken, username: other.user.username, password: `wrong-${i}` },
      });
      assert.equal(miss.status, 401);
    }
    const late = await server.request('POST', '/api/auth/oauth/bind', {
      body: { bindToken: second.body.bindToken, username: other.user.username, password: TEST_PASSWORD },
    });
    assert.equal(late.status, 400);
  });

  test('a bind token is single use and cannot be made up', async (t) => {
    const github = await startGithub(t);
    const server = await startServer(t, github.env);
    github.signInAs(githubUser());
    const first = await signIn(server, 'github');

    const created = await server.request('POST', '/api/auth/oauth/register-and-bind', { body: { bindToken: first.body.bindToken } });
    assert.equal(created.status, 201, created.text);
    const again = await server.request('POST', '/api/auth/oauth/register-and-bind', {
      body: { bindToken: first.body.bindToken, username: 'someone_else', email: 'someone@else.example' },
    });
    assert.equal(again.status, 400);
    const other = await server.createUser();
    const bindAfter = await server.request('POST', '/api/auth/oauth/bind', {
      body: { bindToken: first.body.bindToken, username: other.user.username, password: TEST_PASSWORD },
    });
    assert.equal(bindAfter.status, 400);
    const madeUp = await server.request('POST', '/api/auth/oauth/register-and-bind', {
      body: { bindToken: 'A'.repeat(43), username: 'made_up', email: 'made@up.example' },
    });
    assert.equal(madeUp.status, 400);
    assert.equal((server.service.deps.db.sqlite.prepare('SELECT count(*) AS n FROM users WHERE username = ?').get('someone_else') as { n: number }).n, 0);
  });

  test('register-and-bind: a taken username or email is a 409 that says so; the token stays usable', async (t) => {
    const github = await startGithub(t);
    const server = await startServer(t, github.env);
    const octo = githubUser({ emails: [{ email: 'unverified@users.example', primary: true, verified: false }] });
    const holder = await server.createUser({ username: octo.login });
    github.signInAs(octo);
    const first = await signIn(server, 'github');
    assert.equal(first.body.profile.email, undefined, 'only a primary verified address is offered');

    const noEmail = await server.request('POST', '/api/auth/oauth/register-and-bind', { body: { bindToken: first.body.bindToken } });
    assert.equal(noEmail.status, 400);
    assert.ok(noEmail.body.details.some((detail: { path: string }) => detail.path === 'body.email'));

    const nameTaken = await server.request('POST', '/api/auth/oauth/register-and-bind', {
      body: { bindToken: first.body.bindToken, email: 'octo@new.example' },
    });
    assert.equal(nameTaken.status, 409);
    assert.match(nameTaken.body.error, /username is already taken.*choose another username/);

    const emailTaken = await server.request('POST', '/api/auth/oauth/register-and-bind', {
      body: { bindToken: first.body.bindToken, username: 'octo_new', email: holder.user.email.toUpperCase() },
    });
    assert.equal(emailTaken.status, 409);
    assert.match(emailTaken.body.error, /email is already registered/);

    const created = await server.request('POST', '/api/auth/oauth/register-and-bind', {
      body: { bindToken: first.body.bindToken, username: 'octo_new', email: 'octo@new.example' },
    });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.user.username, 'octo_new');
    assert.equal(created.body.user.role, 'viewer');
    // Nobody knows the generated password: the account has no password sign-in until forgot-password sets one.
    assert.equal((await server.request('POST', '/api/auth/login', { body: { username: 'octo_new', password: TEST_PASSWORD } })).status, 401);
  });

  test('one identity links to one user, and a user to one identity per provider', async (t) => {
    const github = await startGithub(t);
    const server = await startServer(t, github.env);
    const alice = await server.createUser();
    const bob = await server.createUser();
    const octo = githubUser();
    github.signInAs(octo);
    const one = await signIn(server, 'github');
    const two = await signIn(server, 'github');
    assert.equal(two.body.status, 'bind_required');

    assert.equal(
      (
        await server.request('POST', '/api/auth/oauth/bind', {
          body: { bindToken: one.body.bindToken, username: alice.user.username, password: TEST_PASSWORD },
        })
      ).status,
      200,
    );
    const stolen = await server.request('POST', '/api/auth/oauth/bind', {
      body: { bindToken: two.body.bindToken, username: bob.user.username, password: TEST_PASSWORD },
    });
    assert.equal(stolen.status, 409);
    assert.match(stolen.body.error, /already linked to another user/);
    const stolenNew = await server.request('POST', '/api/auth/oauth/register-and-bind', {
      body: { bindToken: two.body.bindToken, username: 'thief', email: 'thief@example.test' },
    });
    assert.equal(stolenNew.status, 409);

    github.signInAs(githubUser());
    const second = await signIn(server, 'github');
    const double = await server.request('POST', '/api/auth/oauth/bind', {
      body: { bindToken: second.body.bindToken, username: alice.user.username, password: TEST_PASSWORD },
    });
    assert.equal(double.status, 409);
    assert.match(double.body.error, /already linked to a different GitHub account/);
    const rows = server.service.deps.db.sqlite.prepare('SELECT user_id AS userId FROM oauth_links').all() as Array<{ userId: number }>;
    assert.deepEqual(rows, [{ userId: alice.user.id }]);
  });

  test('GitHub failing or down is a 502 with { error }; an error in the callback is too', async (t) => {
    const github = await startGithub(t);
    const server = await startServer(t, github.env);
    github.signInAs(githubUser());

    for (const path of ['/login/oauth/access_token', '/user', '/user/emails'] as const) {
      const location = await providerRedirect(server, 'github');
      github.failNext(path, 500);
      const response = await callback(server, 'github', location.search);
      assert.equal(response.status, 502, `${path}: ${response.text}`);
      assert.equal(typeof response.body.error, 'string');
    }

    // A code GitHub does not know (200 with { error }, as GitHub answers).
    const location = await providerRedirect(server, 'github');
    const badCode = new URLSearchParams(location.search);
    badCode.set('code', 'not-a-code');
    const refused = await callback(server, 'github', `?${badCode}`);
    assert.equal(refused.status, 502);
    assert.match(refused.body.error, /bad_verification_code/);

    const cancelled = await providerRedirect(server, 'github');
    const denied = await callback(server, 'github', `?error=access_denied&state=${cancelled.searchParams.get('state')}`);
    assert.equal(denied.status, 502);
    assert.match(denied.body.error, /access_denied/);

    const pending = await providerRedirect(server, 'github');
    await github.close();
    const down = await callback(server, 'github', pending.search);
    assert.equal(down.status, 502);
    assert.match(down.body.error, /could not be reached/);
  });
});

describe('state', () => {
  test('a tampered, replayed, missing or cross-provider state is a 400', async (t) => {
    const github = await startGithub(t);
    const issuer = await startIssuer(t);
    const server = await startServer(t, { ...github.env, ...issuer.env });
    github.signInAs(githubUser());

    const location = await providerRedirect(server, 'github');
    const state = location.searchParams.get('state')!;
    const tampered = new URLSearchParams(location.search);
    tampered.set('state', (state[0] === 'A' ? 'B' : 'A') + state.slice(1));
    const bad = await callback(server, 'github', `?${tampered}`);
    assert.equal(bad.status, 400);
    assert.match(bad.body.error, /state/);
    const missing = await callback(server, 'github', `?code=${location.searchParams.get('code')}`);
    assert.equal(missing.status, 400);

    // The untouched state still works once, then never again.
    const good = await callback(server, 'github', location.search);
    assert.equal(good.status, 200, good.text);
    const replay = await callback(server, 'github', location.search);
    assert.equal(replay.status, 400);
    assert.match(replay.body.error, /already used/);

    // A state is bound to the provider it was issued for, and spent by the attempt.
    const oidcLocation = await providerRedirect(server, 'oidc');
    const crossed = await callback(server, 'github', oidcLocation.search);
    assert.equal(crossed.status, 400);
    assert.equal((await callback(server, 'oidc', oidcLocation.search)).status, 400);
  });

  test('the callback also takes a form post and answers JSON', async (t) => {
    const github = await startGithub(t);
    const server = await startServer(t, github.env);
    github.signInAs(githubUser());
    const location = await providerRedirect(server, 'github');
    const response = await server.request('POST', '/api/auth/oauth/github/callback', {
      raw: location.searchParams.toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
    });
    assert.equal(response.status, 200, response.text);
    assert.match(response.headers.get('content-type')!, /^application\/json/);
    assert.equal(response.body.status, 'bind_required');
  });

  test('the pending store expires entries, is single use and stays bounded', () => {
    let now = 0;
    const store = new ExpiringStore<number>({ ttlMs: 1000, maxEntries: 3, now: () => now });
    store.set('a', 1);
    assert.equal(store.peek('a'), 1);
    assert.equal(store.take('a'), 1);
    assert.equal(store.take('a'), undefined);
    store.set('b', 2);
    now = 1000;
    assert.equal(store.take('b'), undefined, 'expired at its ttl');
    for (const key of ['c', 'd', 'e', 'f']) store.set(key, 0);
    assert.equal(store.size, 3);
    assert.equal(store.peek('c'), undefined, 'the oldest gave way');
    assert.equal(store.peek('f'), 0);
    now = 5000;
    store.set('g', 0);
    assert.equal(store.size, 1, 'expired entries are swept on write');
  });
});

describe('pending sign-ins under a flood', () => {
  test("one address starting 200 sign-ins evicts only its own: a real user's pending sign-in still completes", async (t) => {
    const github = await startGithub(t);
    // Behind a listed proxy, so the test can speak as two clients.
    const server = await startServer(t, { ...github.env, EMS_TRUST_PROXY: '127.0.0.1,::1' });
    github.signInAs(githubUser());
    const authorize = await server.request('GET', '/api/auth/oauth/github/authorize', { headers: { 'x-forwarded-for': '10.0.0.7' } });
    assert.equal(authorize.status, 200);
    const flood = await Promise.all(
      Array.from({ length: 200 }, () => server.request('GET', '/api/auth/oauth/github/authorize', { headers: { 'x-forwarded-for': '10.0.0.66' } })),
    );
    assert.ok(flood.every((response) => response.status === 200));
    const atProvider = await fetch(authorize.body.url, { redirect: 'manual' });
    const location = new URL(atProvider.headers.get('location')!);
    const done = await callback(server, 'github', location.search);
    assert.equal(done.status, 200, done.text);
    assert.equal(done.body.status, 'bind_required');
    // The flooding address kept only its newest 50: its oldest pending sign-in is gone.
    const oldest = new URL((await fetch(flood[0].body.url, { redirect: 'manual' })).headers.get('location')!);
    assert.equal((await callback(server, 'github', oldest.search)).status, 400);
  });

  test("an owner past its quota loses its own oldest entry, nobody else's", () => {
    const store = new ExpiringStore<number>({ ttlMs: 60_000, maxEntries: 100, maxPerOwner: 3 });
    store.set('victim', 1, 'b');
    for (let i = 0; i < 50; i += 1) store.set(`flood-${i}`, i, 'a');
    assert.equal(store.peek('victim'), 1);
    assert.equal(store.size, 4);
    assert.equal(store.peek('flood-46'), undefined);
    assert.equal(store.peek('flood-49'), 49);
  });
});

describe('popup page', () => {
  test('posts the outcome to EMS_PORTAL_ORIGIN only, under a nonce CSP, then closes', async (t) => {
    const github = await startGithub(t);
    const server = await startServer(t, { ...github.env, EMS_PORTAL_ORIGIN: 'https://portal.example.test' });
    const hostile = '</script><script>alert(1)</script><!--';
    github.signInAs(githubUser({ name: hostile }));
    const location = await providerRedirect(server, 'github');

    const page = await callback(server, 'github', location.search, 'text/html,application/xhtml+xml,*/*;q=0.8');
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type')!, /^text\/html/);
    assert.equal(page.headers.get('cache-control'), 'no-store');
    const csp = page.headers.get('content-security-policy')!;
    assert.match(csp, /default-src 'none'/);
    const nonce = /script-src 'nonce-([^']+)'/.exec(csp)?.[1];
    assert.ok(nonce, csp);
    assert.doesNotMatch(csp, /unsafe-inline|\*/);
    assert.ok(page.text.includes(`<script nonce="${nonce}">`));
    assert.equal(page.text.split('<script').length, 2, 'one script element: the hostile name did not open another');
    assert.ok(!page.text.includes('alert(1)</script>'));

    const run = runPopupScript(page.text);
    assert.equal(run.targetOrigin, 'https://portal.example.test');
    assert.equal(run.closed, true);
    assert.equal(run.message.status, 'bind_required');
    assert.equal(run.message.profile.name, hostile);
    assert.doesNotMatch(page.text, /postMessage\([^)]*['"]\*['"]/);

    // The posted bind token is the real one.
    const created = await server.request('POST', '/api/auth/oauth/register-and-bind', { body: { bindToken: run.message.bindToken } });
    assert.equal(created.status, 201, created.text);
    const linked = runPopupScript((await callback(server, 'github', (await providerRedirect(server, 'github')).search, 'text/html')).text);
    assert.equal(linked.message.status, 'linked');
    assert.equal(linked.message.user.id, created.body.user.id);
    assert.equal(typeof linked.message.accessToken, 'string');
    assert.equal(linked.targetOrigin, 'https://portal.example.test');
  });

  test('EMS_PORTAL_ORIGIN lists two dashboards: the opener at either gets the outcome once, any other origin nothing', async (t) => {
    const github = await startGithub(t);
    const server = await startServer(t, { ...github.env, EMS_PORTAL_ORIGIN: 'https://portal.example.test, http://localhost:5173' });
    github.signInAs(githubUser());
    const page = async () => (await callback(server, 'github', (await providerRedirect(server, 'github')).search, 'text/html')).text;
    const dev = runPopupScript(await page(), 'http://localhost:5173');
    assert.equal(dev.message.status, 'bind_required');
    assert.deepEqual(dev.targets, ['https://portal.example.test', 'http://localhost:5173']);
    assert.equal(runPopupScript(await page(), 'https://portal.example.test').message.status, 'bind_required');
    const stranger = popupDeliveries(await page(), 'https://evil.example.test');
    assert.deepEqual(stranger.received, []);
    assert.ok(!stranger.targets.includes('*'));
  });

  test('without EMS_PORTAL_ORIGIN the target is the service origin from EMS_PUBLIC_URL, never *', async (t) => {
    const github = await startGithub(t);
    const server = await startServer(t, { ...github.env, EMS_PUBLIC_URL: 'https://ems.example.test:8443/' });
    github.signInAs(githubUser());
    const location = await providerRedirect(server, 'github');
    const page = await callback(server, 'github', location.search, '*/*');
    assert.match(page.headers.get('content-type')!, /^text\/html/);
    const run = runPopupScript(page.text);
    assert.equal(run.targetOrigin, 'https://ems.example.test:8443');
    assert.notEqual(run.targetOrigin, '*');
  });
});

describe('links', () => {
  test('list and unlink: self or admin, audited; an unlinked identity has to bind again', async (t) => {
    const github = await startGithub(t);
    const server = await startServer(t, github.env);
    const owner = await server.createUser();
    const stranger = await server.createUser();
    const admin = await server.createUser({ role: 'admin' });
    const octo = githubUser();
    github.signInAs(octo);
    const first = await signIn(server, 'github');
    assert.equal(
      (
        await server.request('POST', '/api/auth/oauth/bind', {
          body: { bindToken: first.body.bindToken, username: owner.user.username, password: TEST_PASSWORD },
        })
      ).status,
      200,
    );

    const path = `/api/users/${owner.user.id}/oauth-links`;
    const own = await server.request('GET', path, { token: owner.accessToken });
    assert.equal(own.status, 200, own.text);
    assert.equal(own.body.total, 1);
    assert.equal(own.body.page, 1);
    assert.equal(own.body.items[0].provider, 'github');
    assert.equal(own.body.items[0].providerUserId, String(octo.id));
    assert.equal((await server.request('GET', path, { token: stranger.accessToken })).status, 403);
    assert.equal((await server.request('GET', path, { token: admin.accessToken })).body.total, 1);
    assert.equal((await server.request('GET', path)).status, 401);
    assert.equal((await server.request('GET', '/api/users/999999/oauth-links', { token: admin.accessToken })).status, 404);

    assert.equal((await server.request('DELETE', `${path}/github`, { token: stranger.accessToken })).status, 403);
    const removed = await server.request('DELETE', `${path}/github`, { token: owner.accessToken });
    assert.equal(removed.status, 200, removed.text);
    assert.equal((await server.request('GET', path, { token: owner.accessToken })).body.total, 0);
    assert.equal((await server.request('DELETE', `${path}/github`, { token: admin.accessToken })).status, 404);

    const unlinks = auditActions(server, 'oauth_unlink');
    assert.equal(unlinks.length, 1);
    assert.equal(unlinks[0].resourceId, String(owner.user.id));
    assert.deepEqual(JSON.parse(unlinks[0].before!), { provider: 'github', providerUserId: String(octo.id) });

    const again = await signIn(server, 'github');
    assert.equal(again.body.status, 'bind_required');
    // An admin can undo a link too.
    assert.equal(
      (
        await server.request('POST', '/api/auth/oauth/bind', {
          body: { bindToken: again.body.bindToken, username: owner.user.username, password: TEST_PASSWORD },
        })
      ).status,
      200,
    );
    assert.equal((await server.request('DELETE', `${path}/github`, { token: admin.accessToken })).status, 200);
  });
});
