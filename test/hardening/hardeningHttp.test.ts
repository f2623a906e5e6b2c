// Hardening round 3, the HTTP layer: compressed JSON bodies, huge pages, impossible calendar dates, the Bearer scheme's
// case, and no-store on credential answers.
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let admin: Awaited<ReturnType<TestServer['createUser']>>;
before(async () => {
  server = await startTestServer();
  admin = await server.createUser({ role: 'admin' });
});
after(() => server.close());

const errorLines = () => server.logs.filter((line) => JSON.parse(line).level >= 50);

describe('Content-Encoding on a JSON body', () => {
  const login = (body: Buffer | string, encoding: string) =>
    server.request('POST', '/api/auth/login', { raw: body, headers: { 'content-type': 'application/json', 'content-encoding': encoding } });
  const json = JSON.stringify({ username: admin?.user.username ?? 'x', password: 'not-the-password' });

  test('gzip, deflate and br bodies are decoded and answered like plain ones', async () => {
    const before = errorLines().length;
    for (const [encoding, packed] of [
      ['gzip', zlib.gzipSync(json)],
      ['deflate', zlib.deflateSync(json)],
      ['br', zlib.brotliCompressSync(json)],
      ['GZip', zlib.gzipSync(json)],
    ] as const) {
      const answer = await login(packed, encoding);
      assert.equal(answer.status, 401, `${encoding}: ${answer.text}`);
      assert.equal(answer.body.code, 'UNAUTHENTICATED');
    }
    const signedIn = await server.request('POST', '/api/auth/login', {
      raw: zlib.gzipSync(JSON.stringify({ username: admin.user.username, password: admin.password })),
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
    });
    assert.equal(signedIn.status, 200, signedIn.text);
    assert.equal(errorLines().length, before);
  });

  test('a plain body declared as gzip, deflate or br is 400 with a clear error and no error log line', async () => {
    const before = errorLines().length;
    for (const encoding of ['gzip', 'deflate', 'br']) {
      const answer = await login(json, encoding);
      assert.equal(answer.status, 400, `${encoding}: ${answer.text}`);
      assert.equal(answer.body.code, 'VALIDATION');
      assert.match(answer.body.error, new RegExp(`not valid ${encoding}`));
    }
    assert.equal(errorLines().length, before, 'anonymous input wrote an error line');
  });

  test('an unknown encoding is 415; a body inflating past 1 MiB is 413', async () => {
    const unknown = await login(json, 'compress');
    assert.equal(unknown.status, 415, unknown.text);
    assert.equal(unknown.body.code, 'UNSUPPORTED_MEDIA_TYPE');
    const bomb = zlib.gzipSync(`{"username":"${'a'.repeat(2 * 1024 * 1024)}","password":"x"}`);
    assert.ok(bomb.length < 10_000);
    const answer = await login(bomb, 'gzip');
    assert.equal(answer.status, 413, answer.text);
  });
});

describe('pages', () => {
  const listRoutes = async (): Promise<string[]> => {
    const doc = (await server.request('GET', '/documentation/json')).body;
    const paths: string[] = [];
    for (const [path, operations] of Object.entries<any>(doc.paths)) {
      const get = operations.get;
      if (get?.parameters?.some((parameter: any) => parameter.in === 'query' && parameter.name === 'page'))
        paths.push(path.replace('{id}', String(admin.user.id)));
    }
    return paths;
  };

  test('a 401-digit page and a huge pageSize are 400 on every list route', async () => {
    const paths = await listRoutes();
    assert.ok(paths.length >= 12, `only ${paths.length} list routes found: ${paths}`);
    assert.ok(paths.includes(`/api/users/${admin.user.id}/oauth-links`));
    for (const path of paths) {
      for (const query of [`page=${'9'.repeat(401)}`, 'page=99999999999999999', `pageSize=${'9'.repeat(40)}`]) {
        const answer = await server.request('GET', `${path}?${query}`, { token: admin.accessToken });
        assert.equal(answer.status, 400, `${path}?${query.slice(0, 20)}: ${answer.status} ${answer.text.slice(0, 200)}`);
        assert.equal(answer.body.code, 'VALIDATION');
      }
    }
  });

  test('the last allowed page still answers (an empty page, the page echoed)', async () => {
    const answer = await server.request('GET', `/api/users/${admin.user.id}/oauth-links?page=1000000&pageSize=200`, { token: admin.accessToken });
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.body.page, 1_000_000);
    assert.deepEqual(answer.body.items, []);
  });
});

describe('calendar dates', () => {
  for (const value of [
    '2026-02-30T10:00:00Z',
    '2026-02-29T10:00:00Z',
    '2026-04-31T10:00:00Z',
    '2026-01-01T24:00:00Z',
    '2026-01-01T10:60:00Z',
    '2026-01-01T10:00:00+24:00',
    '2025-02-29',
  ]) {
    test(`${value} is refused with 400 in a query and a body`, async () => {
      const query = await server.request('GET', `/api/alerts?from=${encodeURIComponent(value)}`, { token: admin.accessToken });
      assert.equal(query.status, 400, query.text);
      assert.equal(query.body.details[0].path, 'query.from');
      if (value.includes('T')) {
        const body = await server.request('POST', '/api/alerts', { token: admin.accessToken, body: { title: 't', level: 'info', occurredAt: value } });
        assert.equal(body.status, 400, body.text);
        assert.equal(body.body.details[0].path, 'body.occurredAt');
      }
    });
  }

  test('real days still pass: a leap day, the last second of a day, a far offset', async () => {
    for (const value of ['2028-02-29T10:00:00Z', '2026-12-31T23:59:59.999Z', '2026-01-31T00:00:00-12:00', '2000-02-29']) {
      const answer = await server.request('GET', `/api/alerts?from=${encodeURIComponent(value)}`, { token: admin.accessToken });
      assert.equal(answer.status, 200, `${value}: ${answer.text}`);
    }
  });
});

describe('the Authorization header', () => {
  test('the Bearer scheme matches case-insensitively (RFC 7235)', async () => {
    for (const scheme of ['bearer', 'BEARER', 'Bearer', 'bEaReR']) {
      const answer = await server.request('GET', '/api/auth/me', { headers: { authorization: `${scheme} ${admin.accessToken}` } });
      assert.equal(answer.status, 200, `${scheme}: ${answer.text}`);
    }
    const other = await server.request('GET', '/api/auth/me', { headers: { authorization: `Basic ${admin.accessToken}` } });
    assert.equal(other.status, 401);
  });
});

describe('credential answers', () => {
  test('sign-in, refresh, me and a failed sign-in carry Cache-Control: no-store', async () => {
    const user = await server.createUser();
    const login = await server.request('POST', '/api/auth/login', { body: { username: user.user.username, password: user.password } });
    assert.equal(login.status, 200);
    const refreshed = await server.request('POST', '/api/auth/refresh', { body: { refreshToken: login.body.refreshToken } });
    assert.equal(refreshed.status, 200);
    const me = await server.request('GET', '/api/auth/me', { token: login.body.accessToken });
    const failed = await server.request('POST', '/api/auth/login', { body: { username: user.user.username, password: 'wrong-password-1' } });
    assert.equal(failed.status, 401);
    for (const answer of [login, refreshed, me, failed]) {
      assert.equal(answer.headers.get('cache-control'), 'no-store');
      assert.equal(answer.headers.get('pragma'), 'no-cache');
    }
    const token = await server.request('GET', '/api/iot/token', { token: admin.accessToken });
    assert.equal(token.headers.get('cache-control'), 'no-store');
  });
});
