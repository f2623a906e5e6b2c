// The one cache piece: computed values kept by key, bounded, and dropped by one rule when what they were read from changes.
import type Database from 'better-sqlite3';
import { openTurn } from '../requestTurn.ts';

/**
 * Every cache of the service is a `Kept`, each declared with the tables it reads (search `new Kept` for the code;
 * test/structure/keptTables.test.ts checks the lists against the tables the caches' computations read):
 *
 * | name                       | where                       | tables it reads (besides other connections' commits)     | key                         |
 * |----------------------------|-----------------------------|----------------------------------------------------------|-----------------------------|
 * | comparisons                | src/analysis/comparisons.ts | meter_days, meter_months, meter_fold, meters, tariff_versions, platform_config, calorific_versions, outdoor_days | question + 15-min interval |
 * | comparisons.meterDays      | src/analysis/comparisons.ts | meter_days, and metering.heldDays' four                  | meters + days               |
 * | energy.figures             | src/energy/figures.ts       | FIGURE_TABLES (day, month and fold rows, meters, tariffs, settings, calorific values, suspect runs) | figure + range (+ day/minute) |
 * | energy.layout              | src/energy/figures.ts       | meters                                                   | one entry                   |
 * | energy.demand              | src/energy/figures.ts       | meters, meter_state                                      | one entry                   |
 * | energy.commodities        | src/energy/commodities.ts   | FIGURE_TABLES, calorific_versions                        | period (from, to)           |
 * | energy.areaCards           | src/energy/areaCards.ts      | FIGURE_TABLES, energy_areas, meter_state (cards + unallocated) | site day + minute     |
 * | overview.stats             | src/screens/overview/service.ts     | FIGURE_TABLES, energy_areas, alerts, faults, maintenance, meter_state, calorific_versions, outdoor_days | second |
 * | overview.weekly            | src/screens/overview/service.ts     | FIGURE_TABLES, energy_daily                              | site day + 15-min interval  |
 * | dashboard.public           | src/screens/dashboard/service.ts    | the overview's and area cards' tables, three_d_config, model_files | second            |
 * | metering.heldDays          | src/metering/store.ts        | meter_days, meters, tariff_versions, calorific_versions, platform_config | the collector's held generation |
 * | site.settings              | src/site/siteSettings.ts      | platform_config                                          | one entry                   |
 * | tariffs.versions           | src/pricing/tariffs.ts       | tariff_versions                                          | one entry                   |
 * | faults.statsRowCurrent     | src/facility/faults/service.ts       | none: only other connections' commits (see there)        | one entry                   |
 * | list.<table>.totals/pages/asked | src/platform/db/listQuery.ts    | its one table                                            | filter; page + filter       |
 * | users.auth, users.rows     | src/access/users/userRecords.ts       | users                                                    | user id                     |
 * | auth.signingKey            | src/access/auth/signingKeys.ts     | app_settings                                             | one entry                   |
 * | auth.verifiedTokens        | src/access/auth/signingKeys.ts     | app_settings                                             | access token                |
 *
 * Not on it, on purpose: pure memos of values, not of tables (the store's interval prices per tariff version object,
 * compiled schemas, time-zone formatters), and stores that are state rather than copies (throttles, codes, OAuth state).
 *
 * The rule: an entry is kept until one of the tables it depends on is written on this connection (temporary
 * triggers, local to the connection, nothing in the database file, call back into a per-table counter here) or
 * another connection commits (`PRAGMA data_version`: emsctl, a manual SQL fix, a restore, a second process; read once
 * per synchronous run of JavaScript, ~3–7 µs a read here, so a commit shows from the next run on — and, while HTTP
 * requests are being answered, once per event-loop turn: see `requestTurn()` in src/platform/requestTurn.ts). Then every entry of that cache is dropped. What depends on the clock (today, the open 15-minute interval, the second)
 * carries it in its key instead, so a new interval is a new key and old ones age out of the LRU.
 *
 * Inside a transaction a valid entry is still answered (nothing it read has been written since, or the counters
 * would have moved), but nothing is stored: what is read there may still be rolled back, and a rollback moves no
 * counter back. The counters only ever rise (a rolled-back write has moved them too: a needless drop, never a stale
 * answer).
 */
