// The collector's hold-and-persist policy (collector.ts): what a collection counted is held in memory and written at
// the first collection of each write period (hourly on a box: issue 44), at a meter's first reading, on stop, and when
// the clock steps back or the zone changes; readers add what is held meanwhile (store.open, StoredDays). A large write
// (a backfill, a catch-up) goes in slices of whole meters that give the event loop back.
import type { Db } from '../platform/db/client.ts';
import { eq, sql } from 'drizzle-orm';
import { meters, type MeterTerm } from '../platform/db/schema/index.ts';
import { markWritten } from '../platform/db/kept.ts';
import { INTERVAL_MS, siteDay } from '../platform/time/calendar.ts';
import { cpuMs, DayBatch, type DayRecord, type IntervalStore, SLICE_MS, type VirtualMeter, yieldToLoop } from './store.ts';
import type { State } from './collectorCount.ts';

/**
 * How often the service writes what it holds (issue 44: disk writes on an edge box). Every write rewrites today's row of
 * every meter (~100-150 KiB of WAL at 500 meters); hourly instead of every 15 minutes is ~4 times fewer bytes. Reads of
 * day and month figures add what is held (StoredDays), so they are as current as before, and a box joined to a fleet
 * sends what is held at every sync (fleetSync heldPart), so the fleet is too; see docs/performance-edge.md.
 */
export const EDGE_WRITE_MS = 60 * 60_000;
/** Held day records written in one transaction; more (a backfill, a catch-up) are written in slices. */
const ONE_WRITE_RECORDS = 1200;

export class HeldWrites {
  private readonly selectVirtuals;
  private readonly selectState;
  private readonly upsertState;
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

  constructor(
    private readonly deps: {
      db: Db;
      store: IntervalStore;
      timezone: () => string;
      now?: () => number;
      /** Keep what is counted in memory and write at period boundaries (see hold()); false: write every collection. */
      holdOpenInterval?: boolean;
      /**
       * With holdOpenInterval: what is held is written at the first collection of each period this long, asked at every
       * collection (default 15 minutes; the service: EDGE_WRITE_MS).
       */
      writeEveryMs?: () => number;
    },
  ) {
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

  /** Whether anything counted waits in memory for its write. */
  get pending(): boolean {
    return Boolean(this.held?.batch.size || this.held?.states.size);
  }

  /** Writes what is held in memory now (as at a write period's start); for callers that read the database directly. */
  flush(): void {
    if (!this.held?.batch.size && !this.held?.states.size) return;
    this.persist(this.virtuals());
  }

  /** Writes what is held and holds nothing after it (the clock stepped back: nothing held may come back at the next write). */
  writeAll(): void {
    if (this.held) {
      this.persist(this.virtuals());
      this.held = null;
    }
  }

  /** The day batch a collection counts into: what is held, else a new one; a time-zone change writes what is held under the zone it was counted in. */
  batchFor(timezone: string, virtuals: VirtualMeter[]): DayBatch {
    if (this.held && this.held.batch.timezone !== timezone) this.persist(virtuals);
    const batch = this.held?.batch ?? new DayBatch(this.deps.store, timezone);
    return batch;
  }

  virtuals(): VirtualMeter[] {
    return (this.selectVirtuals.all() as { id: number; terms: string }[]).map((row) => ({ id: row.id, terms: JSON.parse(row.terms) as MeterTerm[] }));
  }

  /** The meter states: the stored ones with what is held in memory (ahead of the database) on top. */
  currentStates(): Map<number, State> {
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
  async hold(batch: DayBatch, counted: Map<number, State>, at: number, virtuals: VirtualMeter[], now: boolean): Promise<void> {
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
}
