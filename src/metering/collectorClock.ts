// The collector's clock-step handling (collector.ts): the box's clock stepping back is seen at the start of a collection
// (it starts before the last one did), and a meter whose last reading lies ahead of the clock is seen once its state is
// read. What is held is written first, then everything stored after the new now is dropped (clockStep.ts dropAfter) and
// the meters ahead start again from their next reading: never frozen until the clock catches up.
import type { Db } from '../platform/db/client.ts';
import { eq, inArray, sql } from 'drizzle-orm';
import { meters as meterTable, meterState } from '../platform/db/schema/index.ts';
import type { Logger } from '../platform/logger.ts';
import { checkTime, FUTURE_TOLERANCE_MS } from './readingCheck.ts';
import type { IntervalStore } from './store.ts';
import { dropAfter } from './clockStep.ts';
import type { CollectedMeter, State } from './collectorCount.ts';
import type { Current } from './collectorReads.ts';
import type { HeldWrites } from './collectorHold.ts';

/**
 * Where each meter ahead of a clock stepped back starts again: at its own good reading of this collection, as the
 * counting takes it (collectorCount.ts collectMeter: up to the tolerance ahead is taken as readAt). dropAfter keeps the
 * part of the interval holding that point before it, and the meter counts from its reading on. One cut for all at the
 * earliest reading lost each later meter's energy between the two (the soak's day, issue 56: the built-in simulator
 * stamped the main incomer 15:48 and the sub-meters 16:01 on a start that stalled the event loop; lighting 405.5 of
 * 417.6 kWh). Cut at `started` instead, the part between it and the readings was lost (the week's soak, 2 Nov 15:00:
 * main 3.8 kWh short after a read that took 1.5 simulated minutes on a busy machine). A collected meter without a good
 * reading has no point: it waits for one (ClockSteps.dropAhead); nor has one read at or after its last reading: it
 * counts on. A meter ahead that is not collected any more (disabled, its code removed) is cut at `started` and keeps a
 * state there (ClockSteps.keptStates).
 */
export function restartPoints(
  current: Map<string, Current>,
  meters: CollectedMeter[],
  ahead: number[],
  states: Map<number, State>,
  started: number,
  readAt: number,
): Map<number, number> {
  const collected = new Map(meters.map((meter) => [meter.id, meter.code]));
  const points = new Map<number, number>();
  for (const meterId of ahead) {
    const code = collected.get(meterId);
    if (code === undefined) {
      points.set(meterId, started);
      continue;
    }
    const reading = current.get(code);
    if (!reading || !('value' in reading) || !checkTime(reading.at, readAt).ok) continue;
    const point = Math.min(reading.at, readAt);
    // Read at or after its last reading (the read stalled past it: the soak's week, pv 7 Nov 14:00, 0.69 kWh short): not
    // ahead of its readings, it counts on from its state; started again there, what lay between the two was lost.
    if (point < (states.get(meterId)?.lastAt ?? Number.POSITIVE_INFINITY)) points.set(meterId, point);
  }
  return points;
}

export class ClockSteps {
  private lastStartedAt: number | null = null;
  private clockStepsBack = 0;
  private readonly deleteState;

  constructor(
    private readonly deps: { db: Db; store: IntervalStore; logger: Logger; timezone: () => string },
    private readonly writes: Pick<HeldWrites, 'writeAll'>,
  ) {
    const { orm } = deps.db;
    this.deleteState = orm
      .delete(meterState)
      .where(eq(meterState.meterId, sql.placeholder('meterId')))
      .prepare();
  }

  /** Times the box's clock was seen to step back (since the service started). */
  get stepsBack(): number {
    return this.clockStepsBack;
  }

  /** Whether the clock stepped back since the last collection started (`started`: this one's start). */
  steppedBack(started: number): boolean {
    const steppedBack = this.lastStartedAt !== null && started < this.lastStartedAt - FUTURE_TOLERANCE_MS;
    this.lastStartedAt = started;
    return steppedBack;
  }

