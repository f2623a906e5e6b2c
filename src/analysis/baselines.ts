// Baselines: a regression of a meter's or an area's daily energy on heating and cooling degree days and day type,
// E = a + b·HDD + c·CDD + d·weekend + e·holiday, fitted by least squares over a baseline period; its fit judged by the
// ASHRAE Guideline 14 statistics (CV(RMSE), NMBE, R²); then expected vs actual and CUSUM for any later period.
import type { EnergyFigures, Totals } from '../energy/index.ts';
import { type StoredDays, yieldToLoop } from '../metering/index.ts';
import type { Tariffs } from '../pricing/index.ts';
import { addDays, dayIntervals, daySlices, daysBetween, localClock } from '../platform/time/calendar.ts';
import { BadRequest } from '../platform/errors.ts';
import { degreeDays, type OutdoorTemperatures } from './weather.ts';
import { countDays, wholeHourKwh } from './wholeDays.ts';
import { caltrackDaily, caltrackHourly, type Method } from './caltrack.ts';
/** The site (no field), an area or a meter: as the comparisons' target (not imported: comparisons use this file). */
type Target = { meterId?: number; area?: string };
import {
  baselineGuardRails,
  type GuardRails,
  bestChangePointModel,
  savingsFigures,
  cvRmseLimitPercent,
  MIN_HOLIDAY_DAYS,
  NET_BIAS_LIMIT_PERCENT,
} from './guardRails.ts';
import { round } from '../platform/numbers.ts';

export { MIN_HOLIDAY_DAYS };

export type DayType = 'working' | 'weekend' | 'holiday';
export type BaselineDay = { day: string; dayType: DayType; hdd: number; cdd: number; meanC: number; actualKwh: number; expectedKwh: number };
/** What a reference method chose (caltrack.ts), beside the daily baseline's answer. */
export type ReferenceDetail = {
  model: string;
  heatingBalanceC: number | null;
  coolingBalanceC: number | null;
  coefficients: Record<string, number>;
  adjustedR2: number | null;
  qualifiedCandidates: number | null;
  note: string;
};
export type FitStatistics = { n: number; p: number; cvRmsePercent: number; nmbePercent: number; r2: number };

/**
 * The limits a daily baseline is held to: G14-2014 §5.2.11.3 for a whole-building regression baseline, CV(RMSE) ≤ 20 %
 * (25 % when the savings rest on 12–60 months of reporting data, 30 % beyond: see cvRmseLimitPercent) and a net
 * determination bias ≤ 0.005 % (a numerical check: least squares with an intercept makes it 0); R² ≥ 0.75 is common
 * practice, not a G14 requirement.
 */
export const G14_LIMITS = { cvRmsePercent: 20, nmbePercent: NET_BIAS_LIMIT_PERCENT, r2: 0.75 };
const MIN_BASELINE_DAYS = 30;
/** Days read between two turns of the event loop: ~10-20 ms for an area of 200 meters (see observations). */
const SLICE_DAYS = 7;
const TERMS = ['intercept', 'perHdd', 'perCdd', 'weekend', 'holiday'] as const;
type Coefficients = Record<(typeof TERMS)[number], number>;

/** Least squares by the normal equations (5 × 5 at most), solved by Gaussian elimination with partial pivoting. */
export function leastSquares(rows: number[][], y: number[]): number[] {
  const p = rows[0].length;
  const a = Array.from({ length: p }, () => new Float64Array(p + 1));
  rows.forEach((x, k) => {
    for (let i = 0; i < p; i += 1) {
      for (let j = 0; j < p; j += 1) a[i][j] += x[i] * x[j];
      a[i][p] += x[i] * y[k];
    }
  });
  for (let c = 0; c < p; c += 1) {
    let pivot = c;
    for (let r = c + 1; r < p; r += 1) if (Math.abs(a[r][c]) > Math.abs(a[pivot][c])) pivot = r;
    [a[c], a[pivot]] = [a[pivot], a[c]];
    if (Math.abs(a[c][c]) < 1e-12) throw new Error('singular');
    for (let r = 0; r < p; r += 1) {
      if (r === c) continue;
      const f = a[r][c] / a[c][c];
      for (let j = c; j <= p; j += 1) a[r][j] -= f * a[c][j];
    }
  }
  return Array.from({ length: p }, (_, i) => a[i][p] / a[i][i]);
}

