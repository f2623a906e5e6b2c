// The compact interval store: one row per meter per site day holding its 15-minute intervals (fixed-point, delta- and
// varint-encoded: intervalCodec.ts), plus day rollups (energy, cost, carbon, peak demand) kept with every write and
// month rollups of whole days: a day is added to its month once it is done (foldBefore, issue 44), so the 15-minute
// write of today no longer rewrites this month's rows. Virtual meters are derived rows, rebuilt from their terms whenever a day of theirs is written; a virtual meter
// created or given new terms has its history rebuilt after the meter write, in slices (VirtualRebuilds).
import { meterPrices, type MeterCommodity, type Tariffs } from '../pricing/index.ts';
import type { Db } from '../platform/db/client.ts';
import { Kept } from '../platform/db/kept.ts';
import { eq } from 'drizzle-orm';
import { meterDays, meterMonths, type MeterTerm } from '../platform/db/schema/index.ts';
import { dayIntervals, dayOf, INTERVAL_MS } from '../platform/time/calendar.ts';
import { meterCommodity } from './meterCommodity.ts';
import { decodeFlags, decodeValues, encodeFlags, encodeValues, KW_SCALE, KWH_SCALE, quantize } from './intervalCodec.ts';

/** Interval flags, one byte each in memory (stored as runs). */
export const FLAG_BAD_QUALITY = 1;
export const FLAG_RESET = 2;
/** Spread evenly over a gap the gateway's history could not fill. */
export const FLAG_ESTIMATED = 4;
/** A counter decrease small enough to be register jitter: held (no energy), never taken for a reset. */
export const FLAG_JITTER = 8;
/** A reading refused here (a time in the future or too old, an implausible step): it counted for nothing. */
export const FLAG_REFUSED = 16;
/** Loaded by a history import (historyImport.ts): measured by another system, not read from the gateway here. */
export const FLAG_IMPORTED = 32;
/**
 * In an unconfirmed suspect run (suspectRuns.ts): never stored in a row's flags, laid over them when StoredDays decodes
 * a day, so that a confirmation (a row of meter_suspect_runs) makes the intervals measured again without a rewrite.
 */
export const FLAG_SUSPECT = 64;

export type DayRecord = {
  meterId: number;
  day: string;
  start: number;
  kwh: Float64Array | Float32Array;
  flags: Uint8Array;
  maxKw: Float64Array | Float32Array | null;
};

/** A day row's rollups as stored. */
export type StoredRollups = { totalKwh: number; cost: number; carbonKg: number; peakKw: number | null };

/**
 * A (meter, day) the collector holds in memory ahead of its stored row: its rollups as they would be written now, and
 * as they are stored (null: no row yet). Readers of day and month figures add the difference (StoredDays).
 */
export type HeldDay = {
  meterId: number;
  day: string;
  totalKwh: number;
  cost: number;
  carbonKg: number;
  peakKw: number | null;
  peakIndex: number | null;
  stored: StoredRollups | null;
  /**
   * The held record itself (its values as counted, flags): the fleet sync sends it between the writes (issue 44). The
   * collector goes on counting into it, so it is read at once, in the same turn as heldDays() was called.
   */
  record: DayRecord;
};

type DayRollupRow = { meterId: number; day: string; totalKwh: number; cost: number; carbonKg: number; peakKw: number | null; peakIndex: number | null };

function nextMonthOf(month: string): string {
  const [y, m] = month.split('-').map(Number);
  return m === 12 ? `${String(y + 1).padStart(4, '0')}-01` : `${String(y).padStart(4, '0')}-${String(m + 1).padStart(2, '0')}`;
}

type StoredDay = { kwh: Buffer; flags: Buffer; maxKw: Buffer | null };
type Rollups = { totalKwh: number; cost: number; carbonKg: number };

/** A stored kWh blob (either format) as values; NaN: no data. */
export function storedKwh(blob: Uint8Array): Float64Array {
  return decodeValues(blob, KWH_SCALE);
}

/** A stored highest-reading blob (either format) as kW values; NaN: no reading. */
export function storedMaxKw(blob: Uint8Array): Float64Array {
  return decodeValues(blob, KW_SCALE);
}

