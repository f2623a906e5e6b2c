// Shapes of the per-area energy summary cards.
import { Type, type Static } from '@sinclair/typebox';
import { COMMODITIES, DEMAND_CHARGE_BASES, METER_KINDS, METER_ROLES, WEEKDAYS } from '../platform/db/schema/index.ts';
import { displayTextPattern, ErrorBody, stringEnum, Timestamp } from '../platform/http/schemas.ts';

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

// --- Meters, tariffs and the figures computed from the interval store -------------------------------------------

const Day = (description: string) => Type.String({ format: 'date', description });
const Name = Type.String({ minLength: 1, maxLength: 100, pattern: displayTextPattern(true) });
const AreaName = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: displayTextPattern(true),
  description: 'the area its energy counts towards; "total" is reserved',
});

export const MeterTerm = Type.Object(
  { meterId: Type.Integer({ minimum: 1 }), sign: Type.Union([Type.Literal(1), Type.Literal(-1)]) },
  { additionalProperties: false },
);

export const Meter = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  code: Type.Union([Type.String(), Type.Null()], { description: 'the gateway point read; null for a virtual meter' }),
  kind: stringEnum(METER_KINDS, {
    description: 'energy: a kWh counter; power: kW readings (energy is their integral); virtual: the signed sum of other meters',
  }),
  area: Type.Union([Type.String(), Type.Null()]),
  site: Type.Boolean({ description: "the site's consumption is the sum of the site meters (of every area's meters when none is marked)" }),
  terms: Type.Array(MeterTerm),
  enabled: Type.Boolean({ description: 'read by the collector' }),
  commodity: stringEnum(COMMODITIES, { description: 'electricity (kWh), gas (m³), water (m³) or heat (kWh thermal): the unit of its intervals' }),
  role: stringEnum(METER_ROLES, {
    description: 'electricity: import from the grid, export to it, or on-site generation (PV); every other commodity is import',
  }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

const meterFields = {
  name: Name,
  code: Type.Union([Type.String({ minLength: 1, maxLength: 200 }), Type.Null()]),
  area: Type.Union([AreaName, Type.Null()]),
  site: Type.Boolean(),
  terms: Type.Array(MeterTerm, { maxItems: 1000, description: 'virtual meters only: e.g. rest of building = main (+1) − each sub-meter (−1)' }),
  enabled: Type.Boolean(),
  commodity: stringEnum(COMMODITIES, { description: 'electricity when absent; cannot change later' }),
  role: stringEnum(METER_ROLES, { description: 'import when absent; export and generation are electricity only; cannot change later' }),
};
export const MeterCreate = Type.Object(
  {
    ...meterFields,
    kind: stringEnum(METER_KINDS),
    code: Type.Optional(meterFields.code),
    area: Type.Optional(meterFields.area),
    site: Type.Optional(meterFields.site),
    terms: Type.Optional(meterFields.terms),
    enabled: Type.Optional(meterFields.enabled),
    commodity: Type.Optional(meterFields.commodity),
    role: Type.Optional(meterFields.role),
  },
  { additionalProperties: false },
);
export const MeterUpdate = Type.Partial(Type.Object(meterFields), { additionalProperties: false });

export const MeterProposals = Type.Object({
  catalogue: Type.Boolean({ description: 'false: the gateway has no point catalogue (GET {base}/codes answered 404); enter meters by hand' }),
  proposals: Type.Array(
    Type.Object({
      code: Type.String(),
      name: Type.String(),
      unit: Type.String(),
      kind: stringEnum(['energy', 'power'] as const),
      site: Type.Boolean(),
      known: Type.Boolean({ description: 'already metered' }),
      commodity: stringEnum(COMMODITIES, { description: 'm³: gas when named so, water otherwise; kWh: electricity unless named heat' }),
      role: stringEnum(METER_ROLES, { description: 'generation when named PV/solar, export when named export/feed-in' }),
      sameMeterAs: Type.Union([Type.String(), Type.Null()], {
        description: 'another point of the same physical meter (its energy counter): do not add both, never both as site meters',
      }),
    }),
  ),
});

const Clock = Type.String({ pattern: '^([01]\\d|2[0-3]):[0-5]\\d$|^24:00$', description: 'HH:MM, local time; 24:00 ends a band at midnight' });
export const TariffBand = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 40 }),
    days: Type.Array(stringEnum(WEEKDAYS), { minItems: 1, uniqueItems: true, maxItems: WEEKDAYS.length }),
    from: Clock,
    to: Clock,
    price: Type.Number({ minimum: 0, maximum: 1e6 }),
  },
  { additionalProperties: false },
);
const tariffFields = {
  validFrom: Day('first site day the version applies to; today or earlier (from a bill) restates the stored cost of the days it decides'),
  price: Type.Number({ minimum: 0, maximum: 1e6, description: 'per kWh outside every band' }),
  bands: Type.Array(TariffBand, { maxItems: 50, description: 'time-of-use bands; the first that covers an interval prices it' }),
  holidays: Type.Array(Day('a holiday: priced by the bands that list "holiday"'), { maxItems: 400 }),
  standingChargePerDay: Type.Number({ minimum: 0, maximum: 1e7 }),
  carbonFactor: Type.Number({ minimum: 0, maximum: 100, description: 'kg CO2 per kWh' }),
  contractedPeakKw: Type.Union([Type.Number({ exclusiveMinimum: 0, maximum: 1e7 }), Type.Null()], {
    description: 'the demand the supply contract allows: a site 15-minute mean above it raises an alert (null: none)',
  }),
  demandChargePerKw: Type.Number({ minimum: 0, maximum: 1e6, description: 'per kW of the billed demand each month (capacity tariff); 0: none' }),
  demandChargeBasis: stringEnum(DEMAND_CHARGE_BASES, {
    description:
      "monthly_peak: the month's highest site 15-minute mean; rolling_12_month_average: the mean of the monthly peaks of the 12 months ending with it (Flemish capacity tariff)",
  }),
  demandChargeMinimumKw: Type.Number({ minimum: 0, maximum: 1e7, description: 'the billed demand is at least this (Flanders: 2.5 kW)' }),
  note: Type.String({ maxLength: 500 }),
  feedInPrice: Type.Number({ minimum: 0, maximum: 1e6, description: 'electricity: paid per kWh exported to the grid; 0 for other commodities' }),
};
const TariffCommodity = stringEnum(COMMODITIES, {
  description:
    'what it prices: electricity and heat per kWh, gas per kWh (after the calorific conversion), water per m³; carbonFactor is kg CO2 per the same unit. Versions are dated per commodity.',
});
export const TariffVersion = Type.Object({ id: Type.Integer(), ...tariffFields, commodity: TariffCommodity, createdAt: Timestamp, updatedAt: Timestamp });
export const TariffCreate = Type.Object(
  {
    ...tariffFields,
    bands: Type.Optional(tariffFields.bands),
    holidays: Type.Optional(tariffFields.holidays),
    standingChargePerDay: Type.Optional(tariffFields.standingChargePerDay),
    contractedPeakKw: Type.Optional(tariffFields.contractedPeakKw),
    note: Type.Optional(tariffFields.note),
    demandChargePerKw: Type.Optional(tariffFields.demandChargePerKw),
    demandChargeBasis: Type.Optional(tariffFields.demandChargeBasis),
    demandChargeMinimumKw: Type.Optional(tariffFields.demandChargeMinimumKw),
    commodity: Type.Optional(TariffCommodity),
    feedInPrice: Type.Optional(tariffFields.feedInPrice),
  },
  { additionalProperties: false },
);
export const TariffUpdate = Type.Partial(Type.Object(tariffFields), { additionalProperties: false });

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

