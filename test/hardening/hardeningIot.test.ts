// Hardening round 3, the IoT proxy: gateway errors get the service's error shape and a declared status; a read of
// many long point codes in the query string is answered, not 431.
import assert from 'node:assert/strict';
import type http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { ERROR_CODES } from '../../src/platform/errors.ts';
import { startFakeGateway, type FakeGateway } from '../helpers/fakeGateway.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

describe('many long codes in a GET', () => {
  let server: TestServer;
  let token: string;
  before(async () => {
    server = await startTestServer();
    token = (await server.createUser({ role: 'viewer' })).accessToken;
  });
  after(() => server.close());

  for (const count of [130, 500]) {
    test(`${count} codes of 128 characters in the query string are read (was 431 from 130 on)`, async () => {
      const codes = Array.from({ length: count }, (_, i) => `building.floor${String(i).padStart(3, '0')}.${'x'.repeat(128 - 18)}`);
      assert.ok(codes.every((code) => code.length === 128));
      const answer = await server.request('GET', `/api/iot/codes/values?${codes.map((code) => `codes=${code}`).join('&')}`, { token });
      assert.equal(answer.status, 200, answer.text.slice(0, 200));
      assert.deepEqual(
        answer.body.data.map((row: { code: string }) => row.code),
        codes,
      );
    });
  }

  test('the comma form still reads each code', async () => {
    const answer = await server.request('GET', '/api/iot/codes/values?codes=meter.main.kwh,temp.zone1', { token });
    assert.equal(answer.status, 200, answer.text);
    assert.deepEqual(
      answer.body.data.map((row: { code: string }) => row.code),
      ['meter.main.kwh', 'temp.zone1'],
    );
  });
});

describe('gateway errors', () => {
  let fake: FakeGateway;
  let server: TestServer;
  let admin: string;
  let declared: Record<string, string[]>;
  before(async () => {
    fake = await startFakeGateway();
    server = await startTestServer({ EMS_IOT_BASE_URL: fake.url, EMS_IOT_USERNAME: fake.username, EMS_IOT_PASSWORD: fake.password });
    admin = (await server.createUser({ role: 'admin' })).accessToken;
    const doc = (await server.request('GET', '/documentation/json')).body;
    declared = {};
    for (const [path, operations] of Object.entries<any>(doc.paths)) {
      for (const [method, operation] of Object.entries<any>(operations)) declared[`${method.toUpperCase()} ${path}`] = Object.keys(operation.responses);
    }
  });
  after(async () => {
    await server.close();
    await fake.close();
  });

  const operations: Array<[string, string, string, unknown]> = [
    ['POST', '/api/iot/codes/values', '/codes/values', { codes: ['a'] }],
    ['GET', '/api/iot/codes/history?code=a&start=2026-01-01T00:00:00Z&end=2026-01-02T00:00:00Z', '/codes/history', undefined],
    ['POST', '/api/iot/codes/set', '/codes/set', { code: 'a', value: 1 }],
    ['POST', '/api/iot/codes/force-set', '/codes/force-set', { code: 'a', value: 1 }],
    ['GET', '/api/iot/alarms', '/alarms', undefined],
    ['GET', '/api/iot/alarm-configs', '/alarm-configs', undefined],
  ];
  const upstream: Array<[number, string, number]> = [
    [400, '{"success":false,"error":"value out of range"}', 400],
    [422, '{"message":"unprocessable"}', 400],
    [404, '{"error":"unknown point a"}', 404],
    [409, '{"error":"point is locked"}', 409],
    [403, '{"error":"forbidden"}', 502],
    [429, '{"error":"slow down"}', 502],
    [500, '{"error":"NullPointerException","stack":"at Gateway.java:42","code":"E42"}', 502],
    [503, '"maintenance"', 502],
    [500, 'not json at all', 502],
  ];

  for (const [method, path, gatewayPath, body] of operations) {
    test(`${method} ${path.split('?')[0]}: every gateway error is { error, code } with a declared status`, async () => {
      const pattern = `${method} ${path.split('?')[0]}`;
      for (const [status, text, expected] of upstream) {
        fake.script(
          gatewayPath,
          (_request, res: http.ServerResponse) => {
            res.writeHead(status, { 'content-type': 'application/json' });
            res.end(text);
          },
          1,
        );
        const answer = await server.request(method, path, { token: admin, body });
        assert.equal(answer.status, expected, `${pattern} ← ${status} ${text}: ${answer.text}`);
        assert.equal(typeof answer.body.error, 'string', answer.text);
        assert.ok(answer.body.code in ERROR_CODES, answer.text);
        assert.equal(ERROR_CODES[answer.body.code as keyof typeof ERROR_CODES].status, expected);
        assert.doesNotMatch(answer.text, /Gateway\.java/);
        assert.ok(declared[pattern].includes(String(expected)), `${pattern} does not declare ${expected}: ${declared[pattern]}`);
      }
    });
  }

  test("the gateway's own message and fields are kept; a 5xx names the gateway's status", async () => {
    fake.script(
      '/codes/set',
      (_request, res: http.ServerResponse) => {
        res.writeHead(503, { 'content-type': 'application/json' });
        res.end('{"error":"maintenance window","retryInMin":5}');
      },
      1,
    );
    const answer = await server.request('POST', '/api/iot/codes/set', { token: admin, body: { code: 'a', value: 1 } });
    assert.deepEqual([answer.status, answer.body], [502, { error: 'maintenance window', retryInMin: 5, code: 'BAD_GATEWAY', gatewayStatus: 503 }]);
  });
});
