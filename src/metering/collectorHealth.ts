// What the collector tells of itself and of each meter it reads (GET /api/energy/collector, /api/health, the meters'
// health screen): the types, and the rule that names a meter's condition. The collector keeps the state (collector.ts).

export type MeterCondition = 'ok' | 'stale' | 'failing' | 'refusing';
export type Refusal = { at: string; readingAt: string | null; value: number | null; reason: string };

/** What the collector knows of one meter since the service started (the last counted reading is also in meter_state). */
export type MeterWatch = {
  /** The outcome of the meter's last read: a reading counted, refused, of bad quality, or not answered at all. */
  last: 'counted' | 'refused' | 'bad' | 'absent' | null;
  refused: number;
  jitter: number;
  lastRefusal: Refusal | null;
  /** Implausible counter readings in a row: REBASE_AFTER of them make the meter's new base. */
  implausibleRun: number;
  /** Collections in a row whose history read failed before the meter's first reading was counted. */
  historyMisses: number;
  /** When the gateway last answered an empty history for the meter while not reporting it (a point removed or renamed). */
  emptyHistoryAt: number | null;
};

export type MeterHealth = {
  meterId: number;
  code: string;
  state: MeterCondition;
  lastReadingAt: string | null;
  lastValue: number | null;
  lagSec: number | null;
  refused: number;
  jitter: number;
  lastRefusal: Refusal | null;
};

export type CollectorStatus = {
  lastRunAt: string | null;
  lastOkAt: string | null;
  lastError: string | null;
  meters: number;
  lagSec: number | null;
  /** ok: the last collection worked; failing: the gateway answered (or not) but the collection did not work; idle: nothing collected yet. */
  state: 'ok' | 'failing' | 'idle';
  failingSince: string | null;
  consecutiveFailures: number;
  /** Times the box's clock was seen to step back (since the service started). */
  clockStepsBack: number;
  refused: number;
};

/**
 * A meter's condition: refusing (its last reading was refused), failing (the collection fails, or the gateway gave no
 * good value), stale (its last counted reading is older than two collection intervals), else ok.
 */
export function conditionOf(watch: MeterWatch | undefined, lagMs: number | null, collectionFailing: boolean, intervalMs: number): MeterCondition {
  if (watch?.last === 'refused') return 'refusing';
  if (collectionFailing || watch?.last === 'bad' || watch?.last === 'absent') return 'failing';
  const staleAfter = 2 * Math.max(intervalMs, 60_000) + 30_000;
  return lagMs === null || lagMs > staleAfter ? 'stale' : 'ok';
}
