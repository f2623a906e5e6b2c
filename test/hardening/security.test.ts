// DESIGN.md "Security floor" for the HTTP layer: the allow-list, token checks, error bodies, logs, body limits.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createSecretKey } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { startTestServer, TEST_PASSWORD, type TestServer } from '../helpers/server.ts';
import { rawRequest } from '../helpers/rawHttp.ts';
import { publicRoutes } from '../../src/app/routes.ts';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(() => server.close());

const base64url = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('public allow-list', () => {
  test('is exactly the SPEC.md list (plus /api/health), by method and route pattern', () => {
    const routes = server.service.routes;
    const listed = new Set(publicRoutes(routes));
    const expected = [
      'POST /api/auth/login',
      'POST /api/auth/register',
      'POST /api/auth/register/send-code',
      'POST /api/auth/refresh',
      'POST /api/auth/forgot-password/send-code',
      'POST /api/auth/forgot-password/reset',
      'GET /api/health',
    ];
    for (const route of expected) assert.ok(listed.has(route), `${route} is public`);
    const allowedExtra = [
      'GET /api/dashboard',
      'GET /api/wallboard',
      // The wallboard's live news (issue 53): which kind of figure changed, never what; bounded per address.
      'GET /api/wallboard/events',
      'GET /api/auth/oauth/providers',
      'GET /api/auth/oauth/:provider/authorize',
      'GET /api/auth/oauth/:provider/callback',
      'POST /api/auth/oauth/:provider/callback',
      'POST /api/auth/oauth/bind',
      'POST /api/auth/oauth/register-and-bind',
      // The one-time set-up link (issue 53): the first admin's password, before anyone can sign in; a single-use
      // 256-bit code, only its hash stored (test/access/setupLink.test.ts).
      'POST /api/auth/setup-link',
    ];
    for (const route of listed) assert.ok(expected.includes(route) || allowedExtra.includes(route), `${route} must not be public`);
  });

  test('every non-public route answers 401 without a token, before its handler', async () => {
    const routes = server.service.routes.filter((route) => route.access !== 'public');
    assert.ok(routes.length >= 2);
    for (const route of routes) {
      const path = route.path.replace(/:[A-Za-z]+/g, '1');
      const response = await rawRequest(server.url, route.method, path, { 'content-type': 'application/json' }, '{}');
      assert.equal(response.status, 401, `${route.method} ${path} → ${response.status}`);
      assert.equal(typeof JSON.parse(response.body).error, 'string');
    }
  });

  test('path tricks reach no protected handler without a token', async () => {
    const tricks = [
      '/api/dashboard/../users',
      '/api/dashboard/%2e%2e/users',
      '/api/dashboard%2f..%2fusers',
      '/api/dashboard/alerts',
      '/api/auth/login/../me',
      '/api/auth/me/',
      '/API/AUTH/ME',
      '//api/auth/me',
      '/api/auth/./me',
      '/api/health/../auth/me',
      '/api/auth/me%00',
      '/api/auth/me;.css',
      '/api/users',
    ];
    for (const path of tricks) {
      const response = await rawRequest(server.url, 'GET', path);
      assert.equal(response.status, 401, `${path} → ${response.status} ${response.body}`);
    }
  });

  test('an unknown path is 401 without a token and 404 with one', async () => {
    const { accessToken } = await server.createUser();
    assert.equal((await rawRequest(server.url, 'GET', '/api/no-such-thing')).status, 401);
    const found = await rawRequest(server.url, 'GET', '/api/no-such-thing', { authorization: `Bearer ${accessToken}` });
    assert.equal(found.status, 404);
    assert.equal(typeof JSON.parse(found.body).error, 'string');
    // The path exists with another method: 405 (with Allow) once the token checked out.
    assert.equal((await rawRequest(server.url, 'DELETE', '/api/auth/me', { authorization: `Bearer ${accessToken}` })).status, 405);
    assert.equal((await rawRequest(server.url, 'DELETE', '/api/auth/me')).status, 401);
  });

  test('X-Original-URL, X-Rewrite-URL and X-Forwarded-Prefix change nothing', async () => {
    for (const header of ['x-original-url', 'x-rewrite-url', 'x-forwarded-prefix', 'x-forwarded-path']) {
      const toPublic = await rawRequest(server.url, 'GET', '/api/auth/me', { [header]: '/api/health' });
      assert.equal(toPublic.status, 401, header);
    }
    const health = await rawRequest(server.url, 'GET', '/api/health', { 'x-original-url': '/api/auth/me' });
    assert.equal(health.status, 200);
  });
});

