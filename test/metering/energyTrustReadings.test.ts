// Readings checked before they count, against a misbehaving gateway over real HTTP: times from the future or far past
// are refused and never move a meter's last reading, counter jitter is held, resets and rollovers are told apart, a
// gap is bounded to the 7-day backfill span, and the box's clock stepping forward and back leaves no future energy and
// no frozen meter.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FLAG_JITTER, FLAG_REFUSED, FLAG_RESET } from '../../src/metering/store.ts';
import { siteDay } from '../../src/platform/time/calendar.ts';
import { DAY, MIN, sumKwh, misbehavingRig, type MisbehavingRig } from '../helpers/rig.ts';

const today = (now: number) => siteDay('UTC', new Date(now));

describe('readings from the future or the far past', () => {
  let r: MisbehavingRig;
  before(async () => {
    r = await misbehavingRig();
  });
  after(() => r.close());

  for (const [label, ts] of [
    ['2200', '2200-01-01T00:00:00.000Z'],
    ['9999', '9999-12-31T23:59:59.000Z'],
  ] as const) {
    test(`a reading dated ${label} is refused, shown per meter, and never moves the last reading; later good readings count`, async () => {
      const code = `meter.future${label}.kwh`;
      const meter = await r.meter({ name: `Future ${label}`, code, kind: 'energy' });
      r.gateway.set(code, { value: 1000 });
      await r.collector.collect();
      const first = await r.meterState(meter.id);
      assert.equal(first.state, 'ok');
      const lastReadingAt = first.lastReadingAt;

      r.clock.now += MIN;
      r.gateway.set(code, { value: 1001, ts });
      const result = await r.collector.collect();
      assert.equal(result.refused, 1);
      const refused = await r.meterState(meter.id);
      assert.equal(refused.state, 'refusing');
      assert.equal(refused.lastReadingAt, lastReadingAt, 'the last reading did not move');
      assert.equal(refused.lastValue, 1000);
      assert.equal(refused.refused, 1);
      assert.equal(refused.lastRefusal.reason, 'a time in the future');
      assert.equal(refused.lastRefusal.readingAt, ts);
      const rows = r.dayRows(meter.id);
      assert.ok(
        rows.every((row) => row.day <= today(r.clock.now)),
        `no day after today: ${rows.map((row) => row.day)}`,
      );
      assert.ok(
        rows.some((row) => row.flags.some((flag) => flag & FLAG_REFUSED)),
        'the refusal is flagged where it arrived',
      );

      // The gateway's clock is right again: the meter goes on from where it was, counting the energy since.
      r.clock.now += MIN;
      r.gateway.set(code, { value: 1003 });
      await r.collector.collect();
      const again = await r.meterState(meter.id);
      assert.equal(again.state, 'ok');
      assert.equal(again.lastValue, 1003);
      const total = r.dayRows(meter.id).reduce((sum, row) => sum + sumKwh(row.kwh), 0);
      assert.ok(Math.abs(total - 3) < 1e-3, `3 kWh since the first reading, got ${total}`);
    });
  }

  test('a first reading dated 1971 is refused as too old and writes no row', async () => {
    const meter = await r.meter({ name: 'Old clock', code: 'meter.old.kwh', kind: 'energy' });
    r.gateway.set('meter.old.kwh', { value: 50, ts: '1971-01-01T00:00:00.000Z' });
    await r.collector.collect();
    const state = await r.meterState(meter.id);
    assert.equal(state.state, 'refusing');
    assert.equal(state.lastReadingAt, null);
    assert.equal(state.lastRefusal.reason, 'a time older than the 7-day backfill span');
    assert.ok(
      r.dayRows(meter.id).every((row) => row.day === today(r.clock.now)),
      'at most today’s row, for the flag',
    );
  });

  test('a gap longer than the backfill span writes nothing before it and nothing after now', async () => {
    const meter = await r.meter({ name: 'Long gap', code: 'meter.gap.kwh', kind: 'energy' });
    // The history answers 30 days back; only the last 7 are asked for and believed.
    const history = [];
    for (let at = r.clock.now - 30 * DAY; at <= r.clock.now - MIN; at += 15 * MIN) history.push({ at, value: (at - (r.clock.now - 30 * DAY)) / 3_600_000 });
    r.gateway.history.set('meter.gap.kwh', history);
    r.gateway.set('meter.gap.kwh', { value: history.at(-1)!.value + 1 / 60 });
    await r.collector.collect();
    const days = r.dayRows(meter.id).map((row) => row.day);
    assert.ok(days.length >= 7 && days.length <= 9, `days written: ${days}`);
    assert.ok(days[0] >= today(r.clock.now - 8 * DAY), `oldest ${days[0]}`);
    assert.ok(days.at(-1)! <= today(r.clock.now), `newest ${days.at(-1)}`);
  });
});

