// A meter disabled for good keeps the interval its last reading fell inside with only the part before that reading
// (issue 56): no reading will ever span the rest. The rule: an interval is whole from readings spanning it, or flagged
// estimated (or missing). Known answers from a counter the test sets: +0.5 kWh a minute, over the misbehaving gateway.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FLAG_ESTIMATED } from '../../src/metering/store.ts';
import { MIN, misbehavingRig } from '../helpers/rig.ts';

const QUARTER = 15 * MIN;
// A fixed day long past, 10:00 UTC: the collector runs on the test's clock, so the time of day the run starts is no matter.
const TEN = Date.parse('2026-03-10T10:00:00Z');
const counter = (ms: number) => 100 + (0.5 * (ms - TEN)) / MIN;

function intervalAt(rows: { day: string; kwh: Float64Array; flags: Uint8Array }[], at: number): { kwh: number; flags: number } {
  const day = rows.find((row) => row.day === new Date(at).toISOString().slice(0, 10));
  assert.ok(day, `a row for ${new Date(at).toISOString()}`);
  const i = (at - Date.parse(`${day.day}T00:00:00Z`)) / QUARTER;
  return { kwh: day.kwh[i]!, flags: day.flags[i]! };
}

test('a meter disabled mid-interval: once that interval has ended it is flagged estimated, its measured part kept; one enabled again counts on', async (t) => {
  const r = await misbehavingRig({ start: TEN });
  t.after(() => r.close());
  r.gateway.historyStatus = 404;
  const codes = ['meter.gone.kwh', 'meter.stays.kwh', 'meter.back.kwh'];
  const ids: number[] = [];
  for (const code of codes) ids.push((await r.meter({ name: code, code, kind: 'energy' })).id);
  const disable = async (id: number, enabled: boolean) => {
    const answer = await r.server.request('PUT', `/api/meters/${id}`, { token: r.admin.accessToken, body: { enabled } });
    assert.equal(answer.status, 200, answer.text);
  };
  // Read every minute 10:00 … 10:07, then two of them disabled; the third goes on to 10:50.
  for (; r.clock.now <= TEN + 50 * MIN; r.clock.now += MIN) {
    for (const code of codes) r.gateway.set(code, { value: counter(r.clock.now) });
    if (r.clock.now === TEN + 8 * MIN) {
      await disable(ids[0], false);
      await disable(ids[2], false);
    }
    // The third enabled again at 10:12, inside the interval it stopped in.
    if (r.clock.now === TEN + 12 * MIN) await disable(ids[2], true);
    await r.collector.collect();
  }
  const goneAt = intervalAt(r.dayRows(ids[0]), TEN);
  t.diagnostic(`disabled at 10:08: 10:00 holds ${goneAt.kwh} kWh (flags ${goneAt.flags}) of 7.5`);
  assert.ok(Math.abs(goneAt.kwh - 3.5) < 0.001, `10:00: ${goneAt.kwh} kWh, the 7 minutes read are kept`);
  assert.ok(goneAt.flags & FLAG_ESTIMATED, `10:00 holds a part of its energy and is flagged estimated (flags ${goneAt.flags})`);
  assert.ok(Number.isNaN(intervalAt(r.dayRows(ids[0]), TEN + QUARTER).kwh), 'after it: missing');
  // The meter read throughout, and the one enabled again within the same interval: whole and measured.
  for (const id of [ids[1], ids[2]]) {
    const whole = intervalAt(r.dayRows(id), TEN);
    assert.ok(Math.abs(whole.kwh - 7.5) < 0.001 && whole.flags === 0, `meter ${id} 10:00: ${whole.kwh} kWh, flags ${whole.flags}`);
  }
});
