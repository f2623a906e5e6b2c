// /api/iot: the proxy against the built-in simulator and against a scripted gateway (tokens, 401s, hangs, garbage, deaths).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { test, type TestContext } from 'node:test';
import { packageRoot } from '../../src/platform/packageRoot.ts';
import { startGatewaySimulator } from '../../src/gateway/simulator/server.ts';
import { startFakeGateway, type FakeGateway } from '../helpers/fakeGateway.ts';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.ts';

async function serverWithSimulator(t: TestContext): Promise<TestServer> {
  const server = await startTestServer();
  t.after(() => server.close());
  return server;
}

async function serverWithFake(
  t: TestContext,
  env: Record<string, string> = {},
  fakeOptions: Parameters<typeof startFakeGateway>[0] = {},
): Promise<{ server: TestServer; fake: FakeGateway }> {
  const fake = await startFakeGateway(fakeOptions);
  const server = await startTestServer({ EMS_IOT_BASE_URL: fake.url, EMS_IOT_USERNAME: fake.username, EMS_IOT_PASSWORD: fake.password, ...env });
  t.after(async () => {
    await server.close();
    await fake.close();
  });
  return { server, fake };
}

async function gatewayToken(baseUrl: string, username = 'ems', password = 'ems-simulator'): Promise<string> {
  const response = await fetch(`${baseUrl}/auth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username, password }),
  });
  assert.equal(response.status, 200);
  return ((await response.json()) as { token: string }).token;
}

/** A request with the path sent byte for byte (fetch would normalise `..` and friends). */
function rawRequest(url: string, method: string, rawPath: string, token: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const { hostname, port } = new URL(url);
    const req = http.request(
      { host: hostname, port, method, path: rawPath, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end(method === 'POST' ? JSON.stringify({ codes: ['a'] }) : undefined);
  });
}

type AuditRow = { username: string; action: string; resource: string; resource_id: string; after: string };
function auditRows(server: TestServer, action: string): AuditRow[] {
  return server.service.deps.db.sqlite
    .prepare('SELECT username, action, resource, resource_id, after FROM audit_log WHERE action = ? ORDER BY id')
    .all(action) as AuditRow[];
}

test('against the simulator over real HTTP: values, history, alarms and configs come back as the simulator sent them; a setpoint write reads back', async (t) => {
  const server = await serverWithSimulator(t);
  const { accessToken: viewer } = await server.createUser({ role: 'viewer' });
  const { accessToken: operator } = await server.createUser({ role: 'operator' });
  const simUrl = server.service.deps.iot.baseUrl;
  assert.match(simUrl, /^http:\/\/127\.0\.0\.1:\d+$/);
  const direct = await gatewayToken(simUrl);
  const directGet = (p: string) => fetch(simUrl + p, { headers: { authorization: `Bearer ${direct}` } });

  const configs = await server.request('GET', '/api/iot/alarm-configs', { token: viewer });
  assert.equal(configs.status, 200);
  assert.equal(configs.headers.get('content-type'), 'application/json; charset=utf-8');
  assert.equal(configs.text, await (await directGet('/alarm-configs')).text());

  const alarms = await server.request('GET', '/api/iot/alarms?page=1&pageSize=2', { token: viewer });
  assert.equal(alarms.status, 200);
  assert.deepEqual(alarms.body, await (await directGet('/alarms?page=1&pageSize=2')).json());
  assert.equal(alarms.body.data.length, 2);
  assert.ok(alarms.body.total >= 4);

  const first = await server.request('POST', '/api/iot/codes/values', { token: viewer, body: { codes: ['meter.main.kwh', 'temp.zone1', 'no.such.point'] } });
  assert.equal(first.status, 200);
  const [meter, zone, unknown] = first.body.data;
  assert.equal(meter.code, 'meter.main.kwh');
  assert.equal(meter.quality, 'good');
  assert.ok(meter.value > 0);
  assert.ok(zone.value > 10 && zone.value < 35, `zone temperature ${zone.value}`);
  assert.deepEqual([unknown.value, unknown.quality], [null, 'bad']);
  const again = await server.request('GET', '/api/iot/codes/values?codes=meter.main.kwh', { token: viewer });
  assert.equal(again.status, 200);
  assert.ok(again.body.data[0].value >= meter.value, 'an energy counter never goes down');

  const end = new Date();
  const start = new Date(end.getTime() - 6 * 3600_000);
  const history = await server.request('POST', '/api/iot/codes/history', {
    token: viewer,
    body: { code: 'meter.main.kwh', start: start.toISOString(), end: end.toISOString() },
  });
  assert.equal(history.status, 200);
  assert.ok(history.body.data.length >= 60);
  for (let i = 1; i < history.body.data.length; i++) assert.ok(history.body.data[i].value >= history.body.data[i - 1].value);

  const set = await server.request('POST', '/api/iot/codes/set', { token: operator, body: { code: 'sp.zone2', value: 24.5 } });
  assert.deepEqual([set.status, set.body], [200, { success: true }]);
  const readBack = await server.request('POST', '/api/iot/codes/values', { token: viewer, body: { codes: ['sp.zone2'] } });
  assert.equal(readBack.body.data[0].value, 24.5);

  // The gateway's refusal keeps its status and body.
  const outOfRange = await server.request('POST', '/api/iot/codes/set', { token: operator, body: { code: 'sp.zone2', value: 40 } });
  assert.equal(outOfRange.status, 400);
  assert.equal(outOfRange.body.success, false);
  assert.equal(outOfRange.body.code, 'VALIDATION');
  assert.match(outOfRange.body.error, /16 to 28/);
});

test('force-set (admin) holds any simulator point at a value, raises an alarm, and null releases it', async (t) => {
  const server = await serverWithSimulator(t);
  const { accessToken: admin } = await server.createUser({ role: 'admin' });
  const read = async () => (await server.request('POST', '/api/iot/codes/values', { token: admin, body: { codes: ['temp.serverroom'] } })).body.data[0];

  const forced = await server.request('POST', '/api/iot/codes/force-set', { token: admin, body: { code: 'temp.serverroom', value: 29.5 } });
  assert.deepEqual([forced.status, forced.body], [200, { success: true }]);
  assert.deepEqual([(await read()).value, (await read()).quality], [29.5, 'forced']);
  const alarms = await server.request('GET', '/api/iot/alarms?pageSize=1', { token: admin });
  assert.match(alarms.body.data[0].message, /temp\.serverroom forced to 29\.5/);

  const released = await server.request('POST', '/api/iot/codes/force-set', { token: admin, body: { code: 'temp.serverroom', value: null } });
  assert.equal(released.status, 200);
  assert.equal((await read()).quality, 'good');
  // A plain set may not touch a measured value, and null is no value for it.
  assert.equal((await server.request('POST', '/api/iot/codes/set', { token: admin, body: { code: 'sp.zone1', value: null } })).status, 400);
});

test('GET /iot/token (admin) shows the token the service holds, and the gateway accepts it', async (t) => {
  const server = await serverWithSimulator(t);
  const { accessToken: admin } = await server.createUser({ role: 'admin' });
  const response = await server.request('GET', '/api/iot/token', { token: admin });
  assert.equal(response.status, 200);
  assert.ok(Date.parse(response.body.expiresAt) > Date.now());
  assert.ok(Date.parse(response.body.refreshedAt) <= Date.now());
  const direct = await fetch(`${server.service.deps.iot.baseUrl}/alarm-configs`, { headers: { authorization: `Bearer ${response.body.token}` } });
  assert.equal(direct.status, 200);
  const row = server.service.deps.db.sqlite.prepare('SELECT token FROM iot_gateway_token WHERE id = 1').get() as { token: string };
  assert.equal(row.token, response.body.token);
});

test('the simulator checks its own tokens: missing, unknown and expired tokens are 401, wrong credentials get none', async (t) => {
  let clock = Date.UTC(2025, 0, 15, 9);
  const simulator = await startGatewaySimulator({ tokenTtlSec: 60, now: () => clock });
  t.after(() => simulator.close());
  const values = (token?: string) =>
    fetch(`${simulator.url}/codes/values`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify({ codes: ['temp.outdoor'] }),
    });

  const refused = await fetch(`${simulator.url}/auth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'ems', password: 'wrong' }),
  });
  assert.equal(refused.status, 401);
  assert.equal((await values()).status, 401);
  assert.equal((await values('made-up')).status, 401);
  const token = await gatewayToken(simulator.url);
  const ok = await values(token);
  assert.equal(ok.status, 200);
  assert.equal(((await ok.json()) as { data: Array<{ ts: string }> }).data[0].ts, new Date(clock).toISOString());
  clock += 61_000;
  assert.equal((await values(token)).status, 401);
});

