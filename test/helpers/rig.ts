// The energy tests' rig: the service on port 0 against a gateway over real HTTP — the built-in simulator (a believable
// building with known counters) or a misbehaving gateway (what real gateways get wrong) — on a clock the test moves.
// The test calls collect() (EMS_COLLECT_INTERVAL=off): on the service's own collector (edge: the open interval held in
// memory, the demand, data and load-shedding watches after each collection, the turns imports and time-zone moves
// take), or on a separate one that writes every collection and runs no watch (what the analysis tests were built on).
import assert from 'node:assert/strict';
import { LoadShedder } from '../../src/analysis/loadShedding.ts';
import { DemandWatch } from '../../src/energy/demandWatch.ts';
import { IotGateway } from '../../src/gateway/service.ts';
import { Collector } from '../../src/metering/collector.ts';
import { storedFlags, storedKwh } from '../../src/metering/store.ts';
import { startGatewaySimulator, type RunningSimulator, type SimulatorOptions } from '../../src/gateway/simulator/server.ts';
import { startBadGateway, type BadGateway } from './badGateway.ts';
import { startTestServer, type TestServer, type TestUser } from './server.ts';

export const MIN = 60_000;
export const DAY = 86_400_000;

export type Rig = {
  server: TestServer;
  admin: TestUser;
  clock: { now: number };
  collector: Collector;
  meter(body: Record<string, unknown>): Promise<any>;
  /** GET as the admin; asserts 200. */
  get(path: string): Promise<any>;
  meterState(meterId: number): Promise<any>;
  /** A meter's day rows, decoded (what the collector holds in memory is written first, as at a 15-minute boundary). */
  dayRows(meterId: number): { day: string; kwh: Float64Array; flags: Uint8Array; total: number }[];
  /** Collects every `stepMs` from the clock's time until `until` (a week a step still leaves no gap: history fills it). */
  run(until: number, stepMs?: number): Promise<void>;
  close(): Promise<void>;
};
export type SimulatorRig = Rig & {
  sim: RunningSimulator;
  /** The simulated counter at any instant (the known answer stored figures are checked against). */
  counter(code: string, ms: number): number;
};
export type MisbehavingRig = Rig & { gateway: BadGateway };

type Options = { start?: number; env?: Record<string, string>; collector?: 'service' | 'separate' };

/** The rig on the built-in simulator, whose clock is the test's; a separate collector unless asked for the service's. */
export async function simulatorRig(options: Options & { simulator?: Omit<SimulatorOptions, 'now'> } = {}): Promise<SimulatorRig> {
  const clock = { now: options.start ?? Date.now() };
  const sim = await startGatewaySimulator({ tokenTtlSec: 10 * 365 * 86_400, ...options.simulator, now: () => clock.now });
  const env = { EMS_IOT_BASE_URL: sim.url, EMS_IOT_USERNAME: 'ems', EMS_IOT_PASSWORD: 'ems-simulator', ...options.env };
  const rig = await rigOn(clock, env, options.collector ?? 'separate', () => sim.close());
  return { ...rig, sim, counter: (code, ms) => sim.building.counterAt(code, ms)! };
}

/** The rig on a misbehaving gateway (test/helpers/badGateway.ts), the service's collector unless asked; its clock follows the test's unless the test sets its own. */
export async function misbehavingRig(options: Options = {}): Promise<MisbehavingRig> {
  const clock = { now: options.start ?? Date.now() };
  const gateway = await startBadGateway();
  gateway.now = () => clock.now;
  const rig = await rigOn(
    clock,
    { EMS_IOT_BASE_URL: gateway.url, EMS_IOT_USERNAME: gateway.username, EMS_IOT_PASSWORD: gateway.password, ...options.env },
    options.collector ?? 'service',
    () => gateway.close(),
  );
  return { ...rig, gateway };
}

