// Hourly baselines: a meter's or an area's energy per hour regressed, per hour of the day (24 models) or per hour of
// the week (168 models), on that hour's heating and cooling degree-hours and the day type:
//   kWh_h = a_s + b_s·HDH_h + c_s·CDH_h + d_s·[weekend] + e_s·[holiday]   (s = the hour's slot; no weekend term by week)
// judged as a whole by the ASHRAE Guideline 14 statistics at the hourly limits (CV(RMSE) ≤ 30 %, |NMBE| ≤ 10 %), then
// expected vs actual with CUSUM, per hour, for a later period.
import { type StoredDays, yieldToLoop } from '../metering/index.ts';
import type { EnergyFigures } from '../energy/index.ts';
import type { Tariffs } from '../pricing/index.ts';
import { addDays, dayIntervals, daySlices, daysBetween, localClock } from '../platform/time/calendar.ts';
import { BadRequest } from '../platform/errors.ts';
import { dayTypeOf, g14Statistics, leastSquares, MIN_HOLIDAY_DAYS, regressorValue, weekdayType, type BaselineQuery, type DayType } from './baselines.ts';
import type { OutdoorTemperatures } from './weather.ts';
import { baselineGuardRails, type GuardRails, savingsFigures } from './guardRails.ts';
import { wholeHourKwh } from './wholeDays.ts';
import { round } from '../platform/numbers.ts';

export const HOURLY_SLOTS = ['hour-of-day', 'hour-of-week'] as const;
export type HourlySlots = (typeof HOURLY_SLOTS)[number];
export type HourlyBaselineQuery = BaselineQuery & { by: HourlySlots };

/** ASHRAE Guideline 14 limits for an hourly model: CV(RMSE) ≤ 30 %, |NMBE| ≤ 10 %; R² held to the daily 0.75. */
export const G14_HOURLY_LIMITS = { cvRmsePercent: 30, nmbePercent: 10, r2: 0.75 };
/** Periods of at most this many days list their hours; longer ones list days (a year of hours is 8,760 rows). */
export const HOURS_LISTED_UP_TO_DAYS = 31;
const MAX_BASELINE_DAYS = 731;
const MIN_BASELINE_DAYS = 14;
const TERMS = ['intercept', 'perHdh', 'perCdh', 'weekend', 'holiday'] as const;
type Term = (typeof TERMS)[number];
const HOUR_MS = 3_600_000;
/** Days of intervals read between two turns of the event loop. */
const SLICE_DAYS = 2;

type Hour = { start: number; day: string; slot: number; dayType: DayType; temperatureC: number; hdh: number; cdh: number; actualKwh: number };
type SlotModel = { slot: number; n: number; coefficients: Record<Term, number>; fitted: Term[] };

const regressor = (term: Term, hour: Hour) => regressorValue(term, { heat: hour.hdh, cool: hour.cdh, dayType: hour.dayType });

// Without a holiday term a holiday hour is predicted as the working or weekend hour of its date (as the daily model does).
const predict = (model: SlotModel, hour: Hour) => {
  const x = model.fitted.includes('holiday') || hour.dayType !== 'holiday' ? hour : { ...hour, dayType: weekdayType(hour.day) };
  return TERMS.reduce((sum, term) => sum + model.coefficients[term] * regressor(term, x), 0);
};

export class HourlyBaselines {
  constructor(
    private readonly figures: EnergyFigures,
    /** Not read since the tariff's holidays stopped being the building's (issue 41): kept for the callers' signature. */
    _tariffs: Tariffs,
    private readonly outdoor: OutdoorTemperatures,
    /** The target's unconfirmed suspect runs (metering's StoredDays): an hour touching one is left out (issue 52). */
    private readonly days?: Pick<StoredDays, 'suspectSpans'>,
  ) {}

  /**
   * The hours of [from, to) (before today) with all four 15-minute intervals from every meter of the target and an
   * outdoor temperature mean, each with its slot and regressors; and how many hours lacked either. `now` (a reporting
   * period reaching into today): today's hours that have ended by then count too, with the outdoor temperature read
   * from the gateway's history so far (a day is kept once it is over; today's hours are read, not kept).
   */
  private async hours(query: HourlyBaselineQuery, from: string, to: string, today: string, now?: number): Promise<{ hours: Hour[]; missing: number }> {
    const end = to < today ? to : today;
    const hours: Hour[] = [];
    let missing = 0;
    if (end > from) {
      const { days: temperatures } = await this.outdoor.days(query.temperatureCode, from, end, today, { anyCode: query.anyTemperatureCode });
      // Read SLICE_DAYS at a time with the event loop free between (issue 29: an area of 200 meters reads ~6 ms a day;
      // the daily anomaly check fits this model for the site and every area).
      for (const [sliceFrom, sliceTo] of daySlices(from, end, SLICE_DAYS)) {
        const read = this.readKwh(query, sliceFrom, sliceTo);
        for (const day of daysBetween(sliceFrom, sliceTo)) missing += this.dayHours(query, day, temperatures.get(day), read, hours);
        await yieldToLoop();
      }
    }
    if (now !== undefined && from <= today && to > today) {
      const temperatures = await this.outdoor.today(query.temperatureCode, today, now, { anyCode: query.anyTemperatureCode });
      missing += this.dayHours(query, today, temperatures ?? undefined, this.readKwh(query, today, addDays(today, 1)), hours, now);
    }
    return { hours, missing };
  }