test('relays the gateway status and body byte for byte, fields outside the contract included, and forwards the validated query fields', async (t) => {
  const { server, fake } = await serverWithFake(t);
  const { accessToken: viewer } = await server.createUser({ role: 'viewer' });

  const values = await server.request('POST', '/api/iot/codes/values', { token: viewer, body: { codes: ['a.b', 'c'] } });
  assert.equal(values.status, 200);
  assert.equal(
    values.text,
    JSON.stringify({
      data: [
        { code: 'a.b', value: 42.5, quality: 'good', ts: '2024-05-01T12:00:00.000Z' },
        { code: 'c', value: 42.5, quality: 'good', ts: '2024-05-01T12:00:00.000Z' },
      ],
      vendor: 'fake-gateway',
    }),
  );
  assert.deepEqual(fake.calls('/codes/values')[0].body, { codes: ['a.b', 'c'] });

  const odd = '{ "data" : [ ],\n  "note": "spacing kept" }';
  fake.script('/codes/history', (_request, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(odd);
  });
  const history = await server.request('GET', '/api/iot/codes/history?code=x&start=2024-05-01T00:00:00Z&end=2024-05-02T00:00:00Z', { token: viewer });
  assert.deepEqual([history.status, history.text], [200, odd]);
  assert.deepEqual(Object.fromEntries(new URLSearchParams(fake.calls('/codes/history')[0].query)), {
    code: 'x',
    start: '2024-05-01T00:00:00Z',
    end: '2024-05-02T00:00:00Z',
  });

  fake.script('/alarm-configs', (_request, res) => {
    res.writeHead(503, { 'content-type': 'application/json' });
    res.end('{"error":"maintenance window","retryInMin":5}');
  });
  const unavailable = await server.request('GET', '/api/iot/alarm-configs', { token: viewer });
  // A gateway error gets the service's error shape and a declared status (test/hardening/hardeningIot.test.ts).
  assert.deepEqual([unavailable.status, unavailable.body], [502, { error: 'maintenance window', retryInMin: 5, code: 'BAD_GATEWAY', gatewayStatus: 503 }]);

  // An error body carrying the gateway's stack trace is relayed without it: no body of this service carries a stack.
  fake.script('/alarm-configs', (_request, res) => {
    res.writeHead(500, { 'content-type': 'application/json' });
    res.end('{"error":"NullPointerException","stack":"at com.vendor.Gateway.read(Gateway.java:42)","trace":["x"]}');
  });
  const crashed = await server.request('GET', '/api/iot/alarm-configs', { token: viewer });
  assert.deepEqual([crashed.status, crashed.body], [502, { error: 'NullPointerException', code: 'BAD_GATEWAY', gatewayStatus: 500 }]);
  assert.doesNotMatch(crashed.text, /Gateway\.java/);

  const alarms = await server.request('GET', '/api/iot/alarms?start=2024-05-01T00:00:00.000Z&page=2&pageSize=5', { token: viewer });
  assert.equal(alarms.status, 200);
  assert.equal(alarms.body.receivedQuery, 'start=2024-05-01T00:00:00.000Z&page=2&pageSize=5');
});

