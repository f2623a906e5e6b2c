// Shapes of the energy-management answers: comparisons, demand charges, baselines, EnPIs.
import { SitePeakSchema } from '../energy/index.ts';
import { Type } from '@sinclair/typebox';
import { stringEnum } from '../platform/http/schemas.ts';
import { PERIODS } from './comparisons.ts';
import { METHODS } from './caltrack.ts';

const Day = (description: string) => Type.String({ format: 'date', description });
const AreaName = Type.String({ minLength: 1, maxLength: 64, pattern: '^\\S(.*\\S)?$' });

/** A meter (meterId), an area (area) or the site (neither). */
export const TargetQuery = {
  meterId: Type.Optional(Type.Integer({ minimum: 1, description: 'one meter' })),
  area: Type.Optional(AreaName),
};

export const CompareQuery = Type.Object(
  {
    period: stringEnum(PERIODS, { description: 'day, week (Monday first), month, year, or custom [from, to)' }),
    at: Type.Optional(Day('a day inside the period (default today); not for custom')),
    from: Type.Optional(Day('custom: first day')),
    to: Type.Optional(Day('custom: the day after the last (exclusive)')),
    ...TargetQuery,
  },
  { additionalProperties: false },
);

const PeriodFigure = Type.Object({
  from: Type.String({ format: 'date' }),
  to: Type.String({ format: 'date', description: 'exclusive' }),
  through: Type.String({ format: 'date-time', description: 'the instant the figures run to' }),
  kwh: Type.Number({
    description:
      "the site: grid import: electricity drawn from the grid by the site meters (not consumption: PV self-consumption, gas and heat are left out); an area or meter: its meters' electricity",
  }),
  cost: Type.Number({ description: 'electricity at the tariff of each interval; the site adds its standing charge per whole day' }),
  carbonKg: Type.Number({ description: 'electricity kWh × the tariff carbon factor (scope 2, location-based); gas is in GET /api/energy/commodities' }),
  partial: Type.Boolean({ description: 'the figures stop before the period ends: a running period, and its references cut like for like' }),
  complete: Type.Boolean({ description: 'every meter of the target has a stored day for every day counted' }),
  coverage: Type.Number({ description: 'stored meter-days ÷ expected meter-days over the days counted' }),
  missingDays: Type.Array(Type.String({ format: 'date' }), { description: 'days a meter of the target has nothing for (at most 31)' }),
});
const Change = Type.Object({
  kwh: Type.Union([Type.Number(), Type.Null()], { description: 'current − reference; null when the reference has no data (coverage 0)' }),
  percent: Type.Union([Type.Number(), Type.Null()], { description: '(current − reference) ÷ reference × 100; null when the reference is 0 or has no data' }),
  cost: Type.Union([Type.Number(), Type.Null()], { description: 'null when the reference has no data' }),
});

const NormalisedPeriod = Type.Object({
  from: Type.String({ format: 'date' }),
  to: Type.String({ format: 'date', description: 'exclusive: the whole days counted' }),
  days: Type.Integer(),
  actualKwh: Type.Number(),
  expectedKwh: Type.Number({ description: "Σ the model's prediction over the days at their weather and day types" }),
  hdd: Type.Number(),
  cdd: Type.Number(),
});

const WeatherNormalisedBody = Type.Object({
  method: Type.String(),
  kwh: Type.Union([Type.Number(), Type.Null()]),
  percent: Type.Union([Type.Number(), Type.Null()]),
  adjustedPreviousKwh: Type.Union([Type.Number(), Type.Null()]),
  current: Type.Union([NormalisedPeriod, Type.Null()]),
  previous: Type.Union([NormalisedPeriod, Type.Null()]),
  model: Type.Union([
    Type.Object({
      from: Type.String({ format: 'date' }),
      to: Type.String({ format: 'date' }),
      n: Type.Integer(),
      fitted: Type.Array(Type.String()),
      coefficients: Type.Record(Type.String(), Type.Number()),
      cvRmsePercent: Type.Number(),
      r2: Type.Number(),
      heatingBaseC: Type.Number(),
      coolingBaseC: Type.Number(),
    }),
    Type.Null(),
  ]),
  withheld: Type.Union([Type.String(), Type.Null()]),
});

