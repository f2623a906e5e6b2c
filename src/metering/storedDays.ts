// The read door to the stored day rows (`meter_days`) for the other contexts: which days of a set of meters are stored,
// and a day's 15-minute kWh decoded into the caller's arrays. The encoding (intervalCodec.ts) stays metering's own
// business: a reader outside metering asks here instead of selecting the blobs and decoding them itself
// (test/structure/tableOwnership.test.ts keeps it so).
import type { Db } from '../platform/db/client.ts';
import { decodeFlags, decodeValues, decodeValuesInto, KWH_SCALE } from './intervalCodec.ts';

/** A set of meter ids as SQLite's json_each reads it (`JSON.stringify(ids)`), made once per question by the caller. */
export type MeterIdsJson = string;

/** A meter's stored day, decoded: kWh per 15-minute interval (NaN: no data) and each interval's flags (FLAG_* of store.ts). */
export type DecodedDay = { day: string; kwh: Float64Array; flags: Uint8Array };

export class StoredDays {
  private readonly kwhOfDay;
  private readonly daysOfMeter;
  private readonly totalsOf;
  private readonly countOf;
  private readonly countByDay;

  /** Prepares its statements only: a reader per consumer costs what the consumer's own statements cost before. */
  constructor(db: Db) {
    const sqlite = db.sqlite;
    // raw SQL: the day's blob of every meter of a set in one read over the (meter_id, day) key, as arrays (no row objects).
    this.kwhOfDay = sqlite.prepare('SELECT meter_id, kwh FROM meter_days WHERE day = ? AND meter_id IN (SELECT value FROM json_each(?))').raw();
    // raw SQL: a meter's rows of a range in day order over the (meter_id, day) key, as arrays (no row objects).
    this.daysOfMeter = sqlite.prepare('SELECT day, kwh, flags FROM meter_days WHERE meter_id = ? AND day >= ? AND day < ? ORDER BY day').raw();
    // raw SQL: the stored day totals of a set of meters (the rollup column: no blob is read or decoded).
    this.totalsOf = sqlite
      .prepare('SELECT meter_id, day, total_kwh FROM meter_days WHERE meter_id IN (SELECT value FROM json_each(?)) AND day >= ? AND day < ?')
      .raw();
    // raw SQL: counts over the (meter_id, day) primary key, answered from the index alone (the blobs are not read).
    this.countOf = sqlite.prepare('SELECT count(*) FROM meter_days WHERE meter_id IN (SELECT value FROM json_each(?)) AND day >= ? AND day < ?').pluck();
    // raw SQL: per-day counts over the (meter_id, day) key, answered from the index alone, as arrays
    this.countByDay = sqlite
      .prepare('SELECT day, count(*) FROM meter_days WHERE meter_id IN (SELECT value FROM json_each(?)) AND day >= ? AND day < ? GROUP BY day')
      .raw();
  }

  /**
   * Decodes the stored kWh of `day` for each meter of `ids` into the array `into(meterId)` gives (its first `count`
   * entries: 92, 96 or 100 on a site day); a meter `into` gives no array for is skipped. Returns how many were decoded.
   * The caller owns the arrays and reuses them day after day: no allocation per stored day (issue 27).
   */
  decodeKwhInto(day: string, ids: MeterIdsJson, into: (meterId: number) => Float64Array | undefined): number {
    let decoded = 0;
    for (const [meterId, blob] of this.kwhOfDay.iterate(day, ids) as IterableIterator<[number, Uint8Array]>) {
      const values = into(meterId);
      if (values === undefined) continue;
      decodeValuesInto(blob, KWH_SCALE, values);
      decoded += 1;
    }
    return decoded;
  }

  /** The stored days of one meter in [from, to), in day order, decoded (a day with no row is not there). */
  *decodedDays(meterId: number, from: string, to: string): Generator<DecodedDay> {
    for (const [day, kwhBlob, flagsBlob] of this.daysOfMeter.iterate(meterId, from, to) as IterableIterator<[string, Uint8Array, Uint8Array]>) {
      const kwh = decodeValues(kwhBlob, KWH_SCALE);
      yield { day, kwh, flags: decodeFlags(flagsBlob, kwhBlob, kwh.length) };
    }
  }

  /** The stored kWh total of each (meter, day) of `ids` in [from, to), in no particular order. */
  dayTotals(ids: MeterIdsJson, from: string, to: string): Array<[meterId: number, day: string, kwh: number]> {
    return this.totalsOf.all(ids, from, to) as Array<[number, string, number]>;
  }

  /** How many (meter, day) rows of `ids` are stored for the days of [from, to). */
  count(ids: MeterIdsJson, from: string, to: string): number {
    return this.countOf.get(ids, from, to) as number;
  }

  /** For each day of [from, to) with a stored row, how many meters of `ids` have one, in day order. */
  metersPerDay(ids: MeterIdsJson, from: string, to: string): Array<[day: string, meters: number]> {
    return this.countByDay.all(ids, from, to) as Array<[string, number]>;
  }
}