/** The flags of a stored row; its kWh blob tells the format. */
export function storedFlags(flags: Uint8Array, kwh: Uint8Array, count: number): Uint8Array {
  return decodeFlags(flags, kwh, count);
}

export type VirtualMeter = { id: number; terms: MeterTerm[] };

/** What the collector has counted but not yet written (it holds what it counts for up to an hour), for reads that must be current. */
export type OpenIntervals = {
  kwh(meterId: number, day: string): ArrayLike<number> | undefined;
  demandKw(meterId: number): number | null | undefined;
  /** The held day records, virtual meters' derived from them. */
  records(): Iterable<DayRecord>;
  /** Moves whenever what records() gives may have changed (every collection, every write). */
  generation(): number;
};

export class IntervalStore {
  private readonly selectDay;
  private readonly selectRollups;
  private readonly selectDayOf;
  private readonly upsertDay;
  private readonly upsertMonth;
  private readonly selectOpenFrom;
  private readonly setOpenFrom;
  private readonly selectDayRollups;
  /** Set by a collector that holds the open interval in memory; null: everything counted is in the database. */
  open: OpenIntervals | null = null;
  /**
   * heldDays() by the open intervals' generation, dropped when a row, a meter, a tariff, a calorific value or the site
   * settings change (a restatement of today moves the stored cost the held difference is taken from).
   */
  private readonly held: Kept<readonly HeldDay[]>;
  /** Interval prices of recent days (a backfill writes each day of 500 meters: priced once, not 500 times). */
  private readonly dayPrices = new Map<string, { prices: Float64Array; version: unknown }>();
  /** Virtual meters whose history is being rebuilt after a meter write. */
  readonly rebuilds = new VirtualRebuilds(this);
  /** A meter's commodity and role, which price its days (pricing's port MeterCommodity). */
  private readonly meterOf: MeterCommodity;

  constructor(
    private readonly db: Db,
    private readonly tariffs: Tariffs,
    private readonly timezone: () => string,
  ) {
    const sqlite = db.sqlite;
    this.meterOf = meterCommodity(db);
    this.held = new Kept(sqlite, {
      name: 'metering.heldDays',
      tables: ['meter_days', 'meters', 'tariff_versions', 'calorific_versions', 'platform_config'],
      max: 1,
    });
    // raw SQL: one day row's blobs, by the (meter_id, day) key, when a day record is loaded
    this.selectDay = sqlite.prepare('SELECT kwh, flags, max_kw AS maxKw FROM meter_days WHERE meter_id = ? AND day = ?');
    // raw SQL: a day's blobs of a json_each set of meters in one read (virtual meters' terms)
    this.selectDayOf = sqlite.prepare('SELECT meter_id AS meterId, kwh, flags FROM meter_days WHERE day = ? AND meter_id IN (SELECT value FROM json_each(?))');
    // raw SQL: a day's rollups before a write (the month row moves by the difference), and under a held day
    this.selectRollups = sqlite.prepare(
      'SELECT total_kwh AS totalKwh, cost, carbon_kg AS carbonKg, peak_kw AS peakKw FROM meter_days WHERE meter_id = ? AND day = ?',
    );
    // raw SQL: the day upsert with blobs and rollups (ON CONFLICT … excluded), on every write
    this.upsertDay = sqlite.prepare(
      `INSERT INTO meter_days (meter_id, day, kwh, flags, max_kw, total_kwh, cost, carbon_kg, peak_kw, peak_index)
       VALUES (@meterId, @day, @kwh, @flags, @maxKw, @totalKwh, @cost, @carbonKg, @peakKw, @peakIndex)
       ON CONFLICT (meter_id, day) DO UPDATE SET kwh = excluded.kwh, flags = excluded.flags, max_kw = excluded.max_kw,
         total_kwh = excluded.total_kwh, cost = excluded.cost, carbon_kg = excluded.carbon_kg, peak_kw = excluded.peak_kw, peak_index = excluded.peak_index`,
    );
    // raw SQL: the month rollup moved by a day's difference in SQL (total_kwh = total_kwh + excluded…), on every write
    this.upsertMonth = sqlite.prepare(
      `INSERT INTO meter_months (meter_id, month, total_kwh, cost, carbon_kg, peak_kw, peak_at)
       VALUES (@meterId, @month, @totalKwh, @cost, @carbonKg, @peakKw, @peakAt)
       ON CONFLICT (meter_id, month) DO UPDATE SET total_kwh = total_kwh + excluded.total_kwh, cost = cost + excluded.cost,
         carbon_kg = carbon_kg + excluded.carbon_kg,
         peak_at = CASE WHEN excluded.peak_kw > coalesce(peak_kw, -1e308) THEN excluded.peak_at ELSE peak_at END,
         peak_kw = max(coalesce(peak_kw, -1e308), coalesce(excluded.peak_kw, -1e308))`,
    );
    // raw SQL: where the month rollups stop (one row at most), plucked
    this.selectOpenFrom = sqlite.prepare('SELECT open_from FROM meter_fold WHERE id = 1').pluck();
    // raw SQL: the one row's upsert (ON CONFLICT … excluded)
    this.setOpenFrom = sqlite.prepare('INSERT INTO meter_fold (id, open_from) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET open_from = excluded.open_from');
    // raw SQL: the day rollups of a range of days, in day order, for the fold (a range of the (day, meter_id) key)
    this.selectDayRollups = sqlite.prepare(
      `SELECT meter_id AS meterId, day, total_kwh AS totalKwh, cost, carbon_kg AS carbonKg, peak_kw AS peakKw, peak_index AS peakIndex
       FROM meter_days WHERE day >= ? AND day < ? ORDER BY day, meter_id`,
    );
  }

