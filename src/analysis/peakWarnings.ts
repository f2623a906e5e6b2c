// The record of peak warnings (written by the demand watch): when each warned, and how early before its window's
// energy passed the contracted peak's share.
import { desc, sql } from 'drizzle-orm';
import type { Db } from '../platform/db/client.ts';
import { peakWarnings } from '../platform/db/schema/index.ts';

export type PeakWarningView = {
  windowStart: string;
  warnedAt: string;
  projectedKw: number;
  limitKw: number;
  /** When the window's energy so far passed limit × 15 min (null: it never did, or the window is still running). */
  crossedAt: string | null;
  /** crossedAt − warnedAt in seconds: how early the warning came (0: it came with the crossing). */
  leadSec: number | null;
  /** The window's mean once over (null while running; -1 when the window lost its data). */
  finalKw: number | null;
  outcome: 'running' | 'crossed' | 'stayed below';
};

const round = (value: number) => Math.round(value * 1000) / 1000;

export class PeakWarnings {
  private readonly recent;

  constructor(db: Db) {
    this.recent = db.orm
      .select({
        windowStart: peakWarnings.windowStart,
        warnedAt: peakWarnings.warnedAt,
        projectedKw: peakWarnings.projectedKw,
        limitKw: peakWarnings.limitKw,
        crossedAt: peakWarnings.crossedAt,
        finalKw: peakWarnings.finalKw,
      })
      .from(peakWarnings)
      .orderBy(desc(peakWarnings.windowStart))
      .limit(sql.placeholder('limit'))
      .prepare();
  }

  list(limit = 100): PeakWarningView[] {
    const rows = this.recent.all({ limit });
    return rows.map((row) => ({
      windowStart: new Date(row.windowStart).toISOString(),
      warnedAt: new Date(row.warnedAt).toISOString(),
      projectedKw: round(row.projectedKw),
      limitKw: row.limitKw,
      crossedAt: row.crossedAt === null ? null : new Date(row.crossedAt).toISOString(),
      leadSec: row.crossedAt === null ? null : Math.round((row.crossedAt - row.warnedAt) / 1000),
      finalKw: row.finalKw === null ? null : round(row.finalKw),
      // The outcome is the window's own mean once it is over (a crossing in its last minute is a crossing).
      outcome:
        row.finalKw !== null && row.finalKw >= 0
          ? row.finalKw > row.limitKw
            ? 'crossed'
            : 'stayed below'
          : row.crossedAt !== null
            ? 'crossed'
            : row.finalKw === null
              ? 'running'
              : 'stayed below',
    }));
  }
}