export const ComparisonBody = Type.Object({
  period: Type.String(),
  target: Type.Object({
    kind: stringEnum(['site', 'area', 'meter'] as const),
    meterId: Type.Optional(Type.Integer()),
    area: Type.Optional(Type.String()),
    meters: Type.Integer(),
  }),
  timezone: Type.String(),
  currency: Type.String(),
  current: PeriodFigure,
  previous: PeriodFigure,
  lastYear: PeriodFigure,
  change: Type.Object({ previous: Change, lastYear: Change }),
  weatherNormalised: Type.Union([WeatherNormalisedBody, Type.Null()], {
    description:
      'period=month only (else null): the change against the previous month normalised for weather and day type, beside the raw change.previous. ' +
      "IPMVP Option C routine adjustment with the target's degree-day model fitted on the 365 days before the month: adjustedPreviousKwh = previous actual + " +
      '(Σ expected of the current days − Σ expected of the previous days); kwh = current actual − adjustedPreviousKwh; percent = kwh ÷ adjustedPreviousKwh × 100. ' +
      'Whole days only (a running month: its whole days so far against as many days of the previous month); outdoor temperatures as kept (never read from the gateway here). ' +
      'kwh and percent are null with withheld giving the reasons when the model fails the baseline guard rails (12 months, 80 % coverage, CV(RMSE), ranges) or a day lacks data.',
  }),
});

export const MonthQuery = Type.Object(
  { month: Type.Optional(Type.String({ pattern: '^\\d{4}-(0[1-9]|1[0-2])$', description: 'YYYY-MM (default: this month)' })) },
  { additionalProperties: false },
);

export const DemandChargeBody = Type.Object({
  month: Type.String(),
  currency: Type.String(),
  running: Type.Boolean({ description: 'the month is not over: month-to-date, and its peak may still grow' }),
  version: Type.Object(
    {
      id: Type.Integer(),
      validFrom: Type.String({ format: 'date' }),
      demandChargePerKw: Type.Number(),
      basis: Type.String(),
      minimumKw: Type.Number(),
    },
    { description: 'the tariff version in effect on the first day of the month' },
  ),
  peak: Type.Union([SitePeakSchema, Type.Null()], {
    description: "the month's highest site 15-minute mean",
  }),
  monthlyPeaks: Type.Array(
    Type.Object({
      month: Type.String(),
      kw: Type.Union([Type.Number(), Type.Null()]),
      complete: Type.Union([Type.Boolean(), Type.Null()], { description: 'false: some interval lacks a site meter, the peak is a floor' }),
    }),
    { description: 'the 12 months ending with this one' },
  ),
  complete: Type.Boolean({ description: 'every peak the charge rests on had every site meter in every interval' }),
  dataNote: Type.Union([Type.String(), Type.Null()], { description: 'what incomplete data the charge rests on, in words' }),
  rollingAverageKw: Type.Union([Type.Number(), Type.Null()], { description: 'mean of the monthly peaks of the months with data among those 12' }),
  billedKw: Type.Number({ description: 'max(minimumKw, peak or rolling average, by basis)' }),
  demandCharge: Type.Number({ description: 'demandChargePerKw × billedKw' }),
  energyCost: Type.Number({ description: 'energy at the tariff of each interval plus the standing charge of each day' }),
  totalCost: Type.Number({ description: 'energyCost + demandCharge' }),
});

