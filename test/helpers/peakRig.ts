// The simulated building with a contracted peak, for the peak-warning and load-shedding edge cases: two days ahead of
// the wall clock at 02:00 UTC (the building empty, its load flat), a main meter, a tariff version from tomorrow with
// the contract at 1.25 × the base load, and the checks the service's collector runs every minute on the rig's clock.
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import type { LoadShedAction } from '../../src/analysis/loadShedding.ts';
import { DAY, demandWatch, MIN, type SimulatorRig, simulatorRig } from './rig.ts';

export const QUARTER = 15 * MIN;

export type PeakRig = {
  r: SimulatorRig;
  start: number;
  /** The building's base load (kW) and the contracted peak (kW) set from it. */
  base: number;
  limit: number;
  /** The first whole window a quarter hour after the start. */
  firstWindow: number;
  /** The load-shedding actions taken, with the time of the check. */
  actions: Array<LoadShedAction & { at: number }>;
  /** Collects every minute up to `until`, then checks the peak warning (and the load shedding, when set up). */
  runTo(until: number): Promise<void>;
  /** Adds `kw` of load to the simulated building for `minutes`. */
  addLoad(kw: number, minutes: number): Promise<void>;
  /** The mean power (kW) of the window starting at `from`, from the simulator's exact counter. */
  windowMean(from: number): number;
};

export async function peakRig(
  t: TestContext,
  options: { timezone?: string; shedding?: { enabled: boolean; minOffSec: number; maxShedSec: number; points: unknown[] } } = {},
): Promise<PeakRig> {
  const start = Math.floor((Date.now() + 2 * DAY) / DAY) * DAY + 2 * 3_600_000;
  const r = await simulatorRig({ start });
  t.after(() => r.close());
  if (options.timezone) {
    const zone = await r.server.request('PUT', '/api/configs', { token: r.admin.accessToken, body: { timezone: options.timezone } });
    assert.equal(zone.status, 200, zone.text);
  }
  await r.meter({ name: 'Main', code: 'meter.main.kwh', kind: 'energy', site: true });
  await r.collector.collect();
  const base = (r.counter('meter.main.kwh', start) - r.counter('meter.main.kwh', start - QUARTER)) * 4;
  const limit = Math.round(base * 1.25);
  const tomorrow = new Date(Date.now() + DAY).toISOString().slice(0, 10);
  const version = await r.server.request('POST', '/api/energy/tariffs', {
    token: r.admin.accessToken,
    body: { validFrom: tomorrow, price: 0.25, carbonFactor: 0.4, contractedPeakKw: limit },
  });
  assert.equal(version.status, 201, version.text);
  if (options.shedding) {
    const shedding = await r.server.request('PUT', '/api/analysis/load-shedding', { token: r.admin.accessToken, body: options.shedding });
    assert.equal(shedding.status, 200, shedding.text);
  }
  const watch = demandWatch(r.server);
  const { loadShedder } = r.server.service.deps;
  const actions: PeakRig['actions'] = [];
  return {
    r,
    start,
    base,
    limit,
    firstWindow: Math.ceil(start / QUARTER) * QUARTER + QUARTER,
    actions,
    runTo: async (until) => {
      while (r.clock.now < until) {
        r.clock.now += MIN;
        await r.collector.collect();
        watch.check(r.clock.now);
        if (options.shedding) for (const action of await loadShedder.evaluate(r.clock.now)) actions.push({ ...action, at: r.clock.now });
      }
    },
    addLoad: async (kw, minutes) => {
      const response = await fetch(`${r.sim.url}/sim/load`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ kw, kwPerMinute: 0, minutes }),
      });
      assert.equal(response.status, 200);
    },
    windowMean: (from) => (r.counter('meter.main.kwh', from + QUARTER) - r.counter('meter.main.kwh', from)) * 4,
  };
}
