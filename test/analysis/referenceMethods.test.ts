// Pure arithmetic of issue 52's rules and reference methods on data with known answers (no service, no data files):
// the length rule as a full calendar cycle (a year starting on 2 January passes, nine months do not, a 365-day span from
// the 25th covers every month), CalTRACK daily's balance-point search and model selection, CalTRACK hourly's
// time-of-week-and-temperature model, and the whole-hour rule.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { baselineGuardRails, calendarCycle } from '../../src/analysis/guardRails.ts';
import { caltrackDaily, caltrackHourly, weightedLeastSquares } from '../../src/analysis/caltrack.ts';
import { wholeHourKwh } from '../../src/analysis/wholeDays.ts';
import { addDays, daysBetween } from '../../src/platform/time/calendar.ts';

const observe = (from: string, to: string) =>
  daysBetween(from, to).map((day) => ({ day, heat: 1, cool: 0, dayType: 'working' as const, actualKwh: 10, expectedKwh: 10 }));
const rails = (from: string, to: string, days = observe(from, to)) =>
  baselineGuardRails({ resolution: 'day', baselineFrom: from, baselineTo: to, baseline: days, p: 2, dropped: [], cvRmsePercent: 5, nmbePercent: 0 });

test('the length rule is a full calendar cycle: 12 months each with 80 % of its days', () => {
  // The reviewer's building A: a calendar year whose first day has no data (364 days).
  const fromSecond = rails('2025-01-01', '2026-01-01', observe('2025-01-02', '2026-01-01'));
  assert.equal(fromSecond.checks.length.pass, true, fromSecond.reasons.join(' '));
  assert.equal(fromSecond.checks.length.monthsCovered, 12);
  // A 365-day span from the 25th: October is 7 days of one year and 24 of the next.
  assert.equal(rails('2025-10-25', addDays('2025-10-25', 365)).checks.length.pass, true);
  // Nine months: three calendar months missing, named.
  const nine = rails('2025-01-01', '2025-10-01');
  assert.equal(nine.checks.length.pass, false);
  assert.equal(nine.checks.length.monthsCovered, 9);
  assert.match(nine.reasons[0], /covers 9 of the 12 calendar months.*short: Oct 0 %, Nov 0 %, Dec 0 %/);
  // A year with a month at 77 % (24 of 31 days of March) fails; at 81 % (25 of 31) passes.
  const year = observe('2025-01-01', '2026-01-01');
  const without = (n: number) => year.filter((d) => !(d.day >= '2025-03-01' && d.day < addDays('2025-03-01', n)));
  assert.equal(rails('2025-01-01', '2026-01-01', without(7)).checks.length.pass, false);
  assert.equal(rails('2025-01-01', '2026-01-01', without(6)).checks.length.pass, true);
  assert.deepEqual(calendarCycle([{ day: '2025-03-01' }], 1)?.covered, []);
});

/** Days of a synthetic year: the day's mean temperature a seasonal cosine with a weekly wobble. */
const year = daysBetween('2025-01-01', '2026-01-01').map((day, i) => ({
  day,
  meanC: 11 - 9 * Math.cos((2 * Math.PI * (i - 15)) / 365) + 3 * Math.sin(i * 0.7),
}));
const toF = (c: number) => (c * 9) / 5 + 32;

test('CalTRACK daily recovers a heating balance point and slope, and chooses intercept-only on weather-blind use', () => {
  // 120 kWh/day + 6 kWh per °F-day below 58 °F, with a small deterministic noise.
  const heated = year.map((d, i) => ({ meanC: d.meanC, actualKwh: 120 + 6 * Math.max(0, 58 - toF(d.meanC)) + 3 * Math.sin(i * 2.3) }));
  const model = caltrackDaily(heated)!;
  assert.equal(model.model, 'hdd-only');
  assert.ok(Math.abs(toF(model.heatingBalanceC!) - 58) <= 1, `balance point ${toF(model.heatingBalanceC!)} °F`);
  assert.ok(Math.abs(model.coefficients.perHdd - 6) < 0.2, `slope ${model.coefficients.perHdd}`);
  assert.equal(model.p, 3, 'intercept, slope and the balance point');
  // Use that does not follow the weather: no slope is significant, the intercept-only model is chosen.
  const flat = year.map((_, i) => ({ meanC: year[i].meanC, actualKwh: 200 + 10 * Math.sin(i * 2.3) }));
  const none = caltrackDaily(flat)!;
  assert.equal(none.model, 'intercept-only');
  assert.ok(Math.abs(none.predict(0) - 200) < 2);
  // Heating and cooling: both slopes, cooling above heating.
  const both = year.map((d, i) => ({
    meanC: d.meanC,
    actualKwh: 100 + 4 * Math.max(0, 55 - toF(d.meanC)) + 8 * Math.max(0, toF(d.meanC) - 68) + 2 * Math.sin(i * 2.3),
  }));
  const hc = caltrackDaily(both)!;
  assert.equal(hc.model, 'hdd-cdd');
  assert.ok(
    Math.abs(toF(hc.heatingBalanceC!) - 55) <= 1.5 && Math.abs(toF(hc.coolingBalanceC!) - 68) <= 1.5,
    `${hc.heatingBalanceC} / ${hc.coolingBalanceC} °C`,
  );
});

test('CalTRACK hourly (TOWT) recovers an occupied schedule and a temperature response; weighted least squares leaves empty columns at 0', () => {
  const hours = [];
  for (const [i, d] of year.entries()) {
    const weekday = (new Date(`${d.day}T00:00:00Z`).getUTCDay() + 6) % 7;
    for (let h = 0; h < 24; h += 1) {
      const t = d.meanC + 4 * Math.cos((2 * Math.PI * (h - 15)) / 24);
      const occupied = weekday < 5 && h >= 8 && h < 18;
      const kwh = (occupied ? 40 : 10) + 1.5 * Math.max(0, 15 - t) + 0.5 * Math.sin(i * 24 + h);
      hours.push({ tow: weekday * 24 + h, month: Number(d.day.slice(5, 7)), temperatureC: t, actualKwh: kwh });
    }
  }
  const model = caltrackHourly(hours)!;
  assert.equal(model.segments, 12);
  let ss = 0;
  let sum = 0;
  for (const h of hours) {
    ss += (h.actualKwh - model.predict(h)) ** 2;
    sum += h.actualKwh;
  }
  const cv = Math.sqrt(ss / (hours.length - model.p)) / (sum / hours.length);
  assert.ok(cv < 0.05, `CV(RMSE) ${(cv * 100).toFixed(2)} % on a load the model can represent`);
  // 50 of 168 times of week are occupied (weekdays 08–18).
  assert.ok(Math.abs(model.occupiedShare - 50 / 168) < 0.03, `occupied ${model.occupiedShare}`);
  const { beta, used } = weightedLeastSquares(
    [
      [1, 0, 1],
      [1, 0, 2],
      [1, 0, 3],
    ],
    [2, 3, 4],
  );
  assert.deepEqual([...used], [true, false, true]);
  assert.ok(Math.abs(beta[0] - 1) < 1e-9 && beta[1] === 0 && Math.abs(beta[2] - 1) < 1e-9);
});

test('an hour counts only with its four intervals', () => {
  assert.equal(wholeHourKwh([1, 2, 3, 4, NaN], 0), 10);
  assert.ok(Number.isNaN(wholeHourKwh([1, 2, 3, 4, NaN], 1)));
  assert.ok(Number.isNaN(wholeHourKwh([1, 2, 3], 0)));
});
