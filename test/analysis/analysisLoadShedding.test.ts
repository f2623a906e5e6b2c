// Load shedding against the simulated building over real HTTP: off by default and admin-only; a rising load sheds the
// listed points in priority order before its window passes the contracted peak, and restores them after, with every
// write audited; a flat load below the contract sheds nothing; a gateway that accepts a write but reads back something
// else (the misbehaving test gateway) gets it reported, and the point is not counted as shed.
import { type TestContext, test } from 'node:test';
import assert from 'node:assert/strict';
import { LoadShedder, UNCONFIRMED_CODE } from '../../src/analysis/loadShedding.ts';
import { IotGateway } from '../../src/gateway/service.ts';
import { DAY, demandWatch, MIN, simulatorRig, type SimulatorRig } from '../helpers/rig.ts';
import { type FakeGateway, startFakeGateway } from '../helpers/fakeGateway.ts';
import { eventually, startTestServer } from '../helpers/server.ts';
import { startGatewaySimulator } from '../../src/gateway/simulator/server.ts';

const QUARTER = 15 * MIN;
const POINTS = [
  { code: 'ahu1.run', priority: 1, shedValue: 0, restoreValue: 1 },
  { code: 'sp.zone1', priority: 2, shedValue: 26, restoreValue: 21.5 },
];

/** A rig at 02:00 two days ahead (an empty building, a flat load) with a contract 25 % above that load from tomorrow. */
async function rig(): Promise<{ r: SimulatorRig; load: number; limit: number; start: number }> {
  const start = Math.floor((Date.now() + 2 * DAY) / DAY) * DAY + 2 * 3_600_000;
  const r = await simulatorRig({ start });
  try {
    await r.meter({ name: 'Main', code: 'meter.main.kwh', kind: 'energy', site: true });
    await r.collector.collect();
    const load = (r.counter('meter.main.kwh', start) - r.counter('meter.main.kwh', start - QUARTER)) * 4;
    const limit = Math.round(load * 1.25);
    const tomorrow = new Date(Date.now() + DAY).toISOString().slice(0, 10);
    const version = await r.server.request('POST', '/api/energy/tariffs', {
      token: r.admin.accessToken,
      body: { validFrom: tomorrow, price: 0.25, carbonFactor: 0.4, contractedPeakKw: limit },
    });
    assert.equal(version.status, 201, version.text);
    return { r, load, limit, start };
  } catch (error) {
    await r.close();
    throw error;
  }
}

function shedder(r: SimulatorRig, iot: Pick<IotGateway, 'set' | 'values'>) {
  const { deps } = r.server.service;
  const demand = demandWatch(r.server);
  // On the service's own gateway, the service's controller (its guard's timer runs beside the test's collections and
  // must not race a second controller); on another gateway, a controller of the test's own.
  const loadShedder =
    iot === deps.iot
      ? deps.loadShedder
      : new LoadShedder({
          db: deps.db,
          audit: deps.audit,
          config: deps.analysis.loadShedding,
          iot,
          demand,
          tariffs: deps.energy.tariffs,
          alerts: deps.alerts,
          logger: deps.logger,
          timezone: deps.energy.timezone,
        });
  /** Collects every minute, then the peak warning and the load shedding, as the service's collector does. */
  return async (until: number) => {
    while (r.clock.now < until) {
      r.clock.now += MIN;
      await r.collector.collect();
      demand.check(r.clock.now);
      await loadShedder.evaluate(r.clock.now);
    }
  };
}

async function enable(r: SimulatorRig, body: Record<string, unknown> = {}) {
  const response = await r.server.request('PUT', '/api/analysis/load-shedding', {
    token: r.admin.accessToken,
    body: { enabled: true, minOffSec: 120, maxShedSec: 3600, points: POINTS, ...body },
  });
  assert.equal(response.status, 200, response.text);
  return response.body;
}

