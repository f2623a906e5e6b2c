// A meter that is no longer collected (disabled, or its gateway code removed) keeps the interval its last reading fell
// inside with only the part before that reading (issue 56): no reading will span the rest. The rule of every stored
// interval: whole from readings spanning it, or flagged estimated (or missing). So once that interval has ended, it is
// flagged estimated; what was measured of it is kept. Enabled again, the meter's gap is filled as any gap (the flag
// stays: the interval was, for a while, not whole).
import { INTERVAL_MS } from '../platform/time/calendar.ts';
import { type DayBatch, FLAG_ESTIMATED } from './store.ts';

/** Flags, for each meter with a position that is not among `collected`, the ended interval its last reading lies inside. */
export class StoppedMeters {
  /** Meters already seen stopped in this process (flagged, or at an interval's start): not loaded again each collection. */
  private readonly closed = new Set<number>();

  /** Answers how many intervals it flagged. `positions`: each meter's last counted reading; `now`: the collection's time. */
  close(batch: DayBatch, positions: Map<number, { lastAt: number }>, collected: Set<number>, now: number): number {
    let flagged = 0;
    for (const [meterId, { lastAt }] of positions) {
      if (collected.has(meterId)) {
        this.closed.delete(meterId);
        continue;
      }
      if (this.closed.has(meterId)) continue;
      const start = Math.floor(lastAt / INTERVAL_MS) * INTERVAL_MS;
      // Its interval still open: a meter enabled again within it counts on with nothing lost.
      if (start + INTERVAL_MS > now) continue;
      this.closed.add(meterId);
      if (lastAt === start) continue;
      batch.flag(meterId, lastAt, FLAG_ESTIMATED);
      flagged += 1;
    }
    return flagged;
  }
}
