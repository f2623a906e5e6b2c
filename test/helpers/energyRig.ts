// A service against the gateway simulator over real HTTP on a clock the test moves, with a collector driven by hand.
import assert from 'node:assert/strict';
import { startGatewaySimulator, type RunningSimulator } from '../../src/iot/simulator/server.ts';
import { Collector } from '../../src/energy/collector.ts';
import { startTestServer, type TestServer, type TestUser } from './server.ts';

export const MIN = 60_000;
export const DAY = 86_400_000;

export type EnergyRig = {
  sim: RunningSimulator;
  server: TestServer;
  admin: TestUser;
  clock: { now: number };
  collector: Collector;
  /** The simulated counter at any instant (the known answer stored figures are checked against). */
  counter(code: string, ms: number): number;
  meter(body: Record<string, unknown>): Promise<any>;
  get(path: string): Promise<any>;
  /** Collects every `stepMs` from the clock's time until `until` (a week a step still leaves no gap: history fills it). */
  run(until: number, stepMs?: number): Promise<void>;
  close(): Promise<void>;
};

export async function energyRig(options: { start: number; env?: Record<string, string> }): Promise<EnergyRig> {
  const clock = { now: options.start };
  const sim = await startGatewaySimulator({ now: () => clock.now, tokenTtlSec: 10 * 365 * 86_400 });
  let server: TestServer | undefined;
  try {
    server = await startTestServer({ EMS_IOT_BASE_URL: sim.url, EMS_IOT_USERNAME: 'ems', EMS_IOT_PASSWORD: 'ems-simulator', ...options.env });
  } catch (error) {
    await sim.close();
    throw error;
  }
  const running = server;
  const admin = await running.createUser({ role: 'admin' });
  const { deps } = running.service;
  const collector = new Collector({
    db: deps.db,
    iot: deps.iot,
    store: deps.energy.store,
    logger: deps.logger,
    intervalMs: MIN,
    timezone: deps.energy.timezone,
    now: () => clock.now,
  });
  const rig: EnergyRig = {
    sim,
    server: running,
    admin,
    clock,
    collector,
    counter: (code, ms) => sim.building.counterAt(code, ms)!,
    async meter(body) {
      const response = await running.request('POST', '/api/meters', { token: admin.accessToken, body });
      assert.equal(response.status, 201, response.text);
      return response.body;
    },
    async get(path) {
      const response = await running.request('GET', path, { token: admin.accessToken });
      assert.equal(response.status, 200, `${path}: ${response.text}`);
      return response.body;
    },
    async run(until, stepMs = MIN) {
      while (clock.now < until) {
        clock.now = Math.min(until, clock.now + stepMs);
        await collector.collect();
      }
    },
    async close() {
      await running.close();
      await sim.close();
    },
  };
  return rig;
}
