// The collector: one batched codes/values read of every enabled meter per interval, turned into 15-minute interval
// energy. Every reading is checked before it counts (readingCheck.ts): a time in the future or older than the 7-day
// backfill span is refused and never moves the meter's last reading; a small counter decrease is held as jitter; a reset
// is a real drop, a rollover happens only at the counter's range. A gap (outage, restart) is filled from codes/history,
// a meter read for the first time is backfilled 7 days; both are applied in slices that give the event loop back every
// SLICE_MS. The box's clock stepping back is detected: intervals after the new now are dropped and meters whose last
// reading lies ahead of the clock start again from their next reading (never frozen until the clock catches up).
// On an edge box (holdOpenInterval) what is counted is held in memory and written hourly (writeEveryMs), a gap filled
// from history included, and on stop (see hold()); a clock step back drops what is held after now too.
import type { GatewayPort } from '../gateway/index.ts';
import type { Db } from '../platform/db/client.ts';
import { eq, sql } from 'drizzle-orm';
import { meterState, meters, type MeterKind, type MeterTerm } from '../platform/db/schema/index.ts';
import type { Job } from '../platform/jobs/jobs.ts';
import { Repeating } from '../platform/jobs/lifecycle.ts';
import { markWritten } from '../platform/db/kept.ts';
import type { Logger } from '../platform/logger.ts';
import { INTERVAL_MS, siteDay } from '../platform/time/calendar.ts';
import { BACKFILL_MS, checkTime, counterStep, FUTURE_TOLERANCE_MS, MAX_PLAUSIBLE_KW, REBASE_AFTER, type Reading } from './readingCheck.ts';
import {
  cpuMs,
  DayBatch,
  type DayRecord,
  FLAG_BAD_QUALITY,
  FLAG_ESTIMATED,
  FLAG_JITTER,
  FLAG_REFUSED,
  FLAG_RESET,
  type IntervalStore,
  SLICE_MS,
  type VirtualMeter,
  yieldToLoop,
} from './store.ts';
import { dropAfter } from './clockStep.ts';
import { StoppedMeters } from './stoppedMeters.ts';
import { conditionOf, type CollectorStatus, type MeterHealth, type MeterWatch } from './collectorHealth.ts';
import { type Current, type History, mapLimit, readHistory, readValues } from './collectorReads.ts';

export { BACKFILL_MS };
/**
 * How often the service writes what it holds (issue 44: disk writes on an edge box). Every write rewrites today's row of
 * every meter (~100-150 KiB of WAL at 500 meters); hourly instead of every 15 minutes is ~4 times fewer bytes. Reads of
 * day and month figures add what is held (StoredDays), so they are as current as before, and a box joined to a fleet
 * sends what is held at every sync (fleetSync heldPart), so the fleet is too; see docs/performance-edge.md.
 */
export const EDGE_WRITE_MS = 60 * 60_000;
/** Readings further apart than this are a gap: the gateway's history is asked for what lies between. */
const MIN_GAP_MS = 5 * 60_000;
const HISTORY_CONCURRENCY = 8;
/** How often a meter the gateway does not report, and whose history was empty, is asked for its history again. */
const ABSENT_RETRY_MS = 15 * 60_000;
/** History readings further apart than this leave a hole: what is spread across it is estimated, not measured. */
const HISTORY_HOLE_MS = 30 * 60_000;
/** History readings applied between two looks at the clock (a day of 5-minute readings). */
const HISTORY_STEP = 288;
/** Collections a meter's first reading waits for its history (a gateway slow or failing at start-up) before it starts without. */
const FIRST_HISTORY_TRIES = 5;
/** Held day records written in one transaction; more (a backfill, a catch-up) are written in slices. */
const ONE_WRITE_RECORDS = 1200;

type CollectedMeter = { id: number; code: string; kind: Exclude<MeterKind, 'virtual'> };
type State = { lastAt: number; lastValue: number; demandKw: number | null };

/**
 * Counting starts again at `reading`, further from the meter's last reading (`lastAt`) than the backfill span: the gap
 * stays missing, and the interval `lastAt` fell inside holds only its part before it, so it is estimated (as a meter's
 * first interval is: store.ts partFlag), never a part called measured.
 */
