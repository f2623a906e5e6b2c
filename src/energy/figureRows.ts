// The energy figures' row-by-row outputs, apart from EnergyFigures (src/energy/figures.ts): one meter's intervals as
// CSV, a power meter's highest readings laid on the interval grid, and the 15-minute or hourly points of a series.
import { FLAG_ESTIMATED, FLAG_SUSPECT, type IntervalStore, type StoredDays } from '../metering/index.ts';
import { dayIntervals, daysBetween, INTERVAL_MS } from '../platform/time/calendar.ts';
import { round } from '../platform/numbers.ts';

/** One point of a series (GET /api/energy/series). */
export type SeriesPoint = { start: string; kwh: number | null; cost: number | null; maxKw?: number | null; missing?: number; estimated?: number };

const HOUR_INTERVALS = 3_600_000 / INTERVAL_MS;

/**
 * One meter's intervals as CSV lines, a day at a time: each day is one short read, so a year streams without holding
 * the range in memory or the database between chunks.
 */
export function* meterCsv(
  days: Pick<StoredDays, 'dayOf'>,
  store: Pick<IntervalStore, 'open'> | undefined,
  timezone: string,
  meterId: number,
  from: string,
  to: string,
): Generator<string> {
  // quality: measured, estimated, suspect or missing (an empty kwh, never 0); intervals that have not happened are left out.
  yield 'start,end,kwh,mean_kw,flags,quality\n';
  const now = Date.now();
  for (const day of daysBetween(from, to)) {
    const { start, count } = dayIntervals(timezone, day);
    if (start >= now) break;
    const row = days.dayOf(meterId, day);
    // What the collector holds counts as well (edge: it is written hourly).
    const held = store?.open?.kwh(meterId, day);
    const values = held ?? row?.kwh ?? null;
    const rowFlags = row?.flags ?? null;
    let chunk = '';
    for (let i = 0; i < count; i += 1) {
      const at = start + i * INTERVAL_MS;
      if (at >= now) break;
      const value = values ? values[i] : NaN;
      const flags = rowFlags?.[i] ?? 0;
      const missing = value === undefined || Number.isNaN(value);
      const kwh = missing ? '' : String(round(value, 4));
      const kw = missing ? '' : String(round(value * HOUR_INTERVALS, 3));
      // Suspect (flag 64, laid over by StoredDays while its run is unconfirmed) before estimated: not to be modelled.
      const quality = missing ? 'missing' : flags & FLAG_SUSPECT ? 'suspect' : flags & FLAG_ESTIMATED ? 'estimated' : 'measured';
      chunk += `${new Date(at).toISOString()},${new Date(at + INTERVAL_MS).toISOString()},${kwh},${kw},${flags},${quality}\n`;
    }
    yield chunk;
  }
}

/** A power meter's highest reading per interval over [from, to), on the grid from `start`; null when it has none. */
export function maxReadings(
  days: Pick<StoredDays, 'maxKwDays'>,
  timezone: string,
  meterId: number,
  from: string,
  to: string,
  start: number,
  count: number,
): Float64Array | null {
  const rows = days.maxKwDays(meterId, from, to);
  if (!rows.some(([, values]) => values)) return null;
  const max = new Float64Array(count).fill(NaN);
  for (const [day, values] of rows) {
    if (!values) continue;
    const offset = Math.round((dayIntervals(timezone, day).start - start) / INTERVAL_MS);
    max.set(values, offset);
  }
  return max;
}

/** The points of a 15-minute (step 1) or hourly series: an interval with no data makes its point null, never zero. */
export function intervalPoints(start: number, kwh: Float64Array, step: number, maxKw: Float64Array | null): SeriesPoint[] {
  const points: SeriesPoint[] = [];
  // Hours start at whole UTC hours; in a zone with a :30 or :45 offset the local hour's boundary is used instead.
  for (let i = 0; i < kwh.length; i += step) {
    let sum = 0;
    let missing = false;
    for (let j = i; j < Math.min(kwh.length, i + step); j += 1) {
      if (Number.isNaN(kwh[j])) missing = true;
      else sum += kwh[j];
    }
    const point: SeriesPoint = { start: new Date(start + i * INTERVAL_MS).toISOString(), kwh: missing ? null : round(sum, 4), cost: null };
    if (maxKw) point.maxKw = Number.isNaN(maxKw[i]) ? null : round(maxKw[i], 3);
    points.push(point);
  }
  return points;
}