test("never forwards the client's Authorization, Cookie or X-Forwarded-* headers; the gateway sees only the service's token", async (t) => {
  const { server, fake } = await serverWithFake(t);
  const { accessToken: operator } = await server.createUser({ role: 'operator' });
  const headers = {
    cookie: 'session=abc',
    'x-forwarded-for': '10.9.9.9',
    'x-forwarded-host': 'evil.example',
    'x-forwarded-proto': 'https',
    'x-forwarded-prefix': '/admin',
    'x-real-ip': '10.9.9.9',
  };
  assert.equal((await server.request('POST', '/api/iot/codes/values', { token: operator, headers, body: { codes: ['a'] } })).status, 200);
  assert.equal((await server.request('GET', '/api/iot/alarms', { token: operator, headers })).status, 200);
  assert.equal((await server.request('POST', '/api/iot/codes/set', { token: operator, headers, body: { code: 'sp', value: 1 } })).status, 200);

  const upstream = fake.requests.filter((request) => request.path !== '/auth/token');
  assert.equal(upstream.length, 3);
  for (const request of upstream) {
    assert.equal(request.headers.authorization, 'Bearer tok-1');
    assert.ok(!request.headers.authorization?.includes(operator));
    for (const name of Object.keys(request.headers)) {
      assert.ok(!['cookie', 'x-real-ip'].includes(name) && !name.startsWith('x-forwarded'), `forwarded ${name}`);
    }
  }
});

