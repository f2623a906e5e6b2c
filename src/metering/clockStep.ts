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
 */
export function dropAfter(
  store: IntervalStore,
  db: Db,
  timezone: string,
  at: number,
  ahead: ReadonlySet<number> = new Set(),
  lastAt: ReadonlyMap<number, { lastAt: number }> = new Map(),
): number {
  const sqlite = db.sqlite;
  const day = dayOf(timezone, at);
  // raw SQL: the rollups of the days after a day, to take them off their months
  const later = sqlite
    .prepare('SELECT meter_id AS meterId, day, total_kwh AS totalKwh, cost, carbon_kg AS carbonKg FROM meter_days WHERE day > ?')
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
  for (const row of later) {
    // An open day (from openFrom on) is in no month yet.
    if (openFrom !== null && row.day >= openFrom) continue;
    moveMonth.run(row.totalKwh, row.cost, row.carbonKg, row.meterId, row.day.slice(0, 7));
    touchedMonths.add(`${row.meterId}|${row.day.slice(0, 7)}`);
  }
  // raw SQL: the day rows after a day (a clock stepped back), by the day key
  sqlite.prepare('DELETE FROM meter_days WHERE day > ?').run(day);
  // Months with no day left go; a month's peak is recomputed from the days it keeps.
  // raw SQL: the month rows after a month, by the month key
  sqlite.prepare('DELETE FROM meter_months WHERE month > ?').run(day.slice(0, 7));
  const offset = at - dayIntervals(timezone, day).start;
  const first = Math.ceil(offset / INTERVAL_MS);
  // The interval holding `at` when `at` is inside one: its share before `at`.
  const partial = offset % INTERVAL_MS === 0 ? -1 : first - 1;
  const before = (offset - partial * INTERVAL_MS) / INTERVAL_MS;
  // raw SQL: the meters with a row on a day, plucked
  const today = sqlite.prepare('SELECT meter_id AS meterId FROM meter_days WHERE day = ?').pluck().all(day) as number[];
  let changed = later.length;
  for (const meterId of today) {
    const record = store.load(meterId, day);
    let dropped = false;
    for (let i = Math.max(0, first); i < record.kwh.length; i += 1) {
      if (!Number.isNaN(record.kwh[i]) || record.flags[i]) dropped = true;
      record.kwh[i] = NaN;
      record.flags[i] = 0;
      if (record.maxKw) record.maxKw[i] = NaN;
    }
    if (partial >= 0 && ahead.has(meterId) && !Number.isNaN(record.kwh[partial])) {
      const intervalStart = dayIntervals(timezone, day).start + partial * INTERVAL_MS;
      const counted = lastAt.get(meterId)?.lastAt;
      // The time the stored part covers: up to the last reading when that lies inside the interval, after `at`.
      const covered = counted !== undefined && counted > at && counted < intervalStart + INTERVAL_MS ? counted - intervalStart : INTERVAL_MS;
      record.kwh[partial] = record.kwh[partial]! * Math.min(1, (before * INTERVAL_MS) / covered);
      record.flags[partial] = record.flags[partial]! | FLAG_ESTIMATED;
      dropped = true;
    }
    if (!dropped) continue;
    store.save([record]);
    touchedMonths.add(`${meterId}|${day.slice(0, 7)}`);
    changed += 1;
  }
  store.recomputeMonthPeaks(touchedMonths);
  return changed;
}