export const PeakWarningList = Type.Object({
  items: Type.Array(
    Type.Object({
      windowStart: Type.String({ format: 'date-time' }),
      warnedAt: Type.String({ format: 'date-time' }),
      projectedKw: Type.Number({ description: '(energy so far + demand now × time left) ÷ 15 min, when it warned' }),
      limitKw: Type.Number({ description: 'the contracted peak then' }),
      crossedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: "when the window's energy passed limit × 15 min" }),
      leadSec: Type.Union([Type.Integer(), Type.Null()], { description: 'crossedAt − warnedAt: how early it warned' }),
      finalKw: Type.Union([Type.Number(), Type.Null()], { description: "the window's mean once over" }),
      outcome: stringEnum(['running', 'crossed', 'stayed below'] as const),
    }),
    { description: 'newest first, at most 100' },
  ),
});

export const BaselineQuery = Type.Object(
  {
    ...TargetQuery,
    baselineFrom: Day('first day of the baseline period'),
    baselineTo: Day('the day after its last (exclusive); at least 30 days with data'),
    reportFrom: Type.Optional(Day('first day to compare with the baseline (not before baselineTo)')),
    reportTo: Type.Optional(Day('exclusive; default tomorrow')),
    temperatureCode: Type.String({ minLength: 1, maxLength: 200, default: 'temp.outdoor', description: 'the gateway point of the outdoor temperature' }),
    heatingBaseC: Type.Number({ minimum: -30, maximum: 40, default: 15.5, description: 'HDD base temperature' }),
    coolingBaseC: Type.Number({ minimum: -30, maximum: 40, default: 21, description: 'CDD base temperature' }),
    holidays: Type.Array(Day('a holiday'), {
      maxItems: 400,
      default: [],
      description: "the building's holidays (the tariff versions' billing holidays are not used); repeat the parameter",
    }),
    method: Type.Optional(
      stringEnum(METHODS, {
        description:
          "the model: 'ems' (default: degree days at heatingBaseC/coolingBaseC + day type), 'caltrack-daily' (CalTRACK 2.0 daily: balance-point search, model selection by adjusted R²), " +
          "'caltrack-hourly' (CalTRACK 2.0 hourly: time-of-week-and-temperature, monthly segments); each held to the same guard rails (docs/energy-management.md)",
      }),
    ),
  },
  { additionalProperties: false },
);

const BaselineDay = Type.Object({
  day: Type.String({ format: 'date' }),
  dayType: stringEnum(['working', 'weekend', 'holiday'] as const),
  hdd: Type.Number(),
  cdd: Type.Number(),
  meanC: Type.Number(),
  actualKwh: Type.Number(),
  expectedKwh: Type.Number(),
});
const Nullable = <T extends ReturnType<typeof Type.Number>>(schema: T) => Type.Union([schema, Type.Null()]);

/** ASHRAE Guideline 14 fit statistics of a baseline, daily or hourly (over every baseline hour of all slots). */
const FitStatistics = Type.Object({
  n: Type.Integer({ description: 'baseline observations: days, or hours over all slots' }),
  p: Type.Integer({ description: 'coefficients fitted (hourly: over all slots)' }),
  cvRmsePercent: Type.Number({ description: '√(Σ(y−ŷ)²/(n−p)) ÷ ȳ × 100' }),
  nmbePercent: Type.Number({ description: 'Σ(y−ŷ) ÷ ((n−p)·ȳ) × 100' }),
  r2: Type.Number({ description: '1 − Σ(y−ŷ)² ÷ Σ(y−ȳ)²' }),
  limits: Type.Object({ cvRmsePercent: Type.Number(), nmbePercent: Type.Number(), r2: Type.Number() }),
  pass: Type.Object({ cvRmse: Type.Boolean(), nmbe: Type.Boolean(), r2: Type.Boolean(), all: Type.Boolean() }),
});