test('malformed input is refused with 400 before anything goes upstream', async (t) => {
  const { server, fake } = await serverWithFake(t);
  const { accessToken: admin } = await server.createUser({ role: 'admin' });
  const cases: Array<[string, string, unknown?]> = [
    ['POST', '/api/iot/codes/values', { codes: 'meter.main.kwh' }],
    ['POST', '/api/iot/codes/values', { codes: [] }],
    ['POST', '/api/iot/codes/values', { codes: [''] }],
    ['POST', '/api/iot/codes/values', {}],
    ['GET', '/api/iot/codes/values'],
    ['POST', '/api/iot/codes/history', { code: 'x', start: '2024-05-01T00:00:00Z' }],
    ['POST', '/api/iot/codes/history', { code: 'x', start: 'yesterday', end: '2024-05-01T00:00:00Z' }],
    ['GET', '/api/iot/codes/history?code=x'],
    ['POST', '/api/iot/codes/set', { code: 'sp.zone1' }],
    ['POST', '/api/iot/codes/set', { code: 'sp.zone1', value: { nested: 1 } }],
    ['POST', '/api/iot/codes/force-set', { value: 3 }],
    ['GET', '/api/iot/alarms?pageSize=500'],
    ['GET', '/api/iot/alarms?page=0'],
    ['GET', '/api/iot/alarms?start=not-a-time'],
  ];
  for (const [method, url, body] of cases) {
    const response = await server.request(method, url, { token: admin, body });
    assert.equal(response.status, 400, `${method} ${url} ${JSON.stringify(body)}`);
    assert.equal(typeof response.body.error, 'string');
    assert.ok(Array.isArray(response.body.details));
  }
  const garbage = await server.request('POST', '/api/iot/codes/set', {
    token: admin,
    raw: '{"code": "sp.zone1", "value": ',
    headers: { 'content-type': 'application/json' },
  });
  assert.equal(garbage.status, 400);
  assert.equal(fake.requests.length, 0);
});