/** ASHRAE Guideline 14: CV(RMSE) = √(Σ(y−ŷ)²/(n−p)) ÷ ȳ, NMBE = Σ(y−ŷ) ÷ ((n−p)·ȳ), R² = 1 − SSres/SStot. */
export function g14Statistics(actual: number[], expected: number[], p: number): FitStatistics {
  const n = actual.length;
  const mean = actual.reduce((a, b) => a + b, 0) / n;
  let ssRes = 0;
  let bias = 0;
  let ssTot = 0;
  for (let i = 0; i < n; i += 1) {
    ssRes += (actual[i] - expected[i]) ** 2;
    bias += actual[i] - expected[i];
    ssTot += (actual[i] - mean) ** 2;
  }
  return {
    n,
    p,
    cvRmsePercent: (Math.sqrt(ssRes / (n - p)) / mean) * 100,
    nmbePercent: (bias / ((n - p) * mean)) * 100,
    r2: ssTot > 0 ? 1 - ssRes / ssTot : 0,
  };
}

export type BaselineQuery = {
  target: Target;
  baselineFrom: string;
  baselineTo: string;
  reportFrom?: string;
  reportTo?: string;
  temperatureCode: string;
  heatingBaseC: number;
  coolingBaseC: number;
  holidays: string[];
  /** Also search the change-point models (3P/4P/5P) beside the degree-day model (default true; the anomaly check skips it). */
  changePoint?: boolean;
  /** The caller may read any temperature point from the gateway (admins; others only the site's outdoor point). */
  anyTemperatureCode?: boolean;
  /** EMS's degree-day model (default) or a reference method (caltrack.ts). */
  method?: Method;
};

export class Baselines {
  constructor(
    /** Whole days are counted by wholeDays.ts; the stored days say which hold suspect intervals (issue 52). */
    private readonly days: StoredDays,
    private readonly figures: EnergyFigures,
    /** Not read since the tariff's holidays stopped being the building's (issue 41): kept for the callers' signature. */
    _tariffs: Tariffs,
    private readonly outdoor: OutdoorTemperatures,
  ) {}

  /**
   * Days of [from, to) with energy from every meter of the target and a temperature, each with its regressors. Read
   * SLICE_DAYS at a time with the event loop free between (issue 29): a year of an area of 200 meters is ~1 s of reads
   * at 2,000 meters, which the daily anomaly check and a baseline request would otherwise hold every request for.
   */
  private async observations(query: BaselineQuery, from: string, to: string, today: string, minDays = 0) {
    // Whole days only (wholeDays.ts: every interval of every meter of the target); partial days are listed apart.
    const whole = new Set<string>();
    const partial: string[] = [];
    const end = to < today ? to : today;
    const idsJson = JSON.stringify(this.figures.ids(query.target));
    for (const [sliceFrom, sliceTo] of daySlices(from, end > from ? end : from, SLICE_DAYS)) {
      const counted = countDays(this.figures, query.target, sliceFrom, sliceTo);
      // A day holding intervals of an unconfirmed suspect run (a dead meter's flat zero) is not a whole day (issue 52).
      const suspect = this.days.suspectPerDay(idsJson, sliceFrom, sliceTo);
      for (const day of counted.whole) if (!suspect.has(day)) whole.add(day);
      partial.push(...counted.partial);
      await yieldToLoop();
    }
    // Too few days of energy: said before the gateway is asked for a year of temperatures.
    if (whole.size < minDays) return { observed: [], missing: daysBetween(from, end), partial, fetched: 0 };
    const energy = new Map<string, Totals | null>();
    for (const [sliceFrom, sliceTo] of daySlices(from, to, SLICE_DAYS)) {
      for (const [day, totals] of this.figures.byDay(sliceFrom, sliceTo, query.target)) energy.set(day, totals);
      await yieldToLoop();
    }
    const { days: temperatures, fetched } = await this.outdoor.days(query.temperatureCode, from, to, today, { anyCode: query.anyTemperatureCode });
    const holidays = new Set(query.holidays);
    const observed: Omit<BaselineDay, 'expectedKwh'>[] = [];
    const missing: string[] = [];
    for (const day of daysBetween(from, to < today ? to : today)) {
      const totals = energy.get(day);
      const hourly = temperatures.get(day);
      if (!totals || !whole.has(day) || !hourly) {
        missing.push(day);
        continue;
      }
      const { hdd, cdd, meanC } = degreeDays(hourly, query.heatingBaseC, query.coolingBaseC);
      if (!Number.isFinite(hdd)) {
        missing.push(day);
        continue;
      }
      observed.push({ day, dayType: dayTypeOf(day, holidays), hdd, cdd, meanC, actualKwh: totals.kwh });
    }
    return { observed, missing, partial, fetched };
  }

