// The box's clock stepped back (or a reading from the future was once taken): what the interval store holds after the
// new "now" goes, so that the meters count it again from their next reading (the collector, src/metering/collector.ts).
import type { Db } from '../platform/db/client.ts';
import { dayIntervals, dayOf, INTERVAL_MS } from '../platform/time/calendar.ts';
import { FLAG_ESTIMATED, type IntervalStore } from './store.ts';

/**
 * Removes every interval after `at` (the box's clock stepped back, or a reading from the future was once taken): day
 * rows of later days are deleted, the day holding `at` keeps what lies before it, and the month rollups follow. Answers
 * how many day rows changed. In the caller's transaction.
 *
 * `ahead`: the meters read ahead of `at`, which start again from their next reading and count from `at` on. Each
 * counted the interval holding `at` past `at` as well, so that interval keeps the part before `at` pro rata, flagged
 * estimated (kept whole, the part after `at` was counted twice: the soak's restart 1 h back, issue 56). `lastAt`: each
 * meter's last counted reading, when known: the interval holds energy up to it only, so a reading inside the interval
 * makes the share before `at` that of the time it covers (at 03:01 of a part counted 03:00–03:08: 1/8, not 1/15).
 *
 * `points`: where each meter ahead starts again, when that is not `at` (each from its own reading: collectorClock.ts
 * restartPoints); such a meter is cut there instead. A meter not ahead whose last reading lies after `at` keeps what it
 * counted up to it (it counts on from there: nothing after it was counted).
 *
 * `removed`, when given, gets each meter's energy taken out (in its counter's unit), so that a meter not collected keeps
 * a state that counts from its cut (collectorClock.ts keptStates).
 *
 * A day row deleted whole is recorded in `meter_days_dropped` (migration 0043: it takes the next sync sequence), so that
 * the fleet removes that meter day too: no day row is left to name its intervals as missing (issue 56).
 */
export function dropAfter(
  store: IntervalStore,
  db: Db,
  timezone: string,
  at: number,
  ahead: ReadonlySet<number> = new Set(),
  lastAt: ReadonlyMap<number, { lastAt: number }> = new Map(),
  points: ReadonlyMap<number, number> = new Map(),
  removed?: Map<number, number>,
): number {
  const sqlite = db.sqlite;
  const cutOf = (meterId: number) => (ahead.has(meterId) ? (points.get(meterId) ?? at) : Math.max(at, lastAt.get(meterId)?.lastAt ?? at));
  let earliest = at;
  for (const point of points.values()) earliest = Math.min(earliest, point);
  const day = dayOf(timezone, earliest);
  // raw SQL: the rows from the earliest cut's day on, with their rollups (a later day's come off their months)
  const rows = sqlite
    .prepare('SELECT meter_id AS meterId, day, total_kwh AS totalKwh, cost, carbon_kg AS carbonKg FROM meter_days WHERE day >= ?')
    .all(day) as {
    meterId: number;
    day: string;
    totalKwh: number;
    cost: number;
    carbonKg: number;
  }[];
  const touchedMonths = new Set<string>();
  const openFrom = store.openFrom();
  // raw SQL: the month rollups moved by a difference in SQL (total_kwh = total_kwh - ?)
  const moveMonth = sqlite.prepare(
    'UPDATE meter_months SET total_kwh = total_kwh - ?, cost = cost - ?, carbon_kg = carbon_kg - ? WHERE meter_id = ? AND month = ?',
  );
  // raw SQL: one meter's day row, by its key
  const deleteRow = sqlite.prepare('DELETE FROM meter_days WHERE meter_id = ? AND day = ?');
  // raw SQL: an upsert that replaces the row, so its insert trigger stamps the next sync sequence (migration 0043)
  const recordDropped = sqlite.prepare('INSERT OR REPLACE INTO meter_days_dropped (meter_id, day) VALUES (?, ?)');
  let changed = 0;
  for (const row of rows) {
    const cut = cutOf(row.meterId);
    const cutDay = dayOf(timezone, cut);
    if (row.day < cutDay) continue;
    if (row.day === cutDay) {
      changed += trimDay(store, timezone, row.meterId, row.day, cut, ahead.has(row.meterId), lastAt, touchedMonths, removed);
      continue;
    }
    // A day after the meter's cut: gone, and off its month unless it is open (from openFrom on it is in no month yet).
    if (openFrom === null || row.day < openFrom) {
      moveMonth.run(row.totalKwh, row.cost, row.carbonKg, row.meterId, row.day.slice(0, 7));
      touchedMonths.add(`${row.meterId}|${row.day.slice(0, 7)}`);
    }
    deleteRow.run(row.meterId, row.day);
    recordDropped.run(row.meterId, row.day);
    removed?.set(row.meterId, (removed.get(row.meterId) ?? 0) + row.totalKwh);
    changed += 1;
  }
  // Months with no day left go; a month's peak is recomputed from the days it keeps.
  // raw SQL: the month rows after a month, by the month key
  sqlite.prepare('DELETE FROM meter_months WHERE month > ?').run(day.slice(0, 7));
  store.recomputeMonthPeaks(touchedMonths);
  return changed;
}

/**
 * One meter's day holding its cut: the intervals after `at` go, and for a meter ahead the interval holding `at` keeps its
 * part before it (see dropAfter). Answers 1 when the row changed.
 */
function trimDay(
  store: IntervalStore,
  timezone: string,
  meterId: number,
  day: string,
  at: number,
  isAhead: boolean,
  lastAt: ReadonlyMap<number, { lastAt: number }>,
  touchedMonths: Set<string>,
  removed?: Map<number, number>,
): number {
  const dayStart = dayIntervals(timezone, day).start;
  const offset = at - dayStart;
  const first = Math.ceil(offset / INTERVAL_MS);
  // The interval holding `at` when `at` is inside one: its share before `at`.
  const partial = offset % INTERVAL_MS === 0 ? -1 : first - 1;
  const before = (offset - partial * INTERVAL_MS) / INTERVAL_MS;
  const record = store.load(meterId, day);
  const heldBefore = removed ? sumOf(record.kwh) : 0;
  let dropped = false;
  for (let i = Math.max(0, first); i < record.kwh.length; i += 1) {
    if (!Number.isNaN(record.kwh[i]) || record.flags[i]) dropped = true;
    record.kwh[i] = NaN;
    record.flags[i] = 0;
    if (record.maxKw) record.maxKw[i] = NaN;
  }
  if (partial >= 0 && isAhead && !Number.isNaN(record.kwh[partial])) {
    const intervalStart = dayStart + partial * INTERVAL_MS;
    const counted = lastAt.get(meterId)?.lastAt;
    // The time the stored part covers: up to the last reading when that lies inside the interval, after `at`.
    const covered = counted !== undefined && counted > at && counted < intervalStart + INTERVAL_MS ? counted - intervalStart : INTERVAL_MS;
    record.kwh[partial] = record.kwh[partial]! * Math.min(1, (before * INTERVAL_MS) / covered);
    record.flags[partial] = record.flags[partial]! | FLAG_ESTIMATED;
    dropped = true;
  }
  if (!dropped) return 0;
  removed?.set(meterId, (removed.get(meterId) ?? 0) + heldBefore - sumOf(record.kwh));
  store.save([record]);
  touchedMonths.add(`${meterId}|${day.slice(0, 7)}`);
  return 1;
}

/** The energy a day's intervals hold (missing ones count nothing). */
function sumOf(values: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < values.length; i += 1) if (!Number.isNaN(values[i]!)) sum += values[i]!;
  return sum;
}