  /** The target's intervals of [from, to), suspect runs blanked. */
  private readKwh(query: HourlyBaselineQuery, from: string, to: string): { start: number; kwh: Float64Array } {
    const read = this.figures.intervals(from, to, query.target);
    withoutSuspect(
      read.kwh,
      read.start,
      this.days?.suspectSpans(JSON.stringify(this.figures.ids(query.target)), read.start, read.start + read.kwh.length * 900_000) ?? [],
    );
    return read;
  }

  /** One day's hours with energy and temperature pushed onto `hours` (hours ending after `until` are not asked); the count lacking either. */
  private dayHours(
    query: HourlyBaselineQuery,
    day: string,
    hourly: Float32Array | undefined,
    read: { start: number; kwh: ArrayLike<number> },
    hours: Hour[],
    until = Number.POSITIVE_INFINITY,
  ): number {
    const { timezone } = this.figures.settings();
    const { start, count } = dayIntervals(timezone, day);
    const offset = Math.round((start - read.start) / 900_000);
    const dayType = dayTypeOf(day, new Set(query.holidays));
    let missing = 0;
    // Hours from the day's start: a day with a clock change has 23 or 25, each placed by its local clock.
    for (let k = 0; k < count / 4 && start + (k + 1) * HOUR_MS <= until; k += 1) {
      const actualKwh = wholeHourKwh(read.kwh, offset + 4 * k);
      const temperatureC = hourly?.[k] ?? NaN;
      if (Number.isNaN(actualKwh) || Number.isNaN(temperatureC)) {
        missing += 1;
        continue;
      }
      const at = start + k * HOUR_MS;
      const { weekday, minute } = localClock(timezone, at);
      const hourOfDay = Math.floor(minute / 60);
      hours.push({
        start: at,
        day,
        slot: query.by === 'hour-of-day' ? hourOfDay : weekday * 24 + hourOfDay,
        dayType,
        temperatureC,
        hdh: Math.max(0, query.heatingBaseC - temperatureC),
        cdh: Math.max(0, temperatureC - query.coolingBaseC),
        actualKwh,
      });
    }
    return missing;
  }