test('role refusals happen before any upstream call: viewer reads only, operator sets, admin force-sets and sees the token', async (t) => {
  const { server, fake } = await serverWithFake(t);
  const viewer = (await server.createUser({ role: 'viewer' })).accessToken;
  const operator = (await server.createUser({ role: 'operator' })).accessToken;
  const write = { code: 'sp.zone1', value: 22 };
  const refusals: Array<[string | undefined, string, string, unknown?, number?]> = [
    [undefined, 'POST', '/api/iot/codes/values', { codes: ['a'] }, 401],
    [undefined, 'GET', '/api/iot/alarms', undefined, 401],
    [undefined, 'GET', '/api/iot/token', undefined, 401],
    [viewer, 'POST', '/api/iot/codes/set', write],
    [viewer, 'POST', '/api/iot/codes/force-set', write],
    [viewer, 'GET', '/api/iot/token'],
    [operator, 'POST', '/api/iot/codes/force-set', write],
    [operator, 'GET', '/api/iot/token'],
  ];
  for (const [token, method, url, body, status = 403] of refusals) {
    const response = await server.request(method, url, { token, body });
    assert.equal(response.status, status, `${method} ${url}`);
    assert.equal(typeof response.body.error, 'string');
  }
  assert.equal(fake.requests.length, 0);
  assert.equal(auditRows(server, 'iot.codes.set').length + auditRows(server, 'iot.codes.force-set').length, 0);
});

test('paths with .., encoded slashes or undocumented names never reach the gateway', async (t) => {
  const { server, fake } = await serverWithFake(t);
  const { accessToken: admin } = await server.createUser({ role: 'admin' });
  for (const [method, rawPath] of [
    ['POST', '/api/iot/codes%2Fvalues'],
    ['POST', '/api/iot/codes/%2e%2e/codes/values'],
    ['POST', '/api/iot/x/../codes/values'],
    ['GET', '/api/iot/codes/values/..%2F..%2Fauth%2Ftoken'],
    ['GET', '/api/iot/auth/token'],
    ['GET', '/api/iot/admin/reboot'],
    ['GET', '/api/iot/alarms%5C..%5Cadmin'],
  ] as const) {
    const response = await rawRequest(server.url, method, rawPath, admin);
    assert.equal(response.status, 404, `${method} ${rawPath}: ${response.body}`);
  }
  assert.equal(fake.requests.length, 0);
});

test('20 concurrent calls after the token expired share one token request', async (t) => {
  const { server, fake } = await serverWithFake(t, {}, { expiresIn: 1 });
  const { accessToken: viewer } = await server.createUser({ role: 'viewer' });
  assert.equal((await server.request('GET', '/api/iot/alarm-configs', { token: viewer })).status, 200);
  assert.equal(fake.tokenRequests(), 1);
  fake.expiresIn = 3600;
  await new Promise((resolve) => setTimeout(resolve, 1100));

  const answers = await Promise.all(
    Array.from({ length: 20 }, (_, i) => server.request('POST', '/api/iot/codes/values', { token: viewer, body: { codes: [`p${i}`] } })),
  );
  assert.deepEqual(
    answers.map((answer) => answer.status),
    Array(20).fill(200),
  );
  assert.equal(fake.tokenRequests(), 2);
  // Renewed before use: the gateway never had to refuse an expired token.
  assert.deepEqual(
    fake.calls('/codes/values').map((request) => request.token),
    Array(20).fill('tok-2'),
  );
});

test('20 concurrent calls that all meet a 401 share one refresh, then each is retried once', async (t) => {
  const { server, fake } = await serverWithFake(t);
  const { accessToken: viewer } = await server.createUser({ role: 'viewer' });
  assert.equal((await server.request('GET', '/api/iot/alarm-configs', { token: viewer })).status, 200);
  fake.revokeTokens();

  const answers = await Promise.all(Array.from({ length: 20 }, () => server.request('GET', '/api/iot/alarm-configs', { token: viewer })));
  assert.deepEqual(
    answers.map((answer) => answer.status),
    Array(20).fill(200),
  );
  assert.equal(fake.tokenRequests(), 2);
  // Calls that left before the refresh met a 401 and went once more; later ones used the new token at once.
  const calls = fake.calls('/alarm-configs').slice(1);
  const rejected = calls.filter((request) => request.token === 'tok-1').length;
  assert.ok(rejected >= 1);
  assert.equal(calls.filter((request) => request.token === 'tok-2').length, 20);
  assert.equal(calls.length, rejected + 20);
});

