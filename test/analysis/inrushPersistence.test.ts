// One persistence rule for the peak warning and load shedding (issue 52, item 8), on the simulated building with a
// simulated clock: a 3-minute start-up surge (+70 % of the base, the window ending at ~0.9 × the contract) neither warns
// nor sheds; a rise that lasts warns and sheds, once it has been projected above the contract for longer than INRUSH_MS.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { INRUSH_MS } from '../../src/energy/demandWatch.ts';
import { peakRig, QUARTER } from '../helpers/peakRig.ts';
import { MIN } from '../helpers/rig.ts';

test('a 3-minute inrush neither warns nor sheds; a lasting rise does both, after the same persistence', async (t) => {
  const {
    r,
    base,
    limit,
    firstWindow: inrush,
    actions,
    runTo,
    addLoad,
    windowMean,
  } = await peakRig(t, {
    shedding: { enabled: true, minOffSec: 120, maxShedSec: 3600, points: [{ code: 'ahu1.run', priority: 1, shedValue: 0, restoreValue: 1 }] },
  });
  // A chiller's start: +70 % of the base for 3 minutes from minute 2.
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
