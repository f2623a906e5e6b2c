// Anomalies in a site day, raised as alerts with their evidence: the night base load (00:00–05:00) above its own
// history, a weekend day's load above earlier weekend days', and a day's energy far from its weather-normalised baseline.
import type { AlertService } from '../facility/alerts/service.ts';
import { addDays, dayIntervals, daySlices, daysBetween } from '../platform/time/calendar.ts';
import type { SiteEnergy } from '../energy/siteEnergy.ts';
import { yieldToLoop } from '../metering/store.ts';
import type { Logger } from '../platform/logger.ts';
import type { Baselines } from './baselines.ts';
import type { Target } from './comparisons.ts';

export const ANOMALY_CODE = 'energy.anomaly';
/** A base load this much above the median of its history is an anomaly (and at least MIN_RISE_KW above it). */
export const BASE_LOAD_RATIO = 1.2;
const MIN_RISE_KW = 1;
const HISTORY_DAYS = 28;
const NIGHT_INTERVALS = 20; // 00:00–05:00
/** A day whose energy is further from its baseline than this many standard errors, and by more than MIN_DEVIATION, is an anomaly. */
export const BASELINE_SIGMAS = 3;
const MIN_DEVIATION = 0.1;
const BASELINE_DAYS = 365;
/**
 * Days of intervals read between two turns of the event loop: an area of 200 meters reads ~6 ms a day (2,000 meters ×
 * 3 years), so a slice stays near 12 ms where the 29 days at once held requests for ~180 ms. With the baselines' own
 * slices the whole check's longest block there went from 3.96-4.42 s to 38 ms (500 meters × 365 days: 1.2-1.5 s to
 * 34-45 ms), the same findings, about the same time in all.
 */
const SLICE_DAYS = 2;

export type Finding = { kind: 'night_base_load' | 'weekend_load' | 'baseline_deviation'; target: string; day: string; message: string; detail: string };

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const kw = (value: number) => Math.round(value * 10) / 10;
const isWeekend = (day: string) => [0, 6].includes(new Date(`${day}T00:00:00Z`).getUTCDay());

export class AnomalyWatch {
  private lastChecked: string | undefined;

  constructor(
    private readonly deps: {
      /** The site's energy: its targets with 15-minute intervals (none without meters) and their intervals. */
      energy: Pick<SiteEnergy, 'today' | 'timezone' | 'intervalTargets' | 'intervals'>;
      baselines: Baselines;
      alerts: Pick<AlertService, 'fromGatewayAlarm'>;
      logger: Logger;
      temperatureCode?: string;
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
      findings.push(...this.baseLoad(name, day, await this.loads(target, addDays(day, -HISTORY_DAYS), day)));
      const deviation = await this.baselineDeviation(name, target, day);
      if (deviation) findings.push(deviation);
      await yieldToLoop();
    }
    for (const finding of findings) {
      this.deps.alerts.fromGatewayAlarm({
        key: `${ANOMALY_CODE}.${finding.kind}@${finding.target}@${finding.day}`,
        code: `${ANOMALY_CODE}.${finding.kind}`,
        level: 'warning',
        message: finding.message,
        detail: finding.detail,
        raisedAt: new Date().toISOString(),
        clearedAt: null,
      });
    }
    if (findings.length) this.deps.logger.warn({ day, findings: findings.length }, 'energy anomalies found');
    return findings;
  }

  /**
   * Mean kW of each day's night intervals and whole day over [from, to], from the stored intervals (NaN where
   * incomplete); SLICE_DAYS at a time, the event loop free between.
   */
  private async loads(target: Target, from: string, day: string): Promise<Map<string, { night: number; day: number }>> {
    const timezone = this.deps.energy.timezone();
    const end = addDays(day, 1);
    const result = new Map<string, { night: number; day: number }>();
    const mean = (values: number[]) => (!values.length || values.some(Number.isNaN) ? NaN : (values.reduce((a, b) => a + b, 0) / values.length) * 4);
    for (const [sliceFrom, sliceTo] of daySlices(from, end, SLICE_DAYS)) {
      const { kwh } = this.deps.energy.intervals(sliceFrom, sliceTo, target);
      let offset = 0;
      for (const d of daysBetween(sliceFrom, sliceTo)) {
        // 92, 96 or 100 intervals: the night window is the day's first five hours whatever its length.
        const { count } = dayIntervals(timezone, d);
        const dayKwh = Array.from(kwh.subarray(offset, offset + count));
        result.set(d, { night: mean(dayKwh.slice(0, NIGHT_INTERVALS)), day: mean(dayKwh) });
        offset += count;
      }
      await yieldToLoop();
    }
    return result;
  }

  private baseLoad(name: string, day: string, loads: Map<string, { night: number; day: number }>): Finding[] {
    const today = loads.get(day);
    if (!today) return [];
    const findings: Finding[] = [];
    const history = [...loads.entries()].filter(([d]) => d < day);
    const nights = history.map(([, l]) => l.night).filter((v) => !Number.isNaN(v));
    if (!Number.isNaN(today.night) && nights.length >= 14) {
      const usual = median(nights);
      if (today.night > usual * BASE_LOAD_RATIO && today.night - usual >= MIN_RISE_KW) {
        findings.push({
          kind: 'night_base_load',
          target: name,
          day,
          message: `Night base load of the ${name} up ${Math.round((today.night / usual - 1) * 100)} % on ${day}: ${kw(today.night)} kW against a usual ${kw(usual)} kW`,
          detail: `Mean demand 00:00–05:00 on ${day} was ${kw(today.night)} kW; the median of the ${nights.length} nights before it was ${kw(usual)} kW (threshold ×${BASE_LOAD_RATIO}).`,
        });
      }
    }
    if (isWeekend(day) && !Number.isNaN(today.day)) {
      const weekends = history
        .filter(([d]) => isWeekend(d))
        .map(([, l]) => l.day)
        .filter((v) => !Number.isNaN(v));
      if (weekends.length >= 4) {
        const usual = median(weekends);
        if (today.day > usual * BASE_LOAD_RATIO && today.day - usual >= MIN_RISE_KW) {
          findings.push({
            kind: 'weekend_load',
            target: name,
            day,
            message: `Weekend load of the ${name} up ${Math.round((today.day / usual - 1) * 100)} % on ${day}: ${kw(today.day)} kW against a usual ${kw(usual)} kW`,
            detail: `Mean demand over ${day} was ${kw(today.day)} kW; the median of the ${weekends.length} weekend days before it was ${kw(usual)} kW (threshold ×${BASE_LOAD_RATIO}).`,
          });
        }
      }
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
      });
    } catch (error) {
      // Too little history or no temperature yet: nothing to compare with.
      this.deps.logger.debug({ err: error, target: name, day }, 'no baseline for the anomaly check');
      return null;
    }
    const observed = fit.report?.days[0];
    if (!observed || !fit.statistics.pass.all) return null;
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