  async fit(query: BaselineQuery, now: number = Date.now()) {
    const today = this.figures.today(new Date(now));
    if (query.baselineTo <= query.baselineFrom) throw new BadRequest('Invalid query', [{ path: 'query.baselineTo', message: 'must be after baselineFrom' }]);
    if (query.baselineTo > addDays(query.baselineFrom, 366 * 5))
      throw new BadRequest('Invalid query', [{ path: 'query.baselineTo', message: 'at most 5 years' }]);
    if (query.reportFrom !== undefined && query.reportFrom < query.baselineTo)
      throw new BadRequest('Invalid query', [
        { path: 'query.reportFrom', message: 'must not be before baselineTo: a baseline is compared with what came after it' },
      ]);
    if (query.method === 'caltrack-daily' || query.method === 'caltrack-hourly') return this.fitReference(query, today);
    const base = await this.observations(query, query.baselineFrom, query.baselineTo, today, MIN_BASELINE_DAYS);
    if (base.observed.length < MIN_BASELINE_DAYS) {
      throw new BadRequest('Invalid query', [
        {
          path: 'query.baselineFrom',
          message: `the baseline period has ${base.observed.length} days with energy and temperature; at least ${MIN_BASELINE_DAYS} are needed`,
        },
      ]);
    }
    const fitted = fitDayModel(base.observed);
    if (!fitted)
      throw new BadRequest('Invalid query', [
        { path: 'query.baselineFrom', message: 'the baseline period does not separate the regressors (e.g. every day alike)' },
      ]);
    const { columns, coefficients, predict, statistics, leftOut } = fitted;
    const baselineDays = base.observed.map((o) => ({ ...o, expectedKwh: predict(o) }));
    // The days the model stands on: without the few holidays left out of the fit (listed in baselineDays all the same).
    const fittedDays = leftOut.length ? baselineDays.filter((d) => d.dayType !== 'holiday') : baselineDays;
    let report = null;
    let later: Awaited<ReturnType<Baselines['observations']>> | null = null;
    let reportTo = '';
    if (query.reportFrom !== undefined) {
      reportTo = query.reportTo ?? addDays(today, 1);
      if (reportTo <= query.reportFrom) throw new BadRequest('Invalid query', [{ path: 'query.reportTo', message: 'must be after reportFrom' }]);
      if (reportTo > addDays(query.reportFrom, 366 * 5)) throw new BadRequest('Invalid query', [{ path: 'query.reportTo', message: 'at most 5 years' }]);
      later = await this.observations(query, query.reportFrom, reportTo, today);
    }
    const reportDays = later ? later.observed.length : null;
    const limits = { ...G14_LIMITS, cvRmsePercent: cvRmseLimitPercent(reportDays) };
    const pass = {
      cvRmse: statistics.cvRmsePercent <= limits.cvRmsePercent,
      nmbe: Math.abs(statistics.nmbePercent) <= limits.nmbePercent,
      r2: statistics.r2 >= limits.r2,
    };
    const conditions = (o: Omit<BaselineDay, 'expectedKwh'>) => ({ heat: o.hdd, cool: o.cdd, dayType: o.dayType });
    const guardRails = baselineGuardRails({
      resolution: 'day',
      baselineFrom: query.baselineFrom,
      baselineTo: query.baselineTo,
      baseline: fittedDays.map((d) => ({ ...conditions(d), day: d.day, actualKwh: d.actualKwh, expectedKwh: d.expectedKwh })),
      p: columns.length,
      dropped: TERMS.filter((term) => !columns.includes(term)),
      cvRmsePercent: statistics.cvRmsePercent,
      nmbePercent: statistics.nmbePercent,
      report: later
        ? { days: later.observed.length, observations: later.observed.map((o) => ({ ...conditions(o), actualKwh: o.actualKwh, expectedKwh: predict(o) })) }
        : undefined,
    });
    // Change-point models (ASHRAE RP-1050: 3P heating or cooling, 4P, 5P) on the days' mean temperature, beside the
    // degree-day model: when one fits better (CV(RMSE) lower by 10 % or more) the guard rails say so.
    const cp = query.changePoint === false ? null : bestChangePointModel(fittedDays);
    const changePoint = cp && {
      ...cp,
      heatingChangePointC: cp.heatingChangePointC,
      coolingChangePointC: cp.coolingChangePointC,
      coefficients: Object.fromEntries(Object.entries(cp.coefficients).map(([k, v]) => [k, round(v, 4)])) as typeof cp.coefficients,
      cvRmsePercent: round(cp.cvRmsePercent, 3),
      r2: round(cp.r2, 4),
      fitsBetter: cp.cvRmsePercent < statistics.cvRmsePercent * 0.9,
    };
    if (changePoint?.fitsBetter)
      guardRails.reasons.push(
        `A ${changePoint.model} change-point model on the daily mean temperature fits the baseline better (CV(RMSE) ${changePoint.cvRmsePercent} % against ` +
          `${round(statistics.cvRmsePercent, 3)} %): the degree-day balance points ${query.heatingBaseC}/${query.coolingBaseC} °C may not suit this building.`,
      );
    if (later && query.reportFrom !== undefined)
      report = dailySavingsReport({ later, observed: later.observed, predict, guardRails, from: query.reportFrom, to: reportTo, today });
    return {
      target: { kind: query.target.meterId !== undefined ? 'meter' : query.target.area !== undefined ? 'area' : 'site', ...query.target },
      method: 'ems' as Method,
      reference: null as ReferenceDetail | null,
      temperatureCode: query.temperatureCode,
      heatingBaseC: query.heatingBaseC,
      coolingBaseC: query.coolingBaseC,
      model: {
        from: query.baselineFrom,
        to: query.baselineTo,
        coefficients: Object.fromEntries(TERMS.map((term) => [term, round(coefficients[term], 4)])) as Coefficients,
        fitted: columns,
        holidaysLeftOut: leftOut,
      },
      statistics: {
        n: statistics.n,
        p: statistics.p,
        cvRmsePercent: round(statistics.cvRmsePercent, 3),
        nmbePercent: round(statistics.nmbePercent, 4),
        r2: round(statistics.r2, 4),
        limits,
        pass: { ...pass, all: pass.cvRmse && pass.nmbe && pass.r2 },
      },
      guardRails,
      changePoint,
      baselineDays: baselineDays.map(shape),
      missingBaselineDays: base.missing.slice(0, 400),
      partialBaselineDays: base.partial.slice(0, 400),
      report,
      temperatureDaysFetched: base.fetched,
    };
  }

