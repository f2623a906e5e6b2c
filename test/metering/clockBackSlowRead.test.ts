// The clock stepped back across a restart, and the first read after it took a while (found by the week's soak, issue 56:
// 2 Nov 15:00, main 3.8 kWh short after a read that took 1.5 simulated minutes on a busy machine). The meters ahead of
// the clock start again from their readings; the interval holding the new "now" keeps its part before them (estimated)
// and nothing between: its energy is the counter's movement, once. A gateway over HTTP whose answer to the first read
// comes 90 s after the collection began (its clock moves the test's); its counter rises 0.5 kWh a minute.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FLAG_ESTIMATED } from '../../src/metering/store.ts';
import { MIN, misbehavingRig, separateCollector } from '../helpers/rig.ts';

const QUARTER = 15 * MIN;
const CODE = 'meter.slow.kwh';
// A fixed day long past: the collectors run on the test's clock, so the time of day the run starts is no matter.
const TWO = Date.parse('2026-03-10T02:00:00Z');
const counter = (ms: number) => 100 + (0.5 * (ms - TWO)) / MIN;

test('restarted 1 h back, its first read 90 s late: the interval holding the step keeps its energy once', async (t) => {
  const r = await misbehavingRig({ start: TWO, collector: 'separate' });
  t.after(() => r.close());
  const meter = await r.meter({ name: 'Slow read', code: CODE, kind: 'energy' });
  r.gateway.historyStatus = 404;
  const collectAt = async (collector: typeof r.collector, lateMs = 0) => {
    const at = r.clock.now;
    // The gateway stamps and answers its values lateMs after the collection began (the test's clock moves with it).
    r.gateway.now = () => {
      r.clock.now = at + lateMs;
      return r.clock.now;
    };
    r.gateway.set(CODE, { value: counter(at + lateMs) });
    await collector.collect();
    r.clock.now = at;
  };
  for (; r.clock.now <= TWO + 2 * 60 * MIN; r.clock.now += MIN) await collectAt(r.collector);

  // Killed at 04:00; restarted with the clock at 03:07, its first read answered at 03:08:30.
  r.clock.now = TWO + 67 * MIN;
  const restarted = separateCollector(r.server, r.clock);
  await collectAt(restarted, 90_000);
  for (r.clock.now += 2 * MIN; r.clock.now <= TWO + 2 * 60 * MIN + 30 * MIN; r.clock.now += MIN) await collectAt(restarted);

  const rows = r.dayRows(meter.id);
  const day = rows.find((row) => row.day === '2026-03-10');
  assert.ok(day, 'the day is stored');
  const i = (TWO + 60 * MIN - Date.parse('2026-03-10T00:00:00Z')) / QUARTER;
  t.diagnostic(`03:00 holds ${day.kwh[i]} kWh (flags ${day.flags[i]}); the counter moved 7.5`);
  assert.ok(Math.abs(day.kwh[i]! - 7.5) < 0.01, `03:00: ${day.kwh[i]} kWh stored, the counter moved 7.5`);
  assert.ok(day.flags[i]! & FLAG_ESTIMATED, 'its part before the step is an estimate, and flagged so');
  for (let k = i + 1; k < i + 6; k += 1) assert.ok(Math.abs(day.kwh[k]! - 7.5) < 0.01, `interval ${k}: ${day.kwh[k]} kWh, the counter moved 7.5`);
});
