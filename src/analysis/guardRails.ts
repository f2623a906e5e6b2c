import { round } from '../platform/numbers.ts';
// Guard rails on a regression baseline (ASHRAE Guideline 14-2014 and IPMVP Core Concepts 2022): before a baseline's
// prediction is turned into "savings", check that it may be applied to the reporting period at all, and say how
// uncertain the savings are. Pure functions over the baseline's and the reporting period's observations, so the daily
// baseline, billing and verified-savings work call the same rules.

/** One observation's independent variables (a day: HDD/CDD; an hour: HDH/CDH) and its day type. */
export type Conditions = { heat: number; cool: number; dayType: 'working' | 'weekend' | 'holiday' };

/**
 * G14-2014 §5.2.11.3 (whole-building regression baseline): CV(RMSE) at most 20 % when savings rest on less than 12
 * months of reporting data, 25 % for 12–60 months, 30 % beyond; net determination bias at most 0.005 %.
 */
export function cvRmseLimitPercent(reportDays: number | null): number {
  if (reportDays === null || reportDays < 365) return 20;
  return reportDays <= 5 * 365 ? 25 : 30;
}
export const NET_BIAS_LIMIT_PERCENT = 0.005;
/** Holidays a daily baseline must hold before it gets a holiday term (issue 41 item 10): one day's residual is no coefficient. */
export const MIN_HOLIDAY_DAYS = 5;
/** IPMVP: the baseline spans a full cycle of operating conditions; for a weather-dependent daily model, 12 months. */
export const FULL_CYCLE_DAYS = 365;
/** Below this share of its span with data the baseline's coverage is too thin to stand for the cycle. */
export const MIN_COVERAGE = 0.8;
/** A reporting observation outside the baseline's range by more than this share of the range's width is extrapolated. */
export const RANGE_TOLERANCE = 0.1;
/** At most this share of reporting observations (and of their expected energy) may lie outside the baseline's range. */
export const MAX_OUTSIDE_SHARE = 0.05;
/** G14-2014 §5.2.11.3 / Annex B: the savings' uncertainty is at most 50 % of the savings at 68 % confidence. */
export const FSU_LIMIT = 0.5;

export type VariableRange = {
  variable: 'heating degree days' | 'cooling degree days' | 'heating degree hours' | 'cooling degree hours';
  baseline: { min: number; max: number };
  report: { min: number; max: number } | null;
  /** Reporting observations outside [min − 10 % of the width, max + 10 % of the width] of the baseline's. */
  outside: number;
};

export type SavingsUncertainty = {
  confidencePercent: number;
  /** Student's t at the confidence, n − p degrees of freedom (two-sided). */
  t: number;
  /** ± kWh on the reporting period's savings. */
  kwh: number;
  /** kWh ÷ |savings| (null when the savings are 0). */
  fractional: number | null;
};

export type GuardRails = {
  /** Every check that decides whether a savings figure may be given passed. */
  defensible: boolean;
  /** The savings exceed their uncertainty as G14 asks (FSU ≤ 50 % at 68 %); null without a reporting period. */
  significant: boolean | null;
  /** Why the figure is withheld or qualified, in plain words (empty when nothing is to be said). */
  reasons: string[];
  checks: {
    length: { pass: boolean; spanDays: number; observedDays: number; requiredDays: number; monthsCovered: number | null };
    coverage: { pass: boolean; share: number; required: number };
    fit: { pass: boolean; cvRmsePercent: number; cvRmseLimitPercent: number; netBiasPercent: number; netBiasLimitPercent: number };
    ranges: { pass: boolean; variables: VariableRange[]; outsideShare: number; outsideEnergyShare: number; allowedShare: number } | null;
    droppedTerms: { pass: boolean; dropped: string[]; neededInReport: string[] };
  };
  uncertainty: { autocorrelation: number; effectiveN: number; at68: SavingsUncertainty; at90: SavingsUncertainty } | null;
};

