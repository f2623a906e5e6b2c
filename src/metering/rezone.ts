// A site time-zone change re-keys the stored energy. Day rows are keyed by the site day and their intervals count from
// that day's local midnight, so a row only means something in the zone it was written in: left as it was, a change
// from UTC+14 to UTC−10 leaves rows dated "tomorrow" and puts new intervals at other times of the same rows. The move
// re-slices every meter's intervals by their absolute time into the new zone's days (15-minute intervals fit every
// zone in use: all offsets are whole quarter hours), one meter per transaction, with a marker row that a restart resumes
// from. The collector waits meanwhile (what it holds is written first, under the old zone).
import { eq, gt, sql } from 'drizzle-orm';
import type { Db } from '../platform/db/client.ts';
import { appSettings, meterDays, meterMonths } from '../platform/db/schema/index.ts';
import type { Logger } from '../platform/logger.ts';
import { dayIntervals, dayOf, INTERVAL_MS } from '../platform/time/calendar.ts';
import { type DayRecord, type IntervalStore, storedFlags, storedKwh, storedMaxKw } from './store.ts';

const MARKER_KEY = 'energy_time_zone_move';

type Marker = { from: string; to: string; after: number };
type StoredRow = { day: string; kwh: Buffer; flags: Buffer; maxKw: Buffer | null };

/**
 * The port to what another context keeps per site day of the old zone (analysis's outdoor days, built after metering;
 * the root hands it in, see analysis's outdoorDaysZoneKeyed): dropped in the move's last transaction, beside its marker.
 */
export type ZoneKeyedDays = { drop(): void };

/** What the move needs of the collector: no collection in flight while it runs, and what it holds written first. */
export type CollectionPause = { exclusive<T>(task: () => Promise<T>): Promise<T>; flush(): void };

/**
 * Records a move from one zone to another for the next start to carry out (resume() runs before the first collection):
 * for a change written while the service is stopped (emsctl site set). Call it in the transaction that changes the zone.
 */
export function scheduleZoneMove(db: Db, from: string, to: string): void {
  if (from === to || !anyDayStored(db)) return;
  writeMarker(db, { from, to, after: 0 });
}

/** Whether any day row is stored: a move of an empty store has nothing to re-key. */
function anyDayStored(db: Db): boolean {
  return db.orm.select({ meterId: meterDays.meterId }).from(meterDays).limit(1).get() !== undefined;
}

/** The move in progress, kept in app_settings under MARKER_KEY (its own key there). */
function writeMarker(db: Db, marker: Marker): void {
  const value = JSON.stringify(marker);
  const updatedAt = new Date().toISOString();
  db.orm.insert(appSettings).values({ key: MARKER_KEY, value, updatedAt }).onConflictDoUpdate({ target: appSettings.key, set: { value, updatedAt } }).run();
}

export class TimeZoneMove {
  private readonly meterIds;
  private readonly rows;
  private readonly dropDays;
  private readonly dropMonths;

  constructor(
    private readonly deps: { db: Db; store: IntervalStore; timezone: () => string; logger: Logger; zoneKeyed: ZoneKeyedDays; collector?: CollectionPause },
  ) {
    const sqlite = deps.db.sqlite;
    const { orm } = deps.db;
    this.meterIds = orm
      .selectDistinct({ meterId: meterDays.meterId })
      .from(meterDays)
      .where(gt(meterDays.meterId, sql.placeholder('after')))
      .orderBy(meterDays.meterId)
      .prepare();
    // raw SQL: the encoded blobs as stored, for the codec (rows as plain objects, no drizzle mapping of four columns per day).
    this.rows = sqlite.prepare('SELECT day, kwh, flags, max_kw AS maxKw FROM meter_days WHERE meter_id = ? ORDER BY day');
    this.dropDays = orm
      .delete(meterDays)
      .where(eq(meterDays.meterId, sql.placeholder('meterId')))
      .prepare();
    this.dropMonths = orm
      .delete(meterMonths)
      .where(eq(meterMonths.meterId, sql.placeholder('meterId')))
      .prepare();
  }

  /** Set once the collector exists (it is built after the configuration service). */
  pauseCollection(collector: CollectionPause): void {
    this.deps.collector = collector;
  }