const Uncertainty = Type.Object({
  confidencePercent: Type.Number(),
  t: Type.Number({ description: "Student's t at n − p degrees of freedom" }),
  kwh: Type.Number({ description: '± kWh on the savings' }),
  fractional: Nullable(Type.Number({ description: 'kWh ÷ |savings|' })),
});
const SavingsUncertaintyBlock = Type.Object(
  { autocorrelation: Type.Number(), effectiveN: Type.Number(), at68: Uncertainty, at90: Uncertainty },
  { description: "G14 Annex B: ΔE = t·1.26·CV·E_expected·√((n/n')(1 + 2/n')/m), n' = n(1 − ρ)/(1 + ρ)" },
);
const Range = Type.Object({ min: Type.Number(), max: Type.Number() });
/** The guard rails of baselineGuardRails (src/analysis/guardRails.ts). */
export const GuardRailsBlock = Type.Object(
  {
    defensible: Type.Boolean({ description: 'every check that decides whether a savings figure may be given passed' }),
    significant: Type.Union([Type.Boolean(), Type.Null()]),
    reasons: Type.Array(Type.String()),
    checks: Type.Object({
      length: Type.Object({
        pass: Type.Boolean(),
        spanDays: Type.Integer(),
        observedDays: Type.Number(),
        requiredDays: Type.Integer(),
        monthsCovered: Type.Union([Type.Integer(), Type.Null()], {
          description: 'calendar months (of 12) with data on at least 80 % of their days: the length rule asks all 12',
        }),
      }),
      coverage: Type.Object({ pass: Type.Boolean(), share: Type.Number(), required: Type.Number() }),
      fit: Type.Object({
        pass: Type.Boolean(),
        cvRmsePercent: Type.Number(),
        cvRmseLimitPercent: Type.Number(),
        netBiasPercent: Type.Number(),
        netBiasLimitPercent: Type.Number(),
      }),
      ranges: Type.Union([
        Type.Object({
          pass: Type.Boolean(),
          variables: Type.Array(Type.Object({ variable: Type.String(), baseline: Range, report: Type.Union([Range, Type.Null()]), outside: Type.Integer() })),
          outsideShare: Type.Number(),
          outsideEnergyShare: Type.Number(),
          allowedShare: Type.Number(),
        }),
        Type.Null(),
      ]),
      droppedTerms: Type.Object({ pass: Type.Boolean(), dropped: Type.Array(Type.String()), neededInReport: Type.Array(Type.String()) }),
    }),
    uncertainty: Type.Union([SavingsUncertaintyBlock, Type.Null()]),
  },
  { description: 'ASHRAE Guideline 14-2014 / IPMVP checks before a savings figure is given' },
);