test('the gateway token row is reused across restarts', async (t) => {
  const fake = await startFakeGateway();
  t.after(() => fake.close());
  const dataDir = tempDir();
  const env = { EMS_DATA_DIR: dataDir, EMS_IOT_BASE_URL: fake.url, EMS_IOT_USERNAME: fake.username, EMS_IOT_PASSWORD: fake.password };

  const first = await startTestServer(env);
  const { accessToken } = await first.createUser({ role: 'viewer' });
  assert.equal((await first.request('GET', '/api/iot/alarm-configs', { token: accessToken })).status, 200);
  await first.service.close();

  const second = await startTestServer(env);
  t.after(() => second.close());
  assert.equal((await second.request('GET', '/api/iot/alarm-configs', { token: accessToken })).status, 200);
  assert.equal(fake.tokenRequests(), 1);
  assert.deepEqual(
    fake.calls('/alarm-configs').map((request) => request.token),
    ['tok-1', 'tok-1'],
  );
  const health = await second.request('GET', '/api/health');
  assert.equal(typeof health.body.iot.tokenAgeSec, 'number');
  assert.ok(health.body.iot.tokenExpiresInSec > 3500);
});

test('a write that meets a 401 is executed exactly once after the refresh, logged and audited with the answer', async (t) => {
  const { server, fake } = await serverWithFake(t);
  const { accessToken: operator, user } = await server.createUser({ role: 'operator' });
  assert.equal((await server.request('GET', '/api/iot/alarm-configs', { token: operator })).status, 200);
  fake.revokeTokens();

  const response = await server.request('POST', '/api/iot/codes/set', { token: operator, body: { code: 'sp.zone1', value: 23.5 } });
  assert.deepEqual([response.status, response.body], [200, { success: true }]);
  assert.deepEqual(
    fake.calls('/codes/set').map((request) => request.token),
    ['tok-1', 'tok-2'],
  );
  assert.equal(fake.executedWrites.length, 1);
  assert.deepEqual(fake.executedWrites[0].body, { code: 'sp.zone1', value: 23.5 });

  const [row] = auditRows(server, 'iot.codes.set');
  assert.deepEqual([row.username, row.resource, row.resource_id], [user.username, 'iot_point', 'sp.zone1']);
  assert.deepEqual(JSON.parse(row.after), { value: 23.5, status: 200, answer: { success: true } });
  const logged = server.logs.map((line) => JSON.parse(line)).find((entry) => entry.msg === 'IoT point write');
  assert.deepEqual([logged.username, logged.code, logged.value, logged.status], [user.username, 'sp.zone1', 23.5, 200]);
  assert.ok(
    !server.logs.some((line) => line.includes('tok-1') || line.includes('tok-2') || line.includes(fake.password)),
    'no gateway token or password in the logs',
  );
});

test("a 401 that survives the refresh is a 502 naming the service's credentials, for reads and writes, each sent only twice", async (t) => {
  const { server, fake } = await serverWithFake(t);
  const { accessToken: admin } = await server.createUser({ role: 'admin' });
  fake.script('/codes/values', 'unauthorized');
  fake.script('/codes/force-set', 'unauthorized');

  const read = await server.request('POST', '/api/iot/codes/values', { token: admin, body: { codes: ['a'] } });
  assert.deepEqual([read.status, read.body], [502, { error: 'gateway rejected the service credentials', code: 'BAD_GATEWAY' }]);
  assert.equal(fake.calls('/codes/values').length, 2);
  assert.equal(fake.tokenRequests(), 2);

  const write = await server.request('POST', '/api/iot/codes/force-set', { token: admin, body: { code: 'temp.zone1', value: 19 } });
  assert.deepEqual([write.status, write.body], [502, { error: 'gateway rejected the service credentials', code: 'BAD_GATEWAY' }]);
  assert.equal(fake.calls('/codes/force-set').length, 2);
  assert.equal(fake.executedWrites.length, 0);
  const [row] = auditRows(server, 'iot.codes.force-set');
  assert.deepEqual(JSON.parse(row.after), { value: 19, status: 502, error: 'gateway rejected the service credentials' });
});