describe('counter steps: jitter, reset, rollover', () => {
  let r: MisbehavingRig;
  before(async () => {
    r = await misbehavingRig();
  });
  after(() => r.close());

  async function step(code: string, value: number) {
    r.clock.now += MIN;
    r.gateway.set(code, { value });
    await r.collector.collect();
  }
  const total = (meterId: number) => r.dayRows(meterId).reduce((sum, row) => sum + sumKwh(row.kwh), 0);
  const flagged = (meterId: number, flag: number) => r.dayRows(meterId).some((row) => row.flags.some((f) => f & flag));

  test('100.2 → 100.15 kWh is jitter: 0 recorded, flagged, and the next increase counts from 100.2', async () => {
    const meter = await r.meter({ name: 'Jitter', code: 'meter.jitter.kwh', kind: 'energy' });
    await step('meter.jitter.kwh', 100.2);
    await step('meter.jitter.kwh', 100.15);
    assert.ok(Math.abs(total(meter.id)) < 1e-6, `recorded ${total(meter.id)}`);
    assert.ok(flagged(meter.id, FLAG_JITTER), 'flagged as jitter');
    assert.ok(!flagged(meter.id, FLAG_RESET), 'never a reset');
    const state = await r.meterState(meter.id);
    assert.equal(state.jitter, 1);
    assert.equal(state.lastValue, 100.2, 'held');
    await step('meter.jitter.kwh', 100.3);
    assert.ok(Math.abs(total(meter.id) - 0.1) < 1e-4, `0.1 kWh after the jitter, got ${total(meter.id)}`);
  });

  test('a real drop to near zero is a reset: what the new counter shows is counted, flagged', async () => {
    const meter = await r.meter({ name: 'Reset', code: 'meter.reset.kwh', kind: 'energy' });
    await step('meter.reset.kwh', 5000);
    await step('meter.reset.kwh', 2);
    assert.ok(Math.abs(total(meter.id) - 2) < 1e-4, `recorded ${total(meter.id)}`);
    assert.ok(flagged(meter.id, FLAG_RESET));
  });

  test('a rollover only at the counter range: 999990 → 5 is 15 kWh', async () => {
    const meter = await r.meter({ name: 'Rollover', code: 'meter.roll.kwh', kind: 'energy' });
    await step('meter.roll.kwh', 999_990);
    await step('meter.roll.kwh', 5);
    assert.ok(Math.abs(total(meter.id) - 15) < 1e-3, `recorded ${total(meter.id)}`);
    assert.ok(flagged(meter.id, FLAG_RESET));
  });

  test('a drop that is neither jitter nor reset is refused; the same value three times in a row becomes the new base', async () => {
    const meter = await r.meter({ name: 'Odd drop', code: 'meter.drop.kwh', kind: 'energy' });
    await step('meter.drop.kwh', 1000);
    await step('meter.drop.kwh', 700);
    let state = await r.meterState(meter.id);
    assert.equal(state.state, 'refusing');
    assert.equal(state.lastValue, 1000);
    await step('meter.drop.kwh', 700);
    await step('meter.drop.kwh', 700);
    state = await r.meterState(meter.id);
    assert.equal(state.lastValue, 700, 'rebased');
    assert.equal(state.state, 'ok');
    await step('meter.drop.kwh', 701);
    assert.ok(Math.abs(total(meter.id) - 1) < 1e-4, `only the 1 kWh after the new base: ${total(meter.id)}`);
  });
});

