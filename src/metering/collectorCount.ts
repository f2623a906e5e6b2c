// The collector's counting pass (collector.ts): the gateway's history for the meters with a gap, applied in steps, then
// each meter's current reading, every reading checked (readingCheck.ts) and counted into the day batch on top of the
// meter's state: counter steps and power integrated into 15-minute intervals, jitter held, resets and refusals flagged.
// It keeps what it knows of each meter since the start (MeterWatch: refusals, jitter, the last outcome).
import type { GatewayPort } from '../gateway/index.ts';
import type { MeterKind } from '../platform/db/schema/index.ts';
import type { Logger } from '../platform/logger.ts';
import { INTERVAL_MS } from '../platform/time/calendar.ts';
import { BACKFILL_MS, checkTime, counterStep, MAX_PLAUSIBLE_KW, REBASE_AFTER, type Reading } from './readingCheck.ts';
import { type DayBatch, FLAG_BAD_QUALITY, FLAG_ESTIMATED, FLAG_JITTER, FLAG_REFUSED, FLAG_RESET, SLICE_MS, yieldToLoop } from './store.ts';
import type { MeterWatch } from './collectorHealth.ts';
import { type Current, type History, mapLimit, readHistory } from './collectorReads.ts';

const HISTORY_CONCURRENCY = 8;
/** How often a meter the gateway does not report, and whose history was empty, is asked for its history again. */
const ABSENT_RETRY_MS = 15 * 60_000;
/** History readings further apart than this leave a hole: what is spread across it is estimated, not measured. */
const HISTORY_HOLE_MS = 30 * 60_000;
/** History readings applied between two looks at the clock (a day of 5-minute readings). */
const HISTORY_STEP = 288;
/** Collections a meter's first reading waits for its history (a gateway slow or failing at start-up) before it starts without. */
const FIRST_HISTORY_TRIES = 5;

export type CollectedMeter = { id: number; code: string; kind: Exclude<MeterKind, 'virtual'> };
export type State = { lastAt: number; lastValue: number; demandKw: number | null };

/**
 * Counting starts again at `reading`, further from the meter's last reading (`lastAt`) than the backfill span: the gap
 * stays missing, and the interval `lastAt` fell inside holds only its part before it, so it is estimated (as a meter's
 * first interval is: store.ts partFlag), never a part called measured.
 */
function startAgain(batch: DayBatch, meter: CollectedMeter, lastAt: number, reading: Reading): State {
  if (lastAt % INTERVAL_MS !== 0) batch.flag(meter.id, lastAt, FLAG_ESTIMATED);
  return { lastAt: reading.at, lastValue: reading.value, demandKw: meter.kind === 'power' ? reading.value : null };
}

/** A collection's tally: readings counted, history readings applied, readings refused. */
export type Counts = { meters: number; readings: number; filled: number; refused: number };

export class Counting {
  /** What the counting knows of each meter since the service started (its health: collectorHealth.ts). */
  readonly watches = new Map<number, MeterWatch>();

  constructor(private readonly deps: { iot: Pick<GatewayPort, 'history'>; logger: Logger }) {}

  /**
   * Gaps first: history for every meter whose last reading is too old (or that was never read), a few at a time; null
   * where its history could not be read. `rebase`: the meters that start again (a clock stepped back), asked for none.
   */
  async readGaps(
    meters: CollectedMeter[],
    states: Map<number, State>,
    current: Map<string, Current>,
    rebase: Set<number>,
    started: number,
    readAt: number,
    gapMs: number,
  ): Promise<Map<number, History | null>> {
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
    return histories;
  }

  /**
   * Counting runs in memory, outside any transaction, in slices: the event loop is given back every SLICE_MS (a
   * 7-day backfill of 500 meters is a million readings), and a meter's history is applied HISTORY_STEP readings at
   * a time, so one meter's week never makes a long slice. What was counted is written by the hold (collectorHold.ts).
   */
  async countAll(
    batch: DayBatch,
    meters: CollectedMeter[],
    states: Map<number, State>,
    counted: Map<number, State>,
    histories: Map<number, History | null>,
    current: Map<string, Current>,
    readAt: number,
    started: number,
    gapMs: number,
    counts: Counts,
  ): Promise<void> {
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