test('wrong service credentials: the token request is refused and the caller gets the same 502', async (t) => {
  const { server, fake } = await serverWithFake(t, { EMS_IOT_PASSWORD: 'not-the-password' });
  const { accessToken: viewer } = await server.createUser({ role: 'viewer' });
  const response = await server.request('GET', '/api/iot/alarm-configs', { token: viewer });
  assert.deepEqual([response.status, response.body], [502, { error: 'gateway rejected the service credentials', code: 'BAD_GATEWAY' }]);
  assert.equal(fake.calls('/alarm-configs').length, 0);
});

test('a gateway that hangs is a 504, and a hanging write is sent once and never retried', async (t) => {
  const { server, fake } = await serverWithFake(t, { EMS_IOT_TIMEOUT_MS: '300' });
  const { accessToken: operator } = await server.createUser({ role: 'operator' });
  fake.script('/codes/values', 'hang', 1);
  fake.script('/codes/set', 'hang', 1);

  const read = await server.request('POST', '/api/iot/codes/values', { token: operator, body: { codes: ['a'] } });
  assert.deepEqual([read.status, read.body], [504, { error: 'IoT gateway did not answer within 300 ms', code: 'GATEWAY_TIMEOUT' }]);
  const write = await server.request('POST', '/api/iot/codes/set', { token: operator, body: { code: 'sp.zone1', value: 21 } });
  assert.equal(write.status, 504);
  assert.equal(typeof write.body.error, 'string');
  assert.equal(fake.calls('/codes/set').length, 1);
  assert.equal(JSON.parse(auditRows(server, 'iot.codes.set')[0].after).status, 504);

  // The gateway answers again: so does the proxy.
  assert.equal((await server.request('POST', '/api/iot/codes/values', { token: operator, body: { codes: ['a'] } })).status, 200);
});

test('an answer that keeps trickling past the deadline is a 504', async (t) => {
  const { server, fake } = await serverWithFake(t, { EMS_IOT_TIMEOUT_MS: '400' });
  const { accessToken: viewer } = await server.createUser({ role: 'viewer' });
  const values = () => server.request('POST', '/api/iot/codes/values', { token: viewer, body: { codes: ['a'] } });
  // A byte every 100 ms: never idle for the timeout, still arriving past it.
  fake.script(
    '/codes/values',
    (_request, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"data":[');
      const drip = setInterval(() => (res.destroyed ? clearInterval(drip) : res.write(' ')), 100);
      res.on('close', () => clearInterval(drip));
    },
    1,
  );
  const trickled = await values();
  assert.deepEqual([trickled.status, trickled.body], [504, { error: 'IoT gateway did not answer within 400 ms', code: 'GATEWAY_TIMEOUT' }]);
});

test('an answer past 32 MiB (declared or sent) is a 502, however long it takes to arrive', async (t) => {
  // A timeout far above the time 33 MiB takes on a loaded box: the size limit, not the deadline, must end these (with
  // the 400 ms of the trickle test, the streamed case raced the deadline and failed under load).
  const { server, fake } = await serverWithFake(t, { EMS_IOT_TIMEOUT_MS: '30000' });
  const { accessToken: viewer } = await server.createUser({ role: 'viewer' });
  const values = () => server.request('POST', '/api/iot/codes/values', { token: viewer, body: { codes: ['a'] } });
  fake.script(
    '/codes/values',
    (_request, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(33 * 1024 * 1024) });
      res.write('{"data":[');
    },
    1,
  );
  const declared = await values();
  assert.deepEqual([declared.status, declared.body], [502, { error: 'IoT gateway answer is too large', code: 'BAD_GATEWAY' }]);

  const mib = Buffer.alloc(1024 * 1024, 0x20);
  fake.script(
    '/codes/values',
    (_request, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"data":[');
      let sent = 0;
      const more = () => {
        while (!res.destroyed && sent < 40 && res.write(mib)) sent += 1;
        if (!res.destroyed && sent < 40) res.once('drain', more);
      };
      more();
    },
    1,
  );
  const streamed = await values();
  assert.deepEqual([streamed.status, streamed.body], [502, { error: 'IoT gateway answer is too large', code: 'BAD_GATEWAY' }]);
  // Then the gateway answers normally again, on the connections kept alive.
  assert.equal((await values()).status, 200);
});

