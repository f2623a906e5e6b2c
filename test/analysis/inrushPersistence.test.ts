// One persistence rule for the peak warning and load shedding (issue 52, item 8), on the simulated building with a
// simulated clock: a 3-minute start-up surge (+70 % of the base, the window ending at ~0.9 × the contract) neither warns
// nor sheds; a rise that lasts warns and sheds, once it has been projected above the contract for longer than INRUSH_MS.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { INRUSH_MS } from '../../src/energy/demandWatch.ts';
import type { LoadShedAction } from '../../src/analysis/loadShedding.ts';
import { DAY, demandWatch, MIN, simulatorRig } from '../helpers/rig.ts';

const QUARTER = 15 * MIN;

test('a 3-minute inrush neither warns nor sheds; a lasting rise does both, after the same persistence', async (t) => {
  const start = Math.floor((Date.now() + 2 * DAY) / DAY) * DAY + 2 * 3_600_000;
  const r = await simulatorRig({ start });
  t.after(() => r.close());
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
  const shedding = await r.server.request('PUT', '/api/analysis/load-shedding', {
    token: r.admin.accessToken,
    body: { enabled: true, minOffSec: 120, maxShedSec: 3600, points: [{ code: 'ahu1.run', priority: 1, shedValue: 0, restoreValue: 1 }] },
  });
  assert.equal(shedding.status, 200, shedding.text);
  const watch = demandWatch(r.server);
  const { loadShedder } = r.server.service.deps;
  const actions: Array<LoadShedAction & { at: number }> = [];
  /** Collects every minute, then the peak warning and the load shedding, as the service's collector does. */
  const runTo = async (until: number) => {
    while (r.clock.now < until) {
      r.clock.now += MIN;
      await r.collector.collect();
      watch.check(r.clock.now);
      for (const action of await loadShedder.evaluate(r.clock.now)) actions.push({ ...action, at: r.clock.now });
    }
  };
  const addLoad = async (kw: number, minutes: number) => {
    const response = await fetch(`${r.sim.url}/sim/load`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ kw, kwPerMinute: 0, minutes }),
    });
    assert.equal(response.status, 200);
  };
  const windowMean = (from: number) => (r.counter('meter.main.kwh', from + QUARTER) - r.counter('meter.main.kwh', from)) * 4;

  // A chiller's start: +70 % of the base for 3 minutes from minute 2.
  const inrush = Math.ceil(start / QUARTER) * QUARTER + QUARTER;
  await runTo(inrush + 2 * MIN);
  await addLoad(base * 0.7, 3);
  await runTo(inrush + QUARTER + MIN);
  const inrushMean = windowMean(inrush);
  t.diagnostic(`inrush window: mean ${inrushMean.toFixed(1)} kW = ${(inrushMean / limit).toFixed(3)} × contract ${limit} kW`);
  assert.ok(inrushMean < limit, `${inrushMean}`);
  assert.deepEqual((await r.get('/api/analysis/peak-warnings')).items, [], 'no warning for a 3-minute surge');
  assert.equal(actions.length, 0, `nothing shed for a 3-minute surge: ${JSON.stringify(actions)}`);

  // A lasting step: +60 % of the base from minute 2 to the window's end (mean ~1.2 × the contract).
  const step = inrush + 2 * QUARTER;
  await runTo(step + 2 * MIN);
  await addLoad(base * 0.6, 13);
  await runTo(step + QUARTER - MIN);
  const [warning, ...more] = (await r.get('/api/analysis/peak-warnings')).items;
  assert.equal(more.length, 0);
  assert.equal(warning.windowStart, new Date(step).toISOString());
  const warnedAt = Date.parse(warning.warnedAt);
  const shed = actions.find((action) => action.action === 'shed');
  assert.ok(shed, `shed in the lasting window: ${JSON.stringify(actions)}`);
  // The same rule for both: above for longer than INRUSH_MS (checks a minute apart: the fifth check above).
  assert.ok(warnedAt - (step + 2 * MIN) > INRUSH_MS, `warned ${(warnedAt - step) / MIN} min into the window`);
  assert.equal(shed.at, warnedAt, 'shed at the check that warned');
  t.diagnostic(`lasting step: warned and shed ${(warnedAt - step) / MIN} min into the window; lead ${warning.leadSec} s`);
});