  /**
   * A reference method (caltrack.ts) over the same whole days (or whole hours) and temperatures, in the daily baseline's
   * answer: its G14 statistics, the same guard rails (length, coverage, fit, ranges) and uncertainty, and the reporting
   * period summed per whole day. The guard rails' ranges are read on degree days at the query's bases (the weather the
   * baseline saw); no term counts as dropped (a CalTRACK term left out was tested and found insignificant).
   */
  private async fitReference(query: BaselineQuery, today: string) {
    const method = query.method as Exclude<Method, 'ems'>;
    const base = await this.observations(query, query.baselineFrom, query.baselineTo, today, MIN_BASELINE_DAYS);
    if (base.observed.length < MIN_BASELINE_DAYS)
      throw new BadRequest('Invalid query', [
        {
          path: 'query.baselineFrom',
          message: `the baseline period has ${base.observed.length} days with energy and temperature; at least ${MIN_BASELINE_DAYS} are needed`,
        },
      ]);
    const later = query.reportFrom !== undefined ? await this.observations(query, query.reportFrom, query.reportTo ?? addDays(today, 1), today) : null;
    const { predictDay, statistics, detail, guardObservations, reportObservations, resolution } =
      method === 'caltrack-daily'
        ? caltrackDailyFit(base.observed, later?.observed ?? [])
        : await this.caltrackHourlyFit(query, base.observed, later?.observed ?? null);
    const reportTo = query.reportFrom !== undefined ? (query.reportTo ?? addDays(today, 1)) : '';
    const reportDays = later ? later.observed.length : null;
    const limits = resolution === 'day' ? { ...G14_LIMITS, cvRmsePercent: cvRmseLimitPercent(reportDays) } : { cvRmsePercent: 30, nmbePercent: 10, r2: 0.75 };
    const pass = {
      cvRmse: statistics.cvRmsePercent <= limits.cvRmsePercent,
      nmbe: Math.abs(statistics.nmbePercent) <= limits.nmbePercent,
      r2: statistics.r2 >= limits.r2,
    };
    const guardRails = baselineGuardRails({
      resolution,
      baselineFrom: query.baselineFrom,
      baselineTo: query.baselineTo,
      baseline: guardObservations,
      p: statistics.p,
      dropped: [],
      cvRmsePercent: statistics.cvRmsePercent,
      nmbePercent: statistics.nmbePercent,
      netBiasLimitPercent: resolution === 'hour' ? limits.nmbePercent : undefined,
      report: later
        ? { days: resolution === 'day' ? later.observed.length : daysBetween(query.reportFrom!, reportTo).length, observations: reportObservations }
        : undefined,
    });
    const baselineDays = base.observed.map((o) => ({ ...o, expectedKwh: predictDay(o) })).filter((d) => Number.isFinite(d.expectedKwh));
    let report = null;
    if (later && query.reportFrom !== undefined) {
      const observed = later.observed.filter((o) => Number.isFinite(predictDay(o)));
      report = dailySavingsReport({ later, observed, predict: predictDay, guardRails, from: query.reportFrom, to: reportTo, today });
    }
    return {
      target: { kind: query.target.meterId !== undefined ? 'meter' : query.target.area !== undefined ? 'area' : 'site', ...query.target },
      method: method as Method,
      reference: detail as ReferenceDetail | null,
      temperatureCode: query.temperatureCode,
      heatingBaseC: query.heatingBaseC,
      coolingBaseC: query.coolingBaseC,
      model: {
        from: query.baselineFrom,
        to: query.baselineTo,
        coefficients: { intercept: 0, perHdd: 0, perCdd: 0, weekend: 0, holiday: 0 } as Coefficients,
        fitted: [] as (typeof TERMS)[number][],
        holidaysLeftOut: [] as string[],
      },
      statistics: {
        n: statistics.n,
        p: statistics.p,
        cvRmsePercent: round(statistics.cvRmsePercent, 3),
        nmbePercent: round(statistics.nmbePercent, 4),
        r2: round(statistics.r2, 4),
        limits,
        pass: { ...pass, all: pass.cvRmse && pass.nmbe && pass.r2 },
      },
      guardRails,
      changePoint: null,
      baselineDays: baselineDays.map(shape),
      missingBaselineDays: base.missing.slice(0, 400),
      partialBaselineDays: base.partial.slice(0, 400),
      report,
      temperatureDaysFetched: base.fetched,
    };
  }

