// The site's demand against the contracted peak: after each collection, the mean over the running 15 minutes; above the
// contract (the tariff version's contractedPeakKw) it raises one alert per episode, cleared when demand is back below.
// Before that, a peak warning: each 15-minute window's mean is projected from its energy so far and the demand now;
// when the projection passes the contract the warning is raised (an alert, so the rules can mail it) and recorded
// with when the window's energy actually passed the contract's, which gives how early it warned.
import type { AlertService } from '../facility/index.ts';
import type { Tariffs } from '../pricing/index.ts';
import type { Db } from '../platform/db/client.ts';
import type { Logger } from '../platform/logger.ts';
import { addDays, dayOf, INTERVAL_MS } from '../platform/time/calendar.ts';
import type { EnergyFigures } from './figures.ts';
import { round } from '../platform/numbers.ts';

export const DEMAND_CODE = 'site.demand';
export const WARNING_CODE = 'site.demand.warning';
/** A projection made in a window's first minute rests on too little; the warning waits this long into the window. */
export const WARNING_MIN_ELAPSED_MS = 60_000;
/**
 * One persistence rule for the peak warning and load shedding (issues 41, 52): the projection must stay above the
 * contract for longer than this before either acts (with checks a minute apart: above at five checks, four minutes), unless
 * the window's energy has already passed the contract's share. A motor's or a chiller's start-up surge of up to three
 * minutes projects far above the contract for a window that ends below it (a 3-minute +70 % surge: 0.90 × the contract):
 * it neither warns nor sheds. The price: a real rise is warned of (and shed) two minutes later than with a 2-minute rule.
 */
export const INRUSH_MS = 180_000;
const WINDOW_HOURS = INTERVAL_MS / 3_600_000;

/** A recorded peak warning, as the watch reads it back. */
export type PeakWarningRecord = { id: number; windowStart: number; warnedAt: number; crossedAt: number | null; finalKw: number | null; alertKey: string };

/**
 * Where the watch records its peak warnings. The table (peak_warnings) is analysis's, which lists them; energy is built
 * before analysis and cannot import it, so the watch declares what it needs here and the composition root hands it
 * analysis's PeakWarnings (src/analysis/peakWarnings.ts).
 */
export type PeakWarningLog = {
  /** The warning of the window starting at `windowStart`, if one was raised. */
  forWindow(windowStart: number): PeakWarningRecord | undefined;
  record(warning: { windowStart: number; warnedAt: number; projectedKw: number; limitKw: number; crossedAt: number | null; alertKey: string }): void;
  /** The window's energy passed the contract's share at `at` (kept if already recorded). */
  markCrossed(id: number, at: number): void;
  /** Warnings of windows before `windowStart` with no final mean yet, oldest first. */
  unfinishedBefore(windowStart: number): PeakWarningRecord[];
  /**
   * The window is over: its final mean (-1: it lost its data); a window whose mean ended above the limit with no
   * crossing seen by a check inside it crossed at its end, `windowEnd`.
   */
  finish(id: number, finalKw: number, windowEnd: number): void;
};

export class DemandWatch {
  /** Since when the running window's projection has been above the contract (null: it is not). */
  private above: { windowStart: number; since: number } | null = null;

  constructor(
    private readonly deps: {
      db: Db;
      warnings: PeakWarningLog;
      figures: EnergyFigures;
      tariffs: Tariffs;
      alerts: Pick<AlertService, 'fromGatewayAlarm' | 'openAlarmKeyOf'>;
      logger: Logger;
      timezone: () => string;
    },
  ) {}

  /** The site's energy (kWh) in one 15-minute window so far, from the stored intervals; NaN without a reading in it. */
  private windowKwh(windowStart: number): number {
    const timezone = this.deps.timezone();
    const day = dayOf(timezone, windowStart);
    const { start, kwh } = this.deps.figures.intervals(day, addDays(day, 1));
    return kwh[Math.round((windowStart - start) / INTERVAL_MS)];
  }

