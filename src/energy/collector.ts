// The collector: one batched codes/values read of every enabled meter per interval, turned into 15-minute interval
// energy. Counter deltas are spread over the time they cover (split at interval boundaries); resets and rollovers are
// detected; a gap (outage, restart) is filled from codes/history; a meter read for the first time is backfilled 7 days.
import type { Db } from '../db/client.ts';
import type { MeterKind, MeterTerm } from '../db/schema/index.ts';
import type { IotGateway } from '../iot/service.ts';
import { Repeating } from '../lifecycle.ts';
import type { Logger } from '../logger.ts';
import { INTERVAL_MS } from './calendar.ts';
import { DayBatch, FLAG_BAD_QUALITY, FLAG_ESTIMATED, FLAG_RESET, type IntervalStore, type VirtualMeter } from './store.ts';

export const BACKFILL_MS = 7 * 86_400_000;
/** Larger than any real load behind one meter (100 MW): a counter jump beyond it is a replaced meter, not energy. */
const MAX_PLAUSIBLE_KW = 100_000;
/** Readings further apart than this are a gap: the gateway's history is asked for what lies between. */
const MIN_GAP_MS = 5 * 60_000;
/** The history asked for per request: one day keeps the simulator's (and most gateways') 5-minute resolution. */
const HISTORY_CHUNK_MS = 86_400_000;
const HISTORY_CONCURRENCY = 8;
const VALUES_BATCH = 1000;
/** How long counting may hold the event loop before it lets requests through. */
const SLICE_MS = 20;

type CollectedMeter = { id: number; code: string; kind: Exclude<MeterKind, 'virtual'> };
type State = { lastAt: number; lastValue: number; demandKw: number | null };
type Reading = { at: number; value: number };

export type CollectorStatus = { lastRunAt: string | null; lastOkAt: string | null; lastError: string | null; meters: number; lagSec: number | null };

export class Collector {
  private readonly repeating: Repeating;
  private failing = false;
  private readonly status: CollectorStatus = { lastRunAt: null, lastOkAt: null, lastError: null, meters: 0, lagSec: null };
  private readonly selectMeters;
  private readonly selectVirtuals;
  private readonly selectState;
  private readonly upsertState;
  private readonly selectMeterIds;
  /** Counted since the last write (holdOpenInterval): day records, meter states, and the interval last written in. */
  private held: { batch: DayBatch; states: Map<number, State>; interval: number } | null = null;

  constructor(
    private readonly deps: {
      db: Db;
      iot: Pick<IotGateway, 'relay'>;
      store: IntervalStore;
      logger: Logger;
      intervalMs: number;
      timezone: () => string;
      now?: () => number;
      /** Keep what is counted in memory and write at 15-minute boundaries (see hold()); false: write every collection. */
      holdOpenInterval?: boolean;
      /** Runs after each good collection (e.g. the demand watch); an error there is logged, never the collection's. */
      afterCollect?: (now: number) => void;
    },
  ) {
    this.repeating = new Repeating(() => this.collect(), deps.intervalMs);
    if (deps.holdOpenInterval) {
      deps.store.open = { kwh: (meterId, day) => this.held?.batch.held(meterId, day)?.kwh, demandKw: (meterId) => this.held?.states.get(meterId)?.demandKw };
    }
    const sqlite = deps.db.sqlite;
    this.selectMeters = sqlite.prepare("SELECT id, code, kind FROM meters WHERE enabled = 1 AND kind <> 'virtual' AND code IS NOT NULL ORDER BY id");
    this.selectVirtuals = sqlite.prepare("SELECT id, terms FROM meters WHERE kind = 'virtual' AND enabled = 1 ORDER BY id");
    this.selectState = sqlite.prepare('SELECT meter_id AS meterId, last_at AS lastAt, last_value AS lastValue, demand_kw AS demandKw FROM meter_state');
    this.selectMeterIds = sqlite.prepare('SELECT id FROM meters').pluck();
    this.upsertState = sqlite.prepare(
      `INSERT INTO meter_state (meter_id, last_at, last_value, demand_kw) VALUES (@meterId, @lastAt, @lastValue, @demandKw)
       ON CONFLICT (meter_id) DO UPDATE SET last_at = excluded.last_at, last_value = excluded.last_value, demand_kw = excluded.demand_kw`,
    );
  }

  private now(): number {
    return this.deps.now?.() ?? Date.now();
  }

  start(): void {
    this.repeating.start();
  }

  /** Stops collecting and writes what is held in memory. */
  async stop(): Promise<void> {
    await this.repeating.stop();
    if (!this.held?.batch.size && !this.held?.states.size) return;
    try {
      this.persist((this.selectVirtuals.all() as { id: number; terms: string }[]).map((row) => ({ id: row.id, terms: JSON.parse(row.terms) as MeterTerm[] })));
    } catch (error) {
      this.deps.logger.error({ err: error }, 'energy counted since the last interval boundary could not be written; the gateway history fills it at the next start');
    }
  }