function startAgain(batch: DayBatch, meter: CollectedMeter, lastAt: number, reading: Reading): State {
  if (lastAt % INTERVAL_MS !== 0) batch.flag(meter.id, lastAt, FLAG_ESTIMATED);
  return { lastAt: reading.at, lastValue: reading.value, demandKw: meter.kind === 'power' ? reading.value : null };
}

/**
 * Where the meters ahead of a clock stepped back start again: at the earliest of their readings this collection took
 * (within [started, readAt]), or `started`. dropAfter keeps the part of the interval holding it before it, and they count
 * from their readings on: cut at `started` instead, the part between it and the readings was lost (the week's soak,
 * 2 Nov 15:00: main 3.8 kWh short after a read that took 1.5 simulated minutes on a busy machine).
 */
function restartAt(current: Map<string, Current>, meters: CollectedMeter[], ahead: Set<number>, started: number, readAt: number): number {
  let at = Number.POSITIVE_INFINITY;
  for (const meter of meters) {
    const reading = ahead.has(meter.id) ? current.get(meter.code) : undefined;
    // As collectMeter counts it: up to the tolerance ahead is taken as readAt.
    if (reading && 'value' in reading && reading.at >= started) at = Math.min(at, reading.at, readAt);
  }
  return Number.isFinite(at) ? at : started;
}

export class Collector {
  private readonly repeating: Repeating;
  private failing = false;
  private failingSince: number | null = null;
  private consecutiveFailures = 0;
  private lastStartedAt: number | null = null;
  private clockStepsBack = 0;
  private readonly watches = new Map<number, MeterWatch>();
  private readonly status = { lastRunAt: null as string | null, lastOkAt: null as string | null, lastError: null as string | null, meters: 0 };
  private readonly selectMeters;
  private readonly selectVirtuals;
  private readonly selectState;
  private readonly upsertState;
  private readonly deleteState;
  private readonly selectMeterIds;
  private readonly meterExists;
  /**
   * Counted since the last write (holdOpenInterval): day records, meter states, when the last write was (-1: none yet),
   * the 15-minute interval last seen, and the virtual meters of the last collection.
   */
  private held: { batch: DayBatch; states: Map<number, State>; writtenAt: number; interval: number; virtuals: VirtualMeter[] } | null = null;
  /** Moves whenever what is held may have changed (store.open.generation: the store keeps heldDays() by it). */
  private heldGeneration = 0;
  /** The virtual meters' held days, derived once per generation (store.open.kwh of a virtual meter). */
  private heldVirtualDays: { generation: number; records: Map<string, DayRecord | undefined> } | null = null;
  /** Meters no longer collected: the interval of their last reading flagged (src/metering/stoppedMeters.ts). */
  private readonly stopped = new StoppedMeters();

  constructor(
    private readonly deps: {
      db: Db;
      iot: Pick<GatewayPort, 'values' | 'history'>;
      store: IntervalStore;
      logger: Logger;
      intervalMs: number;
      timezone: () => string;
      now?: () => number;
      /** Keep what is counted in memory and write at period boundaries (see hold()); false: write every collection. */
      holdOpenInterval?: boolean;
      /**
       * With holdOpenInterval: what is held is written at the first collection of each period this long, asked at every
       * collection (default 15 minutes; the service: EDGE_WRITE_MS).
       */
      writeEveryMs?: () => number;
      /** Runs after each collection, good or not (e.g. the demand and data watches); an error there is logged, never the collection's. */
      afterCollect?: (now: number, ok: boolean) => void;
    },
  ) {
    this.repeating = new Repeating(() => this.collect(), deps.intervalMs, 'energy collection');
    if (deps.holdOpenInterval) {
      deps.store.open = {
        // A virtual meter's held intervals are its terms' held ones, as the fleet sync sends them (records()): the box's
        // own screens show today's open intervals of "Rest of building" as they will be written, not partial or empty.
        kwh: (meterId, day) => (this.held?.batch.held(meterId, day) ?? this.heldVirtual(meterId, day))?.kwh,
        demandKw: (meterId) => this.held?.states.get(meterId)?.demandKw,
        records: () => this.heldDayRecords(),
        generation: () => this.heldGeneration,
      };
    }
    const sqlite = deps.db.sqlite;
    // raw SQL: read every collection: rows as plain objects without drizzle's row mapper (~2.5 µs a row, docs/development.md), at up to 2,000 meters.
    this.selectMeters = sqlite.prepare("SELECT id, code, kind FROM meters WHERE enabled = 1 AND kind <> 'virtual' AND code IS NOT NULL ORDER BY id");
    // raw SQL: read every collection; the terms stay JSON text, parsed once where they are used.
    this.selectVirtuals = sqlite.prepare("SELECT id, terms FROM meters WHERE kind = 'virtual' AND enabled = 1 ORDER BY id");
    // raw SQL: every meter's position, read at each start and catch-up: rows as plain objects, no row mapper.
    this.selectState = sqlite.prepare('SELECT meter_id AS meterId, last_at AS lastAt, last_value AS lastValue, demand_kw AS demandKw FROM meter_state');
    // raw SQL: one upsert per meter and collection, named parameters bound straight from the held state object.
    this.upsertState = sqlite.prepare(
      `INSERT INTO meter_state (meter_id, last_at, last_value, demand_kw) VALUES (@meterId, @lastAt, @lastValue, @demandKw)
       ON CONFLICT (meter_id) DO UPDATE SET last_at = excluded.last_at, last_value = excluded.last_value, demand_kw = excluded.demand_kw`,
    );
    const { orm } = deps.db;
    this.deleteState = orm
      .delete(meterState)
      .where(eq(meterState.meterId, sql.placeholder('meterId')))
      .prepare();
    this.selectMeterIds = orm.select({ id: meters.id }).from(meters).prepare();
    this.meterExists = orm
      .select({ id: meters.id })
      .from(meters)
      .where(eq(meters.id, sql.placeholder('id')))
      .prepare();
  }

