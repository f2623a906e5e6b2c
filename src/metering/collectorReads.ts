// What the collector asks the gateway (its port): the enabled meters' current values in batches, and a meter's history
// over a span in day-long requests, kept to what was asked and sorted. Turning them into intervals is the collector's.
import type { GatewayPort } from '../gateway/index.ts';
import type { Reading } from './readingCheck.ts';

/** The history asked for per request: one day keeps the simulator's (and most gateways') 5-minute resolution. */
const HISTORY_CHUNK_MS = 86_400_000;
const VALUES_BATCH = 1000;

/**
 * A meter's history readings, oldest first, as two columns of plain numbers: a 7-day backfill of 500 meters is a
 * million readings, and as objects they made the heap big enough for 250 ms garbage-collection pauses.
 */
export type History = { at: number[]; value: number[] };

/** A meter's current value: a reading, or a value the gateway marked bad (or sent none for) at a time. */
export type Current = Reading | { at: number; bad: true };

/** The gateway's current values of the meters, by code, in batches of VALUES_BATCH; a reading without a time is at `now()`. */
export async function readValues(iot: Pick<GatewayPort, 'values'>, meters: { code: string }[], now: () => number): Promise<Map<string, Current>> {
  const readings = new Map<string, Current>();
  for (let i = 0; i < meters.length; i += VALUES_BATCH) {
    const codes = meters.slice(i, i + VALUES_BATCH).map((meter) => meter.code);
    for (const row of await iot.values(codes)) {
      const at = row.at ?? now();
      const good = row.good && typeof row.value === 'number';
      readings.set(row.code, good ? { at, value: row.value as number } : { at, bad: true });
    }
  }
  return readings;
}

/** The gateway's readings in (from, to], oldest first; null when it has no history for the code or cannot answer. */
export async function readHistory(iot: Pick<GatewayPort, 'history'>, code: string, from: number, to: number): Promise<History | null> {
  const at: number[] = [];
  const value: number[] = [];
  let sorted = true;
  try {
    for (let start = from; start < to; start += HISTORY_CHUNK_MS) {
      const end = Math.min(to, start + HISTORY_CHUNK_MS);
      const rows = await iot.history(code, start, end);
      // null (404): the gateway keeps no history for the point (a new point): nothing to backfill, not a failure to
      // wait on (issue 41: the first readings were held back for FIRST_HISTORY_TRIES collections and lost).
      if (rows === null) break;
      // Only what was asked for: a gateway answering readings outside (from, to] is not believed about them.
      for (const row of rows) {
        if (row.at > from && row.at <= to) {
          if (at.length && row.at < at[at.length - 1]) sorted = false;
          at.push(row.at);
          value.push(row.value);
        }
      }
    }
  } catch {
    return null;
  }
  if (sorted) return { at, value };
  // A gateway answering out of order: sorted by time (a stable sort, as before).
  const order = at.map((_, i) => i).sort((a, b) => at[a] - at[b] || a - b);
  return { at: order.map((i) => at[i]), value: order.map((i) => value[i]) };
}

/** Runs `fn` on every item, at most `limit` at once. */
export async function mapLimit<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