export const BaselineBody = Type.Object({
  target: Type.Object({ kind: Type.String(), meterId: Type.Optional(Type.Integer()), area: Type.Optional(Type.String()) }),
  method: stringEnum(METHODS, { description: 'the model fitted' }),
  reference: Type.Union(
    [
      Type.Object({
        model: Type.String({ description: 'CalTRACK daily: intercept-only, hdd-only, cdd-only or hdd-cdd; hourly: time-of-week-and-temperature' }),
        heatingBalanceC: Type.Union([Type.Number(), Type.Null()]),
        coolingBalanceC: Type.Union([Type.Number(), Type.Null()]),
        coefficients: Type.Record(Type.String(), Type.Number()),
        adjustedR2: Type.Union([Type.Number(), Type.Null()]),
        qualifiedCandidates: Type.Union([Type.Integer(), Type.Null()]),
        note: Type.String(),
      }),
      Type.Null(),
    ],
    { description: "a reference method's choice (model.coefficients are then 0: the method's own are here); null for 'ems'" },
  ),
  temperatureCode: Type.String(),
  heatingBaseC: Type.Number(),
  coolingBaseC: Type.Number(),
  model: Type.Object({
    from: Type.String({ format: 'date' }),
    to: Type.String({ format: 'date' }),
    coefficients: Type.Object(
      { intercept: Type.Number(), perHdd: Type.Number(), perCdd: Type.Number(), weekend: Type.Number(), holiday: Type.Number() },
      { description: 'expected kWh/day = intercept + perHdd·HDD + perCdd·CDD + weekend·[weekend] + holiday·[holiday]' },
    ),
    fitted: Type.Array(Type.String(), { description: 'the terms fitted; a term that never varies in the baseline period is left at 0' }),
    holidaysLeftOut: Type.Array(Type.String({ format: 'date' }), {
      description:
        'holidays left out of the fit and its statistics: fewer than 5 in the baseline are too few for a holiday term (a term fitted on one day only takes its residual)',
    }),
  }),
  statistics: FitStatistics,
  guardRails: GuardRailsBlock,
  changePoint: Type.Union(
    [
      Type.Object({
        model: stringEnum(['3PH', '3PC', '4P', '5P'] as const),
        heatingChangePointC: Type.Union([Type.Number(), Type.Null()]),
        coolingChangePointC: Type.Union([Type.Number(), Type.Null()]),
        coefficients: Type.Object({
          intercept: Type.Number(),
          heatingPerK: Type.Number({ description: 'kWh/day per K below the heating change point' }),
          coolingPerK: Type.Number({ description: 'kWh/day per K above the cooling change point' }),
          weekend: Type.Number(),
          holiday: Type.Number(),
        }),
        n: Type.Integer(),
        p: Type.Integer({ description: 'coefficients plus change points' }),
        cvRmsePercent: Type.Number(),
        r2: Type.Number(),
        fitsBetter: Type.Boolean({ description: 'CV(RMSE) at least 10 % lower than the degree-day model' }),
      }),
      Type.Null(),
    ],
    { description: 'the best change-point model (ASHRAE RP-1050) on the daily mean temperature, beside the degree-day model' },
  ),
  baselineDays: Type.Array(BaselineDay),
  missingBaselineDays: Type.Array(Type.String({ format: 'date' }), { description: 'days without energy from every meter or without temperature' }),
  partialBaselineDays: Type.Array(Type.String({ format: 'date' }), {
    description: 'days with some intervals but not all of them (for every meter of the target): left out of the model, as missing days are',
  }),
  report: Type.Union([
    Type.Object({
      from: Type.String({ format: 'date' }),
      to: Type.String({ format: 'date' }),
      expectedKwh: Type.Number(),
      actualKwh: Type.Number(),
      savingsKwh: Nullable(Type.Number({ description: 'expected − actual; null when the guard rails do not hold (savingsWithheld says why)' })),
      savingsPercent: Nullable(Type.Number()),
      savingsWithheld: Type.Optional(
        Type.Union([Type.String(), Type.Null()], { description: 'why no savings figure is given (ASHRAE Guideline 14 / IPMVP guard rails)' }),
      ),
      uncertainty: Type.Optional(Type.Union([SavingsUncertaintyBlock, Type.Null()])),
      significant: Type.Optional(
        Type.Union([Type.Boolean(), Type.Null()], {
          description:
            'fractional savings uncertainty ≤ 50 % at 68 % confidence (G14); null when the figure is withheld (guard rails) or there is no reporting period',
        }),
      ),
      coverage: Type.Optional(Type.Number({ description: 'reporting days with energy and temperature ÷ the days of the period so far' })),
      days: Type.Array(Type.Object({ ...BaselineDay.properties, cusumKwh: Type.Number({ description: 'Σ (actual − expected) up to and including the day' }) })),
      missingDays: Type.Array(Type.String({ format: 'date' })),
      partialDays: Type.Array(Type.String({ format: 'date' }), { description: 'reporting days with some intervals but not all: not counted' }),
    }),
    Type.Null(),
  ]),
  temperatureDaysFetched: Type.Integer({ description: "days of temperature read from the gateway's history by this call (kept for the next)" }),
});