  private now(): number {
    return this.deps.now?.() ?? Date.now();
  }

  get intervalMs(): number {
    return this.deps.intervalMs;
  }

  /** The collection as a named job (the registry in src/platform/jobs/jobs.ts lists it). */
  get job(): Job {
    return this.repeating;
  }

  start(): void {
    this.repeating.start();
  }

  /** Stops collecting and writes what is held in memory. */
  async stop(): Promise<void> {
    await this.repeating.stop();
    if (!this.held?.batch.size && !this.held?.states.size) return;
    try {
      this.persist(this.virtuals());
    } catch (error) {
      this.deps.logger.error(
        { err: error },
        'energy counted since the last interval boundary could not be written; the gateway history fills it at the next start',
      );
    }
  }

  /** Writes what is held in memory now (as at a write period's start); for callers that read the database directly. */
  flush(): void {
    if (!this.held?.batch.size && !this.held?.states.size) return;
    this.persist(this.virtuals());
  }

  private virtuals(): VirtualMeter[] {
    return (this.selectVirtuals.all() as { id: number; terms: string }[]).map((row) => ({ id: row.id, terms: JSON.parse(row.terms) as MeterTerm[] }));
  }

  /** The meter states: the stored ones with what is held in memory (ahead of the database) on top. */
  private currentStates(): Map<number, State> {
    const states = new Map((this.selectState.all() as (State & { meterId: number })[]).map((row) => [row.meterId, row as State]));
    if (this.held) for (const [meterId, state] of this.held.states) states.set(meterId, state);
    return states;
  }

  /**
   * The persist step. Without `holdOpenInterval` every collection writes its day rows and meter states. With it, what a
   * collection counted stays in memory and is written at the first collection of each new write period (`writeEveryMs`:
   * the service writes hourly, so a day row is rewritten 24 times a day, not 1,440), on stop, and at once when a meter
   * counted its first reading (`now`). A gap filled from the gateway's history after a failed collection waits for the
   * period's write like everything else (issue 56: a write at every recovery made a gateway that drops out a few times
   * a day cost several days' writes). A power cut loses only what is held: the meter states in the database still match
   * the day rows, so the next start counts the gap again (from the gateway's history, or the counter's difference spread
   * over it). Between writes, readers add what is held (store.open, StoredDays); at each new 15-minute interval the cached
   * figures on `meter_days` are dropped as a write would drop them, so they follow what is held at the same pace.
   */
  private async hold(batch: DayBatch, counted: Map<number, State>, at: number, virtuals: VirtualMeter[], now: boolean): Promise<void> {
    const interval = Math.floor(at / INTERVAL_MS);
    const length = this.deps.writeEveryMs?.() ?? INTERVAL_MS;
    const held = this.held ?? { batch, states: new Map<number, State>(), writtenAt: -1, interval: -1, virtuals };
    for (const [meterId, state] of counted) held.states.set(meterId, state);
    held.virtuals = virtuals;
    this.held = held;
    this.heldGeneration += 1;
    const newInterval = held.interval !== interval;
    held.interval = interval;
    // A new period since the last write, by the period's length now (a join or leave changes it: no write for that alone).
    if (this.deps.holdOpenInterval && !now && Math.floor(at / length) === Math.floor(held.writtenAt / length)) {
      if (newInterval) markWritten(this.deps.db.sqlite, 'meter_days');
      return;
    }
    // Marked written only once it is: a write that failed (a full disk) is tried again at the next collection, not an
    // hour later, and what is held stays in memory meanwhile.
    await this.persistInSlices(virtuals);
    held.writtenAt = at;
  }

