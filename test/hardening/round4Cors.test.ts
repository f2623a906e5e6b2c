// Issue 39 "Also": EMS_PORTAL_ORIGIN takes a comma-separated list of dashboard origins (CORS for each), and a
// preflight from any other origin gets a CORS answer (403 without Access-Control-Allow-Origin), not "405 OPTIONS".
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/platform/config.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const DEV = 'http://localhost:5173';
const PROD = 'https://dashboard.example.test';

describe('EMS_PORTAL_ORIGIN as a list', () => {
  test('is read as origins, the first also the one mail links use; a bad item names the variable', () => {
    const config = loadConfig({ EMS_PORTAL_ORIGIN: `${PROD}/, ${DEV}` });
    assert.deepEqual(config.portalOrigins, [PROD, DEV]);
    assert.equal(config.portalOrigin, PROD);
    assert.deepEqual(loadConfig({}).portalOrigins, []);
    for (const bad of [`${PROD},`, `${PROD},https://x.example/path`, 'not a url'])
      assert.throws(
        () => loadConfig({ EMS_PORTAL_ORIGIN: bad }),
        (error: Error) => error instanceof ConfigError && /^EMS_PORTAL_ORIGIN: /.test(error.message),
        bad,
      );
  });
});

describe('CORS with two dashboard origins', () => {
  let server: TestServer;
  let plain: TestServer;
  before(async () => {
    [server, plain] = await Promise.all([startTestServer({ EMS_PORTAL_ORIGIN: `${PROD},${DEV}` }), startTestServer()]);
  });
  after(async () => {
    await Promise.all([server.close(), plain.close()]);
  });
  const preflight = (on: TestServer, origin: string) =>
    fetch(`${on.url}/api/alerts`, {
      method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
    });

  test('a preflight from either listed origin is allowed for that origin', async () => {
    for (const origin of [PROD, DEV]) {
      const answer = await preflight(server, origin);
      assert.equal(answer.status, 204, origin);
      assert.equal(answer.headers.get('access-control-allow-origin'), origin);
      assert.match(answer.headers.get('access-control-allow-headers') ?? '', /Authorization/);
      assert.match(answer.headers.get('vary') ?? '', /Origin/);
    }
    const read = await fetch(`${server.url}/api/health`, { headers: { origin: DEV } });
    assert.equal(read.headers.get('access-control-allow-origin'), DEV);
  });

  test('a preflight from another origin, or with no origin configured, is a CORS refusal: 403, no Allow-Origin (was 405)', async () => {
    for (const [on, origin] of [
      [server, 'https://evil.example.test'],
      [server, 'null'],
      [plain, DEV],
    ] as const) {
      const answer = await preflight(on, origin);
      assert.equal(answer.status, 403, origin);
      assert.equal(answer.headers.get('access-control-allow-origin'), null);
      const body = await answer.json();
      assert.equal(body.code, 'FORBIDDEN');
      assert.match(body.error, /^CORS: the origin .* is not allowed/);
    }
    // Not a preflight (no Access-Control-Request-Method): the route answers as before, without CORS headers.
    const read = await fetch(`${server.url}/api/health`, { headers: { origin: 'https://evil.example.test' } });
    assert.equal(read.status, 200);
    assert.equal(read.headers.get('access-control-allow-origin'), null);
  });
});
