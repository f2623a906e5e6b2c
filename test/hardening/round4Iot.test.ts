// Issue 39 #9: the IoT read proxies send the gateway only the validated fields of the query, never the client's raw
// query string; a gateway refusal without a JSON body (a Node server's 431) is relayed as a refusal, 502 with the
// gateway's status, and does not mark the gateway unreachable in the public /api/health.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type BadGateway, startBadGateway } from '../helpers/badGateway.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

describe('IoT read proxies and a misbehaving gateway', () => {
  let gateway: BadGateway;
  let server: TestServer;
  let token: string;
  before(async () => {
    gateway = await startBadGateway();
    server = await startTestServer({ EMS_IOT_BASE_URL: gateway.url, EMS_IOT_USERNAME: gateway.username, EMS_IOT_PASSWORD: gateway.password });
    token = (await server.createUser({ role: 'viewer' })).accessToken;
  });
  after(async () => {
    await server.close();
    await gateway.close();
  });
  const health = async () => (await server.request('GET', '/api/health')).body;

  test('an unknown or over-long parameter is not forwarded; the declared ones are, as validated', async () => {
    const answer = await server.request('GET', `/api/iot/alarms?x=${'a'.repeat(20_000)}&pageSize=5&start=2026-01-01T00:00:00Z&page=2`, { token });
    assert.equal(answer.status, 200, answer.text.slice(0, 300));
    const sent = gateway.requested.filter((line) => line.startsWith('/alarms'));
    assert.deepEqual(sent, ['/alarms?start=2026-01-01T00:00:00Z&page=2&pageSize=5']);
  });

  test('a gateway 431 with an empty body is a 502 naming that status, and /api/health keeps the gateway reachable', async () => {
    assert.equal((await health()).iot.gateway, 'reachable', JSON.stringify(await health()));
    gateway.bareStatus = 431;
    try {
      for (const path of [
        '/api/iot/alarms',
        '/api/iot/alarm-configs',
        '/api/iot/codes/history?code=temp.zone1&start=2026-01-01T00:00:00Z&end=2026-01-02T00:00:00Z',
      ]) {
        const answer = await server.request('GET', path, { token });
        assert.equal(answer.status, 502, `${path}: ${answer.text}`);
        assert.equal(answer.body.code, 'BAD_GATEWAY');
        assert.equal(answer.body.gatewayStatus, 431, answer.text);
      }
      const after = await health();
      assert.equal(after.iot.gateway, 'reachable', JSON.stringify(after));
      assert.ok(!server.logs.some((line) => line.includes('IoT gateway unreachable')));
    } finally {
      gateway.bareStatus = null;
    }
  });
});