  /** A virtual meter's day derived from its terms' held records, when any term of that day is held; kept per generation. */
  private heldVirtual(meterId: number, day: string): DayRecord | undefined {
    const held = this.held;
    const meter = held?.virtuals.find((virtual) => virtual.id === meterId);
    if (!held || !meter) return undefined;
    if (this.heldVirtualDays?.generation !== this.heldGeneration) this.heldVirtualDays = { generation: this.heldGeneration, records: new Map() };
    const { records } = this.heldVirtualDays;
    const key = `${meterId}|${day}`;
    if (!records.has(key)) {
      const termsHeld = meter.terms.some((term) => held.batch.held(term.meterId, day));
      records.set(key, termsHeld ? this.deps.store.deriveVirtual(meter, day, (id, at) => held.batch.held(id, at)) : undefined);
    }
    return records.get(key);
  }

  /** What is held, with the virtual meters' held days derived from it (their rows are derived at the write). */
  private heldDayRecords(): DayRecord[] {
    const held = this.held;
    if (!held) return [];
    // A meter deleted since it was counted has no rows left to add to (its held record goes at the next write).
    const existing = new Set(this.selectMeterIds.all().map((row) => row.id));
    const records = [...held.batch.all()].filter((record) => existing.has(record.meterId));
    const lookup = (meterId: number, day: string) => held.batch.held(meterId, day);
    for (const day of held.batch.days())
      for (const meter of held.virtuals) if (existing.has(meter.id)) records.push(this.deps.store.deriveVirtual(meter, day, lookup));
    return records;
  }

  /**
   * The month rollups take the days before today (store.ts foldBefore): at the first write of a new day yesterday is
   * added to its month, once, instead of every write of a day moving its month row (issue 44). Its own transaction,
   * before the write: the held records of yesterday then move their month by their difference, today's none.
   */
  private fold(): void {
    this.deps.store.foldBefore(siteDay(this.deps.timezone(), new Date(this.now())));
  }

  /** Writes the held day rows and meter states in one transaction; kept in memory when that fails (tried again next time). */
  private persist(virtuals: VirtualMeter[]): void {
    const held = this.held;
    if (!held) return;
    this.fold();
    const existing = new Set(this.selectMeterIds.all().map((row) => row.id));
    held.batch.retain(existing);
    this.deps.store.transaction(() => {
      for (const [meterId, state] of held.states) if (existing.has(meterId)) this.upsertState.run({ meterId, ...state });
      held.batch.save(virtuals.filter((meter) => existing.has(meter.id)));
    });
    // Only after the commit: a full disk fails the COMMIT, and then all of it stays held for the next try.
    held.batch.clear();
    held.states.clear();
    this.heldGeneration += 1;
    if (!this.deps.holdOpenInterval || held.batch.timezone !== this.deps.timezone()) this.held = null;
  }

