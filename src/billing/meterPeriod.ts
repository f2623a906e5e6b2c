// A meter's period as billing reads it: each day's intervals from the interval store, priced per interval as the store
// prices them (the tariff version of the day, its time-of-use band), summed per band, with its data quality; a split
// sub-meter's missing intervals estimated by ESTIMATE_RULE.
import { meterPrices, type MeterCommodity, type Tariffs } from '../pricing/index.ts';
import { FLAG_ESTIMATED, type IntervalStore } from '../metering/index.ts';
import type { Db } from '../platform/db/client.ts';
import { dayOf, daysBetween, INTERVAL_MS, localClock } from '../platform/time/calendar.ts';
import type { BilledMeter, MeterPeriod } from './bill.ts';

/** What reading a meter's period needs: the stored days, the tariffs (and a meter's commodity), the site's zone now. */
export type PeriodSource = { db: Db; store: IntervalStore; tariffs: Tariffs; meterOf: MeterCommodity; timezone: string };

export function meterPeriod(source: PeriodSource, meter: BilledMeter, from: string, to: string, estimate?: () => { supply: BilledMeter[] }): MeterPeriod {
  const { timezone } = source;
  const result: MeterPeriod = {
    meter,
    bands: new Map(),
    carbonKg: 0,
    intervals: 0,
    missing: 0,
    estimated: 0,
    quantity: 0,
    byDay: new Map(),
    billingEstimated: 0,
    estimatedQuantity: 0,
    estimatedBands: new Map(),
    days: [],
  };
  const gaps: { day: string; at: number; price: number; band: string; carbonFactor: number; values: Float64Array; guessed: Uint8Array; index: number }[] = [];
  const measured = new Map<string, { at: number; value: number }[]>();
  const addTo = (bands: Map<string, { quantity: number; cost: number }>, name: string, quantity: number, cost: number) => {
    let band = bands.get(name);
    if (!band) bands.set(name, (band = { quantity: 0, cost: 0 }));
    band.quantity += quantity;
    band.cost += cost;
  };
  for (const day of daysBetween(from, to)) {
    const record = source.store.load(meter.id, day);
    const count = record.kwh.length;
    const { prices, carbonFactor } = meterPrices(source.db, source.tariffs, source.meterOf, meter.id, timezone, day, record.start, count);
    const version = meter.commodity === 'electricity' ? source.tariffs.versionOn(day) : source.tariffs.versionFor(meter.commodity, day);
    const names = version ? source.tariffs.bandNames(version, timezone, day, record.start, count) : new Array<string>(count).fill('base');
    const values = Float64Array.from(record.kwh);
    const guessed = new Uint8Array(count);
    result.days.push({ day, start: record.start, values, guessed });
    for (let i = 0; i < count; i += 1) {
      result.intervals += 1;
      const value = record.kwh[i];
      const at = record.start + i * INTERVAL_MS;
      if (Number.isNaN(value)) {
        result.missing += 1;
        if (estimate) gaps.push({ day, at, price: prices[i], band: names[i], carbonFactor, values, guessed, index: i });
        continue;
      }
      if (record.flags[i] & FLAG_ESTIMATED) result.estimated += 1;
      addTo(result.bands, names[i], value, value * prices[i]);
      result.quantity += value;
      result.byDay.set(day, (result.byDay.get(day) ?? 0) + value);
      result.carbonKg += value * carbonFactor;
    }
  }
  if (estimate && gaps.length) {
    const { supply } = estimate();
    // The meter's measured intervals by local weekday and time, read only for a meter with gaps (localClock per
    // interval is most of the cost: a month of 200 sub-meters without gaps never pays it).
    for (const { start, values } of result.days)
      for (let i = 0; i < values.length; i += 1) {
        if (Number.isNaN(values[i])) continue;
        const at = start + i * INTERVAL_MS;
        const { weekday, minute } = localClock(timezone, at);
        const key = `${weekday}|${minute}`;
        const list = measured.get(key) ?? [];
        list.push({ at, value: values[i] });
        measured.set(key, list);
      }
    for (const gap of gaps) {
      const value = estimateInterval(source, gap.at, measured, supply);
      if (value === null) continue;
      gap.values[gap.index] = value;
      gap.guessed[gap.index] = 1;
      result.billingEstimated += 1;
      result.estimatedQuantity += value;
      addTo(result.bands, gap.band, value, value * gap.price);
      addTo(result.estimatedBands, gap.band, value, value * gap.price);
      result.quantity += value;
      result.byDay.set(gap.day, (result.byDay.get(gap.day) ?? 0) + value);
      result.carbonKg += value * gap.carbonFactor;
    }
  }
  return result;
}

/**
 * ESTIMATE_RULE for one missing interval: the mean of the meter's measured intervals at the same local time on the
 * same weekday (else on any day), times the supply meters' value now ÷ their mean at those same intervals (when the
 * supply has data at all of them); null when the meter has no measured interval at that local time.
 */
function estimateInterval(source: PeriodSource, at: number, measured: Map<string, { at: number; value: number }[]>, supply: BilledMeter[]): number | null {
  const { timezone } = source;
  const { weekday, minute } = localClock(timezone, at);
  let references = measured.get(`${weekday}|${minute}`) ?? [];
  if (!references.length) for (let other = 0; other < 7; other += 1) references = references.concat(measured.get(`${other}|${minute}`) ?? []);
  if (!references.length) return null;
  const mean = references.reduce((sum, ref) => sum + ref.value, 0) / references.length;
  if (!supply.length) return mean;
  const supplyAt = (instant: number) => {
    let sum = 0;
    for (const meter of supply) {
      const value = storedAt(source, meter.id, instant);
      if (value === null) return null;
      sum += value;
    }
    return sum;
  };
  const now = supplyAt(at);
  const then = references.map((ref) => supplyAt(ref.at));
  if (now === null || then.some((value) => value === null)) return mean;
  const supplyMean = (then as number[]).reduce((a, b) => a + b, 0) / then.length;
  return supplyMean > 0 ? (mean * now) / supplyMean : mean;
}

/** A meter's stored quantity in the interval starting at `at`, or null where it has none. */
function storedAt(source: PeriodSource, meterId: number, at: number): number | null {
  const record = source.store.load(meterId, dayOf(source.timezone, at));
  const value = record.kwh[Math.round((at - record.start) / INTERVAL_MS)];
  return value === undefined || Number.isNaN(value) ? null : value;
}

/** A meter's stored quantity in the interval starting at `at` (0 where it has none). */
export function quantityAt(source: PeriodSource, meterId: number, at: number): number {
  return storedAt(source, meterId, at) ?? 0;
}