test('garbage JSON and a gateway dying mid-answer are 502; a dead gateway is 502 while the service stays healthy', async (t) => {
  const { server, fake } = await serverWithFake(t);
  const { accessToken: viewer } = await server.createUser({ role: 'viewer' });
  const values = () => server.request('POST', '/api/iot/codes/values', { token: viewer, body: { codes: ['a'] } });

  fake.script('/codes/values', 'garbage', 1);
  const garbage = await values();
  assert.deepEqual([garbage.status, garbage.body], [502, { error: 'IoT gateway answered with invalid JSON', code: 'BAD_GATEWAY' }]);

  fake.script('/codes/values', 'die', 1);
  const died = await values();
  assert.equal(died.status, 502);
  assert.equal(typeof died.body.error, 'string');
  assert.equal((await values()).status, 200);

  await fake.kill();
  const dead = await values();
  assert.deepEqual([dead.status, dead.body], [502, { error: 'IoT gateway unreachable', code: 'BAD_GATEWAY' }]);
  const health = await server.request('GET', '/api/health');
  assert.equal(health.status, 200);
  assert.equal(health.body.status, 'ok');
  assert.equal(health.body.iot.gateway, 'unreachable');
  assert.equal(health.body.iot.lastError, 'unreachable');
  assert.equal((await server.request('GET', '/api/auth/me', { token: viewer })).status, 200);
});

test('/api/health answers from the last known state while a gateway call hangs', async (t) => {
  const { server, fake } = await serverWithFake(t, { EMS_IOT_TIMEOUT_MS: '600000' });
  const { accessToken: viewer } = await server.createUser({ role: 'viewer' });
  assert.equal((await server.request('GET', '/api/iot/alarm-configs', { token: viewer })).status, 200);
  fake.script('/codes/values', 'hang');

  const abort = new AbortController();
  let settled = false;
  const hanging = fetch(`${server.url}/api/iot/codes/values`, {
    method: 'POST',
    headers: { authorization: `Bearer ${viewer}`, 'content-type': 'application/json' },
    body: JSON.stringify({ codes: ['a'] }),
    signal: abort.signal,
  }).finally(() => (settled = true));
  await fake.waitForCalls('/codes/values', 1);

  const health = await server.request('GET', '/api/health');
  assert.equal(settled, false, 'the gateway call is still outstanding');
  assert.equal(health.status, 200);
  assert.equal(health.body.iot.gateway, 'reachable');
  assert.ok(health.body.iot.tokenAgeSec >= 0);
  abort.abort();
  await hanging.catch(() => {});
});

test('emsctl gateway simulate runs the simulator standalone', async (t) => {
  const child = spawn(process.execPath, [path.join(packageRoot, 'cli', 'emsctl.js'), '--json', 'gateway', 'simulate', '--port', '0'], {
    env: { ...process.env, EMS_IOT_USERNAME: 'cli-user', EMS_IOT_PASSWORD: 'cli-pass', EMS_DATA_DIR: tempDir() },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  t.after(() => child.kill('SIGKILL'));
  const [line] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
  const { url } = JSON.parse(line) as { url: string };
  assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
  const token = await gatewayToken(url, 'cli-user', 'cli-pass');
  const configs = await fetch(`${url}/alarm-configs`, { headers: { authorization: `Bearer ${token}` } });
  assert.equal(configs.status, 200);
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  assert.deepEqual(await exited, [0, null]);
});
