// Peak warnings at the edges (issue 41, item 3), on the simulated building with a simulated clock: a window that
// crosses the contract only in its last minute is recorded as crossed, and a two-minute start-up inrush does not
// warn for a window that ends well below the contract. The known answers come from the simulator's exact counter.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { peakRig, QUARTER } from '../helpers/peakRig.ts';
import { MIN } from '../helpers/rig.ts';

test('a late surge that crosses in the last minute is "crossed" with crossedAt at the window end; a 2-minute inrush to 0.87 × the contract raises nothing', async (t) => {
  // Two days ahead of the wall clock, at 02:00 UTC, in Brussels: the alert's window end is read on the site's clock.
  const { r, base, limit, firstWindow: inrush, runTo, addLoad, windowMean } = await peakRig(t, { timezone: 'Europe/Brussels' });
  // E: an inrush of +70 % of the base for 2 minutes from minute 2 (a chiller's start): the window ends at ~0.87 × contract.
  await runTo(inrush + 2 * MIN);
  await addLoad(base * 0.7, 2);
  await runTo(inrush + QUARTER + MIN);
  const inrushMean = windowMean(inrush);
  t.diagnostic(`inrush window: mean ${inrushMean.toFixed(1)} kW = ${(inrushMean / limit).toFixed(3)} × contract ${limit} kW`);
  assert.ok(inrushMean < 0.9 * limit, `${inrushMean}`);
  assert.deepEqual((await r.get('/api/analysis/peak-warnings')).items, [], 'no warning for a window ending at 0.87 × the contract');

  // F: +80 % of the base from minute 9 to the end: mean 1.32 × base = 1.06 × contract; by minute 14 the window holds
  // (14 + 5 × 0.8)/60 × base = 18/60 × base, short of the contract's 18.75/60 × base: it crosses in its last minute.
  // (From minute 9: the projection must be above for longer than a start-up surge, INRUSH_MS, before it warns.)
  const surge = inrush + 2 * QUARTER;
  await runTo(surge + 9 * MIN);
  await addLoad(base * 0.8, 6);
  await runTo(surge + QUARTER + MIN);
  const surgeMean = windowMean(surge);
  const atMinute14 = r.counter('meter.main.kwh', surge + 14 * MIN) - r.counter('meter.main.kwh', surge);
  assert.ok(atMinute14 < limit / 4 && surgeMean > limit, `minute 14: ${atMinute14} kWh of ${limit / 4}; mean ${surgeMean}`);
  const items = (await r.get('/api/analysis/peak-warnings')).items;
  t.diagnostic(`surge window: ${JSON.stringify(items)}`);
  assert.equal(items.length, 1, JSON.stringify(items));
  const [warning] = items;
  assert.equal(warning.windowStart, new Date(surge).toISOString());
  assert.ok(Math.abs(warning.finalKw - surgeMean) < 0.01, `${warning.finalKw} vs ${surgeMean}`);
  assert.equal(warning.outcome, 'crossed');
  assert.equal(warning.crossedAt, new Date(surge + QUARTER).toISOString(), 'crossed at the window end');
  assert.ok(warning.leadSec >= 0);
  // The alert gives the window's end on the site's clock, not in UTC.
  const alerts = (await r.server.request('GET', `/api/alerts?q=${encodeURIComponent('heading for')}`, { token: r.admin.accessToken })).body;
  const end = new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Brussels', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(surge + QUARTER);
  assert.notEqual(end, new Date(surge + QUARTER).toISOString().slice(11, 16));
  assert.match(alerts.items[0].title, new RegExp(`window ending ${end} Europe/Brussels \\(contract`));
});
