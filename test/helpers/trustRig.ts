// The energy-trust rig: the service on port 0 against a misbehaving gateway over real HTTP, and a collector on a
// clock the test moves (the gateway's clock follows it unless the test sets its own).
import assert from 'node:assert/strict';
import type { Collector } from '../../src/energy/collector.ts';
import { storedFlags, storedKwh } from '../../src/energy/store.ts';
import { startBadGateway, type BadGateway } from './badGateway.ts';
import { startTestServer, type TestServer, type TestUser } from './server.ts';

export const MIN = 60_000;
export const DAY = 86_400_000;

export type TrustRig = {
  gateway: BadGateway;
  server: TestServer;
  admin: TestUser;
  clock: { now: number };
  collector: Collector;
  meter(body: Record<string, unknown>): Promise<{ id: number }>;
  /** GET as the admin; asserts 200. */
  get(path: string): Promise<any>;
  meterState(meterId: number): Promise<any>;
  dayRows(meterId: number): { day: string; kwh: Float64Array; flags: Uint8Array; total: number }[];
  close(): Promise<void>;
};

export async function trustRig(options: { start?: number; env?: Record<string, string> } = {}): Promise<TrustRig> {
  const clock = { now: options.start ?? Date.now() };
  const gateway = await startBadGateway();
  gateway.now = () => clock.now;
  const server = await startTestServer(
    { EMS_IOT_BASE_URL: gateway.url, EMS_IOT_USERNAME: gateway.username, EMS_IOT_PASSWORD: gateway.password, ...options.env },
    { collectorNow: () => clock.now },
  );
  const admin = await server.createUser({ role: 'admin' });
  const { deps } = server.service;
  // The service's own collector (its interval is EMS_COLLECT_INTERVAL=off here: the test calls collect()).
  const collector = deps.collector;
  const rig: TrustRig = {
    gateway,
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
      // The service's collector holds the open interval in memory (edge): written first, as at a 15-minute boundary.
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
    async close() {
      await server.close();
      await gateway.close();
    },
  };
  return rig;
}

/** Sums an interval array, NaN as nothing. */
export const sumKwh = (values: ArrayLike<number>) => Array.from(values).reduce((a, b) => a + (Number.isNaN(b) ? 0 : b), 0);