  /**
   * persist() in slices, for what a collection writes (a backfill's thousands of day rows, or the 15-minute write of
   * 500): each slice is one transaction holding whole meters — a meter's day records with its state, so the database
   * never has a state ahead of its rows — then the virtual meters' days, one (meter, day) at a time; the event loop is
   * free between slices. Nothing held is dropped until every slice is written: a failed slice leaves all of it held and
   * the next collection writes it again (a rewrite of a row already written is the same row; its month moves by 0).
   * A power cut between slices leaves whole meters written and a virtual day possibly behind its terms until the day is
   * next written.
   */
  private async persistInSlices(virtuals: VirtualMeter[]): Promise<void> {
    const held = this.held;
    if (!held) return;
    // The steady 15-minute write (a day row or two per meter: 500 rows in ~13 ms) stays one transaction: every commit
    // rewrites the pages it touched into the WAL, and today's rows of all meters share a few dozen pages.
    if (held.batch.size <= ONE_WRITE_RECORDS) {
      this.persist(virtuals);
      return;
    }
    this.fold();
    const existing = new Set(this.selectMeterIds.all().map((row) => row.id));
    held.batch.retain(existing);
    const records = held.batch.byMeter();
    const meterIds = [...new Set([...records.keys(), ...held.states.keys()])].filter((id) => existing.has(id));
    const days = held.batch.days();
    const store = this.deps.store;
    let next = 0;
    while (next < meterIds.length) {
      const sliceStart = cpuMs();
      store.transaction(() => {
        do {
          const meterId = meterIds[next++];
          // Deleted during an earlier slice's pause: its rows are gone and a write would fail.
          if (!this.meterExists.get({ id: meterId })) continue;
          const state = held.states.get(meterId);
          if (state) this.upsertState.run({ meterId, ...state });
          store.save(records.get(meterId) ?? []);
        } while (next < meterIds.length && cpuMs() - sliceStart < SLICE_MS);
      });
      await yieldToLoop();
    }
    const derived = virtuals.filter((meter) => existing.has(meter.id)).flatMap((meter) => [...days].map((day) => ({ meter, day })));
    next = 0;
    while (next < derived.length) {
      const sliceStart = cpuMs();
      store.transaction(() => {
        do {
          const { meter, day } = derived[next++];
          if (this.meterExists.get({ id: meter.id })) store.save([store.deriveVirtual(meter, day, (meterId, termDay) => held.batch.held(meterId, termDay))]);
        } while (next < derived.length && cpuMs() - sliceStart < SLICE_MS);
      });
      await yieldToLoop();
    }
    // Only what was written goes: a collection cannot run meanwhile (runs never overlap), so nothing was added.
    held.batch.clear();
    held.states.clear();
    this.heldGeneration += 1;
    if (!this.deps.holdOpenInterval || held.batch.timezone !== this.deps.timezone()) this.held = null;
  }

  health(): CollectorStatus {
    const lastOk = this.status.lastOkAt ? Date.parse(this.status.lastOkAt) : null;
    let refused = 0;
    for (const watch of this.watches.values()) refused += watch.refused;
    return {
      ...this.status,
      lagSec: lastOk === null ? null : Math.max(0, Math.round((this.now() - lastOk) / 1000)),
      state: this.failing ? 'failing' : this.status.lastOkAt ? 'ok' : 'idle',
      failingSince: this.failingSince === null ? null : new Date(this.failingSince).toISOString(),
      consecutiveFailures: this.consecutiveFailures,
      clockStepsBack: this.clockStepsBack,
      refused,
    };
  }

  /**
   * Each collected meter's condition: refusing (its last reading was refused), failing (the collection fails, or the
   * gateway gave no good value), stale (its last counted reading is older than two intervals), else ok.
   */
  meterHealth(): MeterHealth[] {
    const now = this.now();
    const states = this.currentStates();
    return (this.selectMeters.all() as CollectedMeter[]).map((meter) => {
      const state = states.get(meter.id);
      const watch = this.watches.get(meter.id);
      const lag = state ? Math.max(0, now - state.lastAt) : null;
      return {
        meterId: meter.id,
        code: meter.code,
        state: conditionOf(watch, lag, this.failing, this.deps.intervalMs),
        lastReadingAt: state ? new Date(state.lastAt).toISOString() : null,
        lastValue: state ? state.lastValue : null,
        lagSec: lag === null ? null : Math.round(lag / 1000),
        refused: watch?.refused ?? 0,
        jitter: watch?.jitter ?? 0,
        lastRefusal: watch?.lastRefusal ?? null,
      };
    });
  }

  /** How many collected meters are not ok (the public health figure): meterHealth's rule without a row per meter. */
  metersNotOk(): number {
    const now = this.now();
    const states = this.currentStates();
    let count = 0;
    for (const meter of this.selectMeters.all() as CollectedMeter[]) {
      const state = states.get(meter.id);
      if (conditionOf(this.watches.get(meter.id), state ? Math.max(0, now - state.lastAt) : null, this.failing, this.deps.intervalMs) !== 'ok') count += 1;
    }
    return count;
  }

  private watch(meterId: number): MeterWatch {
    let watch = this.watches.get(meterId);
    if (!watch)
      this.watches.set(meterId, (watch = { last: null, refused: 0, jitter: 0, lastRefusal: null, implausibleRun: 0, historyMisses: 0, emptyHistoryAt: null }));
    return watch;
  }

