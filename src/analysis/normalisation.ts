// A weather-normalised month-on-month change (issue 41 item 7), beside the raw one: the previous period's energy
// adjusted to the current period's weather and day types by the target's degree-day model (IPMVP Core Concepts 2022,
// Option C "routine adjustments"; ASHRAE Guideline 14-2014 for the model), or no figure with the reasons when the model
// cannot stand for the two periods (the same guard rails as a savings figure: src/analysis/guardRails.ts).
//
//   model:            E_day = a + b·HDD + c·CDD + d·[weekend] + e·[holiday], least squares over the 365 days before
//                     the current period (the daily baseline's fit: fitDayModel)
//   routine adjustment: adjustedPrevious = A_prev + (Ê_cur − Ê_prev)   (Ê: Σ the model's prediction over the days)
//   change:           kWh = A_cur − adjustedPrevious;  percent = kWh ÷ adjustedPrevious × 100
//
// Synchronous, from what is stored: the daily energy and the outdoor temperatures already kept (outdoor_days, filled
// by the daily anomaly check and by baseline requests); it never asks the gateway, so the comparisons API, the overview
// and the report worker (a read-only connection without a gateway) give the same answer.
import type { EnergyFigures } from '../energy/index.ts';
import type { StoredDays } from '../metering/index.ts';
import type { Db } from '../platform/db/client.ts';
import { addDays, daysBetween } from '../platform/time/calendar.ts';
import { type BaselineDay, dayTypeOf, fitDayModel } from './baselines.ts';
/** The site (no field), an area or a meter: as the comparisons' target. */
type Target = { meterId?: number; area?: string };
import { baselineGuardRails, FULL_CYCLE_DAYS } from './guardRails.ts';
import { degreeDays, OUTDOOR_TEMPERATURE_CODE } from './weather.ts';
import { countDays } from './wholeDays.ts';
import { round } from '../platform/numbers.ts';

/** The balance points of the normalisation's degree days: the baseline routes' defaults. */
export const NORMALISATION_BASES = { heatingBaseC: 15.5, coolingBaseC: 21 };

export type NormalisedPeriod = {
  from: string;
  /** Exclusive: the whole days counted (a running period: its whole days so far). */
  to: string;
  days: number;
  actualKwh: number;
  /** Σ the model's prediction over the days at their weather and day types. */
  expectedKwh: number;
  hdd: number;
  cdd: number;
};

export type WeatherNormalisedChange = {
  method: 'IPMVP Option C routine adjustment (degree-day model)';
  /** A_cur − (A_prev + Ê_cur − Ê_prev); null when withheld. */
  kwh: number | null;
  percent: number | null;
  /** The previous period's energy at the current period's weather and day types; null when withheld. */
  adjustedPreviousKwh: number | null;
  current: NormalisedPeriod | null;
  previous: NormalisedPeriod | null;
  model: {
    from: string;
    to: string;
    n: number;
    fitted: string[];
    coefficients: Record<string, number>;
    cvRmsePercent: number;
    r2: number;
    heatingBaseC: number;
    coolingBaseC: number;
  } | null;
  /** Why there is no figure (null when there is one). */
  withheld: string | null;
};

type Observed = Omit<BaselineDay, 'expectedKwh'>;

function floats(buffer: Buffer): Float32Array {
  const copy = new Float32Array(buffer.length / 4);
  new Uint8Array(copy.buffer).set(buffer);
  return copy;
}

export class WeatherNormalisation {
  private readonly temperatures;

  constructor(
    db: Db,
    private readonly figures: EnergyFigures,
    /** Not read since whole days are counted by wholeDays.ts (issue 52): kept for the callers' signature. */
    _days: StoredDays,
  ) {
    // raw SQL: the day's 24 hourly temperatures as one blob, read on the hot path of every month comparison.
    this.temperatures = db.sqlite.prepare('SELECT day, hourly_c AS hourlyC FROM outdoor_days WHERE code = ? AND day >= ? AND day < ?');
  }

  /** Days of [from, to) with energy from every meter of the target and a kept temperature, with their regressors. */
  private observations(target: Target, whole: Set<string>, from: string, to: string): Map<string, Observed> {
    const temperatures = new Map(
      (this.temperatures.all(OUTDOOR_TEMPERATURE_CODE, from, to) as { day: string; hourlyC: Buffer }[]).map((row) => [row.day, floats(row.hourlyC)]),
    );
    const energy = this.figures.byDay(from, to, target);
    const observed = new Map<string, Observed>();
    for (const day of daysBetween(from, to)) {
      const totals = energy.get(day);
      const hourly = temperatures.get(day);
      if (!totals || !whole.has(day) || !hourly) continue;
      const { hdd, cdd, meanC } = degreeDays(hourly, NORMALISATION_BASES.heatingBaseC, NORMALISATION_BASES.coolingBaseC);
      if (!Number.isFinite(hdd)) continue;
      // The building's own holidays are not known here (the tariff's are billing days): weekday or weekend.
      observed.set(day, { day, dayType: dayTypeOf(day, new Set()), hdd, cdd, meanC, actualKwh: totals.kwh });
    }
    return observed;
  }

