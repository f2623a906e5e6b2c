// The record of peak warnings: when each warned, and how early before its window's energy passed the contracted peak's
// share. The only code touching peak_warnings: energy's DemandWatch writes through this store (it is handed it as its
// PeakWarningLog by the composition root), the analysis route lists it.
import { and, asc, desc, eq, gt, isNull, lt, sql } from 'drizzle-orm';
import type { PeakWarningLog, PeakWarningRecord } from '../energy/index.ts';
import type { Db } from '../platform/db/client.ts';
import { slot } from '../platform/db/listQuery.ts';
import { peakWarnings } from '../platform/db/schema/index.ts';
import { round } from '../platform/numbers.ts';

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

export class PeakWarnings implements PeakWarningLog {
  private readonly recent;
  private readonly warningFor;
  private readonly insertWarning;
  private readonly crossed;
  private readonly unfinished;
  private readonly finished;
  private readonly crossedAtEnd;

  constructor(db: Db) {
    const { orm } = db;
    const columns = {
      id: peakWarnings.id,
      windowStart: peakWarnings.windowStart,
      warnedAt: peakWarnings.warnedAt,
      crossedAt: peakWarnings.crossedAt,
      finalKw: peakWarnings.finalKw,
      alertKey: peakWarnings.alertKey,
    };
    this.warningFor = orm
      .select(columns)
      .from(peakWarnings)
      .where(eq(peakWarnings.windowStart, sql.placeholder('windowStart')))
      .prepare();
    this.insertWarning = orm
      .insert(peakWarnings)
      .values({
        windowStart: sql.placeholder('windowStart'),
        warnedAt: sql.placeholder('warnedAt'),
        projectedKw: sql.placeholder('projectedKw'),
        limitKw: sql.placeholder('limitKw'),
        crossedAt: sql.placeholder('crossedAt'),
        alertKey: sql.placeholder('alertKey'),
      })
      .prepare();
    this.crossed = orm
      .update(peakWarnings)
      .set({ crossedAt: slot('at') })
      .where(and(eq(peakWarnings.id, sql.placeholder('id')), isNull(peakWarnings.crossedAt)))
      .prepare();
    this.unfinished = orm
      .select(columns)
      .from(peakWarnings)
      .where(and(isNull(peakWarnings.finalKw), lt(peakWarnings.windowStart, sql.placeholder('before'))))
      .orderBy(asc(peakWarnings.windowStart))
      .prepare();
    this.finished = orm
      .update(peakWarnings)
      .set({ finalKw: slot('finalKw') })
      .where(eq(peakWarnings.id, sql.placeholder('id')))
      .prepare();
    // A window whose energy reached the contract's share only in its last minute was never seen crossing by a check
    // inside it: its crossing is its end.
    this.crossedAtEnd = orm
      .update(peakWarnings)
      .set({ crossedAt: slot('at') })
      .where(and(eq(peakWarnings.id, sql.placeholder('id')), isNull(peakWarnings.crossedAt), gt(peakWarnings.finalKw, peakWarnings.limitKw)))
      .prepare();
    this.recent = orm
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

  forWindow(windowStart: number): PeakWarningRecord | undefined {
    return this.warningFor.get({ windowStart });
  }

  record(warning: { windowStart: number; warnedAt: number; projectedKw: number; limitKw: number; crossedAt: number | null; alertKey: string }): void {
    this.insertWarning.run(warning);
  }

  markCrossed(id: number, at: number): void {
    this.crossed.run({ at, id });
  }

  unfinishedBefore(windowStart: number): PeakWarningRecord[] {
    return this.unfinished.all({ before: windowStart });
  }

  finish(id: number, finalKw: number, windowEnd: number): void {
    this.finished.run({ finalKw, id });
    this.crossedAtEnd.run({ at: windowEnd, id });
  }

  list(limit = 100): PeakWarningView[] {
    const rows = this.recent.all({ limit });
    return rows.map((row) => ({
      windowStart: new Date(row.windowStart).toISOString(),
      warnedAt: new Date(row.warnedAt).toISOString(),
      projectedKw: round(row.projectedKw, 3),
      limitKw: row.limitKw,
      crossedAt: row.crossedAt === null ? null : new Date(row.crossedAt).toISOString(),
      leadSec: row.crossedAt === null ? null : Math.round((row.crossedAt - row.warnedAt) / 1000),
      finalKw: row.finalKw === null ? null : round(row.finalKw, 3),
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
