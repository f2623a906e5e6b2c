// Shapes of the per-area energy summary cards.
import { Type, type Static } from '@sinclair/typebox';
import { AreaName } from '../metering/index.ts';
import { displayTextPattern, stringEnum, Timestamp } from '../platform/http/schemas.ts';

const Kwh = (description: string) => Type.Number({ minimum: 0, maximum: 1e12, description });

export const EnergyArea = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  todayKwh: Type.Number(),
  monthKwh: Type.Number(),
  yearKwh: Type.Number(),
  powerKw: Type.Number({ description: 'current demand' }),
  source: stringEnum(['meters', 'manual'] as const, { description: 'meters: computed from the meters in the area; manual: the figures set by PUT' }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type EnergyAreaView = Static<typeof EnergyArea>;

export const EnergyAreaInput = Type.Object(
  {
    name: Type.String({
      minLength: 1,
      maxLength: 64,
      pattern: displayTextPattern(true),
      description: 'unique (case-insensitive); "total" is reserved for the site sum',
    }),
    todayKwh: Kwh('consumption since the site midnight'),
    monthKwh: Kwh('consumption this month, at least todayKwh'),
    yearKwh: Kwh('consumption this year, at least monthKwh'),
    powerKw: Type.Number({ minimum: 0, maximum: 1e9, description: 'current demand' }),
  },
  { additionalProperties: false },
);
export type EnergyAreaInputValue = Static<typeof EnergyAreaInput>;

export const EnergyAreasBody = Type.Object(
  { areas: Type.Array(EnergyAreaInput, { maxItems: 200 }) },
  { description: 'The complete set: areas not listed are removed. An empty list removes every area.' },
);

export const EnergyAreas = Type.Object({
  areas: Type.Array(EnergyArea, { description: 'sorted by name' }),
  unallocated: Type.Optional(
    Type.Union([Type.Object({ todayKwh: Type.Number(), monthKwh: Type.Number(), yearKwh: Type.Number() }), Type.Null()], {
      description:
        "the site's metered energy no area accounts for: what the site used (its site meters' grid import, plus generation, less export: docs/commodities.md) minus the areas' meters; null without site meters. Negative when the areas' meters add up to more than the site used: a sub-meter counted twice or misread (docs/energy-data-quality.md)",
    }),
  ),
});

// --- The figures computed from the interval store (meters: metering/schemas.ts; tariffs: pricing/schemas.ts) -------------------------------------------

const Day = (description: string) => Type.String({ format: 'date', description });
const Figures = { kwh: Type.Number(), cost: Type.Number(), carbonKg: Type.Number() };
const Share = (description: string) => Type.Number({ minimum: 0, maximum: 1, description });
/** Shares of the intervals that have happened (0..1): a figure with missing intervals is not a zero but an unknown. */
const ShareFields = {
  measured: Share('share of intervals measured'),
  estimated: Share('share of intervals estimated (a gap the gateway history could not fill, spread evenly)'),
  missing: Share('share of intervals with no data (counted as nothing in the sums)'),
};
/** Issue 52: counted apart from measured (a suspect interval holds a value, but not one to model consumption with). */
const SuspectShare = Share(
  'share of intervals in an unconfirmed suspect run (one value repeated, a flat zero, on a meter whose history reads more): kept out of baselines, anomaly models and EnPIs until a person confirms the run',
);
export const PeriodQuery = Type.Object({ from: Day('first site day'), to: Day('the day after the last (exclusive)') }, { additionalProperties: false });
/** A site's highest 15-minute mean demand and what it rests on. */
export const SitePeakSchema = Type.Object({
  kw: Type.Number(),
  at: Type.String({ format: 'date-time' }),
  complete: Type.Boolean({ description: 'every site meter had every interval of the period: else the peak is a floor' }),
  incompleteIntervals: Type.Integer({ description: 'intervals some but not all site meters have (counted with what the others measured)' }),
  metersAtPeak: Type.Integer({ description: "site meters with data in the peak's own interval" }),
  meters: Type.Integer({ description: 'site meters' }),
});

export const EnergySummary = Type.Object({
  from: Type.String({ format: 'date' }),
  to: Type.String({ format: 'date' }),
  timezone: Type.String(),
  currency: Type.String(),
  totalKwh: Type.Number({
    description: 'grid import: electricity drawn from the grid by the site meters (not consumption: PV self-consumption, gas and heat are left out)',
  }),
  cost: Type.Number({ description: 'electricity import at the tariff of each interval plus the standing charge of each day' }),
  carbonKg: Type.Number({ description: 'grid import × the electricity tariff carbon factor (scope 2); every utility: GET /api/energy/commodities' }),
  days: Type.Array(
    Type.Object({
      day: Type.String({ format: 'date' }),
      kwh: Type.Union([Type.Number(), Type.Null()]),
      cost: Type.Union([Type.Number(), Type.Null()]),
      carbonKg: Type.Union([Type.Number(), Type.Null()]),
      ...ShareFields,
      suspect: Type.Optional(SuspectShare),
    }),
    { description: 'kwh, cost and carbonKg are null for a day with no data (missing = 1, or a day still to come): no data is never 0' },
  ),
  areas: Type.Array(Type.Object({ area: Type.String(), ...Figures }, { description: 'energy cost only: the standing charge is the site’s' })),
  peak: Type.Union([SitePeakSchema, Type.Null()], { description: 'the highest 15-minute mean demand of the site' }),
  completeness: Type.Object(
    { intervals: Type.Integer({ description: 'intervals of the period that have happened' }), ...ShareFields, suspect: Type.Optional(SuspectShare) },
    {
      description: 'how complete the totals are: a total over missing intervals is short by what they would hold',
    },
  ),
});

export const SeriesQuery = Type.Object(
  {
    from: Day('first site day'),
    to: Day('the day after the last (exclusive)'),
    resolution: stringEnum(['15min', 'hour', 'day', 'month'] as const),
    meterId: Type.Optional(Type.Integer({ minimum: 1 })),
    area: Type.Optional(AreaName),
  },
  { additionalProperties: false },
);
export const Series = Type.Object({
  resolution: Type.String(),
  timezone: Type.String(),
  points: Type.Array(
    Type.Object({
      start: Timestamp,
      kwh: Type.Union([Type.Number(), Type.Null()], { description: 'null: no data for part of it (a gap the gateway could not fill)' }),
      cost: Type.Union([Type.Number(), Type.Null()], { description: 'day and month points' }),
      maxKw: Type.Optional(Type.Union([Type.Number(), Type.Null()], { description: "15-minute points of a power meter: the interval's highest reading" })),
      missing: Type.Optional(Share('day and month points: share of the intervals so far with no data (1 with kwh null: no data at all)')),
      estimated: Type.Optional(Share('day and month points: share of the intervals so far that are estimated')),
    }),
  ),
});

export const ExportQuery = Type.Object(
  { meterId: Type.Integer({ minimum: 1 }), from: Day('first site day'), to: Day('the day after the last (exclusive)') },
  { additionalProperties: false },
);

export const PeaksQuery = Type.Object(
  { month: Type.String({ pattern: '^\\d{4}-(0[1-9]|1[0-2])$', description: 'YYYY-MM; this month when absent' }) },
  { additionalProperties: false },
);
export const Peaks = Type.Object({
  month: Type.String(),
  site: Type.Union([SitePeakSchema, Type.Null()]),
  meters: Type.Array(Type.Object({ meterId: Type.Integer(), name: Type.String(), kw: Type.Number(), at: Timestamp })),
});

export const CompletenessQuery = Type.Object(
  {
    from: Day('first site day'),
    to: Day('the day after the last (exclusive)'),
    meterId: Type.Optional(Type.Integer({ minimum: 1, description: 'one meter (up to 366 days); without it every meter and the site (up to 31 days)' })),
  },
  { additionalProperties: false },
);
const CompletenessDay = Type.Object({
  day: Type.String({ format: 'date' }),
  intervals: Type.Integer({ description: 'intervals of the day that have happened' }),
  ...ShareFields,
  suspect: SuspectShare,
});
const CompletenessOf = { intervals: Type.Integer(), ...ShareFields, suspect: SuspectShare, days: Type.Array(CompletenessDay) };
export const Completeness = Type.Object({
  from: Type.String({ format: 'date' }),
  to: Type.String({ format: 'date' }),
  timezone: Type.String(),
  site: Type.Union([Type.Object(CompletenessOf), Type.Null()], { description: 'the site (its site meters together); null when one meter was asked for' }),
  meters: Type.Array(Type.Object({ meterId: Type.Integer(), name: Type.String(), ...CompletenessOf })),
});