const Month = (description: string) => Type.String({ pattern: '^\\d{4}-(0[1-9]|1[0-2])$', description });
export const FloorAreaList = Type.Object({
  areas: Type.Array(Type.Object({ area: AreaName, floorAreaM2: Type.Number({ exclusiveMinimum: 0, maximum: 1e8 }) }, { additionalProperties: false }), {
    maxItems: 500,
  }),
});
export const DriverBody = Type.Object(
  {
    values: Type.Array(
      Type.Object(
        {
          name: Type.String({ minLength: 1, maxLength: 64, pattern: '^\\S(.*\\S)?$', description: 'e.g. "units produced", "occupied desk-days"' }),
          month: Month('YYYY-MM'),
          value: Type.Number({ minimum: 0, maximum: 1e12 }),
          unit: Type.String({ maxLength: 32, default: '' }),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 1200 },
    ),
  },
  { additionalProperties: false },
);
export const DriverList = Type.Object({
  items: Type.Array(Type.Object({ name: Type.String(), month: Type.String(), value: Type.Number(), unit: Type.String() })),
});

export const EnpiQuery = Type.Object(
  {
    ...TargetQuery,
    from: Month('first month'),
    to: Month('the month after the last (exclusive)'),
    driver: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'a monthly figure entered under PUT /api/analysis/drivers' })),
    temperatureCode: Type.String({ minLength: 1, maxLength: 200, default: 'temp.outdoor' }),
    heatingBaseC: Type.Number({ minimum: -30, maximum: 40, default: 15.5 }),
    coolingBaseC: Type.Number({ minimum: -30, maximum: 40, default: 21 }),
  },
  { additionalProperties: false },
);
const NullableNumber = (description: string) => Type.Union([Type.Number(), Type.Null()], { description });
export const EnpiBody = Type.Object({
  target: Type.Object({ meterId: Type.Optional(Type.Integer()), area: Type.Optional(Type.String()) }),
  floorAreaM2: NullableNumber(
    "the area's floor area; for the site the sum of every area's (end uses, not floors: use siteFloorAreaM2 and siteKwhPerM2 for the site's intensity); null for a meter or when none is set",
  ),
  siteFloorAreaM2: NullableNumber("the site target: the site's own gross floor area (PUT /api/configs floorAreaM2); null for an area or meter, or not entered"),
  driver: Type.Union([Type.String(), Type.Null()]),
  months: Type.Array(
    Type.Object({
      month: Type.String(),
      kwh: Type.Number({
        description:
          "the target's metered electricity (the site: grid import: electricity drawn from the grid by the site meters (not consumption: PV self-consumption, gas and heat are left out))",
      }),
      kwhPerM2: NullableNumber('kwh ÷ floorAreaM2: electricity only, not a whole-site EUI'),
      hdd: Type.Number(),
      cdd: Type.Number(),
      suspectDays: Type.Integer({
        description:
          'days of the month holding intervals of an unconfirmed suspect run (a dead meter): left out of kwh and the degree days; kwhPerM2 and kwhPerDriverUnit are then null',
      }),
      temperatureDays: Type.Integer({ description: 'days of the month with an outdoor temperature (suspect days not counted)' }),
      partialDays: Type.Array(Type.String({ format: 'date' }), {
        description: 'days of the month with some intervals but not all (every meter of the target): their energy is in kwh as metered, the rest missing',
      }),
      kwhPerDegreeDay: NullableNumber(
        'kwh ÷ (HDD + CDD) of the month: NOT an efficiency measure (heating and cooling degree days added in one denominator; the ratio tracks the base load); use a baseline (POST /api/analysis/baselines) to normalise for weather',
      ),
      driverValue: NullableNumber("the driver's figure for the month"),
      driverUnit: Type.Union([Type.String(), Type.Null()]),
      kwhPerDriverUnit: NullableNumber('kwh ÷ driverValue'),
      siteEnergyKwh: NullableNumber(
        'the site target: whole-site energy over all fuels (electricity consumption incl. self-consumed PV + gas converted + heat; never water), as energyKwh of GET /api/energy/commodities; null otherwise',
      ),
      siteKwhPerM2: NullableNumber("the site intensity (EUI): siteEnergyKwh ÷ siteFloorAreaM2; null without the site's floor area"),
    }),
  ),
});