  /**
   * The first site day not yet in the month rollups (days from it on are "open": their rows are read beside their
   * month's row), or null when every stored day is in its month (a store the collector has not folded yet).
   */
  openFrom(): string | null {
    return (this.selectOpenFrom.get() as string | undefined) ?? null;
  }

  /**
   * The fold (issue 44): the month rollups hold whole days, every day before `today`. Moving forward (the collector's
   * first write of a new day) adds the days just done to their months; moving back (the first fold after migration
   * 0025, or the box's clock stepped back) takes the days from `today` on out of their months, which are summed again
   * from the days they keep. One transaction, so a power cut leaves the fold done or not done, never half; a repeated
   * fold to the same day writes nothing. Answers whether anything was written.
   */
  foldBefore(today: string): boolean {
    if (this.openFrom() === today) return false;
    this.transaction(() => {
      const from = this.openFrom();
      if (from === today) return;
      const timezone = this.timezone();
      if (from !== null && from < today) {
        for (const row of this.selectDayRollups.all(from, today) as DayRollupRow[])
          this.upsertMonth.run({
            meterId: row.meterId,
            month: row.day.slice(0, 7),
            totalKwh: row.totalKwh,
            cost: row.cost,
            carbonKg: row.carbonKg,
            peakKw: row.peakKw,
            peakAt: row.peakIndex === null ? null : dayIntervals(timezone, row.day).start + row.peakIndex * INTERVAL_MS,
          });
        this.setOpenFrom.run(today);
        return;
      }
      const touched = new Set<string>();
      for (const row of this.selectDayRollups.all(today, from ?? '9999-12-32') as DayRollupRow[]) touched.add(`${row.meterId}|${row.day.slice(0, 7)}`);
      this.setOpenFrom.run(today);
      this.resumMonths(touched);
    });
    return true;
  }

  /**
   * Sums each listed month (`meterId|YYYY-MM`) again from its whole days (those before openFrom), peak included; a
   * month with none left has no row. In the caller's transaction.
   */
  private resumMonths(months: Iterable<string>): void {
    const sqlite = this.db.sqlite;
    // raw SQL: a month row dropped before it is summed again
    const drop = sqlite.prepare('DELETE FROM meter_months WHERE meter_id = ? AND month = ?');
    // raw SQL: a month summed from its whole days (INSERT … SELECT … HAVING: no row when it has none)
    const sum = sqlite.prepare(
      `INSERT INTO meter_months (meter_id, month, total_kwh, cost, carbon_kg)
       SELECT meter_id, @month, sum(total_kwh), sum(cost), sum(carbon_kg) FROM meter_days
       WHERE meter_id = @meterId AND day >= @from AND day < @to AND day < coalesce((SELECT open_from FROM meter_fold WHERE id = 1), '9999-12-32')
       GROUP BY meter_id`,
    );
    const list = [...months];
    for (const key of list) {
      const [id, month] = key.split('|');
      drop.run(Number(id), month);
      sum.run({ meterId: Number(id), month, from: `${month}-01`, to: `${nextMonthOf(month)}-01` });
    }
    this.recomputeMonthPeaks(list);
  }

