// GET /api/wallboard: the site or one area, 404 for an unknown one, alert titles without message text, and a data
// state computed from what the collector did — failing with a gateway that answers 503, stale when collection stops.
import assert from 'node:assert/strict';
import type http from 'node:http';
import { after, before, describe, test } from 'node:test';
import type { CollectorStatus } from '../../src/metering/collectorHealth.ts';
import { dataStateOf, WALLBOARD_ALERTS } from '../../src/screens/wallboard/service.ts';
import { startFakeGateway, type FakeGateway, type RecordedRequest } from '../helpers/fakeGateway.ts';
import { eventually, startTestServer, type TestServer } from '../helpers/server.ts';

const idle: CollectorStatus = {
  lastRunAt: null,
  lastOkAt: null,
  lastError: null,
  meters: 0,
  lagSec: null,
  state: 'idle',
  failingSince: null,
  consecutiveFailures: 0,
  clockStepsBack: 0,
  refused: 0,
};
const T0 = Date.parse('2026-03-02T10:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();

describe('dataStateOf', () => {
  const minute = 60_000;
  const facts = (collector: Partial<CollectorStatus>, now: number, gateway: 'reachable' | 'unreachable' | 'unknown' = 'reachable') =>
    dataStateOf({ intervalMs: minute, collector: { ...idle, ...collector }, gateway, startedAt: T0, now });

  test('collection off, or no meter to read: the hand-entered figures are live', () => {
    assert.deepEqual(dataStateOf({ intervalMs: 0, collector: idle, gateway: 'unknown', startedAt: T0, now: T0 + 3_600_000 }), {
      state: 'live',
      since: null,
      reason: null,
      source: 'manual',
      collectIntervalSec: null,
      lastGoodAt: null,
    });
    assert.equal(facts({ lastRunAt: iso(T0), meters: 0 }, T0 + 10 * minute).source, 'manual');
    assert.equal(facts({ lastRunAt: iso(T0), meters: 0 }, T0 + 10 * minute).state, 'live');
  });

  test('live while a collection succeeded within two intervals; stale one millisecond after', () => {
    const ok = { lastRunAt: iso(T0 + minute), lastOkAt: iso(T0 + minute), meters: 3 };
    assert.equal(facts(ok, T0 + 3 * minute).state, 'live');
    const stale = facts(ok, T0 + 3 * minute + 1);
    assert.deepEqual([stale.state, stale.reason, stale.since, stale.source], ['stale', 'collector-stalled', iso(T0 + minute), 'meters']);
  });

  test('the last collection failed: failing at once, since the last good one; the reason says whether the gateway answers', () => {
    const failed = { lastRunAt: iso(T0 + 2 * minute), lastOkAt: iso(T0 + minute), lastError: 'the gateway answered 503 to codes/values', meters: 3 };
    assert.deepEqual(
      [facts(failed, T0 + 2 * minute).state, facts(failed, T0 + 2 * minute).reason, facts(failed, T0 + 2 * minute).since],
      ['failing', 'gateway-errors', iso(T0 + minute)],
    );
    assert.equal(facts(failed, T0 + 2 * minute, 'unreachable').reason, 'gateway-unreachable');
    // Never a good collection since the start: since = the start.
    assert.equal(facts({ ...failed, lastOkAt: null }, T0 + minute).since, iso(T0));
  });

  test('no collection finished since the start: live for two intervals, then stale', () => {
    assert.equal(facts({}, T0 + 2 * minute).state, 'live');
    assert.deepEqual([facts({}, T0 + 2 * minute + 1).state, facts({}, T0 + 2 * minute + 1).reason], ['stale', 'no-collection-yet']);
  });
});

describe('GET /api/wallboard', () => {
  let server: TestServer;
  let admin: string;
  before(async () => {
    server = await startTestServer();
    admin = (await server.createUser({ role: 'admin' })).accessToken;
    const areas = [
      { name: 'Office', todayKwh: 412.5, monthKwh: 9120.25, yearKwh: 101000, powerKw: 61.3 },
      { name: 'Plant room', todayKwh: 1210.75, monthKwh: 25300.5, yearKwh: 290000, powerKw: 158.4 },
      { name: 'Lab', todayKwh: 88, monthKwh: 1900, yearKwh: 20000, powerKw: 9.5 },
    ];
    assert.equal((await server.request('PUT', '/api/energy/areas', { token: admin, body: { areas } })).status, 200);
  });
  after(() => server?.close());

  test('public; the site figures equal /api/dashboard; areas largest today first; manual data is live', async () => {
    const [board, dashboard] = await Promise.all([server.request('GET', '/api/wallboard'), server.request('GET', '/api/dashboard')]);
    assert.equal(board.status, 200);
    const { overview } = dashboard.body;
    assert.deepEqual(board.body.figures, {
      powerKw: overview.powerKw,
      todayKwh: overview.energyTodayKwh,
      monthKwh: overview.energyMonthKwh,
      costToday: overview.costToday,
      costMonth: overview.costMonth,
      carbonTodayKg: overview.carbonTodayKg,
      carbonMonthKg: overview.carbonMonthKg,
    });
    // A day with no data is null on both (issue 22), never 0.
    assert.deepEqual(
      board.body.weeklyEnergy.days,
      dashboard.body.weeklyEnergy.days.map(({ day, kwh }: { day: string; kwh: number | null }) => ({ day, kwh })),
    );
    assert.ok(
      board.body.weeklyEnergy.days.some((day: { kwh: number | null }) => day.kwh === null),
      'the seeded week has days with no data',
    );
    assert.deepEqual(
      board.body.areas.map((a: { name: string }) => a.name),
      ['Plant room', 'Office', 'Lab'],
    );
    assert.equal(board.body.scope.area, null);
    assert.deepEqual([board.body.dataState.state, board.body.dataState.source], ['live', 'manual']);
  });

  test('?area= gives that area: its figures and its own last 7 days; the name matches ignoring case when only one does', async () => {
    const plant = await server.request('GET', `/api/wallboard?area=${encodeURIComponent('Plant room')}`);
    assert.equal(plant.status, 200);
    assert.equal(plant.body.scope.area, 'Plant room');
    assert.deepEqual(plant.body.figures, {
      powerKw: 158.4,
      todayKwh: 1210.75,
      monthKwh: 25300.5,
      costToday: null,
      costMonth: null,
      carbonTodayKg: null,
      carbonMonthKg: null,
    });
    const today = plant.body.weeklyEnergy.days.at(-1);
    assert.equal(today.kwh, 1210.75, "today's bar is the area's, not the site's");
    // The days before the first entry have no data: null, never 0.
    assert.deepEqual(
      plant.body.weeklyEnergy.days.slice(0, -1).map((day: { kwh: number | null }) => day.kwh),
      [null, null, null, null, null, null],
    );
    const site = await server.request('GET', '/api/wallboard');
    assert.equal(site.body.weeklyEnergy.days.at(-1).kwh, 1711.25);
    const folded = await server.request('GET', '/api/wallboard?area=PLANT%20ROOM');
    assert.equal(folded.body.scope.area, 'Plant room');
  });

  test('an unknown area is 404 naming it, an empty one 400 — never the site in disguise', async () => {
    const missing = await server.request('GET', '/api/wallboard?area=Plant%20rom');
    assert.equal(missing.status, 404);
    assert.equal(missing.body.code, 'NOT_FOUND');
    assert.match(missing.body.error, /No area named "Plant rom"/);
    assert.equal((await server.request('GET', '/api/wallboard?area=')).status, 400);
  });

  test('active critical and warning titles with their start, critical first and longest-standing first; no message, no info, no shelved', async () => {
    const post = async (body: Record<string, unknown>) => {
      const created = await server.request('POST', '/api/alerts', { token: admin, body: { message: 'call Jane Doe on 0123 456', ...body } });
      assert.equal(created.status, 201, created.text);
      return created.body;
    };
    const now = Date.now();
    await post({ title: 'Filter dirty', level: 'warning', area: 'Office', occurredAt: iso(now - 3_600_000) });
    await post({ title: 'Chiller trip', level: 'critical', area: 'Plant room', occurredAt: iso(now - 600_000) });
    await post({ title: 'Boiler lockout', level: 'critical', area: 'Plant room', occurredAt: iso(now - 7_200_000) });
    await post({ title: 'Door open', level: 'info', area: 'Office' });
    const shelved = await post({ title: 'Pump noisy', level: 'warning', area: 'Office' });
    assert.equal((await server.request('POST', `/api/alerts/${shelved.id}/shelve`, { token: admin, body: { durationMin: 60, reason: 'known' } })).status, 200);
    const board = await server.request('GET', '/api/wallboard');
    assert.deepEqual(
      board.body.alerts.active.map((a: { title: string }) => a.title),
      ['Boiler lockout', 'Chiller trip', 'Filter dirty'],
    );
    assert.equal(board.body.alerts.active[0].since, iso(now - 7_200_000));
    assert.deepEqual(board.body.alerts.counts, { critical: 2, warning: 1, info: 1 });
    assert.doesNotMatch(board.text, /Jane|0123|Pump noisy/);
    const office = await server.request('GET', '/api/wallboard?area=Office');
    assert.deepEqual(
      office.body.alerts.active.map((a: { title: string }) => a.title),
      ['Filter dirty'],
    );
    assert.deepEqual(office.body.alerts.counts, { critical: 0, warning: 1, info: 1 });

    for (let i = 0; i < WALLBOARD_ALERTS + 2; i += 1) await post({ title: `Sensor ${i} lost`, level: 'warning', area: 'Lab' });
    const many = await server.request('GET', '/api/wallboard');
    assert.equal(many.body.alerts.active.length, WALLBOARD_ALERTS);
    assert.equal(many.body.alerts.more, 3 + WALLBOARD_ALERTS + 2 - WALLBOARD_ALERTS);
  });

  test('60 requests in flight at once all answer 200 with the same figures', async () => {
    const answers = await Promise.all(Array.from({ length: 60 }, (_, i) => server.request('GET', i % 2 ? '/api/wallboard' : '/api/wallboard?area=Lab')));
    assert.ok(answers.every((answer) => answer.status === 200));
    assert.equal(new Set(answers.filter((_, i) => i % 2).map((answer) => JSON.stringify(answer.body.figures))).size, 1);
  });
});

describe('with a real collector and a gateway that starts failing', () => {
  let gateway: FakeGateway;
  let server: TestServer;
  let broken = false;
  let kwh = 1000;
  before(async () => {
    gateway = await startFakeGateway();
    // A counter that moves with real time while the gateway is well; 503 for every read while it is "broken".
    const values = (request: RecordedRequest, res: http.ServerResponse) => {
      const status = broken ? 503 : 200;
      kwh += 0.5;
      const codes = (request.body as { codes: string[] }).codes;
      const text = broken
        ? '{"error":"busy"}'
        : JSON.stringify({ data: codes.map((code) => ({ code, value: kwh, quality: 'good', ts: new Date().toISOString() })) });
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(text);
    };
    gateway.script('/codes/values', values);
    server = await startTestServer({
      EMS_IOT_BASE_URL: gateway.url,
      EMS_IOT_USERNAME: gateway.username,
      EMS_IOT_PASSWORD: gateway.password,
      EMS_COLLECT_INTERVAL: '1s',
    });
    const admin = (await server.createUser({ role: 'admin' })).accessToken;
    const meter = await server.request('POST', '/api/meters', { token: admin, body: { name: 'HVAC', code: 'meter.hvac.kwh', kind: 'energy', area: 'HVAC' } });
    assert.equal(meter.status, 201, meter.text);
  });
  after(async () => {
    await server?.close();
    await gateway?.close();
  });

  const state = async () =>
    (await server.request('GET', '/api/wallboard')).body as {
      dataState: { state: string; reason: string | null; since: string | null; lastGoodAt: string | null };
      gateway: { state: string };
    };

  test('live from the meters, failing (gateway degraded) after the first 503, live again when it answers, stale when the collector stops', async () => {
    const live = await eventually(async () => ((await state()).dataState.lastGoodAt ? state() : undefined), 'a good collection');
    assert.deepEqual([live.dataState.state, live.gateway.state], ['live', 'up']);

    broken = true;
    const failing = await eventually(async () => {
      const s = await state();
      return s.dataState.state === 'failing' ? s : undefined;
    }, 'failing');
    assert.deepEqual([failing.dataState.reason, failing.gateway.state], ['gateway-errors', 'degraded']);
    assert.ok(failing.dataState.since && Date.parse(failing.dataState.since) >= Date.parse(live.dataState.lastGoodAt!), 'since the last good collection');
    // Health says the same since issue #22 (branch trust): a gateway that answers while every collection fails is degraded.
    const health = await server.request('GET', '/api/health');
    assert.equal(health.body.iot.gateway, 'degraded');

    broken = false;
    await eventually(async () => ((await state()).dataState.state === 'live' ? true : undefined), 'live again');

    await server.service.deps.collector.stop();
    const stale = await eventually(async () => {
      const s = await state();
      return s.dataState.state === 'stale' ? s : undefined;
    }, 'stale');
    assert.equal(stale.dataState.reason, 'collector-stalled');
    assert.equal(stale.gateway.state, 'up');
  });
});
