// The read door to the stored day and month rows (`meter_days`, `meter_months`) and the meters' last demand
// (`meter_state`) for the other contexts: which days of a set of meters are stored, their rollups summed per day,
// month or area, and a day's 15-minute values decoded. The encoding (intervalCodec.ts) stays metering's own business:
// a reader outside metering asks here instead of selecting the rows and decoding them itself
// (test/structure/tableOwnership.test.ts keeps it so). Built once, with the interval store (src/energy/module.ts;
// test/structure/composition.test.ts), and handed to every reader.
import type { Db } from '../platform/db/client.ts';
import { addDays, dayIntervals, dayOf, INTERVAL_MS } from '../platform/time/calendar.ts';
import { decodeFlags, decodeValues, decodeValuesInto, KW_SCALE, KWH_SCALE } from './intervalCodec.ts';
import { FLAG_SUSPECT, type HeldDay } from './store.ts';

/** A set of meter ids as SQLite's json_each reads it (`JSON.stringify(ids)`), made once per question by the caller. */
export type MeterIdsJson = string;

/** A meter's stored day, decoded: kWh per 15-minute interval (NaN: no data) and each interval's flags (FLAG_* of store.ts). */
export type DecodedDay = { day: string; kwh: Float64Array; flags: Uint8Array };

/** Energy, cost and carbon summed over rows. */
export type Rollup = { kwh: number; cost: number; carbonKg: number };

export class StoredDays {
  private readonly dayRollups;
  private readonly dataDays;
  private readonly monthRollups;
  private readonly openMonthRollups;
  private readonly openAreaMonths;
  private readonly openDayPeaks;
  private readonly areaDays;
  private readonly areaMonths;
  private readonly monthPeaksOf;
  private readonly kwhOfMeter;
  private readonly maxOfMeter;
  private readonly dayRow;
  private readonly demandRows;
  private readonly kwhOfDay;
  private readonly daysOfMeter;
  private readonly totalsOf;
  private readonly countOf;
  private readonly countByDay;
  private readonly areaMeters;
  private readonly suspectOf;
  private readonly presenceOf;
  /** The last few id sets asked for, parsed (a figure asks for the same set many times). */
  private readonly idSets = new Map<string, Set<number>>();