export const ImportQuery = Type.Object(
  {
    dryRun: Type.Boolean({ default: false, description: 'true: check the file and report what it would change; nothing is written' }),
    replace: Type.Boolean({ default: false, description: 'true: intervals already stored are overwritten; false: any overlap refuses the whole file (409)' }),
  },
  { additionalProperties: false },
);
const ImportProblem = Type.Object({ line: Type.Integer({ description: 'line of the file (the header is line 1)' }), message: Type.String() });
export const ImportReport = Type.Object({
  dryRun: Type.Boolean(),
  replace: Type.Boolean(),
  form: stringEnum(['intervals', 'counter'] as const, { description: 'intervals: kWh per interval (column kwh); counter: counter readings (column reading)' }),
  rows: Type.Integer({ description: 'data rows read (the header and blank lines not counted)' }),
  accepted: Type.Boolean({ description: 'the file is (or, in a dry run, would be) written: nothing refused, and no overlap unless replace' }),
  written: Type.Boolean(),
  meters: Type.Array(
    Type.Object({
      meterId: Type.Integer(),
      name: Type.String(),
      from: Type.Union([Type.String({ format: 'date' }), Type.Null()], { description: 'first site day the file holds for the meter' }),
      to: Type.Union([Type.String({ format: 'date' }), Type.Null()], { description: 'last site day (inclusive)' }),
      commodity: Type.String({ description: "the meter's commodity" }),
      unit: stringEnum(['kWh', 'm³'] as const, { description: "the meter's unit: m³ for gas and water meters, else kWh" }),
      quantity: Type.Number({ description: "what is written (or to be written), in the meter's unit" }),
      kwh: Type.Union([Type.Number(), Type.Null()], {
        description: 'energy written (or to be written) in kWh; null for a meter counting m³ (gas before its calorific conversion, water)',
      }),
      intervals: Type.Object({
        new: Type.Integer({ description: 'intervals with no stored data' }),
        overlapping: Type.Integer({ description: 'intervals already stored (replaced only with replace=true)' }),
        refused: Type.Integer({ description: 'rows refused: in the future, today, too old, negative, an implausible step' }),
        estimated: Type.Integer({ description: 'intervals spread evenly from a longer row or counter span (flag 4)' }),
      }),
      days: Type.Integer({ description: 'site days changed' }),
      refused: Type.Array(ImportProblem, { description: 'the first 50 refused rows with the reason' }),
      jitter: Type.Integer({ description: 'counter form: small decreases held as noise (0 kWh, flag 8)' }),
      resets: Type.Integer({ description: 'counter form: resets and rollovers recognised (flag 2)' }),
      gaps: Type.Integer({ description: 'counter form: spans between readings longer than 7 days, left missing' }),
      empty: Type.Integer({ description: 'intervals form: empty kwh cells, taken as missing intervals (nothing written for them)' }),
      missing: Type.Integer({
        description: "intervals between the meter's first and last value in the file with no value (empty cells and rows left out): they stay missing",
      }),
      suspect: Type.Object(
        {
          runs: Type.Integer({ description: 'runs of one repeated value (a flat zero) on a meter whose history reads more' }),
          intervals: Type.Integer({ description: 'intervals in those runs: suspect until confirmed (POST /api/energy/suspect-runs/{id}/confirm)' }),
          listed: Type.Array(
            Type.Object({
              startAt: Type.String({ format: 'date-time' }),
              endAt: Type.String({ format: 'date-time' }),
              intervals: Type.Integer(),
              value: Type.Number({ description: "the repeated value, in the meter's unit" }),
            }),
            { description: 'the first 50 runs, in time order' },
          ),
        },
        { description: 'suspect runs in the file (docs/energy-data-quality.md "Suspect runs"); kept out of baselines until confirmed' },
      ),
    }),
  ),
});

