// Anomalies in a site day, raised as alerts with their evidence (issue 41): the night load (00:00–05:00) and a weekend
// day's load above what the hourly model (weather- and hour-aware, fitted on the 28 days before) expects by more than
// its prediction interval, the night only once it persists for two days; and a day's energy far from its daily
// weather-normalised baseline. A day's findings are raised as one alert (a digest when there are several).
import type { AlertService } from '../facility/index.ts';
import type { SiteEnergy } from '../energy/index.ts';
import { yieldToLoop } from '../metering/index.ts';
import { addDays, dayOf as siteDayOf } from '../platform/time/calendar.ts';
import type { Logger } from '../platform/logger.ts';
import type { Baselines } from './baselines.ts';
import type { HourlyBaselines } from './hourlyBaselines.ts';
import { studentT } from './guardRails.ts';
import type { Target } from './comparisons.ts';
import { round } from '../platform/numbers.ts';

export const ANOMALY_CODE = 'energy.anomaly';
/** The hourly model is fitted on this many days before the days it judges. */
const HISTORY_DAYS = 28;
/** Local hours of the night window: 00:00–05:00. */
const NIGHT_HOURS = 5;
/** One-sided confidence of the prediction interval a night must exceed (on two consecutive days). */
export const NIGHT_CONFIDENCE = 0.99;
/** One-sided confidence for a weekend day's load (judged alone, so stricter). */
export const WEEKEND_CONFIDENCE = 0.999;
/** And at least this share above what the model expects (a model that fits very well must not flag noise-sized rises). */
export const MIN_RISE = 0.05;
/** A day whose energy is further from its baseline than this many standard errors, and by more than MIN_DEVIATION, is an anomaly. */
export const BASELINE_SIGMAS = 3;
const MIN_DEVIATION = 0.1;
const BASELINE_DAYS = 365;

export type Finding = { kind: 'night_base_load' | 'weekend_load' | 'baseline_deviation'; target: string; day: string; message: string; detail: string };

const kw = (value: number) => round(value, 1);
const isWeekend = (day: string) => [0, 6].includes(new Date(`${day}T00:00:00Z`).getUTCDay());
const std = (values: number[]) => {
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  return Math.sqrt(values.reduce((a, b) => a + (b - mean) ** 2, 0) / Math.max(1, values.length - 1));
};

/** A day's residual against the hourly model over a window of its hours, and whether it is complete. */
type WindowResidual = { actualKwh: number; expectedKwh: number; hours: number };

/**
 * Whether a window's energy is above the model's one-sided prediction interval: residual > t(conf, n − 1) × s_pred and
 * > MIN_RISE × expected, with s_pred the baseline days' residual standard deviation of the same window inflated for
 * prediction out of sample by √((n + p) ÷ (n − p)) (p ≈ the terms of a slot's model, n its days).
 */
export function aboveInterval(window: WindowResidual, s: number, n: number, p: number, confidence: number) {
  const sPred = s * Math.sqrt((n + p) / Math.max(1, n - p));
  const limit = studentT(2 * confidence - 1, Math.max(1, n - 1)) * sPred;
  const rise = window.actualKwh - window.expectedKwh;
  return { above: rise > limit && rise > MIN_RISE * window.expectedKwh, rise, limit, sPred };
}

export class AnomalyWatch {
  private lastChecked: string | undefined;

  constructor(
    private readonly deps: {
      /** The site's energy: its targets with 15-minute intervals (none without meters) and their intervals. */
      energy: Pick<SiteEnergy, 'today' | 'timezone' | 'intervalTargets' | 'intervals'>;
      baselines: Baselines;
      /** The hourly model the night and weekend checks judge by (without it they are skipped). */
      hourlyBaselines?: HourlyBaselines;
      alerts: Pick<AlertService, 'fromGatewayAlarm'>;
      logger: Logger;
      temperatureCode?: string;
      /**
       * True while the site has PV (a generation meter): its grid import then falls on a sunny day for a reason the
       * weather model (degree days, no irradiance) cannot know, so the site's daily baseline is not judged (areas are).
       */
      hasGeneration?: () => boolean;
    },
  ) {}

  /** Once a site day is over, its check (the service runs this every hour; a day is checked once per process). */
  async checkYesterday(now: number = Date.now()): Promise<Finding[]> {
    const day = addDays(this.deps.energy.today(new Date(now)), -1);
    // A site without meters has no intervals to check (and is checked once they exist).
    if (this.lastChecked === day || !this.deps.energy.intervalTargets().length) return [];
    this.lastChecked = day;
    try {
      return await this.check(day);
    } catch (error) {
      this.deps.logger.error({ err: error, day }, 'energy anomaly check failed');
      return [];
    }
  }

