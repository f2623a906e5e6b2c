// The collector: one batched codes/values read of every enabled meter per interval, turned into 15-minute interval
// energy. Every reading is checked before it counts (readingCheck.ts): a time in the future or older than the 7-day
// backfill span is refused and never moves the meter's last reading; a small counter decrease is held as jitter; a reset
// is a real drop, a rollover happens only at the counter's range. A gap (outage, restart) is filled from codes/history,
// a meter read for the first time is backfilled 7 days; both are applied in slices that give the event loop back every
// SLICE_MS. The box's clock stepping back is detected: intervals after the new now are dropped and meters whose last
// reading lies ahead of the clock start again from their next reading (never frozen until the clock catches up).
// On an edge box (holdOpenInterval) what is counted is held in memory and written hourly (writeEveryMs), a gap filled
// from history included, and on stop (see hold()); a clock step back drops what is held after now too.
// The pieces: the counting pass (collectorCount.ts), the hold-and-persist policy (collectorHold.ts), the clock-step
// handling (collectorClock.ts); the gateway reads (collectorReads.ts) and the health rule (collectorHealth.ts).
import type { GatewayPort } from '../gateway/index.ts';
import type { Db } from '../platform/db/client.ts';
import type { Job } from '../platform/jobs/jobs.ts';
import { Repeating } from '../platform/jobs/lifecycle.ts';
import type { Logger } from '../platform/logger.ts';
import type { IntervalStore } from './store.ts';
import { conditionOf, type CollectorStatus, type MeterHealth } from './collectorHealth.ts';
import { readValues } from './collectorReads.ts';
import { type CollectedMeter, Counting, type State } from './collectorCount.ts';
import { HeldWrites } from './collectorHold.ts';
import { ClockSteps } from './collectorClock.ts';
import { StoppedMeters } from './stoppedMeters.ts';

/** Readings further apart than this are a gap: the gateway's history is asked for what lies between. */
const MIN_GAP_MS = 5 * 60_000;

export class Collector {
  private readonly repeating: Repeating;
  private failing = false;
  private failingSince: number | null = null;
  private consecutiveFailures = 0;
  private readonly counting: Counting;
  private readonly writes: HeldWrites;
  private readonly clock: ClockSteps;
  /** Meters no longer collected: the interval of their last reading flagged (src/metering/stoppedMeters.ts). */
  private readonly stopped = new StoppedMeters();
  private readonly status = { lastRunAt: null as string | null, lastOkAt: null as string | null, lastError: null as string | null, meters: 0 };
  private readonly selectMeters;

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
    this.counting = new Counting(deps);
    this.writes = new HeldWrites(deps);
    this.clock = new ClockSteps(deps, this.writes);
    const sqlite = deps.db.sqlite;
    // raw SQL: read every collection: rows as plain objects without drizzle's row mapper (~2.5 µs a row, docs/development.md), at up to 2,000 meters.
    this.selectMeters = sqlite.prepare("SELECT id, code, kind FROM meters WHERE enabled = 1 AND kind <> 'virtual' AND code IS NOT NULL ORDER BY id");
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
    if (!this.writes.pending) return;
    try {
      this.writes.flush();
    } catch (error) {
      this.deps.logger.error(
        { err: error },
        'energy counted since the last interval boundary could not be written; the gateway history fills it at the next start',
      );
    }
  }

  /** Writes what is held in memory now (as at a write period's start); for callers that read the database directly. */
  flush(): void {
    this.writes.flush();
  }

  health(): CollectorStatus {
    const lastOk = this.status.lastOkAt ? Date.parse(this.status.lastOkAt) : null;
    let refused = 0;
    for (const watch of this.counting.watches.values()) refused += watch.refused;
    return {
      ...this.status,
      lagSec: lastOk === null ? null : Math.max(0, Math.round((this.now() - lastOk) / 1000)),
      state: this.failing ? 'failing' : this.status.lastOkAt ? 'ok' : 'idle',
      failingSince: this.failingSince === null ? null : new Date(this.failingSince).toISOString(),
      consecutiveFailures: this.consecutiveFailures,
      clockStepsBack: this.clock.stepsBack,
      refused,
    };
  }

  /**
   * Each collected meter's condition: refusing (its last reading was refused), failing (the collection fails, or the
   * gateway gave no good value), stale (its last counted reading is older than two intervals), else ok.
   */
  meterHealth(): MeterHealth[] {
    const now = this.now();
    const states = this.writes.currentStates();
    return (this.selectMeters.all() as CollectedMeter[]).map((meter) => {
      const state = states.get(meter.id);
      const watch = this.counting.watches.get(meter.id);
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
    const states = this.writes.currentStates();
    let count = 0;
    for (const meter of this.selectMeters.all() as CollectedMeter[]) {
      const state = states.get(meter.id);
      if (conditionOf(this.counting.watches.get(meter.id), state ? Math.max(0, now - state.lastAt) : null, this.failing, this.deps.intervalMs) !== 'ok')
        count += 1;
    }
    return count;
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
    const steppedBack = this.clock.steppedBack(started);
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
      const states = this.writes.currentStates();
      const rebase = this.clock.dropAhead(steppedBack, states, current, meters, started, readAt);
      // Gaps first: history for every meter whose last reading is too old (or that was never read), a few at a time.
      const gapMs = Math.max(MIN_GAP_MS, 3 * this.deps.intervalMs);
      const histories = await this.counting.readGaps(meters, states, current, rebase, started, readAt, gapMs);

      const timezone = this.deps.timezone();
      const virtuals = this.writes.virtuals();
      const batch = this.writes.batchFor(timezone, virtuals);
      const counted = new Map<number, State>();
      const knownBefore = new Set(states.keys());
      await this.counting.countAll(batch, meters, states, counted, histories, current, readAt, started, gapMs, counts);
      // Written at once only when a meter counted its first reading (its start and its 7-day backfill, even when the
      // gateway's history was empty). A gap filled after a failed collection is held and written at the period's write
      // (hourly on a box), as a history read that found nothing is: a recovery is not one more write.
      this.stopped.close(batch, states, new Set(meters.map((meter) => meter.id)), started);
      const firstReading = [...counted.keys()].some((id) => !knownBefore.has(id));
      await this.writes.hold(batch, counted, started, virtuals, firstReading);
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
}