  /** The day's record as stored, or an empty one (every interval NaN: no data yet). */
  load(meterId: number, day: string, withMax = false): DayRecord {
    const { start, count } = dayIntervals(this.timezone(), day);
    const row = this.selectDay.get(meterId, day) as StoredDay | undefined;
    if (!row) {
      return {
        meterId,
        day,
        start,
        kwh: new Float64Array(count).fill(NaN),
        flags: new Uint8Array(count),
        maxKw: withMax ? new Float64Array(count).fill(NaN) : null,
      };
    }
    const kwh = storedKwh(row.kwh);
    return {
      meterId,
      day,
      start,
      kwh,
      flags: storedFlags(row.flags, row.kwh, kwh.length),
      maxKw: row.maxKw ? storedMaxKw(row.maxKw) : withMax ? new Float64Array(count).fill(NaN) : null,
    };
  }

  /**
   * The days the collector holds ahead of their rows, with their rollups as a write would store them now (priced the
   * same way, 0.1 Wh values): what day and month figures add to the stored ones (StoredDays). Worked out once per
   * generation of what is held (a collection, a write), not per read.
   */
  heldDays(): readonly HeldDay[] {
    const open = this.open;
    if (!open) return [];
    return this.held.get(String(open.generation()), () => {
      this.tariffs.load();
      const timezone = this.timezone();
      const days: HeldDay[] = [];
      for (const record of open.records()) {
        // The row as it is now (another write may have moved it since the record was loaded: a restatement).
        const stored = (this.selectRollups.get(record.meterId, record.day) as StoredRollups | undefined) ?? null;
        days.push({ meterId: record.meterId, day: record.day, ...this.rollupsOf(record, timezone), stored, record });
      }
      return days;
    });
  }

  /** A record's rollups from its values as stored (0.1 Wh): energy, cost and carbon at the meter's prices, peak demand. */
  private rollupsOf(
    record: DayRecord,
    timezone: string,
  ): { totalKwh: number; cost: number; carbonKg: number; peakKw: number | null; peakIndex: number | null } {
    // By the meter's commodity (issue 26): gas, water, heat at their own tariffs, export at the feed-in price; the
    // electricity tariff's prices of a day are worked out once per day (edge, issue 29).
    const { db, tariffs, meterOf } = this;
    const { prices, carbonFactor } = meterPrices(db, tariffs, meterOf, record.meterId, timezone, record.day, record.start, record.kwh.length, (...day) =>
      this.pricesOf(...day),
    );
    let totalKwh = 0;
    let cost = 0;
    let peakKw: number | null = null;
    let peakIndex: number | null = null;
    record.kwh.forEach((raw, i) => {
      if (Number.isNaN(raw)) return;
      const kwh = quantize(raw, KWH_SCALE);
      totalKwh += kwh;
      cost += kwh * prices[i];
      const kw = kwh * (3_600_000 / INTERVAL_MS);
      if (peakKw === null || kw > peakKw) {
        peakKw = kw;
        peakIndex = i;
      }
    });
    return { totalKwh, cost, carbonKg: totalKwh * carbonFactor, peakKw, peakIndex };
  }

