// A meter not collected while the clock steps back keeps a state (issue 56, round 9). It was cut at the new "now" like
// the others, and its stored state was deleted: enabled again later, it had no state, so its first collection took it
// for a new meter and counted the gateway's 7-day history again on top of what was stored. It now keeps its state at
// the cut, its counter less the energy dropped after it, and counts on from there once it is collected again. The
// built-in simulator over HTTP, whose counters are the known answer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MIN, separateCollector, simulatorRig } from '../helpers/rig.ts';

const QUARTER = 15 * MIN;
// A fixed day long past: the collectors and the simulator run on the test's clock, so the hour the run starts is no matter.
const TWO = Date.parse('2026-03-10T02:00:00Z');
const DAY_START = Date.parse('2026-03-10T00:00:00Z');
const CODE = 'meter.hvac.kwh';

for (const enabledAt of [TWO + 90 * MIN, TWO + 140 * MIN]) {
  const when = new Date(enabledAt).toISOString().slice(11, 16);
  test(`disabled, the clock 1 h back, enabled again at ${when}: its energy over the span is the counter's movement, counted once`, async (t) => {
    const r = await simulatorRig({ start: TWO });
    t.after(() => r.close());
    await r.meter({ name: 'Main', code: 'meter.main.kwh', kind: 'energy', site: true });
    const hvac = await r.meter({ name: 'HVAC', code: CODE, kind: 'energy', area: 'HVAC' });
    await r.run(TWO + 2 * 60 * MIN);
    const put = async (enabled: boolean) => {
      const response = await r.server.request('PUT', `/api/meters/${hvac.id}`, { token: r.admin.accessToken, body: { enabled } });
      assert.equal(response.status, 200, response.text);
    };

    // Killed at 04:00 with HVAC disabled; restarted with the clock at 03:07; HVAC enabled again at `enabledAt` (03:30,
    // before its last reading; 04:20, after it); collected to 05:00.
    await put(false);
    r.clock.now = TWO + 67 * MIN;
    const restarted = separateCollector(r.server, r.clock);
    for (; r.clock.now <= TWO + 3 * 60 * MIN; r.clock.now += MIN) {
      if (r.clock.now === enabledAt) await put(true);
      await restarted.collect();
    }
    restarted.flush();

    const row = r.dayRows(hvac.id).find((d) => d.day === '2026-03-10');
    assert.ok(row, 'the day is stored');
    const first = (TWO - DAY_START) / QUARTER;
    const last = (TWO + 3 * 60 * MIN - DAY_START) / QUARTER;
    let stored = 0;
    for (let i = first; i < last; i += 1) {
      const at = DAY_START + i * QUARTER;
      const moved = r.counter(CODE, at + QUARTER) - r.counter(CODE, at);
      assert.ok(
        Math.abs(row.kwh[i]! - moved) <= 0.02 * moved + 0.011,
        `${new Date(at).toISOString().slice(11, 16)}: ${row.kwh[i]} kWh stored, the counter moved ${moved}`,
      );
      stored += row.kwh[i]!;
    }
    const moved = r.counter(CODE, TWO + 3 * 60 * MIN) - r.counter(CODE, TWO);
    assert.ok(Math.abs(stored - moved) <= 0.01 * moved, `02:00–05:00: ${stored} kWh stored, the counter moved ${moved}`);
    // Nothing before 02:00 was counted again from the gateway's history.
    const before = Array.from(row.kwh.subarray(0, first)).filter((value) => !Number.isNaN(value));
    const history = r.counter(CODE, TWO) - r.counter(CODE, DAY_START);
    const sumBefore = before.reduce((a, b) => a + b, 0);
    assert.ok(Math.abs(sumBefore - history) <= 0.01 * history + 0.011, `00:00–02:00: ${sumBefore} kWh stored, the counter moved ${history}`);
  });
}