  async fit(query: HourlyBaselineQuery, now: number = Date.now()) {
    const today = this.figures.today(new Date(now));
    const reportTo = checkedReportTo(query, today);
    const slotCount = query.by === 'hour-of-day' ? 24 : 168;
    const base = await this.hours(query, query.baselineFrom, query.baselineTo, today);
    if (base.hours.length < MIN_BASELINE_DAYS * 24) {
      throw new BadRequest('Invalid query', [
        {
          path: 'query.baselineFrom',
          message: `the baseline period has ${base.hours.length} hours with energy and temperature; at least ${MIN_BASELINE_DAYS * 24} are needed`,
        },
      ]);
    }
    // The daily model's rule (issue 41 item 10): fewer than MIN_HOLIDAY_DAYS holidays in the baseline are too few for a
    // holiday term (a dummy fitted on one day takes that day's residual exactly), so their hours are left out of the fit
    // and its statistics, and listed; a holiday in the reporting period is then the guard rails' "dropped term" case.
    const holidayDays = [...new Set(base.hours.filter((h) => h.dayType === 'holiday').map((h) => h.day))];
    const holidaysLeftOut = holidayDays.length < MIN_HOLIDAY_DAYS ? holidayDays : [];
    if (holidaysLeftOut.length) base.hours = base.hours.filter((h) => h.dayType !== 'holiday');
    const models = fitSlots(query, base.hours, slotCount);
    const expected = base.hours.map((h) => predict(models.get(h.slot)!, h));
    const p = [...models.values()].reduce((sum, model) => sum + model.fitted.length, 0);
    const statistics = g14Statistics(
      base.hours.map((h) => h.actualKwh),
      expected,
      p,
    );
    const pass = {
      cvRmse: statistics.cvRmsePercent <= G14_HOURLY_LIMITS.cvRmsePercent,
      nmbe: Math.abs(statistics.nmbePercent) <= G14_HOURLY_LIMITS.nmbePercent,
      r2: statistics.r2 >= G14_HOURLY_LIMITS.r2,
    };
    const later = query.reportFrom !== undefined ? await this.hours(query, query.reportFrom, reportTo!, today, now) : null;
    // The daily baseline's guard rails, at the hour (issue 41): a year's span with 80 % of it, G14's hourly CV(RMSE)
    // limit (30 %), every reporting hour's degree-hours inside the baseline's range, no dropped term needed; the
    // fractional savings uncertainty over the hours (lag-1 autocorrelation corrected: hourly residuals are strongly
    // correlated, so n' is far below n). A term is dropped when no slot fitted it (by week the weekend is the slot).
    const candidates = TERMS.filter((term) => !(term === 'weekend' && query.by === 'hour-of-week'));
    const fittedAnywhere = new Set([...models.values()].flatMap((model) => model.fitted));
    const conditions = (h: Hour) => ({ heat: h.hdh, cool: h.cdh, dayType: h.dayType });
    const guardRails = baselineGuardRails({
      resolution: 'hour',
      baselineFrom: query.baselineFrom,
      baselineTo: query.baselineTo,
      baseline: base.hours.map((h, i) => ({ ...conditions(h), day: h.day, actualKwh: h.actualKwh, expectedKwh: expected[i] })),
      p,
      dropped: candidates.filter((term) => !fittedAnywhere.has(term)),
      cvRmsePercent: statistics.cvRmsePercent,
      nmbePercent: statistics.nmbePercent,
      report: later
        ? {
            days: daysBetween(query.reportFrom!, reportTo!).length,
            observations: later.hours.map((h) => ({ ...conditions(h), actualKwh: h.actualKwh, expectedKwh: predict(models.get(h.slot)!, h) })),
          }
        : undefined,
    });
    const report = later && query.reportFrom !== undefined ? reportOf(query.reportFrom, reportTo!, later, models, guardRails) : null;
    return {
      target: { kind: query.target.meterId !== undefined ? 'meter' : query.target.area !== undefined ? 'area' : 'site', ...query.target },
      by: query.by,
      temperatureCode: query.temperatureCode,
      heatingBaseC: query.heatingBaseC,
      coolingBaseC: query.coolingBaseC,
      model: {
        from: query.baselineFrom,
        to: query.baselineTo,
        slots: [...models.values()].map((model) => ({
          slot: model.slot,
          n: model.n,
          coefficients: Object.fromEntries(TERMS.map((term) => [term, round(model.coefficients[term], 5)])) as Record<Term, number>,
          fitted: model.fitted,
        })),
        holidaysLeftOut,
      },
      statistics: {
        n: statistics.n,
        p: statistics.p,
        cvRmsePercent: round(statistics.cvRmsePercent, 3),
        nmbePercent: round(statistics.nmbePercent, 4),
        r2: round(statistics.r2, 4),
        limits: G14_HOURLY_LIMITS,
        pass: { ...pass, all: pass.cvRmse && pass.nmbe && pass.r2 },
      },
      baselineHoursListed: listHours(query.baselineFrom, query.baselineTo),
      baselineHours: listHours(query.baselineFrom, query.baselineTo) ? base.hours.map((h, i) => shape(h, expected[i])) : [],
      missingBaselineHours: base.missing,
      guardRails,
      report,
    };
  }
}

/** An hour as listed: its start, slot, day type, weather and energy, actual and expected. */
const shape = (h: Hour, expectedKwh: number) => ({
  start: new Date(h.start).toISOString(),
  slot: h.slot,
  dayType: h.dayType,
  temperatureC: round(h.temperatureC, 3),
  hdh: round(h.hdh, 4),
  cdh: round(h.cdh, 4),
  actualKwh: round(h.actualKwh, 4),
  expectedKwh: round(expectedKwh, 4),
});

/** Whether a period lists its hours (at most HOURS_LISTED_UP_TO_DAYS days) or its days only. */
const listHours = (from: string, to: string) => daysBetween(from, to).length <= HOURS_LISTED_UP_TO_DAYS;

/** The query's periods checked (a 400 naming the field); the reporting period's end (tomorrow, when it names none). */
function checkedReportTo(query: HourlyBaselineQuery, today: string): string | undefined {
  if (query.baselineTo <= query.baselineFrom) throw new BadRequest('Invalid query', [{ path: 'query.baselineTo', message: 'must be after baselineFrom' }]);
  if (query.baselineTo > addDays(query.baselineFrom, MAX_BASELINE_DAYS))
    throw new BadRequest('Invalid query', [{ path: 'query.baselineTo', message: 'at most 2 years for an hourly baseline' }]);
  if (query.reportFrom !== undefined && query.reportFrom < query.baselineTo)
    throw new BadRequest('Invalid query', [
      { path: 'query.reportFrom', message: 'must not be before baselineTo: a baseline is compared with what came after it' },
    ]);
  const reportTo = query.reportFrom === undefined ? undefined : (query.reportTo ?? addDays(today, 1));
  if (query.reportFrom !== undefined && reportTo! <= query.reportFrom)
    throw new BadRequest('Invalid query', [{ path: 'query.reportTo', message: 'must be after reportFrom' }]);
  if (query.reportFrom !== undefined && reportTo! > addDays(query.reportFrom, 366))
    throw new BadRequest('Invalid query', [{ path: 'query.reportTo', message: 'at most a year after reportFrom' }]);
  return reportTo;
}

