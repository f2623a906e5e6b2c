// Shapes of the energy-management answers: comparisons, demand charges, baselines, EnPIs.
import { Type } from '@sinclair/typebox';
import { stringEnum } from '../http/schemas.ts';
import { PERIODS } from './comparisons.ts';

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
  kwh: Type.Number(),
  cost: Type.Number({ description: 'energy at the tariff of each interval; the site adds its standing charge per whole day' }),
  carbonKg: Type.Number(),
  partial: Type.Boolean({ description: 'the figures stop before the period ends: a running period, and its references cut like for like' }),
  complete: Type.Boolean({ description: 'every meter of the target has a stored day for every day counted' }),
  coverage: Type.Number({ description: 'stored meter-days ÷ expected meter-days over the days counted' }),
  missingDays: Type.Array(Type.String({ format: 'date' }), { description: 'days a meter of the target has nothing for (at most 31)' }),
});
const Change = Type.Object({
  kwh: Type.Number({ description: 'current − reference' }),
  percent: Type.Union([Type.Number(), Type.Null()], { description: '(current − reference) ÷ reference × 100; null when the reference is 0' }),
  cost: Type.Number(),
});

export const ComparisonBody = Type.Object({
  period: Type.String(),
  target: Type.Object({ kind: stringEnum(['site', 'area', 'meter'] as const), meterId: Type.Optional(Type.Integer()), area: Type.Optional(Type.String()), meters: Type.Integer() }),
  timezone: Type.String(),
  currency: Type.String(),
  current: PeriodFigure,
  previous: PeriodFigure,
  lastYear: PeriodFigure,
  change: Type.Object({ previous: Change, lastYear: Change }),
});

export const MonthQuery = Type.Object(
  { month: Type.Optional(Type.String({ pattern: '^\\d{4}-(0[1-9]|1[0-2])$', description: 'YYYY-MM (default: this month)' })) },
  { additionalProperties: false },
);

export const DemandChargeBody = Type.Object({
  month: Type.String(),
  currency: Type.String(),
  running: Type.Boolean({ description: 'the month is not over: month-to-date, and its peak may still grow' }),
  version: Type.Object({
    id: Type.Integer(),
    validFrom: Type.String({ format: 'date' }),
    demandChargePerKw: Type.Number(),
    basis: Type.String(),
    minimumKw: Type.Number(),
  }, { description: 'the tariff version in effect on the first day of the month' }),
  peak: Type.Union([Type.Object({ kw: Type.Number(), at: Type.String({ format: 'date-time' }) }), Type.Null()], { description: "the month's highest site 15-minute mean" }),
  monthlyPeaks: Type.Array(Type.Object({ month: Type.String(), kw: Type.Union([Type.Number(), Type.Null()]) }), { description: 'the 12 months ending with this one' }),
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