export const ImportJobQuery = Type.Object(
  {
    replace: Type.Boolean({ default: false, description: 'true: intervals already stored are overwritten; false: any overlap refuses the whole file (409)' }),
  },
  { additionalProperties: false },
);
export const ImportJob = Type.Object({
  id: Type.Integer(),
  state: stringEnum(['running', 'cancelling', 'done', 'cancelled', 'failed'] as const, {
    description: 'cancelling: asked to stop, taking back what it wrote; cancelled: nothing of the file is left stored',
  }),
  replace: Type.Boolean(),
  rows: Type.Integer({ description: 'data rows read' }),
  meters: Type.Integer({ description: 'meters the file writes to' }),
  done: Type.Integer({ description: 'write steps done (a meter-day, a virtual meter’s day, the audit)' }),
  total: Type.Integer({ description: 'write steps planned (0 until the first slice is written): done / total is the progress' }),
  startedAt: Timestamp,
  finishedAt: Type.Union([Timestamp, Type.Null()]),
  startedBy: Type.Union([Type.Integer(), Type.Null()]),
  report: Type.Union([ImportReport, Type.Null()], { description: 'the import’s report once done' }),
  undone: Type.Union([Type.Integer(), Type.Null()], { description: 'cancelled: the meter-days taken back' }),
  error: Type.Union([ErrorBody, Type.Null()], { description: 'failed: why (as the synchronous import would have answered)' }),
});