  /** The site and every area, each checked for a finished site day; each finding becomes one alert (keyed: never twice). */
  async check(day: string): Promise<Finding[]> {
    const targets: { name: string; target: Target }[] = this.deps.energy
      .intervalTargets()
      .map((target) => ({ name: target.area === undefined ? 'site' : `area ${target.area}`, target }));
    const findings: Finding[] = [];
    // In slices with the event loop free between them (issue 29): a year of an area's days is seconds at 2,000 meters.
    for (const { name, target } of targets) {
      findings.push(...(await this.modelChecks(name, target, day)));
      // Issue 58: sunny spring days flagged the site at −19 %/−22 %: its grid meter does not see what the panels made.
      const besidePv = target.area === undefined && this.deps.hasGeneration?.();
      const deviation = besidePv ? null : await this.baselineDeviation(name, target, day);
      if (deviation) findings.push(deviation);
      await yieldToLoop();
    }
    // One alert per day: the finding itself, or a digest of all of them (not one warning per target and kind).
    if (findings.length === 1) {
      const [finding] = findings;
      this.deps.alerts.fromGatewayAlarm({
        key: `${ANOMALY_CODE}.${finding.kind}@${finding.target}@${finding.day}`,
        code: `${ANOMALY_CODE}.${finding.kind}`,
        level: 'warning',
        message: finding.message,
        detail: finding.detail,
        raisedAt: new Date().toISOString(),
        clearedAt: null,
      });
    } else if (findings.length > 1) {
      this.deps.alerts.fromGatewayAlarm({
        key: `${ANOMALY_CODE}.digest@${day}`,
        code: `${ANOMALY_CODE}.digest`,
        level: 'warning',
        message: `${findings.length} energy anomalies on ${day}: ${findings.map((f) => `${f.target} ${f.kind.replaceAll('_', ' ')}`).join(', ')}`,
        detail: findings.map((f) => `${f.message}. ${f.detail}`).join('\n'),
        raisedAt: new Date().toISOString(),
        clearedAt: null,
      });
    }
    if (findings.length) this.deps.logger.warn({ day, findings: findings.length }, 'energy anomalies found');
    return findings;
  }

  /**
   * The night and weekend checks against the hourly model (hour of day, degree-hours, day type) fitted on the 28 days
   * before the day before: the night (00:00–05:00 local) is flagged when it is above the model's one-sided 99 %
   * prediction interval on the day and on the day before, and the day before's night was not (a new episode: a step
   * that persists is raised once, on its second day); a weekend day when its whole load is above the 99.9 % interval.
   */
  private async modelChecks(name: string, target: Target, day: string): Promise<Finding[]> {
    if (!this.deps.hourlyBaselines) return [];
    const first = addDays(day, -2);
    let fit: Awaited<ReturnType<HourlyBaselines['fit']>>;
    try {
      fit = await this.deps.hourlyBaselines.fit({
        target,
        by: 'hour-of-day',
        baselineFrom: addDays(first, -HISTORY_DAYS),
        baselineTo: first,
        reportFrom: first,
        reportTo: addDays(day, 1),
        temperatureCode: this.deps.temperatureCode ?? 'temp.outdoor',
        heatingBaseC: 15.5,
        coolingBaseC: 21,
        holidays: [],
      });
    } catch (error) {
      this.deps.logger.debug({ err: error, target: name, day }, 'no hourly model for the anomaly check');
      return [];
    }
    const timezone = this.deps.energy.timezone();
    const windows = (hours: { start: string; slot: number; actualKwh: number; expectedKwh: number }[]) => {
      const byDay = new Map<string, { night: WindowResidual; whole: WindowResidual }>();
      for (const hour of hours) {
        const d = siteDayOf(timezone, Date.parse(hour.start));
        let w = byDay.get(d);
        if (!w) byDay.set(d, (w = { night: { actualKwh: 0, expectedKwh: 0, hours: 0 }, whole: { actualKwh: 0, expectedKwh: 0, hours: 0 } }));
        for (const part of hour.slot < NIGHT_HOURS ? [w.night, w.whole] : [w.whole]) {
          part.actualKwh += hour.actualKwh;
          part.expectedKwh += hour.expectedKwh;
          part.hours += 1;
        }
      }
      return byDay;
    };
    const base = [...windows(fit.baselineHours).values()];
    const nights = base.filter((w) => w.night.hours === NIGHT_HOURS).map((w) => w.night.actualKwh - w.night.expectedKwh);
    const wholes = base.filter((w) => w.whole.hours >= 23).map((w) => w.whole.actualKwh - w.whole.expectedKwh);
    const report = windows(fit.report?.hours ?? []);
    // p: the terms of one slot's model (intercept, degree-hours, day type), n: the baseline days.
    const p = Math.max(...fit.model.slots.map((slot) => slot.fitted.length));
    const findings: Finding[] = [];
    if (nights.length >= 14) {
      const s = std(nights);
      const judge = (d: string) => {
        const w = report.get(d)?.night;
        return w && w.hours === NIGHT_HOURS ? { w, ...aboveInterval(w, s, nights.length, p, NIGHT_CONFIDENCE) } : null;
      };
      const [before, previous, current] = [first, addDays(day, -1), day].map(judge);
      if (current?.above && previous?.above && !before?.above) {
        const hours = NIGHT_HOURS;
        findings.push({
          kind: 'night_base_load',
          target: name,
          day,
          message:
            `Night load of the ${name} up ${Math.round((current.rise / current.w.expectedKwh) * 100)} % on ${addDays(day, -1)} and ${day}: ` +
            `${kw(current.w.actualKwh / hours)} kW against the ${kw(current.w.expectedKwh / hours)} kW its model expects`,
          detail:
            `Mean demand 00:00–05:00 was ${kw(previous.w.actualKwh / hours)} kW on ${addDays(day, -1)} and ${kw(current.w.actualKwh / hours)} kW on ${day}; the hourly model ` +
            `(${fit.model.from}–${fit.model.to}, weather and hour of day) expected ${kw(previous.w.expectedKwh / hours)} and ${kw(current.w.expectedKwh / hours)} kW. ` +
            `Both nights are above its one-sided ${NIGHT_CONFIDENCE * 100} % prediction interval (+${kw(current.limit / hours)} kW; residual s ${kw(current.sPred / hours)} kW over ${nights.length} nights) ` +
            `and ${MIN_RISE * 100} % above the expected load.`,
        });
      }
    }
    const whole = report.get(day)?.whole;
    if (isWeekend(day) && whole && whole.hours >= 23 && wholes.length >= 14) {
      const judged = aboveInterval(whole, std(wholes), wholes.length, p, WEEKEND_CONFIDENCE);
      if (judged.above)
        findings.push({
          kind: 'weekend_load',
          target: name,
          day,
          message: `Weekend load of the ${name} up ${Math.round((judged.rise / whole.expectedKwh) * 100)} % on ${day}: ${Math.round(whole.actualKwh)} kWh against the ${Math.round(whole.expectedKwh)} kWh its model expects`,
          detail:
            `The hourly model (${fit.model.from}–${fit.model.to}) expected ${Math.round(whole.expectedKwh)} kWh over ${day}; ${Math.round(whole.actualKwh)} kWh is above its one-sided ` +
            `${WEEKEND_CONFIDENCE * 100} % prediction interval (+${Math.round(judged.limit)} kWh over ${wholes.length} days).`,
        });
    }
    return findings;
  }