async function rigOn(clock: { now: number }, env: Record<string, string>, which: 'service' | 'separate', closeGateway: () => Promise<void>): Promise<Rig> {
  let server: TestServer;
  try {
    server = await startTestServer(env, { collectorNow: () => clock.now });
  } catch (error) {
    await closeGateway();
    throw error;
  }
  const admin = await server.createUser({ role: 'admin' });
  const { deps } = server.service;
  const collector = which === 'service' ? deps.collector : separateCollector(server, clock);
  const rig: Rig = {
    server,
    admin,
    clock,
    collector,
    async meter(body) {
      const response = await server.request('POST', '/api/meters', { token: admin.accessToken, body });
      assert.equal(response.status, 201, response.text);
      return response.body;
    },
    async get(path) {
      const response = await server.request('GET', path, { token: admin.accessToken });
      assert.equal(response.status, 200, `${path}: ${response.text}`);
      return response.body;
    },
    async meterState(meterId) {
      const body = await rig.get('/api/energy/collector');
      return body.meterStates.find((row: { meterId: number }) => row.meterId === meterId);
    },
    dayRows(meterId) {
      collector.flush();
      const rows = deps.db.sqlite.prepare('SELECT day, kwh, flags, total_kwh AS total FROM meter_days WHERE meter_id = ? ORDER BY day').all(meterId) as {
        day: string;
        kwh: Buffer;
        flags: Buffer;
        total: number;
      }[];
      // Decoded by the store (edge's compact encoding: 0.1 Wh delta-varints, flags as runs).
      return rows.map((row) => {
        const kwh = storedKwh(row.kwh);
        return { day: row.day, kwh, flags: storedFlags(row.flags, row.kwh, kwh.length), total: row.total };
      });
    },
    async run(until, stepMs = MIN) {
      while (clock.now < until) {
        clock.now = Math.min(until, clock.now + stepMs);
        await collector.collect();
      }
    },
    async close() {
      await server.close();
      await closeGateway();
    },
  };
  return rig;
}

/**
 * A collector beside the service's own, on the test's clock: it writes every collection and runs no watch. Also what a
 * restarted service builds (its state comes from the database only).
 */
export function separateCollector(server: TestServer, clock: { now: number }): Collector {
  const { deps } = server.service;
  return new Collector({
    db: deps.db,
    iot: deps.iot,
    store: deps.energy.store,
    logger: deps.logger,
    intervalMs: MIN,
    timezone: deps.energy.timezone,
    now: () => clock.now,
  });
}

/** A demand watch over the service's own figures, tariffs and alerts, as the service builds its one; run by the test's clock. */
export function demandWatch(server: TestServer): DemandWatch {
  const { deps } = server.service;
  return new DemandWatch({
    db: deps.db,
    warnings: deps.analysis.peakWarnings,
    figures: deps.energy.figures,
    tariffs: deps.energy.tariffs,
    alerts: deps.alerts,
    logger: deps.logger,
    timezone: deps.energy.timezone,
  });
}

/**
 * A load shedder of the test's own, on the service's gateway over real HTTP and a monotonic clock the test moves
 * (`mono.now`): the service's own guard counts real time, and its maxShedSec of at least 60 s would make a test a minute long.
 */
export function monotonicShedder(
  t: { after: (fn: () => Promise<void>) => void },
  r: { server: TestServer; gateway: { url: string; username: string; password: string } },
): { shedder: LoadShedder; mono: { now: number } } {
  const { deps } = r.server.service;
  const gateway = new IotGateway({
    baseUrl: r.gateway.url,
    timeoutMs: 5000,
    credentials: { username: r.gateway.username, password: r.gateway.password },
    db: deps.db,
    logger: deps.logger,
    audit: deps.audit,
  });
  t.after(() => gateway.close());
  const mono = { now: 1_000_000 };
  const shedder = new LoadShedder({
    db: deps.db,
    audit: deps.audit,
    config: deps.analysis.loadShedding,
    iot: gateway,
    demand: demandWatch(r.server),
    tariffs: deps.energy.tariffs,
    alerts: deps.alerts,
    logger: deps.logger,
    timezone: deps.energy.timezone,
    monotonic: () => mono.now,
  });
  return { shedder, mono };
}

/** Sums an interval array, NaN as nothing. */
export const sumKwh = (values: ArrayLike<number>) => Array.from(values).reduce((a, b) => a + (Number.isNaN(b) ? 0 : b), 0);