  /** Prepares its statements only: a reader per consumer costs what the consumer's own statements cost before. */
  constructor(
    db: Db,
    /** The site's time zone: an open day's peak interval as an instant. */
    private readonly timezone: () => string,
    /**
     * The days the collector holds ahead of their rows (IntervalStore.heldDays): the day and month figures add their
     * difference to the stored rows, so they are as current as what is held. None in a process without a collector.
     */
    private readonly held: () => readonly HeldDay[] = () => [],
  ) {
    const sqlite = db.sqlite;
    // The month rollups hold whole days only (store.ts foldBefore): the open days (from meter_fold.open_from on: today)
    // are read from their day rows and added to their month's row here, the one place month figures are read.
    const open = 'day >= (SELECT open_from FROM meter_fold WHERE id = 1)';
    // raw SQL: the open days' rollups summed per month over a json_each set of meters (a range of the (day, meter_id) key)
    this.openMonthRollups = sqlite.prepare(
      `SELECT substr(day, 1, 7) AS month, sum(total_kwh) AS kwh, sum(cost) AS cost, sum(carbon_kg) AS carbonKg FROM meter_days
       WHERE ${open} AND day >= @from AND day < @to AND meter_id IN (SELECT value FROM json_each(@ids)) GROUP BY month`,
    );
    // raw SQL: CROSS JOIN fixes the plan: the open days' range of the (day, meter_id) key first, each row's meter by id
    this.openAreaMonths = sqlite.prepare(
      `SELECT m.area, sum(d.total_kwh) AS kwh, sum(d.cost) AS cost, sum(d.carbon_kg) AS carbonKg FROM meter_days d CROSS JOIN meters m ON m.id = d.meter_id
       WHERE m.area IS NOT NULL AND m.commodity = 'electricity' AND m.role = 'import' AND d.${open} AND d.day >= @from AND d.day < @to GROUP BY m.area`,
    );
    // raw SQL: the open days' peaks of a month, in day order, as plain rows
    this.openDayPeaks = sqlite.prepare(
      `SELECT meter_id AS meterId, day, peak_kw AS kw, peak_index AS peakIndex FROM meter_days
       WHERE ${open} AND day >= ? AND day < ? AND peak_kw IS NOT NULL ORDER BY day`,
    );
    // raw SQL: sums of the day rollups per day over a json_each set of meters, answered from the (meter_id, day) key
    this.dayRollups = sqlite.prepare(
      `SELECT day, sum(total_kwh) AS kwh, sum(cost) AS cost, sum(carbon_kg) AS carbonKg, count(peak_kw) AS recorded FROM meter_days
       WHERE meter_id IN (SELECT value FROM json_each(@ids)) AND day >= @from AND day < @to GROUP BY day`,
    );
    // raw SQL: the days with a recorded peak (GROUP BY … HAVING), over a json_each set of meters
    this.dataDays = sqlite
      .prepare(
        'SELECT day FROM meter_days WHERE meter_id IN (SELECT value FROM json_each(@ids)) AND day >= @from AND day < @to GROUP BY day HAVING count(peak_kw) > 0',
      )
      .pluck();
    // raw SQL: sums of the month rollups per month over a json_each set of meters
    this.monthRollups = sqlite.prepare(
      `SELECT month, sum(total_kwh) AS kwh, sum(cost) AS cost, sum(carbon_kg) AS carbonKg FROM meter_months
       WHERE meter_id IN (SELECT value FROM json_each(@ids)) AND month >= @from AND month < @to GROUP BY month`,
    );
    // Every area meter's rows of the range: one range of the primary key (day, meter_id), each row's meter by its id.
    // CROSS JOIN keeps that order. Meters outside with the (meter, day) index was 10-25 ms for today at 2,000 meters
    // (a random lookup per meter) against ~1 ms, and 15 against 7 ms for a year of month rows.
    // raw SQL: CROSS JOIN fixes the plan: one range of the (day, meter_id) key, each row's meter by id (10-25 ms against ~1 ms at 2,000 meters,
    // measured)
    this.areaDays = sqlite.prepare(
      `SELECT m.area, sum(d.total_kwh) AS kwh, sum(d.cost) AS cost, sum(d.carbon_kg) AS carbonKg FROM meter_days d CROSS JOIN meters m ON m.id = d.meter_id
       WHERE m.area IS NOT NULL AND m.commodity = 'electricity' AND m.role = 'import' AND d.day >= @from AND d.day < @to GROUP BY m.area`,
    );
    // raw SQL: CROSS JOIN fixes the plan: the month rows' range first, each row's meter by id (15 against 7 ms for a year, measured)
    this.areaMonths = sqlite.prepare(
      `SELECT m.area, sum(r.total_kwh) AS kwh, sum(r.cost) AS cost, sum(r.carbon_kg) AS carbonKg FROM meter_months r CROSS JOIN meters m ON m.id = r.meter_id
       WHERE m.area IS NOT NULL AND m.commodity = 'electricity' AND m.role = 'import' AND r.month >= @from AND r.month < @to GROUP BY m.area`,
    );
    // raw SQL: each meter's month peak, as plain rows, for the month's peaks
    this.monthPeaksOf = sqlite.prepare('SELECT meter_id AS meterId, peak_kw AS kw, peak_at AS at FROM meter_months WHERE month = ? AND peak_kw IS NOT NULL');
    // raw SQL: per day, how many rows of a json_each set of meters hold every interval (the encoding's presence byte:
    // intervalCodec.ts, blob[1] = 0 all present, 1 none) and how many are of the first format (length a multiple of 4:
    // no presence byte), read without decoding a value (the whole-day rule, issue 52: 87 ms a month question at 29 meters)
    this.presenceOf = sqlite
      .prepare(
        `SELECT day, sum(length(kwh) % 4 <> 0 AND substr(kwh, 2, 1) = x'00') AS complete, count(*) AS rows, sum(length(kwh) % 4 = 0) AS legacy
         FROM meter_days WHERE meter_id IN (SELECT value FROM json_each(?)) AND day >= ? AND day < ? GROUP BY day`,
      )
      .raw();
    // raw SQL: a meter's kWh blobs of a range, as arrays, for the decoder (no row objects)
    this.kwhOfMeter = sqlite.prepare('SELECT day, kwh FROM meter_days WHERE meter_id = ? AND day >= ? AND day < ? ORDER BY day').raw();
    // raw SQL: a meter's highest-reading blobs of a range, as arrays, for the decoder
    this.maxOfMeter = sqlite.prepare('SELECT day, max_kw FROM meter_days WHERE meter_id = ? AND day >= ? AND day < ? ORDER BY day').raw();
    // raw SQL: one day's kWh and flags blobs, for the decoder
    this.dayRow = sqlite.prepare('SELECT kwh, flags FROM meter_days WHERE meter_id = ? AND day = ?').raw();
    // raw SQL: every meter's current demand as arrays (the collector's stored state)
    this.demandRows = sqlite.prepare('SELECT meter_id, demand_kw FROM meter_state WHERE demand_kw IS NOT NULL').raw();
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
    // raw SQL: the grid-import meters with an area (the area figures' meters) as arrays, for the held days' areas
    this.areaMeters = sqlite.prepare("SELECT id, area FROM meters WHERE area IS NOT NULL AND commodity = 'electricity' AND role = 'import'").raw();
    // raw SQL: the unconfirmed suspect runs (suspectRuns.ts) of a json_each set of meters touching [from, to), as arrays
    this.suspectOf = sqlite
      .prepare(
        `SELECT meter_id, start_at, start_at + intervals * ${INTERVAL_MS} FROM meter_suspect_runs WHERE confirmed_at IS NULL
         AND meter_id IN (SELECT value FROM json_each(?)) AND start_at < ? AND start_at + intervals * ${INTERVAL_MS} > ?`,
      )
      .raw();
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

  /**
   * The stored days of one meter in [from, to), in day order, decoded (a day with no row is not there); an interval of
   * an unconfirmed suspect run carries FLAG_SUSPECT.
   */
  *decodedDays(meterId: number, from: string, to: string): Generator<DecodedDay> {
    const timezone = this.timezone();
    const spans = this.suspectSpans(JSON.stringify([meterId]), dayIntervals(timezone, from).start, dayIntervals(timezone, to).start);
    for (const [day, kwhBlob, flagsBlob] of this.daysOfMeter.iterate(meterId, from, to) as IterableIterator<[string, Uint8Array, Uint8Array]>) {
      const kwh = decodeValues(kwhBlob, KWH_SCALE);
      const flags = decodeFlags(flagsBlob, kwhBlob, kwh.length);
      if (spans.length) markSuspect(flags, dayIntervals(timezone, day).start, spans);
      yield { day, kwh, flags };
    }
  }

  /**
   * The unconfirmed suspect runs (docs/energy-data-quality.md "Suspect runs") of the meters of `ids` touching the
   * instants [from, to) (ms): each as the meter and its [start, end) in ms. A consumer that models consumption leaves
   * these intervals out (an hourly model: the hours they touch).
   */
  suspectSpans(ids: MeterIdsJson, from: number, to: number): Array<{ meterId: number; start: number; end: number }> {
    return (this.suspectOf.all(ids, to, from) as Array<[number, number, number]>).map(([meterId, start, end]) => ({ meterId, start, end }));
  }

  /**
   * For each site day of [from, to) holding intervals of an unconfirmed suspect run of a meter of `ids`: how many (summed
   * over the meters). A day with any is not a whole day for a daily model, an EnPI or an anomaly model.
   */
  suspectPerDay(ids: MeterIdsJson, from: string, to: string): Map<string, number> {
    const timezone = this.timezone();
    const fromMs = dayIntervals(timezone, from).start;
    const toMs = dayIntervals(timezone, to).start;
    const perDay = new Map<string, number>();
    for (const span of this.suspectSpans(ids, fromMs, toMs)) {
      const start = Math.max(span.start, fromMs);
      const end = Math.min(span.end, toMs);
      for (let day = dayOf(timezone, start); ; day = addDays(day, 1)) {
        const { start: dayStart, count } = dayIntervals(timezone, day);
        if (dayStart >= end) break;
        const inDay = (Math.min(end, dayStart + count * INTERVAL_MS) - Math.max(start, dayStart)) / INTERVAL_MS;
        if (inDay > 0) perDay.set(day, (perDay.get(day) ?? 0) + inDay);
      }
    }
    return perDay;
  }

  /**
   * Per stored day of [from, to) for the meters of `ids`: the rows that hold every interval of their day (read from
   * the encoding's presence byte, no value decoded), the rows, and the rows of the first format (which say nothing
   * without decoding). Stored rows only: what the collector holds ahead of them is the caller's to overlay.
   */
  presencePerDay(ids: MeterIdsJson, from: string, to: string): Array<[day: string, complete: number, rows: number, legacy: number]> {
    return this.presenceOf.all(ids, from, to) as Array<[string, number, number, number]>;
  }

  /** The kWh total of each (meter, day) of `ids` in [from, to) (held days as held), in no particular order. */
  dayTotals(ids: MeterIdsJson, from: string, to: string): Array<[meterId: number, day: string, kwh: number]> {
    const rows = this.totalsOf.all(ids, from, to) as Array<[number, string, number]>;
    const held = this.heldOf(ids, from, to);
    if (!held.length) return rows;
    const byKey = new Map(rows.map((row) => [`${row[0]}|${row[1]}`, row]));
    for (const day of held) byKey.set(`${day.meterId}|${day.day}`, [day.meterId, day.day, day.totalKwh]);
    return [...byKey.values()];
  }

  /** How many (meter, day) rows of `ids` are stored (or held ahead of their first write) for the days of [from, to). */
  count(ids: MeterIdsJson, from: string, to: string): number {
    let count = this.countOf.get(ids, from, to) as number;
    for (const day of this.heldOf(ids, from, to)) if (day.stored === null) count += 1;
    return count;
  }

  /** For each day of [from, to) with a row (stored or held), how many meters of `ids` have one, in day order. */
  metersPerDay(ids: MeterIdsJson, from: string, to: string): Array<[day: string, meters: number]> {
    const rows = this.countByDay.all(ids, from, to) as Array<[string, number]>;
    const fresh = this.heldOf(ids, from, to).filter((day) => day.stored === null);
    if (!fresh.length) return rows;
    const byDay = new Map(rows);
    for (const day of fresh) byDay.set(day.day, (byDay.get(day.day) ?? 0) + 1);
    return [...byDay].sort((a, b) => (a[0] < b[0] ? -1 : 1));
  }

  /**
   * The day rollups of `ids` summed per day of [from, to) (days with a row only, stored or held), in day order;
   * `recorded`: rows with a recorded peak.
   */
  rollupsByDay(ids: MeterIdsJson, from: string, to: string): Array<{ day: string; recorded: number } & Rollup> {
    const rows = this.dayRollups.all({ ids, from, to }) as Array<{ day: string; recorded: number } & Rollup>;
    const held = this.heldOf(ids, from, to);
    if (!held.length) return rows;
    const byDay = new Map(rows.map((row) => [row.day, { ...row }]));
    for (const day of held) {
      let sum = byDay.get(day.day);
      if (!sum) byDay.set(day.day, (sum = { day: day.day, kwh: 0, cost: 0, carbonKg: 0, recorded: 0 }));
      const difference = heldDifference(day);
      sum.kwh += difference.kwh;
      sum.cost += difference.cost;
      sum.carbonKg += difference.carbonKg;
      if (day.peakKw !== null && (day.stored?.peakKw ?? null) === null) sum.recorded += 1;
    }
    return [...byDay.values()].sort((a, b) => (a.day < b.day ? -1 : 1));
  }

  /** The days of [from, to) on which some meter of `ids` recorded an interval (held ones included), in day order. */
  daysWithData(ids: MeterIdsJson, from: string, to: string): string[] {
    const days = this.dataDays.all({ ids, from, to }) as string[];
    const held = this.heldOf(ids, from, to).filter((day) => day.peakKw !== null);
    if (!held.length) return days;
    return [...new Set([...days, ...held.map((day) => day.day)])].sort();
  }

  /** The rollups of `ids` summed per month of [from, to) (months as YYYY-MM): each month's row plus its open days and what is held. */
  rollupsByMonth(ids: MeterIdsJson, from: string, to: string): Array<{ month: string } & Rollup> {
    return this.withHeld(
      'month',
      merged(
        'month',
        this.monthRollups.all({ ids, from, to }) as Array<{ month: string } & Rollup>,
        this.openMonthRollups.all({ ids, from: `${from}-01`, to: `${to}-01` }) as Array<{ month: string } & Rollup>,
      ),
      this.heldOf(ids, `${from}-01`, `${to}-01`),
      (day) => day.day.slice(0, 7),
    );
  }

  /** The day rollups of [from, to) summed per area over the areas' grid-import meters, held days included. */
  areaRollupsByDays(from: string, to: string): Array<{ area: string } & Rollup> {
    const rows = this.areaDays.all({ from, to }) as Array<{ area: string } & Rollup>;
    const held = this.heldOf(null, from, to);
    return held.length ? this.withHeld('area', rows, ...this.heldAreas(held)) : rows;
  }

  /** The rollups of the months [from, to) (YYYY-MM) summed per area over the areas' grid-import meters, open and held days included. */
  areaRollupsByMonths(from: string, to: string): Array<{ area: string } & Rollup> {
    const rows = merged(
      'area',
      this.areaMonths.all({ from, to }) as Array<{ area: string } & Rollup>,
      this.openAreaMonths.all({ from: `${from}-01`, to: `${to}-01` }) as Array<{ area: string } & Rollup>,
    );
    const held = this.heldOf(null, `${from}-01`, `${to}-01`);
    return held.length ? this.withHeld('area', rows, ...this.heldAreas(held)) : rows;
  }

  /** Each meter's highest 15-minute mean demand of a month (YYYY-MM) and when (ms), open and held days included. */
  monthPeaks(month: string): Array<{ meterId: number; kw: number; at: number }> {
    const peaks = new Map((this.monthPeaksOf.all(month) as Array<{ meterId: number; kw: number; at: number }>).map((row) => [row.meterId, row]));
    const from = `${month}-01`;
    const to = `${nextMonthOf(month)}-01`;
    const rows = this.openDayPeaks.all(from, to) as Array<{ meterId: number; day: string; kw: number; peakIndex: number }>;
    // A held day holds at least what its row holds: its peak is a candidate like an open day's (a row's own peak
    // cannot be higher).
    for (const day of this.heldOf(null, from, to))
      if (day.peakKw !== null && day.peakIndex !== null) rows.push({ meterId: day.meterId, day: day.day, kw: day.peakKw, peakIndex: day.peakIndex });
    if (!rows.length) return [...peaks.values()];
    const timezone = this.timezone();
    // Open days come after every folded day: on a tie the earlier (folded) peak stays, as the running maximum kept it.
    for (const row of rows) {
      const best = peaks.get(row.meterId);
      if (best && best.kw >= row.kw) continue;
      peaks.set(row.meterId, { meterId: row.meterId, kw: row.kw, at: dayIntervals(timezone, row.day).start + row.peakIndex * INTERVAL_MS });
    }
    return [...peaks.values()];
  }

  /** The held days of [from, to) of the meters of `ids` (null: every meter). */
  private heldOf(ids: MeterIdsJson | null, from: string, to: string): HeldDay[] {
    const held = this.held();
    if (!held.length) return [];
    const set = ids === null ? null : this.idSet(ids);
    return held.filter((day) => day.day >= from && day.day < to && (set === null || set.has(day.meterId)));
  }

  private idSet(ids: MeterIdsJson): Set<number> {
    let set = this.idSets.get(ids);
    if (!set) {
      if (this.idSets.size >= 16) this.idSets.clear();
      this.idSets.set(ids, (set = new Set(JSON.parse(ids) as number[])));
    }
    return set;
  }

  /** The held days of area meters, with each day's area as its key. */
  private heldAreas(held: HeldDay[]): [HeldDay[], (day: HeldDay) => string] {
    const areas = new Map(this.areaMeters.all() as Array<[number, string]>);
    return [held.filter((day) => areas.has(day.meterId)), (day) => areas.get(day.meterId)!];
  }

  /** Rows keyed by month or area with the held days' differences added (a key with no row gets one). */
  private withHeld<K extends 'month' | 'area'>(
    key: K,
    rows: Array<Record<K, string> & Rollup>,
    held: HeldDay[],
    keyOf: (day: HeldDay) => string,
  ): Array<Record<K, string> & Rollup> {
    return merged(
      key,
      rows,
      held.map((day) => ({ [key]: keyOf(day), ...heldDifference(day) }) as Record<K, string> & Rollup),
    );
  }

  /** A meter's stored kWh per day of [from, to), in day order, decoded (a day with no row is not there). */
  *kwhDays(meterId: number, from: string, to: string): Generator<[day: string, kwh: Float64Array]> {
    for (const [day, blob] of this.kwhOfMeter.iterate(meterId, from, to) as IterableIterator<[string, Uint8Array]>) yield [day, decodeValues(blob, KWH_SCALE)];
  }

  /** A meter's highest readings (kW) per day of [from, to), in day order; null for a day without (energy meters). */
  maxKwDays(meterId: number, from: string, to: string): Array<[day: string, maxKw: Float64Array | null]> {
    return (this.maxOfMeter.all(meterId, from, to) as Array<[string, Uint8Array | null]>).map(([day, blob]) => [
      day,
      blob ? decodeValues(blob, KW_SCALE) : null,
    ]);
  }

  /** One meter's stored day, decoded, or undefined when there is no row; suspect intervals carry FLAG_SUSPECT. */
  dayOf(meterId: number, day: string): DecodedDay | undefined {
    const row = this.dayRow.get(meterId, day) as [Uint8Array, Uint8Array] | undefined;
    if (!row) return undefined;
    const kwh = decodeValues(row[0], KWH_SCALE);
    const flags = decodeFlags(row[1], row[0], kwh.length);
    const { start } = dayIntervals(this.timezone(), day);
    const spans = this.suspectSpans(JSON.stringify([meterId]), start, start + kwh.length * INTERVAL_MS);
    if (spans.length) markSuspect(flags, start, spans);
    return { day, kwh, flags };
  }

  /** Each meter's last demand (kW) as the collector stored it; meters without one are not there. */
  demands(): Array<[meterId: number, kw: number]> {
    return this.demandRows.all() as Array<[number, number]>;
  }
}

/** Sets FLAG_SUSPECT on the intervals of a day (starting at `start`) that lie in a span. */
function markSuspect(flags: Uint8Array, start: number, spans: Array<{ start: number; end: number }>): void {
  for (const span of spans) {
    const from = Math.max(0, Math.ceil((span.start - start) / INTERVAL_MS));
    const to = Math.min(flags.length, Math.ceil((span.end - start) / INTERVAL_MS));
    for (let i = from; i < to; i += 1) flags[i] |= FLAG_SUSPECT;
  }
}

/** What a held day adds to its stored row's rollups. */
function heldDifference(day: HeldDay): Rollup {
  return { kwh: day.totalKwh - (day.stored?.totalKwh ?? 0), cost: day.cost - (day.stored?.cost ?? 0), carbonKg: day.carbonKg - (day.stored?.carbonKg ?? 0) };
}

/** Rows of the same key summed (a month's row and its open days). */
function merged<K extends 'month' | 'area'>(
  key: K,
  rows: Array<Record<K, string> & Rollup>,
  more: Array<Record<K, string> & Rollup>,
): Array<Record<K, string> & Rollup> {
  if (!more.length) return rows;
  const byKey = new Map(rows.map((row) => [row[key], { ...row }]));
  for (const row of more) {
    const sum = byKey.get(row[key]);
    if (!sum) byKey.set(row[key], { ...row });
    else {
      sum.kwh += row.kwh;
      sum.cost += row.cost;
      sum.carbonKg += row.carbonKg;
    }
  }
  return [...byKey.values()];
}

function nextMonthOf(month: string): string {
  const [y, m] = month.split('-').map(Number);
  return m === 12 ? `${String(y + 1).padStart(4, '0')}-01` : `${String(y).padStart(4, '0')}-${String(m + 1).padStart(2, '0')}`;
}