export const AnomalyCheckBody = Type.Object({ day: Day('a finished site day to check') }, { additionalProperties: false });
export const AnomalyFindings = Type.Object({
  findings: Type.Array(
    Type.Object({
      kind: stringEnum(['night_base_load', 'weekend_load', 'baseline_deviation'] as const),
      target: Type.String(),
      day: Type.String({ format: 'date' }),
      message: Type.String(),
      detail: Type.String({ description: 'the evidence: the figures compared and the threshold' }),
    }),
  ),
});

// --- Hourly baselines --------------------------------------------------------------------------------------------

export const HourlyBaselineQuery = Type.Object(
  {
    ...BaselineQuery.properties,
    baselineTo: Day('the day after its last (exclusive); at least 14 days of hours with data, at most 2 years'),
    reportTo: Type.Optional(Day('exclusive; default tomorrow; at most a year after reportFrom')),
    by: Type.Unsafe<'hour-of-day' | 'hour-of-week'>({
      type: 'string',
      enum: ['hour-of-day', 'hour-of-week'],
      default: 'hour-of-day',
      description: 'hour-of-day: 24 models (slot = local hour) with a weekend term; hour-of-week: 168 models (slot = weekday × 24 + hour, Monday 0) without',
    }),
  },
  { additionalProperties: false },
);

const HourRow = {
  start: Type.String({ format: 'date-time' }),
  slot: Type.Integer({ description: 'the model the hour belongs to: local hour (0–23) or weekday × 24 + hour (0–167, Monday 0)' }),
  dayType: stringEnum(['working', 'weekend', 'holiday'] as const),
  temperatureC: Type.Number({ description: "the hour's mean outdoor temperature" }),
  hdh: Type.Number({ description: 'heating degree-hours: max(0, heatingBaseC − T)' }),
  cdh: Type.Number({ description: 'cooling degree-hours: max(0, T − coolingBaseC)' }),
  actualKwh: Type.Number(),
  expectedKwh: Type.Number(),
};