  /**
   * The current window's mean projected to its end: its energy so far plus the site's demand now for the time left.
   * On a rising load the demand now is above the window's mean so far, so the projection runs ahead of the mean.
   */
  projectedKw(now: number): { windowStart: number; soFarKwh: number; demandKw: number; projectedKw: number } | null {
    const windowStart = Math.floor(now / INTERVAL_MS) * INTERVAL_MS;
    const soFar = this.windowKwh(windowStart);
    if (Number.isNaN(soFar)) return null;
    const demandKw = this.deps.figures.demandKw();
    const leftHours = (windowStart + INTERVAL_MS - now) / 3_600_000;
    return { windowStart, soFarKwh: soFar, demandKw, projectedKw: (soFar + Math.max(0, demandKw) * leftHours) / WINDOW_HOURS };
  }

  /**
   * The projection of the window `now` is in against the contract in force, with the one persistence rule (INRUSH_MS)
   * the peak warning and load shedding share: `persisted` once it has been above for longer than INRUSH_MS in this
   * window, `crossed` once the window's energy has passed the contract's share. Asked after each collection by both; the
   * same `now` answers the same. Null without a contract or without data in the window.
   */
  sustainedAbove(now: number): { projection: NonNullable<ReturnType<DemandWatch['projectedKw']>>; limit: number; crossed: boolean; persisted: boolean } | null {
    const limit = this.deps.tariffs.versionOn(dayOf(this.deps.timezone(), now)).contractedPeakKw;
    if (limit === null) return null;
    const projection = this.projectedKw(now);
    if (!projection) return null;
    const { windowStart } = projection;
    const above = now - windowStart >= WARNING_MIN_ELAPSED_MS && projection.projectedKw > limit;
    if (!above) this.above = null;
    else if (this.above?.windowStart !== windowStart) this.above = { windowStart, since: now };
    const persisted = this.above !== null && now - this.above.since > INRUSH_MS;
    return { projection, limit, crossed: projection.soFarKwh >= limit * WINDOW_HOURS, persisted };
  }