describe('access tokens', () => {
  test('alg none, other algorithms, forged signatures, expired and malformed tokens are 401', async () => {
    const { user } = await server.createUser({ role: 'admin' });
    const claims = { userId: user.id, username: user.username };
    const now = Math.floor(Date.now() / 1000);
    const secret = server.service.deps.db.sqlite.prepare("SELECT value FROM app_settings WHERE key = 'jwt_secret'").pluck().get() as string;
    const tokens = {
      algNone: `${base64url({ alg: 'none', typ: 'JWT' })}.${base64url({ ...claims, iat: now, exp: now + 600 })}.`,
      hs512SameSecret: jwt.sign(claims, createSecretKey(Buffer.from(secret)), { algorithm: 'HS512', expiresIn: 600 }),
      otherSecret: jwt.sign(claims, 'x'.repeat(48), { algorithm: 'HS256', expiresIn: 600 }),
      expired: jwt.sign({ ...claims, iat: now - 1000, exp: now - 10 }, createSecretKey(Buffer.from(secret)), { algorithm: 'HS256' }),
      expiredOtherSecret: jwt.sign({ ...claims, iat: now - 1000, exp: now - 10 }, 'x'.repeat(48), { algorithm: 'HS256' }),
      noClaims: jwt.sign({ sub: 'x' }, createSecretKey(Buffer.from(secret)), { algorithm: 'HS256', expiresIn: 600 }),
      garbage: 'not.a.token',
    };
    for (const [name, token] of Object.entries(tokens)) {
      const response = await server.request('GET', '/api/auth/me', { token });
      assert.equal(response.status, 401, name);
      assert.deepEqual(Object.keys(response.body), ['error', 'code'], name);
      // Expired (signed by this service, time up) has its own code so a client refreshes only when that can help.
      assert.equal(response.body.code, name === 'expired' ? 'TOKEN_EXPIRED' : 'UNAUTHENTICATED', name);
    }
    const good = jwt.sign(claims, createSecretKey(Buffer.from(secret)), { algorithm: 'HS256', expiresIn: 600 });
    assert.equal((await server.request('GET', '/api/auth/me', { token: good })).status, 200);
    for (const header of ['Basic abc', 'Bearer', 'Bearer  two spaces', `bearer-${good}`]) {
      assert.equal((await server.request('GET', '/api/auth/me', { headers: { authorization: header } })).status, 401, header);
    }
  });

  test('generated signing secrets are at least 32 random bytes', () => {
    const secret = server.service.deps.db.sqlite.prepare("SELECT value FROM app_settings WHERE key = 'jwt_secret'").pluck().get() as string;
    assert.ok(Buffer.from(secret, 'base64').length >= 32);
  });

  test('a deleted user is 401 at once; a role change applies at once', async () => {
    const { user, accessToken } = await server.createUser({ role: 'admin' });
    const db = server.service.deps.db.sqlite;
    db.prepare("UPDATE users SET role = 'viewer' WHERE id = ?").run(user.id);
    const me = await server.request('GET', '/api/auth/me', { token: accessToken });
    assert.equal(me.body.role, 'viewer');
    db.prepare('DELETE FROM users WHERE id = ?').run(user.id);
    assert.equal((await server.request('GET', '/api/auth/me', { token: accessToken })).status, 401);
  });
});