describe("the box's clock stepping forward a day and back (injected clock, gateway stamping with the box's time)", () => {
  let r: MisbehavingRig;
  before(async () => {
    r = await misbehavingRig();
  });
  after(() => r.close());

  test('no energy is left in the future and no meter freezes', async () => {
    const meter = await r.meter({ name: 'Stepped', code: 'meter.step.kwh', kind: 'energy' });
    const real = r.clock.now;
    // The gateway stamps each value with the box's clock, as the built-in simulator (one process, one clock) does.
    r.gateway.set('meter.step.kwh', { value: 10 });
    await r.collector.collect();
    r.clock.now = real + DAY;
    r.gateway.set('meter.step.kwh', { value: 12 });
    await r.collector.collect();
    assert.ok(
      r.dayRows(meter.id).some((row) => row.day === today(real + DAY)),
      'tomorrow was written while the clock said so',
    );

    // Back to the real time: what lies after now is dropped, the meter counts on from its next reading.
    r.clock.now = real + MIN;
    r.gateway.set('meter.step.kwh', { value: 10.5 });
    await r.collector.collect();
    const health = await r.get('/api/energy/collector');
    assert.equal(health.clockStepsBack, 1);
    assert.ok(
      r.dayRows(meter.id).every((row) => row.day <= today(r.clock.now)),
      'no day after today',
    );
    const state = await r.meterState(meter.id);
    assert.equal(state.lastValue, 10.5, 'rebased on the first reading after the step');
    r.clock.now += MIN;
    r.gateway.set('meter.step.kwh', { value: 11 });
    await r.collector.collect();
    const after = await r.meterState(meter.id);
    assert.equal(after.state, 'ok');
    assert.equal(after.lastValue, 11, 'not frozen');
    const intervalsAfterNow = r.dayRows(meter.id).flatMap((row) => {
      const start = Date.parse(`${row.day}T00:00:00Z`);
      return Array.from(row.kwh)
        .map((kwh, i) => ({ at: start + i * 15 * MIN, kwh }))
        .filter((x) => x.at > r.clock.now && !Number.isNaN(x.kwh));
    });
    assert.deepEqual(intervalsAfterNow, [], 'no interval after now holds energy');
    // The month rollups follow: each month's peak is the highest of the days it keeps, not the dropped future's.
    r.collector.flush();
    // As every reader sees a month (metering's StoredDays: its row of whole days plus its open days, today).
    const { days } = r.server.service.deps.energy;
    const months = r.server.service.deps.db.sqlite
      .prepare('SELECT substr(day, 1, 7) AS month, max(peak_kw) AS dayPeak, sum(total_kwh) AS dayTotal FROM meter_days WHERE meter_id = ? GROUP BY month')
      .all(meter.id)
      .map((row) => {
        const { month, dayPeak, dayTotal } = row as { month: string; dayPeak: number | null; dayTotal: number };
        const peak = days.monthPeaks(month).find((p) => p.meterId === meter.id);
        const totalKwh = days.rollupsByMonth(JSON.stringify([meter.id]), month, '9999-12').find((m) => m.month === month)?.kwh ?? 0;
        return { month, dayPeak, dayTotal, peakKw: peak?.kw ?? null, peakAt: peak?.at ?? null, totalKwh };
      });
    assert.ok(months.length > 0);
    for (const month of months) {
      assert.equal(month.peakKw, month.dayPeak, `${month.month}: the peak of the days kept`);
      assert.ok(Math.abs(month.totalKwh - month.dayTotal) < 1e-9, `${month.month}: the total of the days kept`);
      assert.ok(month.peakAt === null || month.peakAt <= r.clock.now, `${month.month}: the peak's time is not in the future`);
    }
  });
});