export type GuardRailInput = {
  resolution: 'day' | 'hour';
  baselineFrom: string;
  baselineTo: string;
  /** Baseline observations in time order, their actual and predicted energy; `day` (the site day) for the length rule. */
  baseline: (Conditions & { actualKwh: number; expectedKwh: number; day?: string })[];
  /** Coefficients fitted (p) and terms left out because they never varied in the baseline. */
  p: number;
  dropped: string[];
  cvRmsePercent: number;
  nmbePercent: number;
  /**
   * The net bias allowed (default G14's 0.005 %: a numerical check of least squares with an intercept, whose in-sample
   * bias is 0). A model whose bias is not 0 by construction (CalTRACK hourly: months fitted with their neighbours
   * weighted) is held to its resolution's NMBE limit instead.
   */
  netBiasLimitPercent?: number;
  /** The reporting period's observations with the baseline's prediction for each; absent: no reporting period. */
  report?: { days: number; observations: (Conditions & { expectedKwh: number; actualKwh: number })[] };
};

const daysBetween = (from: string, to: string) => Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000);

/** The inverse of the standard normal distribution (Acklam's rational approximation, |error| < 1.2e-9). */
export function normalQuantile(p: number): number {
  const a = [-39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716, 2.506628277459239];
  const b = [-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572];
  const c = [-0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const low = 0.02425;
  if (p < low) {
    const q = Math.sqrt(-2 * Math.log(p));
    return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  if (p > 1 - low) return -normalQuantile(1 - p);
  const q = p - 0.5;
  const r = q * q;
  return ((((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q) / (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

/**
 * Student's t quantile by the Cornish-Fisher expansion in 1/ν (Abramowitz & Stegun 26.7.5): within 0.1 % for ν ≥ 10
 * at the confidences used here (68 %, 90 %), which is far inside the uncertainty it scales.
 */
export function studentT(confidence: number, dof: number): number {
  const z = normalQuantile(0.5 + confidence / 2);
  const v = Math.max(1, dof);
  const z3 = z ** 3;
  const z5 = z ** 5;
  const z7 = z ** 7;
  return z + (z3 + z) / (4 * v) + (5 * z5 + 16 * z3 + 3 * z) / (96 * v ** 2) + (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * v ** 3);
}

/** Lag-1 autocorrelation of residuals in time order. */
export function lag1Autocorrelation(residuals: number[]): number {
  const n = residuals.length;
  if (n < 3) return 0;
  const mean = residuals.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i += 1) {
    den += (residuals[i] - mean) ** 2;
    if (i > 0) num += (residuals[i] - mean) * (residuals[i - 1] - mean);
  }
  return den > 0 ? num / den : 0;
}

/**
 * Fractional savings uncertainty, G14-2014 Annex B (Reddy & Claridge 2000), for a regression baseline without
 * change-point terms:  ΔE_save = t · 1.26 · CV · E_expected · √((n/n') · (1 + 2/n') · (1/m)),  FSU = ΔE_save ÷ |E_save|,
 * with CV the baseline's CV(RMSE) as a fraction, n baseline observations, n' = n·(1 − ρ)/(1 + ρ) the effective number
 * after the residuals' lag-1 autocorrelation ρ (n' = n when ρ ≤ 0), m reporting observations, t at n − p degrees of
 * freedom.
 */
export function savingsUncertainty(
  input: { n: number; p: number; cvRmsePercent: number; rho: number; m: number; expectedKwh: number; savingsKwh: number },
  confidence: number,
): SavingsUncertainty {
  const rho = Math.max(0, input.rho);
  const nEff = (input.n * (1 - rho)) / (1 + rho);
  const t = studentT(confidence, input.n - input.p);
  const kwh = t * 1.26 * (input.cvRmsePercent / 100) * Math.abs(input.expectedKwh) * Math.sqrt((input.n / nEff) * (1 + 2 / nEff) * (1 / input.m));
  return {
    confidencePercent: Math.round(confidence * 100),
    t: round(t, 4),
    kwh: round(kwh, 3),
    fractional: input.savingsKwh === 0 ? null : round(kwh / Math.abs(input.savingsKwh), 4),
  };
}

/**
 * The length rule (issue 52): a full cycle of the calendar, i.e. each of the 12 months of the year has data on at least
 * MIN_COVERAGE of its days within the baseline (the same month of two years adds up: a 365-day span starting on the
 * 25th covers October with 7 + 24 days). A data set starting on 2 January passes; nine months do not. Counted in
 * observed days (an hourly model: its hours ÷ 24). Null when the observations carry no day.
 */
export function calendarCycle(observations: { day?: string }[], perDay: number): { covered: string[]; short: string[] } | null {
  if (!observations.length || observations.some((o) => o.day === undefined)) return null;
  const share = new Array<number>(13).fill(0);
  for (const o of observations) {
    const [y, m] = o.day!.split('-').map(Number);
    share[m] += 1 / (perDay * new Date(Date.UTC(y, m, 0)).getUTCDate());
  }
  const names = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const covered: string[] = [];
  const short: string[] = [];
  for (let m = 1; m <= 12; m += 1) {
    if (share[m] >= MIN_COVERAGE - 1e-9) covered.push(names[m - 1]);
    else short.push(`${names[m - 1]} ${round(share[m] * 100, 0)} %`);
  }
  return { covered, short };
}

const VARIABLES = {
  day: { heat: 'heating degree days', cool: 'cooling degree days', term: { heat: 'perHdd', cool: 'perCdd' } },
  hour: { heat: 'heating degree hours', cool: 'cooling degree hours', term: { heat: 'perHdh', cool: 'perCdh' } },
} as const;

/**
 * Whether a baseline may give a savings figure for a reporting period, and with what uncertainty. Withheld (not
 * defensible) when: the baseline spans less than a full cycle (12 months) or has data on less than 80 % of its span;
 * its CV(RMSE) exceeds G14's limit for the reporting length; more than 5 % of the reporting observations (or of their
 * expected energy) lie outside the baseline's range of an independent variable (widened by 10 % of its width); or a
 * term left out of the fit because it never varied in the baseline is needed in the reporting period.
 */
export function baselineGuardRails(input: GuardRailInput): GuardRails {
  const reasons: string[] = [];
  const spanDays = daysBetween(input.baselineFrom, input.baselineTo);
  const perDay = input.resolution === 'day' ? 1 : 24;
  const observedDays = input.baseline.length / perDay;
  const cycle = calendarCycle(input.baseline, perDay);
  const length = {
    pass: cycle ? cycle.covered.length === 12 : spanDays >= FULL_CYCLE_DAYS,
    spanDays,
    observedDays: round(observedDays, 2),
    requiredDays: FULL_CYCLE_DAYS,
    monthsCovered: cycle ? cycle.covered.length : null,
  };
  if (!length.pass)
    reasons.push(
      cycle
        ? `The baseline covers ${cycle.covered.length} of the 12 calendar months with data on at least ${MIN_COVERAGE * 100} % of their days` +
            (cycle.short.length ? ` (short: ${cycle.short.join(', ')})` : '') +
            ': less than the full cycle of operating conditions (12 months) IPMVP and ASHRAE Guideline 14 ask of a weather-dependent baseline.'
        : `The baseline covers ${spanDays} days: less than the full cycle of operating conditions (12 months) IPMVP and ASHRAE Guideline 14 ask of a weather-dependent baseline.`,
    );
  const share = spanDays > 0 ? Math.min(1, observedDays / spanDays) : 0;
  const coverage = { pass: share >= MIN_COVERAGE, share: round(share, 4), required: MIN_COVERAGE };
  if (!coverage.pass)
    reasons.push(
      `The baseline has data on ${round(share * 100, 1)} % of its ${spanDays} days: at least ${MIN_COVERAGE * 100} % are needed to stand for the period.`,
    );
  const limit = input.resolution === 'day' ? cvRmseLimitPercent(input.report ? input.report.days : null) : 30;
  const biasLimit = input.netBiasLimitPercent ?? NET_BIAS_LIMIT_PERCENT;
  const fit = {
    pass: input.cvRmsePercent <= limit && Math.abs(input.nmbePercent) <= biasLimit,
    cvRmsePercent: round(input.cvRmsePercent, 3),
    cvRmseLimitPercent: limit,
    netBiasPercent: round(input.nmbePercent, 6),
    netBiasLimitPercent: biasLimit,
  };
  if (input.cvRmsePercent > limit)
    reasons.push(`The baseline's CV(RMSE) is ${round(input.cvRmsePercent, 2)} %, above Guideline 14's ${limit} % for savings over this reporting period.`);
  if (Math.abs(input.nmbePercent) > biasLimit)
    reasons.push(
      biasLimit === NET_BIAS_LIMIT_PERCENT
        ? `The baseline's net bias is ${round(input.nmbePercent, 4)} %, above Guideline 14's ${NET_BIAS_LIMIT_PERCENT} %: the fit is numerically unsound.`
        : `The baseline's net bias is ${round(input.nmbePercent, 4)} %, above the ${biasLimit} % allowed for this model.`,
    );

  const report = input.report?.observations.length ? input.report.observations : null;
  const ranges = report ? rangesCheck(input, report, reasons) : null;
  const needed = report ? neededTerms(input, report, reasons) : [];
  const droppedTerms = { pass: needed.length === 0, dropped: input.dropped, neededInReport: needed };

  const defensible = length.pass && coverage.pass && fit.pass && (ranges?.pass ?? true) && droppedTerms.pass;
  const { uncertainty, significant } = report ? savingsVerdict(input, report, defensible, reasons) : { uncertainty: null, significant: null };
  return { defensible, significant, reasons, checks: { length, coverage, fit, ranges, droppedTerms }, uncertainty };
}

/** One reporting observation: its conditions, and its actual and predicted energy. */
type ReportObservation = NonNullable<GuardRailInput['report']>['observations'][number];

/**
 * Each independent variable's range in the baseline against the reporting period's: observations outside it (widened by
 * RANGE_TOLERANCE of its width) by count and by expected energy, each variable outside named in `reasons`.
 */
function rangesCheck(input: GuardRailInput, report: ReportObservation[], reasons: string[]): NonNullable<GuardRails['checks']['ranges']> {
  const names = VARIABLES[input.resolution];
  const outsideAt = new Array<boolean>(report.length).fill(false);
  const variables: VariableRange[] = (['heat', 'cool'] as const).map((key) => {
    const base = input.baseline.map((o) => o[key]);
    const min = Math.min(...base);
    const max = Math.max(...base);
    const slack = (max - min) * RANGE_TOLERANCE;
    let outside = 0;
    report.forEach((o, i) => {
      if (o[key] < min - slack - 1e-9 || o[key] > max + slack + 1e-9) {
        outside += 1;
        outsideAt[i] = true;
      }
    });
    const values = report.map((o) => o[key]);
    return {
      variable: names[key],
      baseline: { min: round(min, 3), max: round(max, 3) },
      report: { min: round(Math.min(...values), 3), max: round(Math.max(...values), 3) },
      outside,
    };
  });
  const outsideCount = outsideAt.filter(Boolean).length;
  const expectedTotal = report.reduce((sum, o) => sum + Math.abs(o.expectedKwh), 0);
  const outsideEnergy = report.reduce((sum, o, i) => sum + (outsideAt[i] ? Math.abs(o.expectedKwh) : 0), 0);
  const outsideShare = outsideCount / report.length;
  const outsideEnergyShare = expectedTotal > 0 ? outsideEnergy / expectedTotal : outsideShare;
  for (const v of variables)
    if (v.outside > 0)
      reasons.push(
        `${v.outside} of ${report.length} reporting ${input.resolution === 'day' ? 'days' : 'hours'} have ${v.variable} outside the baseline's range ` +
          `(${v.baseline.min}–${v.baseline.max}; reporting ${v.report!.min}–${v.report!.max}): the model would be extrapolated.`,
      );
  return {
    pass: outsideShare <= MAX_OUTSIDE_SHARE && outsideEnergyShare <= MAX_OUTSIDE_SHARE,
    variables,
    outsideShare: round(outsideShare, 4),
    outsideEnergyShare: round(outsideEnergyShare, 4),
    allowedShare: MAX_OUTSIDE_SHARE,
  };
}

/** The terms left out of the fit (they never varied in the baseline) that the reporting period needs, each named in `reasons`. */
function neededTerms(input: GuardRailInput, report: ReportObservation[], reasons: string[]): string[] {
  const names = VARIABLES[input.resolution];
  const needed: string[] = [];
  // A term dropped because it never varied in the baseline, whose variable does vary in the reporting period.
  for (const key of ['heat', 'cool'] as const) {
    const term = names.term[key];
    if (input.dropped.includes(term) && report.some((o) => o[key] > 0)) needed.push(term);
  }
  for (const dayType of ['weekend', 'holiday'] as const) if (input.dropped.includes(dayType) && report.some((o) => o.dayType === dayType)) needed.push(dayType);
  for (const term of needed)
    reasons.push(
      `The baseline has no ${DESCRIBE[term]}, so its "${term}" term was left out of the fit; the reporting period has them, which the model cannot predict.`,
    );
  return needed;
}

/**
 * A reporting period's savings as a report states them: the expected and actual sums, the saving and its share only
 * where the guard rails hold it defensible (else why it is withheld), its uncertainty and verdict. `nothingCounts` is
 * the reason when no reporting day or hour had energy and temperature. The daily and hourly reports both give these.
 */
export function savingsFigures(expected: number, actual: number, defensible: boolean, rails: GuardRails, nothingCounts: string) {
  return {
    expectedKwh: round(expected, 3),
    actualKwh: round(actual, 3),
    savingsKwh: defensible ? round(expected - actual, 3) : null,
    savingsPercent: defensible && expected > 0 ? round(((expected - actual) / expected) * 100, 3) : null,
    savingsWithheld: defensible ? null : rails.reasons.join(' ') || nothingCounts,
    uncertainty: rails.uncertainty,
    significant: rails.significant,
  };
}

/** The savings' uncertainty at 68 and 90 % (residuals' autocorrelation corrected) and whether a defensible figure is significant. */
function savingsVerdict(
  input: GuardRailInput,
  report: ReportObservation[],
  defensible: boolean,
  reasons: string[],
): { uncertainty: GuardRails['uncertainty']; significant: boolean | null } {
  const residuals = input.baseline.map((o) => o.actualKwh - o.expectedKwh);
  const rho = lag1Autocorrelation(residuals);
  const expectedKwh = report.reduce((sum, o) => sum + o.expectedKwh, 0);
  const actualKwh = report.reduce((sum, o) => sum + o.actualKwh, 0);
  const args = {
    n: input.baseline.length,
    p: input.p,
    cvRmsePercent: input.cvRmsePercent,
    rho,
    m: report.length,
    expectedKwh,
    savingsKwh: expectedKwh - actualKwh,
  };
  const at68 = savingsUncertainty(args, 0.68);
  const at90 = savingsUncertainty(args, 0.9);
  const positiveRho = Math.max(0, rho);
  const uncertainty = { autocorrelation: round(rho, 4), effectiveN: round((args.n * (1 - positiveRho)) / (1 + positiveRho), 1), at68, at90 };
  // A withheld figure is neither significant nor not: its band is given, its verdict is null (issue 58).
  const significant = defensible ? at68.fractional !== null && at68.fractional <= FSU_LIMIT : null;
  if (defensible && !significant)
    reasons.push(
      `The savings (${round(args.savingsKwh, 1)} kWh) are within ±${at68.kwh} kWh at 68 % confidence: Guideline 14 asks the uncertainty to be at most 50 % of the savings, ` +
        'so no saving (or over-consumption) is demonstrated.',
    );
  return { uncertainty, significant };
}

const DESCRIBE: Record<string, string> = {
  perHdd: 'heating days (HDD > 0)',
  perCdd: 'cooling days (CDD > 0)',
  perHdh: 'heating hours',
  perCdh: 'cooling hours',
  weekend: 'weekend days',
  holiday: `holidays (or fewer than ${MIN_HOLIDAY_DAYS})`,
};

/** A change-point model of daily energy on the day's mean outdoor temperature (ASHRAE RP-1050 inverse models). */
export type ChangePointModel = {
  model: '3PH' | '3PC' | '4P' | '5P';
  /** Below this the heating slope applies (3PH, 4P, 5P). */
  heatingChangePointC: number | null;
  /** Above this the cooling slope applies (3PC, 4P: the same point, 5P). */
  coolingChangePointC: number | null;
  coefficients: { intercept: number; heatingPerK: number; coolingPerK: number; weekend: number; holiday: number };
  n: number;
  /** Coefficients plus change points. */
  p: number;
  cvRmsePercent: number;
  r2: number;
};

type CpDay = { meanC: number; dayType: 'working' | 'weekend' | 'holiday'; actualKwh: number };

/** Least squares by the normal equations with partial pivoting; null when singular. */
function solve(rows: number[][], y: number[]): number[] | null {
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
    if (Math.abs(a[c][c]) < 1e-9) return null;
    for (let r = 0; r < p; r += 1) {
      if (r === c) continue;
      const f = a[r][c] / a[c][c];
      for (let j = c; j <= p; j += 1) a[r][j] -= f * a[c][j];
    }
  }
  return Array.from({ length: p }, (_, i) => a[i][p] / a[i][i]);
}

/**
 * The best change-point model (3P heating, 3P cooling, 4P, 5P) by CV(RMSE) with p = coefficients + change points, the
 * change points searched on a 0.5 K grid between the 10th and 90th percentile of the days' mean temperatures; day type
 * dummies where they vary. Slopes must have their physical sign (heating rises as it gets colder, cooling as it gets
 * warmer); a candidate that breaks it is skipped. Null with fewer than 30 days.
 */
export function bestChangePointModel(days: CpDay[]): ChangePointModel | null {
  if (days.length < 30) return null;
  const temps = days.map((d) => d.meanC).sort((a, b) => a - b);
  const lo = Math.ceil(temps[Math.floor(temps.length * 0.1)] * 2) / 2;
  const hi = Math.floor(temps[Math.floor(temps.length * 0.9)] * 2) / 2;
  const grid: number[] = [];
  for (let t = lo; t <= hi + 1e-9; t += 0.5) grid.push(round(t, 1));
  if (!grid.length) return null;
  const dummies = (['weekend', 'holiday'] as const).filter((type) => days.some((d) => d.dayType === type) && days.some((d) => d.dayType !== type));
  const y = days.map((d) => d.actualKwh);
  const mean = y.reduce((a, b) => a + b, 0) / y.length;
  const ssTot = y.reduce((a, b) => a + (b - mean) ** 2, 0);
  let best: ChangePointModel | null = null;
  const consider = (model: ChangePointModel['model'], th: number | null, tc: number | null) => {
    const rows = days.map((d) => [
      1,
      ...(th !== null ? [Math.max(0, th - d.meanC)] : []),
      ...(tc !== null ? [Math.max(0, d.meanC - tc)] : []),
      ...dummies.map((type) => (d.dayType === type ? 1 : 0)),
    ]);
    const beta = solve(rows, y);
    if (!beta) return;
    let k = 1;
    const heatingPerK = th !== null ? beta[k++] : 0;
    const coolingPerK = tc !== null ? beta[k++] : 0;
    if (heatingPerK < 0 || coolingPerK < 0) return;
    const dummy = Object.fromEntries(dummies.map((type) => [type, beta[k++]])) as Record<string, number>;
    let ssRes = 0;
    rows.forEach((x, i) => {
      const fitted = x.reduce((sum, v, j) => sum + v * beta[j], 0);
      ssRes += (y[i] - fitted) ** 2;
    });
    const points = (th !== null ? 1 : 0) + (tc !== null && tc !== th ? 1 : 0);
    const p = beta.length + points;
    if (days.length - p <= 0) return;
    const cv = (Math.sqrt(ssRes / (days.length - p)) / mean) * 100;
    if (best && cv >= best.cvRmsePercent) return;
    best = {
      model,
      heatingChangePointC: th,
      coolingChangePointC: tc,
      coefficients: { intercept: beta[0], heatingPerK, coolingPerK, weekend: dummy.weekend ?? 0, holiday: dummy.holiday ?? 0 },
      n: days.length,
      p,
      cvRmsePercent: cv,
      r2: ssTot > 0 ? 1 - ssRes / ssTot : 0,
    };
  };
  for (const t of grid) {
    consider('3PH', t, null);
    consider('3PC', null, t);
    consider('4P', t, t);
  }
  for (const th of grid) for (const tc of grid) if (tc > th) consider('5P', th, tc);
  return best;
}