  /** CalTRACK's hourly model (caltrack.ts) on the whole hours of the baseline's whole days; a day predicted as the sum of its hours. */
  private async caltrackHourlyFit(query: BaselineQuery, baseObserved: Observed[], laterObserved: Observed[] | null): Promise<ReferenceFit> {
    const baseHours = await this.wholeHours(
      query,
      baseObserved.map((o) => o.day),
    );
    const model = caltrackHourly(baseHours);
    if (!model) throw new BadRequest('Invalid query', [{ path: 'query.baselineFrom', message: 'CalTRACK hourly: too few whole hours to fit a month' }]);
    const expected = baseHours.map((h) => model.predict(h));
    const statistics = g14Statistics(
      baseHours.map((h) => h.actualKwh),
      expected,
      model.p,
    );
    const sumByDay = (hours: (typeof baseHours)[number][]) => {
      const byDay = new Map<string, number>();
      for (const h of hours) byDay.set(h.day, (byDay.get(h.day) ?? 0) + model.predict(h));
      return byDay;
    };
    const baseByDay = sumByDay(baseHours);
    const reportHours = laterObserved
      ? await this.wholeHours(
          query,
          laterObserved.map((o) => o.day),
        )
      : [];
    const reportByDay = sumByDay(reportHours);
    // A day is predicted as the sum of its hours' predictions (a whole day has all its hours).
    const predictDay = (o: Observed) => baseByDay.get(o.day) ?? reportByDay.get(o.day) ?? NaN;
    const detail: ReferenceDetail = {
      model: 'time-of-week-and-temperature',
      heatingBalanceC: null,
      coolingBalanceC: null,
      coefficients: {},
      adjustedR2: null,
      qualifiedCandidates: null,
      note: `CalTRACK 2.0 §4: ${model.segments} monthly segments (weights 1 and 0.5 for the neighbours), ${round(model.occupiedShare * 100, 1)} % of times of week occupied; p = the columns of one segment`,
    };
    const hourConditions = (h: (typeof baseHours)[number]) => ({
      heat: Math.max(0, query.heatingBaseC - h.temperatureC),
      cool: Math.max(0, h.temperatureC - query.coolingBaseC),
      dayType: h.dayType,
    });
    const guardObservations = baseHours.map((h, i) => ({ ...hourConditions(h), day: h.day, actualKwh: h.actualKwh, expectedKwh: expected[i] }));
    const reportObservations = reportHours.map((h) => ({ ...hourConditions(h), actualKwh: h.actualKwh, expectedKwh: model.predict(h) }));
    return { predictDay, statistics, detail, guardObservations, reportObservations, resolution: 'hour' };
  }