  /**
   * The peak warning for the window `now` is in: raised once when the projection passes the contract; its crossing
   * (the window's energy past the contract's share) recorded when it comes; windows that are over get their final mean
   * and their warning alert cleared.
   */
  warn(now: number): 'warned' | 'unchanged' {
    const limit = this.deps.tariffs.versionOn(dayOf(this.deps.timezone(), now)).contractedPeakKw;
    const windowStart = Math.floor(now / INTERVAL_MS) * INTERVAL_MS;
    const { warnings } = this.deps;
    for (const row of warnings.unfinishedBefore(windowStart)) {
      const kwh = this.windowKwh(row.windowStart);
      warnings.finish(row.id, Number.isNaN(kwh) ? -1 : kwh / WINDOW_HOURS, row.windowStart + INTERVAL_MS);
      this.deps.alerts.fromGatewayAlarm({
        key: row.alertKey,
        code: WARNING_CODE,
        level: 'warning',
        message: '',
        raisedAt: new Date(row.warnedAt).toISOString(),
        clearedAt: new Date(row.windowStart + INTERVAL_MS).toISOString(),
      });
    }
    if (limit === null) return 'unchanged';
    const sustained = this.sustainedAbove(now);
    if (!sustained) return 'unchanged';
    const { projection, crossed, persisted } = sustained;
    const existing = warnings.forWindow(windowStart);
    if (existing) {
      if (crossed && existing.crossedAt === null) warnings.markCrossed(existing.id, now);
      return 'unchanged';
    }
    if (!crossed && !persisted) return 'unchanged';
    const at = new Date(now).toISOString();
    const key = `${WARNING_CODE}@${new Date(windowStart).toISOString()}`;
    const kw = (value: number) => round(value, 1);
    // The window's end on the site's clock (what the people on site read), with its zone.
    const timeZone = this.deps.timezone();
    const ends = new Intl.DateTimeFormat('en-GB', { timeZone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(
      new Date(windowStart + INTERVAL_MS),
    );
    const minutes = Math.round((now - windowStart) / 60_000);
    this.deps.db.sqlite.transaction(() => {
      warnings.record({
        windowStart,
        warnedAt: now,
        projectedKw: projection.projectedKw,
        limitKw: limit,
        crossedAt: crossed ? now : null,
        alertKey: key,
      });
      this.deps.alerts.fromGatewayAlarm({
        key,
        code: WARNING_CODE,
        level: 'warning',
        message: `Site demand heading for ${kw(projection.projectedKw)} kW in the 15-minute window ending ${ends} ${timeZone} (contract ${limit} kW)`,
        detail:
          `Projected 15-minute mean ${kw(projection.projectedKw)} kW against the contract of ${limit} kW: ` +
          `${round(projection.soFarKwh, 2)} kWh used in the window's first ${minutes} min, the site drawing ${kw(projection.demandKw)} kW now.`,
        raisedAt: at,
        clearedAt: null,
      });
    })();
    this.deps.logger.warn({ projectedKw: kw(projection.projectedKw), contractedPeakKw: limit }, 'site demand projected above the contracted peak');
    return 'warned';
  }

  /** The site's mean demand (kW) over the 15 minutes before `now`, from the stored intervals; null without data. */
  runningDemandKw(now: number): number | null {
    const timezone = this.deps.timezone();
    const current = Math.floor(now / INTERVAL_MS) * INTERVAL_MS;
    const day = dayOf(timezone, current - INTERVAL_MS);
    const { start, kwh } = this.deps.figures.intervals(day, addDays(dayOf(timezone, current), 1));
    const index = Math.round((current - start) / INTERVAL_MS);
    const thisOne = kwh[index];
    const previous = kwh[index - 1];
    if (Number.isNaN(previous)) return null;
    // No reading yet in an interval that has just begun: the window is the previous interval.
    if (Number.isNaN(thisOne)) return previous / 0.25;
    // The current interval holds energy up to the last reading; the previous one counts for the part of the window it covers.
    const elapsed = (now - current) / INTERVAL_MS;
    return (thisOne + previous * (1 - elapsed)) / 0.25;
  }

  check(now: number): 'raised' | 'cleared' | 'unchanged' {
    try {
      this.warn(now);
    } catch (error) {
      this.deps.logger.error({ err: error }, 'peak warning failed');
    }
    const limit = this.deps.tariffs.versionOn(dayOf(this.deps.timezone(), now)).contractedPeakKw;
    // An episode still open after a restart keeps its key: the same alert, not a second one.
    const open = this.deps.alerts.openAlarmKeyOf(DEMAND_CODE);
    const demand = limit === null ? null : this.runningDemandKw(now);
    const at = new Date(now).toISOString();
    if (limit !== null && demand !== null && demand > limit) {
      if (open) return 'unchanged';
      const kw = round(demand, 1);
      this.deps.logger.warn({ demandKw: kw, contractedPeakKw: limit }, 'site demand above the contracted peak');
      return this.deps.alerts.fromGatewayAlarm({
        key: `${DEMAND_CODE}@${at}`,
        code: DEMAND_CODE,
        level: 'warning',
        message: `Site demand ${kw} kW above the contracted ${limit} kW (15-minute mean)`,
        detail: `The site's mean demand over the running 15 minutes passed the contracted peak of ${limit} kW.`,
        raisedAt: at,
        clearedAt: null,
      });
    }
    if (open && (limit === null || (demand !== null && demand <= limit))) {
      return this.deps.alerts.fromGatewayAlarm({
        key: open,
        code: DEMAND_CODE,
        level: 'warning',
        message: '',
        raisedAt: open.slice(DEMAND_CODE.length + 1),
        clearedAt: at,
      });
    }
    return 'unchanged';
  }
}