  /**
   * The persist step. Without `holdOpenInterval` every collection writes its day rows and meter states. With it, what a
   * collection counted stays in memory and is written at the first collection of each new 15-minute interval (a day
   * row is then rewritten 96 times a day, not 1,440), on stop, and at once after a gap was filled from history. A power
   * cut loses only what is held: the meter states in the database still match the day rows, so the next start
   * counts the gap again (from the gateway's history, or the counter's difference spread over it).
   */
  private hold(batch: DayBatch, counted: Map<number, State>, at: number, virtuals: VirtualMeter[], filled: boolean): void {
    const interval = Math.floor(at / INTERVAL_MS);
    const held = this.held ?? { batch, states: new Map<number, State>(), interval: -1 };
    for (const [meterId, state] of counted) held.states.set(meterId, state);
    this.held = held;
    if (this.deps.holdOpenInterval && !filled && held.interval === interval) return;
    held.interval = interval;
    this.persist(virtuals);
  }

  /** Writes the held day rows and meter states in one transaction; kept in memory when that fails (tried again next time). */
  private persist(virtuals: VirtualMeter[]): void {
    const held = this.held;
    if (!held) return;
    const existing = new Set(this.selectMeterIds.all() as number[]);
    held.batch.retain(existing);
    this.deps.store.transaction(() => {
      for (const [meterId, state] of held.states) if (existing.has(meterId)) this.upsertState.run({ meterId, ...state });
      held.batch.save(virtuals.filter((meter) => existing.has(meter.id)));
    });
    held.states.clear();
    if (!this.deps.holdOpenInterval || held.batch.timezone !== this.deps.timezone()) this.held = null;
  }

  health(): CollectorStatus {
    const lastOk = this.status.lastOkAt ? Date.parse(this.status.lastOkAt) : null;
    return { ...this.status, lagSec: lastOk === null ? null : Math.max(0, Math.round((this.now() - lastOk) / 1000)) };
  }

  /** One collection; never throws (a gateway that is down is logged once, and once when it answers again). */
  async collect(): Promise<{ meters: number; readings: number; filled: number }> {
    const started = this.now();
    this.status.lastRunAt = new Date(started).toISOString();
    const meters = this.selectMeters.all() as CollectedMeter[];
    this.status.meters = meters.length;
    const counts = { meters: meters.length, readings: 0, filled: 0 };
    if (!meters.length) return counts;
    try {
      const current = await this.readValues(meters);
      const states = new Map((this.selectState.all() as (State & { meterId: number })[]).map((row) => [row.meterId, row as State]));
      // What is held in memory is ahead of the database.
      if (this.held) for (const [meterId, state] of this.held.states) states.set(meterId, state);
      // Gaps first: history for every meter whose last reading is too old (or that was never read), a few at a time.
      const gapMs = Math.max(MIN_GAP_MS, 3 * this.deps.intervalMs);
      const histories = new Map<number, Reading[] | null>();
      const needing = meters.filter((meter) => {
        const state = states.get(meter.id);
        const reading = current.get(meter.code);
        const at = reading && 'value' in reading ? reading.at : started;
        return !state || at - state.lastAt > gapMs;
      });
      await mapLimit(needing, HISTORY_CONCURRENCY, async (meter) => {
        const state = states.get(meter.id);
        const from = Math.max(state?.lastAt ?? 0, started - BACKFILL_MS);
        histories.set(meter.id, await this.readHistory(meter.code, from, started));
      });

      const timezone = this.deps.timezone();
      const virtuals = (this.selectVirtuals.all() as { id: number; terms: string }[]).map((row) => ({ id: row.id, terms: JSON.parse(row.terms) as MeterTerm[] }));
      // A time-zone change writes what is held under the zone it was counted in.
      if (this.held && this.held.batch.timezone !== timezone) this.persist(virtuals);
      const batch = this.held?.batch ?? new DayBatch(this.deps.store, timezone);
      const counted = new Map<number, State>();
      // Counting runs in memory, outside any transaction: it gives the event loop back every SLICE_MS (a 7-day
      // backfill of 500 meters is a million readings).
      let sliceStart = performance.now();
      for (const meter of meters) {
        if (performance.now() - sliceStart > SLICE_MS) {
          await new Promise((resolve) => setImmediate(resolve));
          sliceStart = performance.now();
        }
        let state = states.get(meter.id) ?? null;
        const history = histories.get(meter.id);
        if (history) {
          for (const reading of history) state = this.apply(batch, meter, state, reading, 0);
          counts.filled += history.length;
        }
        const reading = current.get(meter.code);
        if (reading && 'bad' in reading) batch.flag(meter.id, reading.at, FLAG_BAD_QUALITY);
        else if (reading) {
          // A gap the history could not fill is spread evenly and flagged as estimated.
          const estimated = state && history === null && reading.at - state.lastAt > gapMs ? FLAG_ESTIMATED : 0;
          state = this.apply(batch, meter, state, reading, estimated);
          counts.readings += 1;
        }
        if (state) counted.set(meter.id, state);
      }
      this.hold(batch, counted, started, virtuals, histories.size > 0);
      this.status.lastOkAt = new Date(this.now()).toISOString();
      try {
        this.deps.afterCollect?.(this.now());
      } catch (error) {
        this.deps.logger.error({ err: error }, 'after-collection check failed');
      }
      this.status.lastError = null;
      if (this.failing) this.deps.logger.warn('energy collection works again; the gap is filled from the gateway history');
      this.failing = false;
    } catch (error) {
      this.status.lastError = (error as Error).message;
      if (!this.failing) this.deps.logger.warn({ err: error }, 'energy collection failed; it goes on trying every interval');
      this.failing = true;
    }
    return counts;
  }

