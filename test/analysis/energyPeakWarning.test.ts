// The peak warning before the peak, against the simulated building over real HTTP: a rising load in a 15-minute window
// is warned of minutes before the window's energy passes the contracted peak's share; a flat load below it is not.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DAY, demandWatch, MIN, simulatorRig } from '../helpers/rig.ts';

const QUARTER = 15 * MIN;

test('a rising load is warned of minutes before its window passes the contracted peak, a flat one below it never; the warning is an alert with its evidence, cleared with its window', async (t) => {
  // Two days ahead of the wall clock, at 02:00 UTC: the building is empty, its load flat; a version from tomorrow is in effect.
  const start = Math.floor((Date.now() + 2 * DAY) / DAY) * DAY + 2 * 3_600_000;
  const r = await simulatorRig({ start });
  t.after(() => r.close());
  const token = r.admin.accessToken;
  await r.meter({ name: 'Main', code: 'meter.main.kwh', kind: 'energy', site: true });
  await r.collector.collect();
  const load = (r.counter('meter.main.kwh', start) - r.counter('meter.main.kwh', start - QUARTER)) * 4;
  const limit = Math.round(load * 1.25);
  const tomorrow = new Date(Date.now() + DAY).toISOString().slice(0, 10);
  const version = await r.server.request('POST', '/api/energy/tariffs', {
    token,
    body: { validFrom: tomorrow, price: 0.25, carbonFactor: 0.4, contractedPeakKw: limit },
  });
  assert.equal(version.status, 201, version.text);
  const watch = demandWatch(r.server);
  /** Collects and checks every minute, as the service's collector does with the watch after each collection. */
  const runTo = async (until: number) => {
    while (r.clock.now < until) {
      r.clock.now += MIN;
      await r.collector.collect();
      watch.check(r.clock.now);
    }
  };
  const flatWindow = Math.ceil(start / QUARTER) * QUARTER + QUARTER;
  await runTo(flatWindow + QUARTER);
  assert.deepEqual((await r.get('/api/analysis/peak-warnings')).items, [], `a flat ${load.toFixed(1)} kW below ${limit} kW: no warning`);

  // From the next window on, a load rising by 6 % of the base per minute: the window's mean ends near 1.45 × base.
  const risingWindow = flatWindow + QUARTER;
  assert.equal(r.clock.now, risingWindow);
  const sim = await fetch(`${r.sim.url}/sim/load`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ kw: 0, kwPerMinute: load * 0.06, minutes: 15 }),
  });
  assert.equal(sim.status, 200);
  await runTo(risingWindow + QUARTER + MIN);
  const items = (await r.get('/api/analysis/peak-warnings')).items;
  assert.equal(items.length, 1, JSON.stringify(items));
  const [warning] = items;
  assert.equal(warning.windowStart, new Date(risingWindow).toISOString());
  assert.equal(warning.outcome, 'crossed');
  // The known answer: the first minute the window's energy so far reached limit × 15 min, from the simulated counter.
  let crossing = risingWindow;
  while (r.counter('meter.main.kwh', crossing) - r.counter('meter.main.kwh', risingWindow) < limit / 4) crossing += MIN;
  assert.equal(warning.crossedAt, new Date(crossing).toISOString());
  assert.ok(Date.parse(warning.warnedAt) < crossing && warning.leadSec >= 3 * 60, `warned ${warning.leadSec} s before the crossing`);
  assert.ok(warning.projectedKw > limit && warning.finalKw > limit, JSON.stringify(warning));
  t.diagnostic(
    `base ${load.toFixed(1)} kW, contract ${limit} kW: warned at ${warning.warnedAt}, crossed at ${warning.crossedAt}, lead ${warning.leadSec} s, final ${warning.finalKw} kW`,
  );

  const alerts = (await r.server.request('GET', `/api/alerts?q=${encodeURIComponent('heading for')}`, { token })).body;
  assert.equal(alerts.total, 1);
  assert.match(alerts.items[0].title, new RegExp(`\\(contract ${limit} kW\\)`));
  assert.match(alerts.items[0].message, /kWh used in the window's first \d+ min, the site drawing [\d.]+ kW now/);
  assert.equal(alerts.items[0].source, 'site.demand.warning');
  assert.ok(alerts.items[0].clearedAt, 'cleared once its window is over');
});