  /**
   * Writes day records and moves their month rollups, in the caller's transaction. The rollups are those of the values
   * as stored (0.1 Wh), and the month moves by the difference to the row's rollups as they are in the database now (a
   * record kept in memory across writes cannot go stale there).
   */
  save(records: Iterable<DayRecord>): void {
    const timezone = this.timezone();
    // A day from openFrom on (today) is not in its month yet: the fold adds it once it is done.
    const openFrom = this.openFrom();
    for (const record of records) {
      const { totalKwh: total, cost, carbonKg, peakKw, peakIndex } = this.rollupsOf(record, timezone);
      const before = (this.selectRollups.get(record.meterId, record.day) as Rollups | undefined) ?? { totalKwh: 0, cost: 0, carbonKg: 0 };
      this.upsertDay.run({
        meterId: record.meterId,
        day: record.day,
        kwh: encodeValues(record.kwh, KWH_SCALE),
        flags: encodeFlags(record.flags),
        maxKw: record.maxKw ? encodeValues(record.maxKw, KW_SCALE) : null,
        totalKwh: total,
        cost,
        carbonKg,
        peakKw,
        peakIndex,
      });
      if (openFrom === null || record.day < openFrom)
        this.upsertMonth.run({
          meterId: record.meterId,
          month: record.day.slice(0, 7),
          totalKwh: total - before.totalKwh,
          cost: cost - before.cost,
          carbonKg: carbonKg - before.carbonKg,
          peakKw,
          peakAt: peakIndex === null ? null : record.start + peakIndex * INTERVAL_MS,
        });
    }
  }

  /**
   * The tariff's price of each interval of a day, computed once per day while the version in effect stays the same
   * object (Tariffs reloads its versions after any write or another connection's commit, so a changed tariff misses).
   */
  private pricesOf(timezone: string, day: string, start: number, count: number): ReturnType<Tariffs['prices']> {
    const key = `${timezone}|${day}|${start}|${count}`;
    const version = this.tariffs.versionOn(day);
    const cached = this.dayPrices.get(key);
    if (cached && cached.version === version) return cached as ReturnType<Tariffs['prices']>;
    const priced = this.tariffs.prices(timezone, day, start, count);
    if (this.dayPrices.size >= 64) this.dayPrices.clear();
    this.dayPrices.set(key, priced);
    return priced;
  }

  /**
   * Rebuilds a virtual meter's day from its terms: each interval is the signed sum, NaN where any term has no data.
   * `held`: term records in memory that were just saved (a collection's), used as stored (0.1 Wh) instead of read back;
   * the other terms' rows are read in one query.
   */
  deriveVirtual(meter: VirtualMeter, day: string, held?: (meterId: number, day: string) => DayRecord | undefined): DayRecord {
    const record = this.load(meter.id, day);
    const count = record.kwh.length;
    const values = new Map<number, { kwh: ArrayLike<number>; flags: ArrayLike<number> }>();
    const missing: number[] = [];
    for (const term of meter.terms) {
      const inMemory = held?.(term.meterId, day);
      if (inMemory) values.set(term.meterId, { kwh: Array.from(inMemory.kwh, (v) => (Number.isNaN(v) ? v : quantize(v, KWH_SCALE))), flags: inMemory.flags });
      else missing.push(term.meterId);
    }
    if (missing.length) {
      const rows = this.selectDayOf.all(day, JSON.stringify(missing)) as { meterId: number; kwh: Buffer; flags: Buffer }[];
      for (const row of rows) {
        const kwh = storedKwh(row.kwh);
        values.set(row.meterId, { kwh, flags: storedFlags(row.flags, row.kwh, kwh.length) });
      }
    }
    const empty = { kwh: new Float64Array(count).fill(NaN), flags: new Uint8Array(count) };
    const terms = meter.terms.map((term) => ({ sign: term.sign, day: values.get(term.meterId) ?? empty }));
    for (let i = 0; i < count; i += 1) {
      let sum = 0;
      let flags = 0;
      for (const term of terms) {
        sum += term.sign * term.day.kwh[i];
        flags |= term.day.flags[i];
      }
      record.kwh[i] = sum;
      record.flags[i] = flags;
    }
    return record;
  }

  /**
   * A virtual meter's whole history rebuilt from its terms at once, in the caller's transaction: every day any term has
   * data for. Its cost grows with terms × days (500 terms × a year: seconds); the service uses `rebuilds` instead.
   */
  rebuildVirtual(meter: VirtualMeter): number {
    const days = this.clearVirtual(meter);
    for (const day of days) this.save([this.deriveVirtual(meter, day)]);
    return days.length;
  }