describe('bad input', () => {
  const endpoints = [
    '/api/auth/login',
    '/api/auth/register/send-code',
    '/api/auth/register',
    '/api/auth/refresh',
    '/api/auth/forgot-password/send-code',
    '/api/auth/forgot-password/reset',
  ];
  const malformed: Array<{ body: string; type?: string }> = [
    { body: '' },
    { body: '{' },
    { body: 'null' },
    { body: '[]' },
    { body: '"text"' },
    { body: '42' },
    { body: '{"username": 1, "password": 2}' },
    { body: '{"email": "not-an-email"}' },
    { body: '{"email": ["a@b.c"]}' },
    { body: '{"refreshToken": null}' },
    { body: '{"username": "a", "password": "' + 'x'.repeat(5000) + '"}' },
    { body: '{"code": "12345a", "email": "a@b", "newPassword": "longenough"}' },
    { body: '{"__proto__": {"admin": true}}' },
    { body: '{"constructor": {"prototype": {"x": 1}}}' },
    { body: '{"username": "\\u0000", "email": "\\u0000@x.y", "password": "\\u0000\\u0000\\u0000\\u0000\\u0000\\u0000\\u0000\\u0000", "code": "000000"}' },
    { body: 'username=admin&password=x', type: 'application/x-www-form-urlencoded' },
    { body: '<xml/>', type: 'application/xml' },
    { body: '{"a":' + '['.repeat(5000) + ']'.repeat(5000) + '}' },
    { body: '{"email": "a@b.c"}', type: 'text/plain' },
    { body: '\u00ff\u00fe{"x":1}' },
  ];

  test('20 malformed bodies per auth endpoint are answered 4xx with { error }, never 5xx', async () => {
    for (const endpoint of endpoints) {
      for (const { body, type } of malformed) {
        const response = await rawRequest(server.url, 'POST', endpoint, { 'content-type': type ?? 'application/json' }, body);
        assert.ok(response.status >= 400 && response.status < 500, `${endpoint} ${body.slice(0, 40)} → ${response.status}`);
        const parsed = JSON.parse(response.body);
        assert.equal(typeof parsed.error, 'string');
        assert.doesNotMatch(response.body, /at .*\.ts:\d+|SQLITE|stack/i);
      }
    }
    assert.equal((await server.request('GET', '/api/health')).status, 200, 'still up');
  });

  test('validation errors carry details with paths', async () => {
    const response = await server.request('POST', '/api/auth/register', { body: { username: 'x', email: 'nope' } });
    assert.equal(response.status, 400);
    assert.ok(Array.isArray(response.body.details));
    assert.ok(response.body.details.every((d: { path: string; message: string }) => typeof d.path === 'string' && typeof d.message === 'string'));
  });

  test('a JSON body over 1 MiB is 413', async () => {
    const big = JSON.stringify({ username: 'a', password: 'b'.repeat(1_100_000) });
    const response = await rawRequest(server.url, 'POST', '/api/auth/login', { 'content-type': 'application/json' }, big);
    assert.equal(response.status, 413);
    assert.equal(typeof JSON.parse(response.body).error, 'string');
  });
});

describe('logs', () => {
  test('one line per request with method, route, status, duration, user and request id; never passwords or tokens', async () => {
    const { user } = await server.createUser();
    const login = await server.request('POST', '/api/auth/login', { body: { username: user.username, password: TEST_PASSWORD } });
    await server.request('POST', '/api/auth/refresh', { body: { refreshToken: login.body.refreshToken } });
    const me = await server.request('GET', '/api/auth/me', { token: login.body.accessToken });
    const requestId = me.headers.get('x-request-id');
    const entries = server.logs.map((line) => JSON.parse(line));
    const line = entries.find((entry) => entry.reqId === requestId);
    assert.ok(line);
    assert.equal(line.method, 'GET');
    assert.equal(line.route, '/api/auth/me');
    assert.equal(line.status, 200);
    assert.equal(line.userId, user.id);
    assert.equal(typeof line.durationMs, 'number');
    const all = server.logs.join('\n');
    for (const secret of [TEST_PASSWORD, login.body.accessToken, login.body.refreshToken]) assert.equal(all.includes(secret), false);
  });
});

describe('server limits', () => {
  test('header, request and keep-alive timeouts are set so slow clients cannot hold the server', () => {
    const http = server.service.server!;
    assert.ok(http.headersTimeout > 0 && http.headersTimeout <= 30_000, `headersTimeout ${http.headersTimeout}`);
    assert.ok(http.requestTimeout > 0, 'requestTimeout set');
    assert.ok(http.keepAliveTimeout > 0 && http.keepAliveTimeout <= 10_000);
  });
});