  /** The whole hours (wholeDays.ts) of the given whole days with their outdoor temperature, for an hourly reference model. */
  private async wholeHours(query: BaselineQuery, days: string[]) {
    const { timezone } = this.figures.settings();
    const hours: { day: string; tow: number; month: number; dayType: DayType; temperatureC: number; actualKwh: number }[] = [];
    if (!days.length) return hours;
    const from = days[0];
    const to = addDays(days[days.length - 1], 1);
    const { days: temperatures } = await this.outdoor.days(query.temperatureCode, from, to, addDays(to, 1), { anyCode: query.anyTemperatureCode });
    const wanted = new Set(days);
    const holidays = new Set(query.holidays);
    for (const [sliceFrom, sliceTo] of daySlices(from, to, SLICE_DAYS)) {
      const { start: first, kwh } = this.figures.intervals(sliceFrom, sliceTo, query.target);
      for (const day of daysBetween(sliceFrom, sliceTo)) {
        if (!wanted.has(day)) continue;
        const { start, count } = dayIntervals(timezone, day);
        const offset = Math.round((start - first) / 900_000);
        const hourly = temperatures.get(day);
        for (let k = 0; k < count / 4; k += 1) {
          const actualKwh = wholeHourKwh(kwh, offset + 4 * k);
          const temperatureC = hourly?.[k] ?? NaN;
          if (Number.isNaN(actualKwh) || Number.isNaN(temperatureC)) continue;
          const { weekday, minute } = localClock(timezone, start + k * 3_600_000);
          hours.push({
            day,
            tow: weekday * 24 + Math.floor(minute / 60),
            month: Number(day.slice(5, 7)),
            dayType: dayTypeOf(day, holidays),
            temperatureC,
            actualKwh,
          });
        }
      }
      await yieldToLoop();
    }
    return hours;
  }
}

/** A whole day observed: its day type, degree days, mean temperature and energy. */
type Observed = Omit<BaselineDay, 'expectedKwh'>;
/** What a reference method's fit gives the daily baseline's answer: a day's prediction, the statistics, the observations the guard rails read. */
type ReferenceFit = {
  predictDay: (o: Observed) => number;
  statistics: FitStatistics;
  detail: ReferenceDetail;
  guardObservations: { heat: number; cool: number; dayType: DayType; day: string; actualKwh: number; expectedKwh: number }[];
  reportObservations: { heat: number; cool: number; dayType: DayType; actualKwh: number; expectedKwh: number }[];
  resolution: 'day' | 'hour';
};