  private refuse(meter: CollectedMeter, reading: { at: number; value?: number }, reason: string, now: number, batch: DayBatch): void {
    const watch = this.watch(meter.id);
    watch.refused += 1;
    watch.last = 'refused';
    const readingAt = Number.isFinite(reading.at) && Math.abs(reading.at) <= 8.64e15 ? new Date(reading.at).toISOString() : null;
    watch.lastRefusal = { at: new Date(now).toISOString(), readingAt, value: reading.value ?? null, reason };
    // Flagged where it arrived (now), never at a time that has not happened or lies outside the stored span.
    const at = reading.at <= now && reading.at >= now - BACKFILL_MS ? reading.at : now;
    batch.flag(meter.id, at, FLAG_REFUSED);
    if (watch.refused === 1 || watch.refused % 100 === 0)
      this.deps.logger.warn({ meterId: meter.id, code: meter.code, reason, readingAt, refused: watch.refused }, 'meter reading refused');
  }

  private turn: Promise<unknown> = Promise.resolve();

  /** Runs `task` with no collection in flight and none starting before it ends (a time-zone move re-keys the day rows). */
  exclusive<T>(task: () => Promise<T>): Promise<T> {
    const run = this.turn.then(task, task);
    this.turn = run.catch(() => undefined);
    return run;
  }

  /** One collection; never throws (a gateway that is down is logged once, and once when it answers again). */
  collect(): Promise<{ meters: number; readings: number; filled: number; refused: number }> {
    return this.exclusive(() => this.collectNow());
  }

