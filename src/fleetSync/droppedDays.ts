// Meter days the box deleted whole (a clock step back across midnight: metering/clockStep.ts dropAfter), as the change
// feed carries them: `deletedDays` in a batch, each under the sequence the trigger of migration 0043 stamped, read in
// the batch's own transaction with everything else. No day row is left to name such a day's intervals as missing, so
// without this the fleet kept them (and the day's totals, its month and the site's EUI) for ever (issue 56, round 9).
import { asc, count, gt } from 'drizzle-orm';
import type { Db } from '../platform/db/client.ts';
import { meterDaysDropped } from '../platform/db/schema/index.ts';
import { dayIntervals } from '../platform/time/calendar.ts';

/** Dropped meter days a batch carries at most (the fleet refuses more than MAX_DELETED_DAYS, 422). */
export const DROPPED_DAYS_PER_BATCH = 1_000;

type Reader = Pick<Db['orm'], 'select'>;
export type DroppedDay = { meterId: number; day: string; syncSeq: number };
/** The part of a batch (batch.ts SiteBatch) the drops go into. */
type BatchPart = {
  days: Array<{ meter: string; day: string }>;
  deletedDays?: Array<{ meter: string; day: string; from: string; to: string; seq: number }>;
};

/** The first `limit` drops above `cursor`, by sequence. */
export function droppedAbove(tx: Reader, cursor: number, limit = DROPPED_DAYS_PER_BATCH): DroppedDay[] {
  return tx.select().from(meterDaysDropped).where(gt(meterDaysDropped.syncSeq, cursor)).orderBy(asc(meterDaysDropped.syncSeq)).limit(limit).all();
}

/** How many drops wait above `cursor` (for `emsctl fleet status`). */
export function droppedCount(db: Db, cursor: number): number {
  return db.orm.select({ n: count() }).from(meterDaysDropped).where(gt(meterDaysDropped.syncSeq, cursor)).get()?.n ?? 0;
}

/**
 * Puts the drops up to `through` into the batch, each with its day's span [from, to) in the site's `timezone` (the
 * intervals the fleet removes; the key is left out when there are none); answers their sequences. A
 * meter day the batch also carries as a row (counted again after the drop, under a higher sequence) is remembered as
 * that row; any other is remembered as holding nothing, so that when it is counted again every interval goes.
 */
export function addDropped(
  batch: BatchPart,
  rows: DroppedDay[],
  through: number,
  timezone: string,
  stage?: (meter: string, day: string, content: { values: Float64Array; qualities: Uint8Array }) => void,
): number[] {
  const inBatch = new Set(batch.days.map((day) => `${day.meter}|${day.day}`));
  const dropped = rows
    .filter((row) => row.syncSeq <= through)
    .map((row) => {
      const { start, count } = dayIntervals(timezone, row.day);
      const span = { from: new Date(start).toISOString(), to: new Date(start + count * 900_000).toISOString() };
      return { meter: String(row.meterId), day: row.day, ...span, seq: row.syncSeq };
    });
  for (const row of dropped)
    if (!inBatch.has(`${row.meter}|${row.day}`)) stage?.(row.meter, row.day, { values: new Float64Array(0), qualities: new Uint8Array(0) });
  if (dropped.length > 0) batch.deletedDays = dropped;
  return dropped.map((row) => row.seq);
}