/** One least-squares model per slot over the baseline's hours, each with the terms its hours vary in (a 400 naming a slot too thin to fit). */
function fitSlots(query: HourlyBaselineQuery, baseHours: Hour[], slotCount: number): Map<number, SlotModel> {
  const bySlot = new Map<number, Hour[]>();
  for (const hour of baseHours) {
    let list = bySlot.get(hour.slot);
    if (!list) bySlot.set(hour.slot, (list = []));
    list.push(hour);
  }
  const models = new Map<number, SlotModel>();
  for (let slot = 0; slot < slotCount; slot += 1) {
    const hours = bySlot.get(slot) ?? [];
    // By week the slot is the weekday: a weekend term would repeat the intercept.
    const candidates = TERMS.filter((term) => !(term === 'weekend' && query.by === 'hour-of-week'));
    const columns = candidates.filter((term) => term === 'intercept' || hours.some((h) => regressor(term, h) !== regressor(term, hours[0])));
    if (hours.length < columns.length + 3) {
      throw new BadRequest('Invalid query', [
        {
          path: 'query.baselineFrom',
          message: `slot ${slot} of ${query.by} has ${hours.length} hours with data; at least ${columns.length + 3} are needed (a longer baseline period)`,
        },
      ]);
    }
    let solved: number[];
    try {
      solved = leastSquares(
        hours.map((h) => columns.map((term) => regressor(term, h))),
        hours.map((h) => h.actualKwh),
      );
    } catch {
      throw new BadRequest('Invalid query', [
        { path: 'query.baselineFrom', message: `slot ${slot} of ${query.by}: the baseline period does not separate the regressors` },
      ]);
    }
    const coefficients: Record<Term, number> = { intercept: 0, perHdh: 0, perCdh: 0, weekend: 0, holiday: 0 };
    columns.forEach((term, i) => {
      coefficients[term] = solved[i];
    });
    models.set(slot, { slot, n: hours.length, coefficients, fitted: columns });
  }
  return models;
}

/**
 * The reporting period against the models: each hour's expected kWh and the running CUSUM, by hour (short periods) and
 * by day, and the savings where the guard rails hold (else withheld, with their reasons).
 */
function reportOf(from: string, to: string, later: { hours: Hour[]; missing: number }, models: Map<number, SlotModel>, guardRails: GuardRails) {
  let cusum = 0;
  let expectedSum = 0;
  let actualSum = 0;
  const hours: (ReturnType<typeof shape> & { cusumKwh: number })[] = [];
  const days = new Map<string, { day: string; actualKwh: number; expectedKwh: number; hours: number; cusumKwh: number }>();
  for (const h of later.hours) {
    const e = predict(models.get(h.slot)!, h);
    cusum += h.actualKwh - e;
    expectedSum += e;
    actualSum += h.actualKwh;
    hours.push({ ...shape(h, e), cusumKwh: round(cusum, 4) });
    let day = days.get(h.day);
    if (!day) days.set(h.day, (day = { day: h.day, actualKwh: 0, expectedKwh: 0, hours: 0, cusumKwh: 0 }));
    day.actualKwh += h.actualKwh;
    day.expectedKwh += e;
    day.hours += 1;
    day.cusumKwh = cusum;
  }
  const defensible = guardRails.defensible && later.hours.length > 0;
  return {
    from,
    to,
    ...savingsFigures(expectedSum, actualSum, defensible, guardRails, 'No reporting hour has energy and temperature.'),
    hoursListed: listHours(from, to),
    hours: listHours(from, to) ? hours : [],
    days: [...days.values()].map((d) => ({
      day: d.day,
      hours: d.hours,
      actualKwh: round(d.actualKwh, 3),
      expectedKwh: round(d.expectedKwh, 3),
      cusumKwh: round(d.cusumKwh, 3),
    })),
    missingHours: later.missing,
  };
}

/** The intervals (from `first`, 15 minutes each) inside a suspect span set to NaN: an hour holding one is not a whole hour. */
function withoutSuspect(kwh: Float64Array, first: number, spans: Array<{ start: number; end: number }>): void {
  for (const span of spans) {
    const from = Math.max(0, Math.ceil((span.start - first) / 900_000));
    const to = Math.min(kwh.length, Math.ceil((span.end - first) / 900_000));
    if (to > from) kwh.fill(NaN, from, to);
  }
}