  /** Removes a virtual meter's stored days and months; answers the days its terms have data for, oldest first. */
  clearVirtual(meter: VirtualMeter): string[] {
    const sqlite = this.db.sqlite;
    this.db.orm.delete(meterDays).where(eq(meterDays.meterId, meter.id)).run();
    this.db.orm.delete(meterMonths).where(eq(meterMonths.meterId, meter.id)).run();
    // raw SQL: the days any term meter has, over a json_each set, for the rebuild
    return sqlite
      .prepare('SELECT DISTINCT day FROM meter_days WHERE meter_id IN (SELECT value FROM json_each(?)) ORDER BY day')
      .pluck()
      .all(JSON.stringify(meter.terms.map((term) => term.meterId))) as string[];
  }

  /** The terms a meter has now (termsKey), or undefined when it is gone or no longer virtual. */
  termsNow(meterId: number): string | undefined {
    // raw SQL: a virtual meter's terms as JSON text, parsed once here
    const stored = this.db.sqlite.prepare("SELECT terms FROM meters WHERE id = ? AND kind = 'virtual' AND enabled = 1").pluck().get(meterId) as
      | string
      | undefined;
    return stored === undefined ? undefined : termsKey(JSON.parse(stored) as MeterTerm[]);
  }

  /**
   * Removes one meter-day row and takes its rollups off its month (a cancelled import undoing a day that had no row
   * before it). The month's peak is the caller's to recompute (recomputeMonthPeaks). In the caller's transaction.
   */
  dropDay(meterId: number, day: string): void {
    const row = this.selectRollups.get(meterId, day) as Rollups | undefined;
    if (!row) return;
    const openFrom = this.openFrom();
    if (openFrom === null || day < openFrom)
      // raw SQL: the month rollups moved by the day's figures (total_kwh = total_kwh - ?)
      this.db.sqlite
        .prepare('UPDATE meter_months SET total_kwh = total_kwh - ?, cost = cost - ?, carbon_kg = carbon_kg - ? WHERE meter_id = ? AND month = ?')
        .run(row.totalKwh, row.cost, row.carbonKg, meterId, day.slice(0, 7));
    // raw SQL: the day row deleted by its key
    this.db.sqlite.prepare('DELETE FROM meter_days WHERE meter_id = ? AND day = ?').run(meterId, day);
  }

  /**
   * Takes each listed month's peak (`meterId|YYYY-MM`) again from its days: after intervals were replaced with lower
   * ones, the month's running maximum may be one that no longer exists. In the caller's transaction.
   */
  recomputeMonthPeaks(months: Iterable<string>): void {
    const sqlite = this.db.sqlite;
    const timezone = this.timezone();
    // raw SQL: the month's best day peak (LIKE on the month prefix, ORDER BY peak)
    const best = sqlite.prepare(
      `SELECT day, peak_kw AS peakKw, peak_index AS peakIndex FROM meter_days WHERE meter_id = ? AND day LIKE ? || '%' AND peak_kw IS NOT NULL
         AND day < coalesce((SELECT open_from FROM meter_fold WHERE id = 1), '9999-12-32') ORDER BY peak_kw DESC, day LIMIT 1`,
    );
    // raw SQL: the month's peak set from that day
    const set = sqlite.prepare('UPDATE meter_months SET peak_kw = ?, peak_at = ? WHERE meter_id = ? AND month = ?');
    for (const key of months) {
      const [id, month] = key.split('|');
      const row = best.get(Number(id), month) as { day: string; peakKw: number; peakIndex: number } | undefined;
      set.run(row?.peakKw ?? null, row ? dayIntervals(timezone, row.day).start + row.peakIndex * INTERVAL_MS : null, Number(id), month);
    }
  }

  /** Whole-transaction helper; the tariff versions every save() prices with are cached before it begins (Tariffs.load). */
  transaction<R>(fn: () => R): R {
    this.tariffs.load();
    return this.db.sqlite.transaction(fn)();
  }
}

/** Work done between two returns to the event loop (one transaction each): well under the 50 ms a request may wait. */
export const SLICE_MS = 15;

function termsKey(terms: MeterTerm[]): string {
  return terms.map((term) => `${term.meterId}:${term.sign}`).join(',');
}

/**
 * Milliseconds of CPU this process has used: the measure of a write slice's work. Wall-clock time would shrink the
 * slices (and multiply the commits, each rewriting the same pages) wherever the clock runs fast — libfaketime's sped-up
 * clock in bench:edge — and grow them nowhere a wall clock would not.
 */