async function simValue(r: SimulatorRig, code: string): Promise<number> {
  const response = await fetch(`${r.sim.url}/codes/values`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${await r.server.service.deps.iot.token().then((t) => t.token)}` },
    body: JSON.stringify({ codes: [code] }),
  });
  assert.equal(response.status, 200);
  return Number(((await response.json()) as { data: { value: unknown }[] }).data[0].value);
}

async function auditOf(r: SimulatorRig, action: string): Promise<any[]> {
  return (await r.get(`/api/audit?action=${action}&pageSize=100`)).items.reverse();
}

test('off by default and admin-only; bad settings are a clear 400', async (t) => {
  const { r } = await rig();
  t.after(() => r.close());
  const initial = await r.get('/api/analysis/load-shedding');
  assert.deepEqual(initial, { enabled: false, minOffSec: 300, maxShedSec: 1800, points: [] });
  for (const role of ['viewer', 'operator'] as const) {
    const user = await r.server.createUser({ role });
    assert.equal((await r.server.request('GET', '/api/analysis/load-shedding', { token: user.accessToken })).status, 403);
    assert.equal(
      (
        await r.server.request('PUT', '/api/analysis/load-shedding', {
          token: user.accessToken,
          body: { enabled: true, minOffSec: 60, maxShedSec: 600, points: POINTS },
        })
      ).status,
      403,
    );
  }
  const put = (body: unknown) => r.server.request('PUT', '/api/analysis/load-shedding', { token: r.admin.accessToken, body });
  assert.equal((await put({ enabled: true, minOffSec: 900, maxShedSec: 600, points: [] })).status, 400);
  assert.equal((await put({ enabled: true, minOffSec: 60, maxShedSec: 600, points: [POINTS[0], POINTS[0]] })).status, 400);
  assert.equal((await put({ enabled: true, minOffSec: 60, maxShedSec: 600, points: [{ ...POINTS[0], shedValue: 'off' }] })).status, 400);
  assert.deepEqual(await r.get('/api/analysis/load-shedding'), initial, 'a refused write changes nothing');
  const saved = await enable(r);
  assert.equal(saved.points.length, 2);
  const [entry] = await auditOf(r, 'replace');
  assert.equal(entry.resource, 'load_shedding');
  assert.equal(entry.after.enabled, true);
});

test('a rising load sheds in priority order before its window passes the contract, a flat one below does not; restored after the window and the minimum off time, every write audited', async (t) => {
  const { r, load, limit, start } = await rig();
  t.after(() => r.close());
  await enable(r);
  const runTo = shedder(r, r.server.service.deps.iot);
  const flatWindow = Math.ceil(start / QUARTER) * QUARTER + QUARTER;
  await runTo(flatWindow + QUARTER);
  assert.deepEqual(await auditOf(r, 'load_shedding.shed'), [], `a flat ${load.toFixed(1)} kW below ${limit} kW sheds nothing`);
  assert.equal(await simValue(r, 'ahu1.run'), 1);

  const risingWindow = flatWindow + QUARTER;
  const sim = await fetch(`${r.sim.url}/sim/load`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ kw: 0, kwPerMinute: load * 0.06, minutes: 15 }),
  });
  assert.equal(sim.status, 200);
  // Shed once the projection has been above the contract for longer than a start-up surge (INRUSH_MS, issue 52).
  await runTo(risingWindow + 12 * MIN);
  const during = await r.get('/api/analysis/load-shedding');
  const [ahu, zone] = during.points;
  assert.equal(ahu.code, 'ahu1.run');
  assert.equal(ahu.shed, true, JSON.stringify(during));
  assert.equal(await simValue(r, 'ahu1.run'), 0, 'the gateway holds the shed value');
  // The known answer: the first minute the window's energy reached the contract's share, from the simulated counter.
  let crossing = risingWindow;
  while (r.counter('meter.main.kwh', crossing) - r.counter('meter.main.kwh', risingWindow) < limit / 4) crossing += MIN;
  assert.ok(Date.parse(ahu.shedAt) < crossing, `shed at ${ahu.shedAt}, the window passed the contract at ${new Date(crossing).toISOString()}`);
  t.diagnostic(`contract ${limit} kW: ahu1.run shed at ${ahu.shedAt}, ${(crossing - Date.parse(ahu.shedAt)) / 1000} s before the window passed it`);
  // The second point follows a collection later while the projection stays above (the simulator's load does not react).
  assert.equal(zone.shed, true);
  assert.ok(Date.parse(zone.shedAt) > Date.parse(ahu.shedAt));

  // The extra load ends with its window; restored one a collection, last shed first, once the window is over.
  await runTo(risingWindow + QUARTER + 6 * MIN);
  const afterwards = await r.get('/api/analysis/load-shedding');
  assert.deepEqual(
    afterwards.points.map((p: any) => p.shed),
    [false, false],
    JSON.stringify(afterwards),
  );
  assert.equal(await simValue(r, 'ahu1.run'), 1);
  assert.equal(await simValue(r, 'sp.zone1'), 21.5);
  const sheds = await auditOf(r, 'load_shedding.shed');
  const restores = await auditOf(r, 'load_shedding.restore');
  assert.deepEqual(
    sheds.map((e) => [e.resourceId, e.after.value, e.after.confirmed, e.userId]),
    [
      ['ahu1.run', 0, true, null],
      ['sp.zone1', 26, true, null],
    ],
  );
  assert.deepEqual(
    restores.map((e) => [e.resourceId, e.after.value, e.after.confirmed]),
    [
      ['sp.zone1', 21.5, true],
      ['ahu1.run', 1, true],
    ],
  );
  assert.match(restores[0].after.reason, /below 95 % of/);

  // A point shed now cannot be dropped from the list; the maximum shed duration restores it whatever the projection.
  await fetch(`${r.sim.url}/sim/load`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ kw: load, kwPerMinute: 0, minutes: 60 }),
  });
  await enable(r, { maxShedSec: 300 });
  await runTo(r.clock.now + 6 * MIN);
  assert.equal((await r.get('/api/analysis/load-shedding')).points[0].shed, true);
  const drop = await r.server.request('PUT', '/api/analysis/load-shedding', {
    token: r.admin.accessToken,
    body: { enabled: true, minOffSec: 120, maxShedSec: 300, points: [POINTS[1]] },
  });
  assert.equal(drop.status, 409, drop.text);
  await runTo(r.clock.now + 7 * MIN);
  const forced = (await auditOf(r, 'load_shedding.restore')).filter((e) => /maximum of 300 s/.test(e.after.reason));
  assert.ok(forced.length >= 1, 'restored after the maximum shed duration while the load stayed above');
});

/**
 * A shedder that writes through a misbehaving gateway (`fake`, scripted by `misbehave` before the run) while the
 * simulated load ramps past the limit: 12 minutes into the next window, its points have been tried once each.
 */
async function rampThroughFakeGateway(t: TestContext, misbehave: (fake: FakeGateway) => void = () => {}) {
  const { r, load, start } = await rig();
  t.after(() => r.close());
  const fake = await startFakeGateway();
  t.after(() => fake.close());
  misbehave(fake);
  const { deps } = r.server.service;
  const gateway = new IotGateway({
    baseUrl: fake.url,
    timeoutMs: 5000,
    credentials: { username: fake.username, password: fake.password },
    db: deps.db,
    logger: deps.logger,
    audit: deps.audit,
  });
  t.after(() => gateway.close());
  await enable(r);
  const runTo = shedder(r, gateway);
  const window = Math.ceil(start / QUARTER) * QUARTER + QUARTER;
  await runTo(window);
  await fetch(`${r.sim.url}/sim/load`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ kw: 0, kwPerMinute: load * 0.06, minutes: 15 }),
  });
  await runTo(window + 12 * MIN);
  return { r, fake, window };
}

test('a write the gateway cannot confirm is reported and the point not counted as shed', async (t) => {
  // The misbehaving gateway takes every write (success: true) but reads every point back as 42.5.
  const { r, fake, window } = await rampThroughFakeGateway(t);
  assert.deepEqual(
    fake.executedWrites.map((w) => w.body),
    [
      { code: 'ahu1.run', value: 0 },
      { code: 'sp.zone1', value: 26 },
    ],
    'each point tried once in the window, in priority order',
  );
  const state = await r.get('/api/analysis/load-shedding');
  for (const point of state.points) {
    assert.equal(point.shed, false, `${point.code} is not counted as shed`);
    assert.match(point.lastError, /read back 42\.5 after writing/);
    assert.equal(point.notBefore, new Date(window + QUARTER).toISOString());
  }
  const sheds = await auditOf(r, 'load_shedding.shed');
  assert.deepEqual(
    sheds.map((e) => [e.resourceId, e.after.confirmed, e.after.readBack, e.after.status]),
    [
      ['ahu1.run', false, 42.5, 200],
      ['sp.zone1', false, 42.5, 200],
    ],
  );
  const alerts = (await r.server.request('GET', `/api/alerts?q=${encodeURIComponent('could not shed')}`, { token: r.admin.accessToken })).body;
  assert.equal(alerts.total, 2, JSON.stringify(alerts));
  assert.equal(alerts.items[0].source, UNCONFIRMED_CODE);
  assert.match(alerts.items.map((a: any) => a.message).join(' '), /not counted as shed/);
  assert.equal(await simValue(r, 'ahu1.run'), 1, 'nothing reached the building');
});

test('a read-back the gateway refuses or answers without a value (through the typed port) is not a confirmation', async (t) => {
  // Writes are taken; the read-back of the first point is refused (503), that of the second answers a string.
  const { r } = await rampThroughFakeGateway(t, (fake) =>
    fake.script('/codes/values', (request, res) => {
      const [code] = (request.body as { codes: string[] }).codes;
      if (code === 'ahu1.run') res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":"busy"}');
      else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: [{ code, value: '26', quality: 'good' }] }));
    }),
  );
  const state = await r.get('/api/analysis/load-shedding');
  const errors = Object.fromEntries(state.points.map((p: { code: string; shed: boolean; lastError: string }) => [p.code, [p.shed, p.lastError]]));
  assert.deepEqual(errors, {
    'ahu1.run': [false, 'the gateway answered 503 to codes/values'],
    'sp.zone1': [false, 'read back null after writing 26'],
  });
  const sheds = await auditOf(r, 'load_shedding.shed');
  assert.deepEqual(
    sheds.map((e) => [e.resourceId, e.after.confirmed, e.after.readBack, e.after.status]),
    [
      ['ahu1.run', false, null, 200],
      ['sp.zone1', false, null, 200],
    ],
  );
});

test("the service's own collector runs the load shedding after each collection (off by default, on once enabled)", async (t) => {
  const start = Math.floor((Date.now() + 2 * DAY) / DAY) * DAY + 2 * 3_600_000;
  const clock = { now: start };
  const sim = await startGatewaySimulator({ now: () => clock.now, tokenTtlSec: 10 * 365 * 86_400 });
  t.after(() => sim.close());
  const server = await startTestServer(
    { EMS_IOT_BASE_URL: sim.url, EMS_IOT_USERNAME: 'ems', EMS_IOT_PASSWORD: 'ems-simulator' },
    { collectorNow: () => clock.now },
  );
  t.after(() => server.close());
  const admin = await server.createUser({ role: 'admin' });
  const token = admin.accessToken;
  assert.equal(
    (await server.request('POST', '/api/meters', { token, body: { name: 'Main', code: 'meter.main.kwh', kind: 'energy', site: true } })).status,
    201,
  );
  const { collector } = server.service.deps;
  await collector.collect();
  const load = (sim.building.counterAt('meter.main.kwh', start)! - sim.building.counterAt('meter.main.kwh', start - QUARTER)!) * 4;
  const tomorrow = new Date(Date.now() + DAY).toISOString().slice(0, 10);
  assert.equal(
    (
      await server.request('POST', '/api/energy/tariffs', {
        token,
        body: { validFrom: tomorrow, price: 0.25, carbonFactor: 0.4, contractedPeakKw: Math.round(load * 1.25) },
      })
    ).status,
    201,
  );
  const window = Math.ceil(start / QUARTER) * QUARTER + QUARTER;
  const runTo = async (until: number) => {
    while (clock.now < until) {
      clock.now += MIN;
      await collector.collect();
    }
  };
  await runTo(window);
  await fetch(`${sim.url}/sim/load`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ kw: 0, kwPerMinute: load * 0.06, minutes: 15 }),
  });
  await runTo(window + 10 * MIN);
  const state = async () => (await server.request('GET', '/api/analysis/load-shedding', { token })).body;
  assert.deepEqual((await state()).points, [], 'off by default: nothing listed, nothing written');
  const put = await server.request('PUT', '/api/analysis/load-shedding', {
    token,
    body: { enabled: true, minOffSec: 60, maxShedSec: 3600, points: [POINTS[0]] },
  });
  assert.equal(put.status, 200, put.text);
  await runTo(window + 12 * MIN);
  // The evaluation runs after the collection without being awaited by it: polled for.
  const shed = await eventually(async () => ((await state()).points[0].shed ? (await state()).points[0] : undefined), 'ahu1.run shed by the service');
  assert.ok(Date.parse(shed.shedAt) >= window + 10 * MIN);
});