export const HourlyBaselineBody = Type.Object({
  target: Type.Object({ kind: Type.String(), meterId: Type.Optional(Type.Integer()), area: Type.Optional(Type.String()) }),
  by: stringEnum(['hour-of-day', 'hour-of-week'] as const),
  temperatureCode: Type.String(),
  heatingBaseC: Type.Number(),
  coolingBaseC: Type.Number(),
  model: Type.Object({
    from: Type.String({ format: 'date' }),
    to: Type.String({ format: 'date' }),
    slots: Type.Array(
      Type.Object({
        slot: Type.Integer(),
        n: Type.Integer({ description: 'baseline hours in the slot' }),
        coefficients: Type.Object(
          { intercept: Type.Number(), perHdh: Type.Number(), perCdh: Type.Number(), weekend: Type.Number(), holiday: Type.Number() },
          { description: 'expected kWh in an hour of the slot = intercept + perHdh·HDH + perCdh·CDH + weekend·[weekend] + holiday·[holiday]' },
        ),
        fitted: Type.Array(Type.String(), { description: 'the terms fitted; a term that never varies in the slot is left at 0' }),
      }),
    ),
    holidaysLeftOut: Type.Array(Type.String({ format: 'date' }), {
      description:
        'holidays whose hours are left out of the fit and its statistics: fewer than 5 in the baseline are too few for a holiday term (a term fitted on one day only takes its residual); a holiday hour is then predicted as the working or weekend hour of its date',
    }),
  }),
  statistics: FitStatistics,
  baselineHoursListed: Type.Boolean({ description: 'hours are listed for a period of at most 31 days' }),
  baselineHours: Type.Array(Type.Object(HourRow)),
  missingBaselineHours: Type.Integer({ description: 'hours without energy from every meter or without temperature' }),
  guardRails: GuardRailsBlock,
  report: Type.Union([
    Type.Object({
      from: Type.String({ format: 'date' }),
      to: Type.String({ format: 'date' }),
      expectedKwh: Type.Number(),
      actualKwh: Type.Number(),
      savingsKwh: Nullable(Type.Number({ description: 'expected − actual; null when the guard rails do not hold (savingsWithheld says why)' })),
      savingsPercent: Nullable(Type.Number()),
      savingsWithheld: Type.Optional(
        Type.Union([Type.String(), Type.Null()], { description: 'why no savings figure is given (ASHRAE Guideline 14 / IPMVP guard rails)' }),
      ),
      uncertainty: Type.Optional(Type.Union([SavingsUncertaintyBlock, Type.Null()])),
      significant: Type.Optional(
        Type.Union([Type.Boolean(), Type.Null()], {
          description:
            'fractional savings uncertainty ≤ 50 % at 68 % confidence (G14); null when the figure is withheld (guard rails) or there is no reporting period',
        }),
      ),
      coverage: Type.Optional(Type.Number({ description: 'reporting days with energy and temperature ÷ the days of the period so far' })),
      hoursListed: Type.Boolean(),
      hours: Type.Array(Type.Object({ ...HourRow, cusumKwh: Type.Number({ description: 'Σ (actual − expected) up to and including the hour' }) })),
      days: Type.Array(
        Type.Object({
          day: Type.String({ format: 'date' }),
          hours: Type.Integer(),
          actualKwh: Type.Number(),
          expectedKwh: Type.Number(),
          cusumKwh: Type.Number({ description: "the CUSUM at the day's last hour" }),
        }),
      ),
      missingHours: Type.Integer(),
    }),
    Type.Null(),
  ]),
});

// --- Load shedding -------------------------------------------------------------------------------------------------

const LoadShedPoint = Type.Object(
  {
    code: Type.String({ minLength: 1, maxLength: 200, pattern: '^\\S+$', description: 'a writable gateway point (setpoint or command)' }),
    priority: Type.Integer({ minimum: 1, maximum: 1000, description: 'lowest number shed first and restored last' }),
    shedValue: Type.Number({ minimum: -1e9, maximum: 1e9, description: 'written when shed' }),
    restoreValue: Type.Number({ minimum: -1e9, maximum: 1e9, description: 'written when restored' }),
  },
  { additionalProperties: false },
);

export const LoadSheddingBody = Type.Object(
  {
    enabled: Type.Boolean({ description: 'off by default; turning it off restores every shed point at once' }),
    minOffSec: Type.Integer({ minimum: 0, maximum: 86_400, description: 'a shed point stays shed at least this long' }),
    maxShedSec: Type.Integer({
      minimum: 60,
      maximum: 86_400,
      description: 'a shed point is restored after this long whatever the projection (at least minOffSec)',
    }),
    points: Type.Array(LoadShedPoint, { maxItems: 50 }),
  },
  { additionalProperties: false },
);

export const LoadSheddingView = Type.Object({
  enabled: Type.Boolean(),
  minOffSec: Type.Integer(),
  maxShedSec: Type.Integer(),
  points: Type.Array(
    Type.Object({
      ...LoadShedPoint.properties,
      shed: Type.Boolean({ description: 'the shed value was written and read back' }),
      shedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
      notBefore: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
        description: 'not shed again before (after an unconfirmed write or a forced restore)',
      }),
      lastError: Type.Union([Type.String(), Type.Null()], { description: 'the last write the gateway did not confirm' }),
      lastErrorAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    }),
  ),
});