export function cpuMs(): number {
  const used = process.cpuUsage();
  return (used.user + used.system) / 1000;
}

export function yieldToLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Virtual-meter history rebuilt outside the meter write: the write (a created meter, new terms) clears the meter's
 * stored days in its own transaction; the days are then derived again oldest first, one transaction per slice of
 * ≤ SLICE_MS with the event loop free between. A newer write of the same meter supersedes a rebuild under way (it
 * stops at its next slice); a meter deleted meanwhile stops it too. Until it ends the meter's older days read as missing.
 */
export class VirtualRebuilds {
  private readonly running = new Map<number, { generation: number; done: Promise<void> }>();
  private generation = 0;

  constructor(private readonly store: IntervalStore) {}

  /** Clears the meter's days now (in the caller's transaction) and rebuilds them after it, in slices. */
  schedule(meter: VirtualMeter): void {
    const days = this.store.clearVirtual(meter);
    const generation = ++this.generation;
    const terms = termsKey(meter.terms);
    const done = new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.run(meter, terms, days, generation));
    this.running.set(meter.id, { generation, done });
    void done.finally(() => {
      if (this.running.get(meter.id)?.generation === generation) this.running.delete(meter.id);
    });
  }

  /** The last rebuild that gave up (its slice failed five times, e.g. the database stayed locked), for health and logs. */
  lastError: { meterId: number; message: string } | null = null;

  private async run(meter: VirtualMeter, terms: string, days: string[], generation: number): Promise<void> {
    let next = 0;
    let failures = 0;
    while (next < days.length) {
      if (this.running.get(meter.id)?.generation !== generation) return;
      const sliceStart = cpuMs();
      let until = next;
      try {
        const stillSo = this.store.transaction(() => {
          // The write that scheduled this may have been rolled back, or the meter changed, disabled or deleted since.
          if (this.store.termsNow(meter.id) !== terms) return false;
          do this.store.save([this.store.deriveVirtual(meter, days[until++])]);
          while (until < days.length && cpuMs() - sliceStart < SLICE_MS);
          return true;
        });
        if (!stillSo) return;
        next = until;
        failures = 0;
        await yieldToLoop();
      } catch (error) {
        // The slice was rolled back; it is tried again a little later (the next collection re-derives today anyway).
        if (++failures >= 5) {
          this.lastError = { meterId: meter.id, message: (error as Error).message };
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 200 * failures));
      }
    }
  }

  /** Meters whose rebuild is under way. */
  pending(): number[] {
    return [...this.running.keys()];
  }

  /** Resolves when every rebuild under way (and any scheduled meanwhile) has ended. */
  async idle(): Promise<void> {
    while (this.running.size) await Promise.all([...this.running.values()].map((run) => run.done.catch(() => undefined)));
  }
}

/**
 * FLAG_ESTIMATED when energy is added to an interval from a time inside it (`t` after its start) while the interval
 * holds nothing yet (`before` NaN): nothing was counted for its part before `t`, so its value is only a part of it (a
 * meter's first reading, or counting resumed after a gap left missing: the soak's second finding, issue 56). Readings
 * spanning an interval count into it from its start (the previous spread ended there), so a whole one is never marked.
 */
function partFlag(t: number, intervalStart: number, before: number): number {
  return t > intervalStart && Number.isNaN(before) ? FLAG_ESTIMATED : 0;
}

/**
 * Day records touched by one collection, loaded once and saved together: energy is added to intervals as readings
 * arrive (a counter delta spread over the time it covers; a power reading integrated).
 */
export class DayBatch {
  private readonly records = new Map<string, DayRecord>();

  constructor(
    private readonly store: IntervalStore,
    readonly timezone: string,
  ) {}

  /** The record of a meter's day this batch holds (counted, not yet written), if any. */
  held(meterId: number, day: string): DayRecord | undefined {
    return this.records.get(`${meterId}|${day}`);
  }

  /** Forgets the records of meters not in `meterIds` (deleted since: their rows are gone and a write would fail). */
  retain(meterIds: Set<number>): void {
    for (const [key, record] of this.records) if (!meterIds.has(record.meterId)) this.records.delete(key);
  }

  get size(): number {
    return this.records.size;
  }