/** CalTRACK's daily model (caltrack.ts) on the baseline's whole days at the mean temperature, and each day's prediction. */
function caltrackDailyFit(baseObserved: Observed[], laterObserved: Observed[]): ReferenceFit {
  const conditions = (o: Observed) => ({ heat: o.hdd, cool: o.cdd, dayType: o.dayType });
  const model = caltrackDaily(baseObserved.map((o) => ({ meanC: o.meanC, actualKwh: o.actualKwh })));
  if (!model) throw new BadRequest('Invalid query', [{ path: 'query.baselineFrom', message: 'CalTRACK daily: no candidate model could be fitted' }]);
  const predictDay = (o: Observed) => model.predict(o.meanC);
  const statistics = g14Statistics(
    baseObserved.map((o) => o.actualKwh),
    baseObserved.map(predictDay),
    model.p,
  );
  const detail: ReferenceDetail = {
    model: model.model,
    heatingBalanceC: model.heatingBalanceC,
    coolingBalanceC: model.coolingBalanceC,
    coefficients: Object.fromEntries(Object.entries(model.coefficients).map(([k, v]) => [k, round(v, 4)])),
    adjustedR2: round(model.adjustedR2, 4),
    qualifiedCandidates: model.qualified,
    note: 'degree days in °F-days at the chosen balance points (CalTRACK 2.0 §3); coefficients in kWh per °F-day',
  };
  const guardObservations = baseObserved.map((o) => ({ ...conditions(o), day: o.day, actualKwh: o.actualKwh, expectedKwh: predictDay(o) }));
  const reportObservations = laterObserved.map((o) => ({ ...conditions(o), actualKwh: o.actualKwh, expectedKwh: predictDay(o) }));
  return { predictDay, statistics, detail, guardObservations, reportObservations, resolution: 'day' };
}

/**
 * The daily degree-day model E = a + b·HDD + c·CDD + d·weekend + e·holiday fitted by least squares over observed days.
 * A regressor that never varies (no cooling day, no holiday in the period) cannot be fitted and is left out; so is
 * the holiday term when the baseline holds fewer than MIN_HOLIDAY_DAYS holidays (issue 41: a dummy fitted on one day
 * takes that day's residual exactly, costs a degree of freedom and moves every later holiday by it). Those few holidays
 * are then left out of the fit and its statistics (`leftOut`: one closed day must not pull a working-day model, and a
 * day the building worked costs one observation); a holiday is then predicted as the weekday or weekend day it falls
 * on, and the guard rails say a reporting period with holidays needs the term. Null when the regressors cannot be
 * separated.
 */
export function fitDayModel(observed: Omit<BaselineDay, 'expectedKwh'>[]): {
  columns: (typeof TERMS)[number][];
  coefficients: Coefficients;
  predict: (o: Omit<BaselineDay, 'expectedKwh'>) => number;
  statistics: FitStatistics;
  /** Holidays left out of the fit (fewer than MIN_HOLIDAY_DAYS of them). */
  leftOut: string[];
} | null {
  const holidays = observed.filter((o) => o.dayType === 'holiday');
  const leftOut = holidays.length < MIN_HOLIDAY_DAYS ? holidays.map((o) => o.day) : [];
  const used = leftOut.length ? observed.filter((o) => o.dayType !== 'holiday') : observed;
  if (!used.length) return null;
  const columns = TERMS.filter((term) => {
    if (term === 'intercept') return true;
    const values = used.map((o) => regressor(term, o));
    return values.some((v) => v !== values[0]);
  });
  const rows = used.map((o) => columns.map((term) => regressor(term, o)));
  const y = used.map((o) => o.actualKwh);
  let solved: number[];
  try {
    solved = leastSquares(rows, y);
  } catch {
    return null;
  }
  const coefficients: Coefficients = { intercept: 0, perHdd: 0, perCdd: 0, weekend: 0, holiday: 0 };
  columns.forEach((term, i) => {
    coefficients[term] = solved[i];
  });
  // Without a holiday term a holiday is the working day or weekend day of its date.
  const predict = (o: Omit<BaselineDay, 'expectedKwh'>) => {
    const x = columns.includes('holiday') || o.dayType !== 'holiday' ? o : { ...o, dayType: weekdayType(o.day) };
    return TERMS.reduce((sum, term) => sum + coefficients[term] * regressor(term, x), 0);
  };
  const statistics = g14Statistics(y, used.map(predict), columns.length);
  return { columns, coefficients, predict, statistics, leftOut };
}

