// The site's demand against the contracted peak: after each collection, the mean over the running 15 minutes; above the
// contract (the tariff version's contractedPeakKw) it raises one alert per episode, cleared when demand is back below.
import type { AlertService } from '../alerts/service.ts';
import type { Db } from '../db/client.ts';
import type { Logger } from '../logger.ts';
import { addDays, dayOf, INTERVAL_MS } from './calendar.ts';
import type { EnergyFigures } from './figures.ts';
import type { Tariffs } from './tariffs.ts';

export const DEMAND_CODE = 'site.demand';

export class DemandWatch {
  private readonly openEpisode;

  constructor(
    private readonly deps: { db: Db; figures: EnergyFigures; tariffs: Tariffs; alerts: Pick<AlertService, 'fromGatewayAlarm'>; logger: Logger; timezone: () => string },
  ) {
    // An episode still open after a restart keeps its key: the same alert, not a second one.
    this.openEpisode = deps.db.sqlite.prepare(`SELECT alarm_key FROM alerts WHERE alarm_key LIKE '${DEMAND_CODE}@%' AND cleared_at IS NULL ORDER BY id DESC LIMIT 1`).pluck();
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
    return ((thisOne + previous * (1 - elapsed)) / 0.25);
  }

  check(now: number): 'raised' | 'cleared' | 'unchanged' {
    const limit = this.deps.tariffs.versionOn(dayOf(this.deps.timezone(), now)).contractedPeakKw;
    const open = this.openEpisode.get() as string | undefined;
    const demand = limit === null ? null : this.runningDemandKw(now);
    const at = new Date(now).toISOString();
    if (limit !== null && demand !== null && demand > limit) {
      if (open) return 'unchanged';
      const kw = Math.round(demand * 10) / 10;
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
      return this.deps.alerts.fromGatewayAlarm({ key: open, code: DEMAND_CODE, level: 'warning', message: '', raisedAt: open.slice(DEMAND_CODE.length + 1), clearedAt: at });
    }
    return 'unchanged';
  }
}