  private record(meterId: number, intervalStart: number, withMax: boolean): { record: DayRecord; index: number } {
    const day = dayOf(this.timezone, intervalStart);
    const key = `${meterId}|${day}`;
    let record = this.records.get(key);
    if (!record) this.records.set(key, (record = this.store.load(meterId, day, withMax)));
    if (withMax && !record.maxKw) record.maxKw = new Float64Array(record.kwh.length).fill(NaN);
    return { record, index: Math.round((intervalStart - record.start) / INTERVAL_MS) };
  }

  /**
   * Adds `kwh` spread evenly over [from, to), split at interval boundaries. An interval a history import wrote
   * (FLAG_IMPORTED) already holds its whole energy: a later backfill over the same time (a meter imported before its
   * first collection, a gap the gateway's history also covers) leaves it as imported instead of counting it twice.
   */
  spread(meterId: number, from: number, to: number, kwh: number, flags = 0): void {
    if (to <= from) return;
    const rate = kwh / (to - from);
    for (let t = from; t < to; ) {
      const intervalStart = Math.floor(t / INTERVAL_MS) * INTERVAL_MS;
      const end = Math.min(to, intervalStart + INTERVAL_MS);
      const { record, index } = this.record(meterId, intervalStart, false);
      if (record.flags[index] & FLAG_IMPORTED) {
        t = end;
        continue;
      }
      const before = record.kwh[index];
      record.kwh[index] = (Number.isNaN(before) ? 0 : before) + rate * (end - t);
      record.flags[index] |= flags | partFlag(t, intervalStart, before);
      t = end;
    }
  }

  /** A power meter between two readings: the trapezoid under the line, split at interval boundaries; each interval's highest reading kept. */
  integrate(meterId: number, t1: number, kw1: number, t2: number, kw2: number, flags = 0): void {
    if (t2 <= t1) return;
    const slope = (kw2 - kw1) / (t2 - t1);
    for (let t = t1; t < t2; ) {
      const intervalStart = Math.floor(t / INTERVAL_MS) * INTERVAL_MS;
      const end = Math.min(t2, intervalStart + INTERVAL_MS);
      const a = kw1 + slope * (t - t1);
      const b = kw1 + slope * (end - t1);
      const { record, index } = this.record(meterId, intervalStart, true);
      if (record.flags[index] & FLAG_IMPORTED) {
        // Imported: its energy is counted already (as in spread).
        t = end;
        continue;
      }
      const before = record.kwh[index];
      record.kwh[index] = (Number.isNaN(before) ? 0 : before) + ((a + b) / 2) * ((end - t) / 3_600_000);
      record.flags[index] |= flags | partFlag(t, intervalStart, before);
      const max = record.maxKw![index];
      record.maxKw![index] = Number.isNaN(max) ? Math.max(a, b) : Math.max(max, a, b);
      t = end;
    }
  }

  /** Marks an interval (e.g. a bad-quality reading's) without adding energy. */
  flag(meterId: number, at: number, flags: number): void {
    const { record, index } = this.record(meterId, Math.floor(at / INTERVAL_MS) * INTERVAL_MS, false);
    record.flags[index] |= flags;
  }

  /** Every record held. */
  all(): IterableIterator<DayRecord> {
    return this.records.values();
  }

  /** Days touched, for virtual meters built on them. */
  days(): Set<string> {
    return new Set([...this.records.values()].map((record) => record.day));
  }

  /** The held records by meter (one meter's records are written in one transaction with its state). */
  byMeter(): Map<number, DayRecord[]> {
    const grouped = new Map<number, DayRecord[]>();
    for (const record of this.records.values()) {
      const list = grouped.get(record.meterId);
      if (list) list.push(record);
      else grouped.set(record.meterId, [record]);
    }
    return grouped;
  }

  clear(): void {
    this.records.clear();
  }

  /**
   * Writes the records and the virtual meters' days; keeps the records: the caller clears them once its transaction has
   * committed (a full disk fails the COMMIT itself, after this ran, and what is held must survive that: issue 56).
   */
  save(virtuals: VirtualMeter[]): void {
    this.store.save(this.records.values());
    const days = this.days();
    for (const day of days) this.store.save(virtuals.map((meter) => this.store.deriveVirtual(meter, day)));
  }
}