  /**
   * The change of [current) against [previous) normalised for weather: both are whole site days (a running period
   * passes its whole days so far, and the previous period the same number of its days).
   */
  change(target: Target, current: { from: string; to: string }, previous: { from: string; to: string }): WeatherNormalisedChange {
    const none = (withheld: string, extra: Partial<WeatherNormalisedChange> = {}): WeatherNormalisedChange => ({
      method: 'IPMVP Option C routine adjustment (degree-day model)',
      kwh: null,
      percent: null,
      adjustedPreviousKwh: null,
      current: null,
      previous: null,
      model: null,
      withheld,
      ...extra,
    });
    const ids = this.figures.ids(target);
    if (!ids.length) return none('The target has no meters.');
    if (current.to <= current.from) return none('The current period has no whole day yet: the model predicts whole days.');
    const baselineFrom = addDays(current.from, -FULL_CYCLE_DAYS);
    const baselineTo = current.from;
    // Whole days only: the one rule of wholeDays.ts (every interval of every meter of the target), read once over
    // the baseline and both periods (the previous period lies inside the baseline year or next to it).
    const first = [baselineFrom, previous.from].sort()[0];
    const last = [current.to, previous.to].sort()[1];
    const { whole } = countDays(this.figures, target, first, last);
    const base = [...this.observations(target, whole, baselineFrom, baselineTo).values()];
    const lacking = (period: { from: string; to: string }, seen: Map<string, Observed>) => daysBetween(period.from, period.to).filter((day) => !seen.has(day));
    const currentDays = this.observations(target, whole, current.from, current.to);
    const previousDays = this.observations(target, whole, previous.from, previous.to);
    const reasons: string[] = [];
    for (const [name, period, seen] of [
      ['current', current, currentDays],
      ['previous', previous, previousDays],
    ] as const) {
      const missing = lacking(period, seen);
      if (missing.length)
        reasons.push(
          `${missing.length} of ${daysBetween(period.from, period.to).length} days of the ${name} period lack energy or a kept outdoor temperature ` +
            `(${missing.slice(0, 3).join(', ')}${missing.length > 3 ? ', …' : ''}); both periods must be whole.`,
        );
    }
    const fitted = base.length >= 30 ? fitDayModel(base) : null;
    if (!fitted) {
      reasons.push(
        `The 365 days before the period (${baselineFrom} to ${addDays(baselineTo, -1)}) hold ${base.length} days with energy and a kept outdoor temperature: ` +
          'too few to fit a degree-day model.',
      );
      return none(reasons.join(' '));
    }
    const { columns, coefficients, predict, statistics } = fitted;
    const reporting = [...currentDays.values(), ...previousDays.values()];
    const rails = baselineGuardRails({
      resolution: 'day',
      baselineFrom,
      baselineTo,
      baseline: base.map((o) => ({ heat: o.hdd, cool: o.cdd, dayType: o.dayType, day: o.day, actualKwh: o.actualKwh, expectedKwh: predict(o) })),
      p: columns.length,
      // No day is a holiday here (none are known), so only the weather and weekend terms can have been left out.
      dropped: (['perHdd', 'perCdd', 'weekend'] as const).filter((term) => !columns.includes(term)),
      cvRmsePercent: statistics.cvRmsePercent,
      nmbePercent: statistics.nmbePercent,
      report: {
        days: reporting.length,
        observations: reporting.map((o) => ({ heat: o.hdd, cool: o.cdd, dayType: o.dayType, actualKwh: o.actualKwh, expectedKwh: predict(o) })),
      },
    });
    // The savings-uncertainty sentence is about savings, not a normalisation: only the checks that withhold count.
    if (!rails.defensible) reasons.push(...rails.reasons.filter((reason) => !reason.startsWith('The savings')));
    const sum = (days: Iterable<Observed>, pick: (o: Observed) => number) => [...days].reduce((total, o) => total + pick(o), 0);
    const period = (range: { from: string; to: string }, seen: Map<string, Observed>): NormalisedPeriod => ({
      from: range.from,
      to: range.to,
      days: seen.size,
      actualKwh: round(
        sum(seen.values(), (o) => o.actualKwh),
        3,
      ),
      expectedKwh: round(sum(seen.values(), predict), 3),
      hdd: round(
        sum(seen.values(), (o) => o.hdd),
        3,
      ),
      cdd: round(
        sum(seen.values(), (o) => o.cdd),
        3,
      ),
    });
    const model = {
      from: baselineFrom,
      to: baselineTo,
      n: statistics.n,
      fitted: columns,
      coefficients: Object.fromEntries(columns.map((term) => [term, round(coefficients[term], 4)])),
      cvRmsePercent: round(statistics.cvRmsePercent, 3),
      r2: round(statistics.r2, 4),
      ...NORMALISATION_BASES,
    };
    const cur = period(current, currentDays);
    const prev = period(previous, previousDays);
    if (reasons.length) return none(reasons.join(' '), { current: cur, previous: prev, model });
    const actualCurrent = sum(currentDays.values(), (o) => o.actualKwh);
    const actualPrevious = sum(previousDays.values(), (o) => o.actualKwh);
    const adjusted = actualPrevious + sum(currentDays.values(), predict) - sum(previousDays.values(), predict);
    if (adjusted <= 0)
      return none('The previous period adjusted to the current weather is not positive: no change can be given.', { current: cur, previous: prev, model });
    const kwh = actualCurrent - adjusted;
    return {
      method: 'IPMVP Option C routine adjustment (degree-day model)',
      kwh: round(kwh, 3),
      percent: round((kwh / adjusted) * 100, 2),
      adjustedPreviousKwh: round(adjusted, 3),
      current: cur,
      previous: prev,
      model,
      withheld: null,
    };
  }
}