  private async baselineDeviation(name: string, target: Target, day: string): Promise<Finding | null> {
    let fit;
    try {
      fit = await this.deps.baselines.fit({
        target,
        baselineFrom: addDays(day, -BASELINE_DAYS),
        baselineTo: day,
        reportFrom: day,
        reportTo: addDays(day, 1),
        temperatureCode: this.deps.temperatureCode ?? 'temp.outdoor',
        heatingBaseC: 15.5,
        coolingBaseC: 21,
        holidays: [],
        changePoint: false,
      });
    } catch (error) {
      // Too little history or no temperature yet: nothing to compare with.
      this.deps.logger.debug({ err: error, target: name, day }, 'no baseline for the anomaly check');
      return null;
    }
    const observed = fit.report?.days[0];
    // The baseline's own length rule applies here too: a model of four months says nothing about the other eight
    // (issue 58: spring days were flagged against a winter-only fit).
    if (!observed || !fit.statistics.pass.all || !fit.guardRails.checks.length.pass) return null;
    const mean = fit.baselineDays.reduce((sum, d) => sum + d.actualKwh, 0) / fit.baselineDays.length;
    const sigma = (fit.statistics.cvRmsePercent / 100) * mean;
    const deviation = observed.actualKwh - observed.expectedKwh;
    if (Math.abs(deviation) <= BASELINE_SIGMAS * sigma || Math.abs(deviation) <= MIN_DEVIATION * observed.expectedKwh) return null;
    const percent = Math.round((deviation / observed.expectedKwh) * 100);
    return {
      kind: 'baseline_deviation',
      target: name,
      day,
      message: `${name[0].toUpperCase()}${name.slice(1)} used ${Math.round(observed.actualKwh)} kWh on ${day}, ${percent > 0 ? '+' : ''}${percent} % against its baseline's ${Math.round(observed.expectedKwh)} kWh`,
      detail:
        `Baseline ${fit.model.from}–${fit.model.to} (CV(RMSE) ${fit.statistics.cvRmsePercent} %, R² ${fit.statistics.r2}) expects ${Math.round(observed.expectedKwh)} kWh for a ${observed.dayType} day ` +
        `with ${observed.hdd} HDD and ${observed.cdd} CDD; the deviation of ${Math.round(deviation)} kWh is ${kw(Math.abs(deviation) / sigma)} standard errors (threshold ${BASELINE_SIGMAS}).`,
    };
  }
}