  private async collectNow(): Promise<{ meters: number; readings: number; filled: number; refused: number }> {
    const started = this.now();
    this.status.lastRunAt = new Date(started).toISOString();
    const steppedBack = this.lastStartedAt !== null && started < this.lastStartedAt - FUTURE_TOLERANCE_MS;
    this.lastStartedAt = started;
    const meters = this.selectMeters.all() as CollectedMeter[];
    this.status.meters = meters.length;
    const counts = { meters: meters.length, readings: 0, filled: 0, refused: 0 };
    if (!meters.length) return counts;
    let ok = false;
    try {
      const current = await readValues(this.deps.iot, meters, () => this.now());
      // The values were stamped while they were read, after `started`: they are checked against the clock after the read
      // (clamping them to `started` stored a reading's value under an earlier time than it was read at).
      const readAt = Math.max(started, this.now());
      // What is held in memory is ahead of the database.
      const states = this.currentStates();
      // A last reading ahead of the clock: the box's clock stepped back (or a future reading was taken before readings
      // were checked). What lies after now is dropped; those meters start again from their next reading.
      const ahead = [...states].filter(([, state]) => state.lastAt > started + FUTURE_TOLERANCE_MS).map(([id]) => id);
      const rebase = new Set<number>(ahead);
      if (steppedBack || ahead.length) {
        if (steppedBack) this.clockStepsBack += 1;
        // What is held in memory is written first, so that the drop below removes its intervals after now as well;
        // nothing of it stays held (a held record or state ahead of the clock would come back at the next write).
        if (this.held) {
          this.persist(this.virtuals());
          this.held = null;
        }
        const dropped = this.deps.store.transaction(() => {
          for (const meterId of ahead) this.deleteState.run({ meterId });
          return dropAfter(this.deps.store, this.deps.db, this.deps.timezone(), restartAt(current, meters, rebase, started, readAt), rebase, states);
        });
        for (const id of ahead) states.delete(id);
        this.deps.logger.warn(
          { steppedBack, metersAhead: ahead.length, dayRowsChanged: dropped },
          'the clock stepped back: intervals after now dropped, meters ahead of it start again',
        );
      }
      // Gaps first: history for every meter whose last reading is too old (or that was never read), a few at a time.
      const gapMs = Math.max(MIN_GAP_MS, 3 * this.deps.intervalMs);
      const histories = new Map<number, History | null>();
      const needing = meters.filter((meter) => {
        if (rebase.has(meter.id)) return false;
        const state = states.get(meter.id);
        const reading = current.get(meter.code);
        const at = reading && 'value' in reading && checkTime(reading.at, readAt).ok ? Math.min(reading.at, readAt) : started;
        if (state && at - state.lastAt <= gapMs) return false;
        // A meter the gateway does not report and whose history came back empty is asked again after ABSENT_RETRY_MS,
        // not every collection (a gateway that lost 1,500 points got 1,500 history requests a minute).
        const watch = this.watch(meter.id);
        return reading !== undefined || watch.emptyHistoryAt === null || started - watch.emptyHistoryAt >= ABSENT_RETRY_MS;
      });
      await mapLimit(needing, HISTORY_CONCURRENCY, async (meter) => {
        const state = states.get(meter.id);
        // Never before the backfill span, never after now.
        const from = Math.max(state?.lastAt ?? 0, started - BACKFILL_MS);
        const history = from < started ? await readHistory(this.deps.iot, meter.code, from, started) : { at: [], value: [] };
        histories.set(meter.id, history);
        this.watch(meter.id).emptyHistoryAt = history && history.at.length === 0 && !current.has(meter.code) ? started : null;
      });

      const timezone = this.deps.timezone();
      const virtuals = this.virtuals();
      // A time-zone change writes what is held under the zone it was counted in.
      if (this.held && this.held.batch.timezone !== timezone) this.persist(virtuals);
      const batch = this.held?.batch ?? new DayBatch(this.deps.store, timezone);
      const counted = new Map<number, State>();
      const knownBefore = new Set(states.keys());
      // Counting runs in memory, outside any transaction, in slices: the event loop is given back every SLICE_MS (a
      // 7-day backfill of 500 meters is a million readings), and a meter's history is applied HISTORY_STEP readings at
      // a time, so one meter's week never makes a long slice. What was counted is written by hold().
      let next = 0;
      let position = 0;
      while (next < meters.length) {
        const sliceStart = performance.now();
        do {
          const meter = meters[next];
          const history = histories.get(meter.id);
          // A meter's first reading waits while its history cannot be read: counted now, the reading would become the
          // meter's start and its backfill would be lost for good. The next collections ask again; after
          // FIRST_HISTORY_TRIES failures it starts without (a gateway that keeps no history for the point).
          if (history === null && !states.has(meter.id) && (this.watch(meter.id).historyMisses += 1) <= FIRST_HISTORY_TRIES) {
            next += 1;
            continue;
          }
          if (history && position < history.at.length) {
            position = this.applyHistory(batch, meter, states, counted, history, position, started);
            if (position < history.at.length) continue;
            counts.filled += history.at.length;
          }
          this.collectMeter(batch, meter, states, counted, current.get(meter.code), readAt, gapMs, counts);
          next += 1;
          position = 0;
        } while (next < meters.length && performance.now() - sliceStart < SLICE_MS);
        if (next < meters.length) await yieldToLoop();
      }
      // Written at once only when a meter counted its first reading (its start and its 7-day backfill, even when the
      // gateway's history was empty). A gap filled after a failed collection is held and written at the period's write
      // (hourly on a box), as a history read that found nothing is: a recovery is not one more write.
      this.stopped.close(batch, states, new Set(meters.map((meter) => meter.id)), started);
      const firstReading = [...counted.keys()].some((id) => !knownBefore.has(id));
      await this.hold(batch, counted, started, virtuals, firstReading);
      this.status.lastOkAt = new Date(this.now()).toISOString();
      this.status.lastError = null;
      if (this.failing) this.deps.logger.warn('energy collection works again; the gap is filled from the gateway history');
      this.failing = false;
      this.failingSince = null;
      this.consecutiveFailures = 0;
      ok = true;
    } catch (error) {
      this.status.lastError = (error as Error).message;
      if (!this.failing) this.deps.logger.warn({ err: error }, 'energy collection failed; it goes on trying every interval');
      if (!this.failing) this.failingSince = started;
      this.failing = true;
      this.consecutiveFailures += 1;
    }
    try {
      this.deps.afterCollect?.(this.now(), ok);
    } catch (error) {
      this.deps.logger.error({ err: error }, 'after-collection check failed');
    }
    return counts;
  }