/** The type of a date by its weekday alone: a weekend (Saturday, Sunday) or a working day. */
export function weekdayType(day: string): DayType {
  const weekday = new Date(`${day}T00:00:00Z`).getUTCDay();
  return weekday === 0 || weekday === 6 ? 'weekend' : 'working';
}

/** A baseline's terms: the intercept, heating and cooling degree-days (daily) or degree-hours (hourly), the day type. */
export type RegressorTerm = 'intercept' | 'perHdd' | 'perCdd' | 'perHdh' | 'perCdh' | 'weekend' | 'holiday';

/**
 * One regressor's value for a day or an hour: `heat` and `cool` are its heating and cooling degree-days (daily) or
 * degree-hours (hourly). The daily and the hourly baselines both fit and predict with it.
 */
export function regressorValue(term: RegressorTerm, x: { heat: number; cool: number; dayType: DayType }): number {
  switch (term) {
    case 'intercept':
      return 1;
    case 'perHdd':
    case 'perHdh':
      return x.heat;
    case 'perCdd':
    case 'perCdh':
      return x.cool;
    case 'weekend':
      return x.dayType === 'weekend' ? 1 : 0;
    case 'holiday':
      return x.dayType === 'holiday' ? 1 : 0;
  }
}

/**
 * A site day's type: a holiday of the building (the days the query gives), a weekend, or a working day. The tariff
 * versions' holidays are billing days of the supplier's price calendar, not days the building is closed (issue 41
 * item 10: a building that worked on the tariff's holiday got a holiday term from it), so they are not used here.
 */
export function dayTypeOf(day: string, holidays: Set<string>): DayType {
  return holidays.has(day) ? 'holiday' : weekdayType(day);
}

const regressor = (term: RegressorTerm, o: { hdd: number; cdd: number; dayType: DayType }) =>
  regressorValue(term, { heat: o.hdd, cool: o.cdd, dayType: o.dayType });

/**
 * The reporting period's savings, day by day with the CUSUM, for the EMS model and the reference methods alike: a
 * figure only where the guard rails hold, otherwise the reasons say why there is none (G14, IPMVP).
 */
function dailySavingsReport(input: {
  later: { missing: string[]; partial: string[] };
  observed: Omit<BaselineDay, 'expectedKwh'>[];
  predict: (o: Omit<BaselineDay, 'expectedKwh'>) => number;
  guardRails: GuardRails;
  from: string;
  to: string;
  today: string;
}) {
  const { later, observed, predict, guardRails, from, to, today } = input;
  let cusum = 0;
  const days = observed.map((o) => {
    const expectedKwh = predict(o);
    cusum += o.actualKwh - expectedKwh;
    return { ...shape({ ...o, expectedKwh }), cusumKwh: round(cusum, 3) };
  });
  const expected = observed.reduce((sum, o) => sum + predict(o), 0);
  const actual = observed.reduce((sum, o) => sum + o.actualKwh, 0);
  const defensible = guardRails.defensible && observed.length > 0;
  const reportSpan = daysBetween(from, to < today ? to : today).length;
  return {
    from,
    to,
    ...savingsFigures(expected, actual, defensible, guardRails, 'No reporting day has energy and temperature.'),
    coverage: reportSpan > 0 ? round(observed.length / reportSpan, 4) : 0,
    days,
    missingDays: later.missing.slice(0, 400),
    partialDays: later.partial.slice(0, 400),
  };
}

function shape(d: BaselineDay) {
  return {
    day: d.day,
    dayType: d.dayType,
    hdd: round(d.hdd, 3),
    cdd: round(d.cdd, 3),
    meanC: round(d.meanC, 2),
    actualKwh: round(d.actualKwh, 3),
    expectedKwh: round(d.expectedKwh, 3),
  };
}