  /** True while a move is under way (or was cut short and waits for the next start). */
  pending(): boolean {
    return this.marker() !== null;
  }

  /**
   * Applies a platform change (`apply` runs in a transaction and may change the time zone) and, when the zone changed
   * with energy stored, re-keys the stored days before answering. No collection runs in between.
   */
  async change<T>(apply: () => T): Promise<T> {
    const run = async () => {
      this.deps.collector?.flush();
      const sqlite = this.deps.db.sqlite;
      const result = sqlite.transaction(() => {
        const from = this.deps.timezone();
        const value = apply();
        const to = this.deps.timezone();
        if (to !== from && anyDayStored(this.deps.db)) writeMarker(this.deps.db, { from, to, after: 0 });
        return value;
      })();
      await this.resume();
      return result;
    };
    return this.deps.collector ? this.deps.collector.exclusive(run) : run();
  }

  /** Carries a started move to its end, a meter per transaction, yielding between meters; answers the meters moved. */
  async resume(): Promise<number> {
    const first = this.marker();
    if (!first) return 0;
    const { from, to } = first;
    let after = first.after;
    const started = performance.now();
    let moved = 0;
    const sqlite = this.deps.db.sqlite;
    for (;;) {
      const ids = this.meterIds.all({ after }).map((row) => row.meterId);
      if (!ids.length) break;
      for (const meterId of ids) {
        // The store's transaction: the tariff versions its save() prices every moved day with are cached first.
        this.deps.store.transaction(() => {
          this.moveMeter(meterId, from, to);
          writeMarker(this.deps.db, { from, to, after: meterId });
        });
        after = meterId;
        moved += 1;
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
    sqlite.transaction(() => {
      // Kept per site day elsewhere (analysis's hourly outdoor means, a cache read again from the gateway when next needed).
      this.deps.zoneKeyed.drop();
      this.deps.db.orm.delete(appSettings).where(eq(appSettings.key, MARKER_KEY)).run();
    })();
    this.deps.logger.info({ from, to, meters: moved, ms: Math.round(performance.now() - started) }, 'stored energy re-keyed to the new site time zone');
    return moved;
  }

  private marker(): Marker | null {
    const value = this.deps.db.orm.select({ value: appSettings.value }).from(appSettings).where(eq(appSettings.key, MARKER_KEY)).get()?.value;
    return value ? (JSON.parse(value) as Marker) : null;
  }

  /** One meter's rows re-sliced from `from`'s days into `to`'s; its month rollups are rebuilt by the store's save. */
  private moveMeter(meterId: number, from: string, to: string): void {
    const rows = this.rows.all(meterId) as StoredRow[];
    const records = new Map<string, DayRecord>();
    const recordAt = (at: number, withMax: boolean) => {
      const day = dayOf(to, at);
      let record = records.get(day);
      if (!record) {
        const { start, count } = dayIntervals(to, day);
        record = { meterId, day, start, kwh: new Float64Array(count).fill(Number.NaN), flags: new Uint8Array(count), maxKw: null };
        records.set(day, record);
      }
      if (withMax && !record.maxKw) record.maxKw = new Float64Array(record.kwh.length).fill(Number.NaN);
      return record;
    };
    for (const row of rows) {
      const { start } = dayIntervals(from, row.day);
      const kwh = storedKwh(row.kwh);
      const flags = storedFlags(row.flags, row.kwh, kwh.length);
      const maxKw = row.maxKw ? storedMaxKw(row.maxKw) : null;
      for (let i = 0; i < kwh.length; i += 1) {
        const hasMax = maxKw !== null && !Number.isNaN(maxKw[i]);
        if (Number.isNaN(kwh[i]) && !flags[i] && !hasMax) continue;
        const at = start + i * INTERVAL_MS;
        const record = recordAt(at, hasMax);
        const index = Math.round((at - record.start) / INTERVAL_MS);
        record.kwh[index] = kwh[i];
        record.flags[index] = flags[i];
        if (hasMax && record.maxKw) record.maxKw[index] = maxKw[i];
      }
    }
    this.dropDays.run({ meterId });
    this.dropMonths.run({ meterId });
    this.deps.store.save(records.values());
  }
}