export type KeptOptions = {
  /** Names the cache in its statistics and the table above. */
  name: string;
  /** Tables (of `main`) whose writes on this connection drop every entry; [] for only other connections' commits. */
  tables: readonly string[];
  /** Entries kept at most; the least recently used is dropped first. */
  max: number;
};

export class Kept<V> {
  private readonly writes: TableWrites;
  private readonly tables: readonly string[];
  private readonly entries = new Map<string, V>();
  /**
   * The stamp the entries were read under (the tables' write count on this connection, data_version); NaN until
   * something is stored (nothing is kept before the triggers exist). Two numbers, not an object: a lookup allocates
   * nothing.
   */
  private stampOwn = Number.NaN;
  private stampOther = Number.NaN;
  /** The stamp current() took last (get() holds on to it across compute()). */
  private lastOwn = 0;
  private lastOther = 0;
  /** The connection's write count (all watched tables) when lastOwn was summed: while it stands, so does the sum. */
  private summedAt = -1;
  private armed = false;
  /** How the cache was used since start (tests and the benchmarks read them). */
  readonly stats = { hits: 0, misses: 0, drops: 0 };

  constructor(
    sqlite: Database.Database,
    readonly options: KeptOptions,
  ) {
    if (!Number.isInteger(options.max) || options.max < 1) throw new Error(`Kept ${options.name}: max must be a positive integer`);
    this.writes = TableWrites.of(sqlite);
    this.tables = [...new Set(options.tables)];
    this.arm();
  }

  /** The kept value for the key, else compute() kept (outside a transaction). The value is shared: do not modify it. */
  get(key: string, compute: () => V): V {
    const valid = this.current();
    const own = this.lastOwn;
    const other = this.lastOther;
    if (valid && this.entries.size) {
      const found = this.entries.get(key);
      if (found !== undefined || this.entries.has(key)) {
        this.stats.hits += 1;
        // Least recently used first: a hit moves to the end (a lone entry is there already).
        if (this.entries.size > 1) {
          this.entries.delete(key);
          this.entries.set(key, found as V);
        }
        return found as V;
      }
    }
    this.stats.misses += 1;
    const value = compute();
    // Stamped as read before compute(): a write compute() made itself leaves the entry stale for the next get to drop.
    if (valid && !this.writes.inTransaction()) this.store(key, value, own, other);
    return value;
  }

  /**
   * The kept value for the key, or undefined when none is (then nothing is counted: a get() that follows counts its
   * miss). For a caller that has work to do before it could compute the value.
   */
  peek(key: string): V | undefined {
    if (!this.current() || this.entries.size === 0) return undefined;
    const found = this.entries.get(key);
    if (found === undefined) return undefined;
    this.stats.hits += 1;
    if (this.entries.size > 1) {
      this.entries.delete(key);
      this.entries.set(key, found);
    }
    return found;
  }

  /** True when a value for the key is kept and still valid (also inside a transaction). */
  has(key: string): boolean {
    return this.current() && this.entries.has(key);
  }

  /** Drops every entry. */
  clear(): void {
    if (this.entries.size) this.stats.drops += 1;
    this.entries.clear();
    this.stampOwn = Number.NaN;
    this.stampOther = Number.NaN;
  }

  get size(): number {
    return this.entries.size;
  }

  /**
   * Takes the stamp now into `lastOwn`/`lastOther` and drops entries read under another one; false before the
   * triggers exist.
   */
  private current(): boolean {
    if (!this.armed && !this.arm()) return false;
    // No table watched on this connection written since the last look: the sum over this cache's tables stands (a
    // cache over fifteen tables looked up on every request sums them only after a write).
    const all = this.writes.allWrites;
    if (all !== this.summedAt) {
      this.lastOwn = this.writes.ownWrites(this.tables);
      this.summedAt = all;
    }
    const own = this.lastOwn;
    const other = (this.lastOther = this.writes.otherCommits());
    if (this.entries.size && (own !== this.stampOwn || other !== this.stampOther)) this.clear();
    return true;
  }

  private store(key: string, value: V, own: number, other: number): void {
    if (this.entries.size === 0) {
      this.stampOwn = own;
      this.stampOther = other;
    } else if (this.stampOwn !== own || this.stampOther !== other) return;
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.options.max) this.entries.delete(this.entries.keys().next().value!);
  }

  /** Creates the triggers; only outside a transaction (a rollback would take them away again). */
  private arm(): boolean {
    if (this.writes.inTransaction()) return false;
    for (const table of this.tables) this.writes.watch(table);
    this.armed = true;
    return true;
  }
}

