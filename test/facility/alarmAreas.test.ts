// Gateway alarms carry their area (issue 45 item 11): an admin's map of point codes (exact, or a prefix) to areas, else
// the meter of that code, else the point's name in the gateway's catalogue. Simulator over HTTP, real SQLite, real
// routes; the poller is driven one poll at a time so every step is deterministic.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { AlarmPoller } from '../../src/facility/notifications/poller.ts';
import { startGatewaySimulator, type RunningSimulator } from '../../src/gateway/simulator/server.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { startFakeGateway } from '../helpers/fakeGateway.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let sim: RunningSimulator;
let server: TestServer;
let admin: string;
let adminId: number;
let operator: string;
let viewer: string;
let poller: AlarmPoller;

async function raise(code: string, message: string, level = 'critical'): Promise<{ id: number }> {
  const token = (
    (await (
      await fetch(`${sim.url}/auth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'ems', password: 'ems-simulator' }),
      })
    ).json()) as { token: string }
  ).token;
  const response = await fetch(`${sim.url}/sim/alarms`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ code, level, message }),
  });
  assert.equal(response.status, 201);
  return (await response.json()) as { id: number };
}

/** The alert raised for the alarm with this title. */
async function alertTitled(title: string): Promise<any> {
  const list = await server.request('GET', `/api/alerts?q=${encodeURIComponent(title)}`, { token: admin });
  assert.equal(list.status, 200, list.text);
  const found = list.body.items.filter((item: any) => item.title === title);
  assert.equal(found.length, 1, `one alert titled ${title}`);
  return found[0];
}

const putMap = (token: string, body: unknown) => server.request('PUT', '/api/alarms/areas', { token, body });

before(async () => {
  sim = await startGatewaySimulator();
  server = await startTestServer({ EMS_IOT_BASE_URL: sim.url, EMS_IOT_USERNAME: 'ems', EMS_IOT_PASSWORD: 'ems-simulator' });
  const adminUser = await server.createUser({ role: 'admin' });
  admin = adminUser.accessToken;
  adminId = adminUser.user.id;
  operator = (await server.createUser({ role: 'operator' })).accessToken;
  viewer = (await server.createUser({ role: 'viewer' })).accessToken;
  const cards = await server.request('PUT', '/api/energy/areas', {
    token: admin,
    body: { areas: ['Server room', 'Plant room', 'Office'].map((name) => ({ name, todayKwh: 1, monthKwh: 10, yearKwh: 100, powerKw: 1 })) },
  });
  assert.equal(cards.status, 200, cards.text);
  // The IT sub-meter counts towards the plant room: an alarm on its point is the plant room's unless mapped.
  const meter = await server.request('POST', '/api/meters', { token: admin, body: { name: 'IT', code: 'meter.it.kwh', kind: 'energy', area: 'Plant room' } });
  assert.equal(meter.status, 201, meter.text);
  const { deps } = server.service;
  poller = new AlarmPoller({ iot: deps.iot, alerts: deps.alerts, areas: deps.alarmAreas, logger: createLogger('error'), intervalMs: 60_000 });
});
after(async () => {
  await server?.close();
  await sim?.close();
});

describe('the alarm area map', () => {
  test('only an admin changes it (403 for a viewer and an operator); an operator reads it; a viewer does not', async () => {
    const body = { mappings: [{ code: 'srv.', match: 'prefix', area: 'Server room' }] };
    for (const token of [viewer, operator]) {
      const denied = await putMap(token, body);
      assert.equal(denied.status, 403, denied.text);
      assert.equal(denied.body.code, 'FORBIDDEN');
    }
    assert.equal((await server.request('GET', '/api/alarms/areas', { token: viewer })).status, 403);
    const read = await server.request('GET', '/api/alarms/areas', { token: operator });
    assert.equal(read.status, 200, read.text);
    assert.deepEqual(read.body, { mappings: [], areas: ['Office', 'Plant room', 'Server room'] });
    assert.equal((await server.request('PUT', '/api/alarms/areas', { body })).status, 401);
  });

  test('bad input is a 400 naming the field, and changes nothing', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{}, /mappings/],
      [{ mappings: [{ code: 'srv.', match: 'starts', area: 'Server room' }] }, /match/],
      [{ mappings: [{ code: '', match: 'exact', area: 'Server room' }] }, /code/],
      [{ mappings: [{ code: 'srv rack', match: 'exact', area: 'Server room' }] }, /code/],
      [{ mappings: [{ code: 'x'.repeat(129), match: 'exact', area: 'Server room' }] }, /code/],
      [{ mappings: [{ code: 'srv.', match: 'prefix', area: 'Sever room' }] }, /no area named "Sever room" \(one of: Office, Plant room, Server room\)/],
      [{ mappings: [{ code: 'srv.', match: 'prefix', area: 'Server room\u202e' }] }, /area/],
      [
        {
          mappings: [
            { code: 'srv.', match: 'prefix', area: 'Server room' },
            { code: 'srv.', match: 'prefix', area: 'Office' },
          ],
        },
        /duplicates mappings\.0/,
      ],
    ];
    for (const [body, message] of cases) {
      const answer = await putMap(admin, body);
      assert.equal(answer.status, 400, `${JSON.stringify(body)}: ${answer.text}`);
      const said = [answer.body.error, ...(answer.body.details ?? []).map((detail: any) => `${detail.path} ${detail.message}`)].join('\n');
      assert.match(said, message, JSON.stringify(body));
    }
    assert.equal(
      (await server.request('PUT', '/api/alarms/areas', { token: admin, raw: '{"mappings":', headers: { 'content-type': 'application/json' } })).status,
      400,
    );
    assert.deepEqual((await server.request('GET', '/api/alarms/areas', { token: admin })).body.mappings, []);
  });

  test('parallel replaces each land whole; at most 1,000 mappings', async () => {
    const maps = Array.from({ length: 8 }, (_, i) => [
      { code: `par${i}.`, match: 'prefix', area: 'Office' },
      { code: `par${i}.x`, match: 'exact', area: 'Plant room' },
    ]);
    const answers = await Promise.all(maps.map((mappings) => putMap(admin, { mappings })));
    assert.deepEqual(
      answers.map((answer) => answer.status),
      maps.map(() => 200),
    );
    const final = (await server.request('GET', '/api/alarms/areas', { token: admin })).body.mappings;
    assert.equal(final.length, 2);
    assert.ok(
      maps.some((mappings) => JSON.stringify([mappings[1], mappings[0]]) === JSON.stringify(final)),
      `one whole map: ${JSON.stringify(final)}`,
    );
    const audit = await server.request('GET', '/api/audit?resource=alarm_areas&pageSize=50', { token: admin });
    assert.equal(audit.body.total, 8);
    const tooMany = Array.from({ length: 1001 }, (_, i) => ({ code: `p${i}`, match: 'exact', area: 'Office' }));
    assert.equal((await putMap(admin, { mappings: tooMany })).status, 400);
    assert.equal((await putMap(admin, { mappings: [] })).status, 200);
  });

  test('alarms arrive in their area: exact beats prefix, then the meter, then the point name; on /api/alerts and the wallboard; a change applies to later alarms', async () => {
    const set = await putMap(admin, {
      mappings: [
        { code: 'srv.', match: 'prefix', area: 'server ROOM' },
        { code: 'srv.ups', match: 'exact', area: 'Plant room' },
        { code: 'meter.it.kwh', match: 'exact', area: 'Office' },
      ],
    });
    assert.equal(set.status, 200, set.text);
    assert.deepEqual(set.body.mappings, [
      { code: 'meter.it.kwh', match: 'exact', area: 'Office' },
      { code: 'srv.ups', match: 'exact', area: 'Plant room' },
      { code: 'srv.', match: 'prefix', area: 'Server room' },
    ]);
    const audit = await server.request('GET', '/api/audit?resource=alarm_areas&pageSize=1', { token: admin });
    assert.equal(audit.body.items[0].action, 'replace');
    assert.equal(audit.body.items[0].userId, adminId);
    assert.deepEqual(audit.body.items[0].before, []);
    assert.equal(audit.body.items[0].after.length, 3);

    await raise('srv.rack1.temp', 'Rack 1 inlet above 30 °C');
    await raise('srv.ups', 'UPS on battery');
    await raise('meter.lighting.kwh', 'Lighting meter communication lost', 'warning');
    await poller.poll();

    assert.equal((await alertTitled('Rack 1 inlet above 30 °C')).area, 'Server room', 'the prefix, spelled as the site spells the area');
    assert.equal((await alertTitled('UPS on battery')).area, 'Plant room', 'the exact code wins over the prefix');
    assert.equal((await alertTitled('Meter communication lost')).area, 'Office', 'an exact mapping wins over the meter of that code');
    assert.equal((await alertTitled('Server room temperature above 27 °C')).area, 'Server room', 'the point name "Server room temperature"');
    assert.equal((await alertTitled('AHU-1 filter differential pressure high')).area, null, '"Air handling unit 1 run command" names no area');
    assert.equal((await alertTitled('Lighting meter communication lost')).area, null, 'a meter without an area, a name naming none');

    const inRoom = await server.request('GET', '/api/alerts?area=Server%20room&pageSize=200', { token: viewer });
    assert.deepEqual(inRoom.body.items.map((item: any) => item.title).sort(), ['Rack 1 inlet above 30 °C', 'Server room temperature above 27 °C']);
    const board = await server.request('GET', '/api/wallboard?area=Server%20room');
    assert.equal(board.status, 200, board.text);
    // The public board names the point, not the gateway's text (src/facility/alerts/publicTitle.ts).
    assert.deepEqual(
      board.body.alerts.active.map((alert: any) => alert.title),
      ['Alarm on temp.serverroom', 'Alarm on srv.rack1.temp'],
    );
    // Counted as "active" is what is still in alarm (issue 53: one truth per count); the simulator's server-room alarm
    // cleared at the source is listed, marked as cleared and waiting for acknowledgement, and not counted.
    assert.equal(board.body.alerts.counts.critical, 1);
    assert.deepEqual(
      board.body.alerts.active.map((alert: any) => alert.clearedAt !== null),
      [true, false],
    );
    const plant = await server.request('GET', '/api/wallboard?area=Plant%20room');
    assert.deepEqual(
      plant.body.alerts.active.map((alert: any) => alert.title),
      ['Alarm on srv.ups'],
    );

    // Without its exact mapping, the IT meter's point falls back to the meter's area; the prefix now names the office.
    const changed = await putMap(admin, { mappings: [{ code: 'srv.', match: 'prefix', area: 'Office' }] });
    assert.equal(changed.status, 200, changed.text);
    await raise('srv.rack2.temp', 'Rack 2 inlet above 30 °C');
    await raise('meter.it.kwh', 'IT meter reads zero', 'warning');
    await poller.poll();
    assert.equal((await alertTitled('Rack 2 inlet above 30 °C')).area, 'Office', 'an alarm after the change follows it');
    assert.equal((await alertTitled('Rack 1 inlet above 30 °C')).area, 'Server room', 'an alert already raised keeps its area');
    assert.equal((await alertTitled('IT meter reads zero')).area, 'Plant room', 'the meter of that code');
    assert.equal((await alertTitled('Meter communication lost')).area, 'Office', 'kept');
  });
});

describe('a gateway without a readable point catalogue', () => {
  test('its alarms still become alerts, in no area; the catalogue is asked once per 10 minutes, not per alarm or poll', async () => {
    const gateway = await startFakeGateway();
    const raisedAt = new Date(Date.now() - 60_000).toISOString();
    gateway.script('/alarms', (_request, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({ data: ['a', 'b', 'c'].map((n) => ({ code: `room.${n}`, level: 'warning', message: `Room ${n} too warm`, raisedAt })), total: 3 }),
      );
    });
    gateway.script('/codes', 'garbage');
    const box = await startTestServer({ EMS_IOT_BASE_URL: gateway.url, EMS_IOT_USERNAME: gateway.username, EMS_IOT_PASSWORD: gateway.password });
    try {
      const { deps } = box.service;
      const own = new AlarmPoller({ iot: deps.iot, alerts: deps.alerts, areas: deps.alarmAreas, logger: createLogger('error'), intervalMs: 60_000 });
      assert.deepEqual(await own.poll(), { raised: 3, cleared: 0 });
      assert.deepEqual(await own.poll(), { raised: 0, cleared: 0 });
      const token = (await box.createUser({ role: 'viewer' })).accessToken;
      const list = await box.request('GET', '/api/alerts?q=too%20warm', { token });
      assert.deepEqual(list.body.items.map((item: any) => [item.source, item.area]).sort(), [
        ['room.a', null],
        ['room.b', null],
        ['room.c', null],
      ]);
      assert.equal(gateway.calls('/codes').length, 1);
    } finally {
      await box.close();
      await gateway.close();
    }
  });
});
