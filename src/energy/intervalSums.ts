// A target's meters summed interval by interval, apart from EnergyFigures (src/energy/figures.ts): what demand, the
// site's peak and the interval series are read from, the stored rows overlaid by what the collector holds.
import type { IntervalStore, StoredDays } from '../metering/index.ts';
import { addDays, dayIntervals, daysBetween, INTERVAL_MS, siteDay } from '../platform/time/calendar.ts';
import { round } from '../platform/numbers.ts';

/** A site's highest 15-minute mean demand and what it rests on. */
export type SitePeak = { kw: number; at: string; complete: boolean; incompleteIntervals: number; metersAtPeak: number; meters: number };

/** Each interval's kWh summed over the meters that have it (NaN where none has), and how many of the meters have it. */
export type SummedIntervals = { start: number; sums: Float64Array; seen: Uint16Array; meters: number };

const HOUR_INTERVALS = 3_600_000 / INTERVAL_MS;

/**
 * The meters `ids` summed per interval over [from, to) site days: a stored day as the collector holds it where it does,
 * and a day the collector holds without a stored row yet (only the last days can be held, so only they are asked for).
 */
export function sumMeterIntervals(
  days: Pick<StoredDays, 'kwhDays'>,
  open: IntervalStore['open'] | undefined,
  timezone: string,
  ids: number[],
  from: string,
  to: string,
): SummedIntervals {
  const range = daysBetween(from, to);
  const start = dayIntervals(timezone, from).start;
  const end = range.length ? dayIntervals(timezone, to).start : start;
  const count = Math.round((end - start) / INTERVAL_MS);
  const sums = new Float64Array(count);
  const seen = new Uint16Array(count);
  // A meter's day the collector holds in memory without a stored row yet (a new meter's first day, before the
  // first write) counts too, as in the CSV export: only the last days can be held, so only they are asked for.
  const today = siteDay(timezone, new Date());
  const heldDays = open ? daysBetween(from > addDays(today, -2) ? from : addDays(today, -2), to < addDays(today, 1) ? to : addDays(today, 1)) : [];
  const add = (day: string, values: ArrayLike<number>) => {
    const offset = Math.round((dayIntervals(timezone, day).start - start) / INTERVAL_MS);
    for (let i = 0; i < values.length; i += 1) {
      if (Number.isNaN(values[i])) continue;
      sums[offset + i] += values[i];
      seen[offset + i] += 1;
    }
  };
  for (const id of ids) {
    const stored = new Set<string>();
    for (const [day, kwh] of days.kwhDays(id, from, to)) {
      stored.add(day);
      add(day, open?.kwh(id, day) ?? kwh);
    }
    for (const day of heldDays) {
      const held = stored.has(day) ? undefined : open?.kwh(id, day);
      if (held) add(day, held);
    }
  }
  for (let i = 0; i < count; i += 1) if (seen[i] === 0) sums[i] = NaN;
  return { start, sums, seen, meters: ids.length };
}

/**
 * The highest summed interval as a mean kW, counting an interval some meters lack with what the others measured (the
 * peak is then a floor, and says so); null when no interval has data.
 */
export function highestInterval({ start, sums, seen, meters }: SummedIntervals): SitePeak | null {
  let best = -Infinity;
  let index = -1;
  let incomplete = 0;
  sums.forEach((value, i) => {
    if (Number.isNaN(value)) return;
    if (seen[i] < meters) incomplete += 1;
    if (value > best) {
      best = value;
      index = i;
    }
  });
  if (index < 0) return null;
  return {
    kw: round(best * HOUR_INTERVALS, 3),
    at: new Date(start + index * INTERVAL_MS).toISOString(),
    complete: incomplete === 0,
    incompleteIntervals: incomplete,
    metersAtPeak: seen[index],
    meters,
  };
}