/**
 * Counts a write of `table` on this connection without one: the caches that read it drop their entries as after a
 * write. For data read beside the table that changes without a write (the collector's held intervals, which the
 * readers of `meter_days` add to its rows).
 */
export function markWritten(sqlite: Database.Database, table: string): void {
  TableWrites.of(sqlite).bump(table);
}

/** `PRAGMA data_version` reads made by the caches since start, all connections (tests and benchmarks count them). */
export const dataVersionReads = { count: 0 };

/** Per connection: how often each watched table has been written on it, and another connection's commits. */
class TableWrites {
  private static readonly perConnection = new WeakMap<Database.Database, TableWrites>();
  private readonly counts = new Map<string, number>();
  /** Rows written to any watched table on this connection (only rises). */
  allWrites = 0;
  private readonly dataVersion: Database.Statement;
  /**
   * data_version as read in the current synchronous run of JavaScript (null: not yet). A commit elsewhere during the
   * run then counts as one just after it: a value kept in the run is stamped older than it is (dropped at the next
   * look, never stale), and a hit in the run answers as of its start. Saves ~1 µs statement per lookup after the first.
   */
  private otherInThisRun: number | null = null;
  private readonly endRun = () => {
    this.otherInThisRun = null;
  };
  /** data_version as read in request turn `readInTurn` (see requestTurn); 0: none. */
  private otherInTurn = 0;
  private readInTurn = 0;

  static of(sqlite: Database.Database): TableWrites {
    let writes = TableWrites.perConnection.get(sqlite);
    if (!writes) TableWrites.perConnection.set(sqlite, (writes = new TableWrites(sqlite)));
    return writes;
  }

  private constructor(private readonly sqlite: Database.Database) {
    // Raw SQL: drizzle has no PRAGMA; data_version moves with every commit of any other connection to the file.
    this.dataVersion = sqlite.prepare('PRAGMA data_version').pluck();
    // Called by the triggers once per written row: a JS counter, so it never rolls back.
    sqlite.function('kept_table_written', { deterministic: false }, (table) => {
      const name = table as string;
      this.counts.set(name, (this.counts.get(name) ?? 0) + 1);
      this.allWrites += 1;
      return null;
    });
  }

  inTransaction(): boolean {
    return this.sqlite.inTransaction;
  }

  watch(table: string): void {
    if (this.counts.has(table)) return;
    if (!/^[a-z_][a-z0-9_]*$/.test(table)) throw new Error(`Kept: not a table name: ${table}`);
    for (const operation of ['insert', 'update', 'delete']) {
      // Raw SQL: drizzle cannot declare triggers. TEMP: this connection only, nothing written to the database file.
      this.sqlite.exec(
        `CREATE TEMP TRIGGER IF NOT EXISTS kept_${table}_${operation} AFTER ${operation.toUpperCase()} ON main.${table} BEGIN SELECT kept_table_written('${table}'); END`,
      );
    }
    this.counts.set(table, 0);
  }

  /** One more write of a watched table (a table no cache watches has no counter: nothing to drop). */
  bump(table: string): void {
    const count = this.counts.get(table);
    if (count === undefined) return;
    this.counts.set(table, count + 1);
    this.allWrites += 1;
  }

  /** The sum of the tables' write counts on this connection (each only rises, so the sum moves when any does). */
  ownWrites(tables: readonly string[]): number {
    let own = 0;
    for (let i = 0; i < tables.length; i++) own += this.counts.get(tables[i]) ?? 0;
    return own;
  }

  /** data_version: moves with every commit of another connection (read once per request turn, else once per run). */
  otherCommits(): number {
    // In a request turn: the turn's read (a read of this run taken before the turn opened is not used for it).
    const turn = openTurn();
    if (turn !== 0) {
      if (this.readInTurn !== turn) {
        this.otherInTurn = this.readDataVersion();
        this.readInTurn = turn;
      }
      return this.otherInTurn;
    }
    let other = this.otherInThisRun;
    if (other === null) {
      other = this.otherInThisRun = this.readDataVersion();
      queueMicrotask(this.endRun);
    }
    return other;
  }

  private readDataVersion(): number {
    dataVersionReads.count += 1;
    return this.dataVersion.get() as number;
  }
}