  /** Applies up to HISTORY_STEP of a meter's history readings from `position`; answers where it stopped. */
  private applyHistory(
    batch: DayBatch,
    meter: CollectedMeter,
    states: Map<number, State>,
    counted: Map<number, State>,
    history: History,
    position: number,
    now: number,
  ): number {
    let state = states.get(meter.id) ?? null;
    const end = Math.min(history.at.length, position + HISTORY_STEP);
    for (; position < end; position += 1) {
      const past = { at: history.at[position], value: history.value[position] };
      // A hole in the history itself (readings further apart than two intervals) is spread too, but as estimated.
      state = this.apply(batch, meter, state, past, state && past.at - state.lastAt > HISTORY_HOLE_MS ? FLAG_ESTIMATED : 0, now);
    }
    if (state) {
      states.set(meter.id, state);
      counted.set(meter.id, state);
    }
    return position;
  }

  private collectMeter(
    batch: DayBatch,
    meter: CollectedMeter,
    states: Map<number, State>,
    counted: Map<number, State>,
    reading: Current | undefined,
    now: number,
    gapMs: number,
    counts: { readings: number; filled: number; refused: number },
  ): void {
    let state = states.get(meter.id) ?? null;
    const watch = this.watch(meter.id);
    if (!reading) watch.last = 'absent';
    else if ('bad' in reading) {
      batch.flag(meter.id, checkTime(reading.at, now).ok ? Math.min(reading.at, now) : now, FLAG_BAD_QUALITY);
      watch.last = 'bad';
    } else {
      const time = checkTime(reading.at, now);
      if (!time.ok) {
        this.refuse(meter, reading, time.reason === 'future' ? 'a time in the future' : 'a time older than the 7-day backfill span', now, batch);
        counts.refused += 1;
      } else {
        // Up to the tolerance ahead is taken as now: no interval after now is ever written.
        const at = Math.min(reading.at, now);
        // A gap the history could not fill (no answer, or none for that span) is spread evenly and flagged as estimated.
        const estimated = state && at - state.lastAt > gapMs ? FLAG_ESTIMATED : 0;
        const before = watch.refused;
        state = this.apply(batch, meter, state, { at, value: reading.value }, estimated, now);
        if (watch.refused === before) watch.last = 'counted';
        else counts.refused += 1;
        counts.readings += 1;
      }
    }
    if (state) {
      states.set(meter.id, state);
      counted.set(meter.id, state);
    }
  }

  /** Counts one checked reading on top of the meter's state; answers the new state. */
  private apply(batch: DayBatch, meter: CollectedMeter, state: State | null, reading: Reading, flags: number, now: number): State | null {
    if (!checkTime(reading.at, now).ok) return state;
    const at = Math.min(reading.at, now);
    if (!state) return { lastAt: at, lastValue: reading.value, demandKw: meter.kind === 'power' ? reading.value : null };
    if (at <= state.lastAt) return state;
    // Further apart than the backfill span: nothing between them can be placed honestly; the gap stays missing.
    if (at - state.lastAt > BACKFILL_MS) return startAgain(batch, meter, state.lastAt, { at, value: reading.value });
    const hours = (at - state.lastAt) / 3_600_000;
    const watch = this.watch(meter.id);
    if (meter.kind === 'power') {
      if (reading.value < -MAX_PLAUSIBLE_KW || reading.value > MAX_PLAUSIBLE_KW) {
        this.refuse(meter, reading, `${reading.value} kW is beyond any real load`, now, batch);
        return state;
      }
      batch.integrate(meter.id, state.lastAt, state.lastValue, at, reading.value, flags);
      return { lastAt: at, lastValue: reading.value, demandKw: reading.value };
    }
    const step = counterStep(state.lastValue, reading.value, hours);
    if (step.kind === 'implausible') {
      watch.implausibleRun += 1;
      if (watch.implausibleRun < REBASE_AFTER) {
        this.refuse(meter, reading, step.why, now, batch);
        return state;
      }
      // The same story REBASE_AFTER times: the counter really is somewhere else now (replaced, reset to a non-zero value).
      watch.implausibleRun = 0;
      batch.spread(meter.id, state.lastAt, at, 0, flags | FLAG_RESET);
      return { lastAt: at, lastValue: reading.value, demandKw: 0 };
    }
    watch.implausibleRun = 0;
    if (step.kind === 'jitter') {
      watch.jitter += 1;
      batch.spread(meter.id, state.lastAt, at, 0, flags | FLAG_JITTER);
      return { lastAt: at, lastValue: state.lastValue, demandKw: 0 };
    }
    batch.spread(meter.id, state.lastAt, at, step.kwh, step.kind === 'energy' ? flags : flags | FLAG_RESET);
    return { lastAt: at, lastValue: reading.value, demandKw: step.kwh / hours };
  }
}