  /** Counts one reading on top of the meter's state; answers the new state. */
  private apply(batch: DayBatch, meter: CollectedMeter, state: State | null, reading: Reading, flags: number): State | null {
    if (!state) return { lastAt: reading.at, lastValue: reading.value, demandKw: meter.kind === 'power' ? reading.value : null };
    if (reading.at <= state.lastAt) return state;
    const hours = (reading.at - state.lastAt) / 3_600_000;
    if (meter.kind === 'power') {
      if (reading.value < -MAX_PLAUSIBLE_KW || reading.value > MAX_PLAUSIBLE_KW) {
        batch.flag(meter.id, reading.at, FLAG_BAD_QUALITY);
        return state;
      }
      batch.integrate(meter.id, state.lastAt, state.lastValue, reading.at, reading.value, flags);
      return { lastAt: reading.at, lastValue: reading.value, demandKw: reading.value };
    }
    const maxKwh = MAX_PLAUSIBLE_KW * hours;
    let delta = reading.value - state.lastValue;
    if (delta < 0) {
      // A counter that wrapped at a power of ten (999999 → 0) goes on; anything else went back to zero (replaced, reset).
      const wrap = 10 ** Math.ceil(Math.log10(state.lastValue + 1));
      const wrapped = wrap - state.lastValue + reading.value;
      delta = state.lastValue >= 0.9 * wrap && wrapped <= maxKwh ? wrapped : reading.value >= 0 && reading.value <= maxKwh ? reading.value : 0;
      flags |= FLAG_RESET;
    } else if (delta > maxKwh) {
      delta = 0;
      flags |= FLAG_RESET;
    }
    batch.spread(meter.id, state.lastAt, reading.at, delta, flags);
    return { lastAt: reading.at, lastValue: reading.value, demandKw: delta / hours };
  }

  private async readValues(meters: CollectedMeter[]): Promise<Map<string, Reading | { at: number; bad: true }>> {
    const readings = new Map<string, Reading | { at: number; bad: true }>();
    for (let i = 0; i < meters.length; i += VALUES_BATCH) {
      const codes = meters.slice(i, i + VALUES_BATCH).map((meter) => meter.code);
      const answer = await this.deps.iot.relay('POST', '/codes/values', { body: { codes } });
      if (answer.status !== 200) throw new Error(`the gateway answered ${answer.status} to codes/values`);
      const data = (answer.json as { data?: unknown })?.data;
      if (!Array.isArray(data)) throw new Error('the gateway answered codes/values without a data list');
      for (const row of data as { code?: unknown; value?: unknown; quality?: unknown; ts?: unknown }[]) {
        if (typeof row?.code !== 'string') continue;
        const parsed = typeof row.ts === 'string' ? Date.parse(row.ts) : NaN;
        const at = Number.isFinite(parsed) ? parsed : this.now();
        const good = (row.quality === undefined || row.quality === 'good') && typeof row.value === 'number' && Number.isFinite(row.value);
        readings.set(row.code, good ? { at, value: row.value as number } : { at, bad: true });
      }
    }
    return readings;
  }

  /** The gateway's readings in (from, to], oldest first; null when it has no history for the code or cannot answer. */
  private async readHistory(code: string, from: number, to: number): Promise<Reading[] | null> {
    const readings: Reading[] = [];
    try {
      for (let start = from; start < to; start += HISTORY_CHUNK_MS) {
        const end = Math.min(to, start + HISTORY_CHUNK_MS);
        const answer = await this.deps.iot.relay('POST', '/codes/history', { body: { code, start: new Date(start).toISOString(), end: new Date(end).toISOString() } });
        if (answer.status !== 200) return null;
        const data = (answer.json as { data?: unknown })?.data;
        if (!Array.isArray(data)) return null;
        for (const row of data as { ts?: unknown; value?: unknown }[]) {
          const at = typeof row?.ts === 'string' ? Date.parse(row.ts) : NaN;
          if (Number.isFinite(at) && at > from && at <= to && typeof row.value === 'number' && Number.isFinite(row.value)) readings.push({ at, value: row.value });
        }
      }
    } catch {
      return null;
    }
    readings.sort((a, b) => a.at - b.at);
    return readings;
  }
}

async function mapLimit<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