  /**
   * A last reading ahead of the clock: the box's clock stepped back (or a future reading was taken before readings were
   * checked). What lies after now is dropped; those meters start again from their next good reading, and are answered
   * (their states leave `states`). A collected meter ahead without a good reading in this collection (bad, absent,
   * refused) keeps its state and waits for one: nothing is counted for it meanwhile (its readings lie before its last
   * one). One whose reading lies at or after its last counts on (restartPoints). Started again without a state, its
   * first reading after would be a new meter's, with the gateway's 7-day history counted again on top of what is stored.
   * So a meter ahead that is not collected any more is cut at `started` and keeps a state there (keptStates).
   */
  dropAhead(
    steppedBack: boolean,
    states: Map<number, State>,
    current: Map<string, Current>,
    meters: CollectedMeter[],
    started: number,
    readAt: number,
  ): Set<number> {
    const ahead = [...states].filter(([, state]) => state.lastAt > started + FUTURE_TOLERANCE_MS).map(([id]) => id);
    const points = restartPoints(current, meters, ahead, states, started, readAt);
    const rebase = new Set<number>(points.keys());
    if (steppedBack) this.clockStepsBack += 1;
    if (steppedBack || rebase.size) {
      // What is held in memory is written first, so that the drop below removes its intervals after now as well;
      // nothing of it stays held (a held record or state ahead of the clock would come back at the next write).
      this.writes.writeAll();
      // Meters not ahead (no state, or none past now) are cut at the earliest point, or `started`.
      const at = points.size ? Math.min(...points.values()) : started;
      const collected = new Set(meters.map((meter) => meter.id));
      const notCollected = [...rebase].filter((id) => !collected.has(id));
      const dropped = this.deps.store.transaction(() => {
        const removed = new Map<number, number>();
        const changed = dropAfter(this.deps.store, this.deps.db, this.deps.timezone(), at, rebase, states, points, removed);
        for (const meterId of rebase) this.deleteState.run({ meterId });
        for (const [meterId, state] of this.keptStates(notCollected, states, removed, started)) {
          this.deps.db.orm
            .insert(meterState)
            .values({ meterId, ...state })
            .run();
          states.set(meterId, state);
        }
        return changed;
      });
      for (const id of rebase) if (collected.has(id)) states.delete(id);
      this.deps.logger.warn(
        { steppedBack, metersAhead: ahead.length, restarted: rebase.size, dayRowsChanged: dropped },
        'the clock stepped back: intervals after now dropped, meters ahead of it start again',
      );
    }
    return rebase;
  }

  /**
   * The states of meters ahead that are not collected any more (disabled, code removed), cut at `started`: each keeps
   * its state there, its counter less the energy dropped after the cut (`removed`; a power meter's reading as it was).
   * Deleted instead (before issue 56's round 9), a meter enabled again had no state, and its first collection counted
   * the gateway's 7-day history again on top of what was stored. Kept as it was (its last reading after now), the
   * energy between the cut and that reading, dropped here, would never be counted again.
   */
  private keptStates(meterIds: number[], states: Map<number, State>, removed: Map<number, number>, started: number): Map<number, State> {
    const kept = new Map<number, State>();
    if (meterIds.length === 0) return kept;
    const kinds = new Map(
      this.deps.db.orm
        .select({ id: meterTable.id, kind: meterTable.kind })
        .from(meterTable)
        .where(inArray(meterTable.id, meterIds))
        .all()
        .map((row) => [row.id, row.kind]),
    );
    for (const meterId of meterIds) {
      const state = states.get(meterId);
      if (!state || !kinds.has(meterId)) continue;
      const lastValue = kinds.get(meterId) === 'power' ? state.lastValue : state.lastValue - (removed.get(meterId) ?? 0);
      kept.set(meterId, { lastAt: started, lastValue, demandKw: state.demandKw });
    }
    return kept;
  }
}
