// Shapes of the wallboard payload (GET /api/wallboard): one scope (the site or one area), with an explicit data state.
import { AllUtilitiesSchema } from '../../energy/index.ts';
import { Type, type Static } from '@sinclair/typebox';
import { PublicDashboard } from '../dashboard/schemas.ts';
import { Timestamp } from '../../platform/http/schemas.ts';

const NullableNumber = Type.Union([Type.Number(), Type.Null()]);
const NullableString = Type.Union([Type.String(), Type.Null()]);
const stringEnum = <T extends string>(values: readonly T[], description?: string) =>
  Type.Unsafe<T>({ type: 'string', enum: [...values], ...(description ? { description } : {}) });

export const DATA_STATES = ['live', 'stale', 'failing'] as const;
export type DataStateName = (typeof DATA_STATES)[number];
export const DATA_STATE_REASONS = ['gateway-unreachable', 'gateway-errors', 'collector-stalled', 'no-collection-yet', 'collection-off'] as const;
export type DataStateReason = (typeof DATA_STATE_REASONS)[number];

export const WallboardQuery = Type.Object(
  {
    area: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: 'an area name (exact, or the one name equal to it ignoring case); omitted: the whole site' }),
    ),
  },
  { additionalProperties: false },
);

export const DataState = Type.Object(
  {
    state: stringEnum(
      DATA_STATES,
      'live: figures from a collection within two intervals (or entered by hand); failing: the last collection failed; stale: no good collection within two intervals',
    ),
    since: Type.Union([Timestamp, Type.Null()], {
      description: 'not live: the time of the last good collection (the figures are as of then), or the service start when there was none',
    }),
    reason: Type.Union([stringEnum(DATA_STATE_REASONS), Type.Null()], { description: 'not live: which part failed' }),
    source: stringEnum(['meters', 'manual'] as const, 'meters: collected from the gateway; manual: area cards entered through PUT /api/energy/areas'),
    collectIntervalSec: Type.Union([Type.Integer(), Type.Null()], { description: 'how often meters are read; null when collection is off' }),
    lastGoodAt: Type.Union([Timestamp, Type.Null()], { description: 'the last good collection since the service started' }),
  },
  { description: 'computed by the service on each request; a page that cannot reach the service shows stale by itself' },
);
export type DataStateView = Static<typeof DataState>;

export const WallboardArea = Type.Object({ name: Type.String(), powerKw: Type.Number(), todayKwh: Type.Number(), monthKwh: Type.Number() });

export const WallboardAlert = Type.Object({
  title: Type.String(),
  level: stringEnum(['critical', 'warning'] as const),
  area: NullableString,
  since: Timestamp,
  clearedAt: Type.Union([Timestamp, Type.Null()], {
    description: 'a gateway alarm whose condition ended at the source at this time: the alert stays active until someone acknowledges it',
  }),
});

export const UtilityPeriod = Type.Object(
  {
    from: Type.String({ format: 'date' }),
    to: Type.String({ format: 'date', description: 'exclusive' }),
    commodities: Type.Array(
      Type.Object({
        commodity: stringEnum(['electricity', 'gas', 'water', 'heat'] as const),
        unit: Type.String({ description: 'of quantity: kWh for electricity and heat, m³ for gas and water' }),
        quantity: Type.Union([Type.Number(), Type.Null()], {
          description: 'electricity: consumption (import − export + generation); null: metered, but no data in the period',
        }),
        kwh: Type.Union([Type.Number(), Type.Null()], {
          description: 'energy (gas converted by the calorific value in force); null for water and when there is no data',
        }),
      }),
      { description: 'each metered commodity, as GET /api/energy/commodities reports it for the same period' },
    ),
    solar: Type.Union(
      [
        Type.Object({
          generationKwh: NullableNumber,
          exportKwh: NullableNumber,
          selfConsumptionKwh: NullableNumber,
          selfConsumptionRate: Type.Union([Type.Number(), Type.Null()], { description: 'self-consumption / generation, 0..1' }),
          selfSufficiency: Type.Union([Type.Number(), Type.Null()], { description: 'self-consumption / consumption, 0..1' }),
        }),
        Type.Null(),
      ],
      { description: 'null: no generation or export meter; a figure is null when its meters recorded nothing in the period (never 0 for missing)' },
    ),
    allUtilities: AllUtilitiesSchema,
  },
  { description: 'the figures of GET /api/energy/commodities for one period' },
);
export type UtilityPeriodView = Static<typeof UtilityPeriod>;

export const WallboardPayload = Type.Object(
  {
    // The public dashboard's platform block, one definition for both public payloads.
    platform: PublicDashboard.properties.platform,
    labels: Type.Record(Type.String(), Type.String(), {
      description: "the page's words in the site's language (src/platform/i18n wallboard.* keys without the prefix; English for a key or language missing)",
    }),
    scope: Type.Object({ area: Type.Union([Type.String(), Type.Null()], { description: 'the area shown, as it is named; null: the whole site' }) }),
    figures: Type.Object(
      {
        powerKw: Type.Number(),
        todayKwh: Type.Number({ description: "the site: grid import (electricity from the site meters); an area: its meters' electricity" }),
        monthKwh: Type.Number({ description: 'as todayKwh, this month' }),
        costToday: NullableNumber,
        costMonth: NullableNumber,
        carbonTodayKg: NullableNumber,
        carbonMonthKg: NullableNumber,
        coverageToday: Type.Optional(
          Type.Union([Type.Number(), Type.Null()], { description: "the site: share of today's intervals so far with data (null: no meters)" }),
        ),
        coverageMonth: Type.Optional(Type.Union([Type.Number(), Type.Null()], { description: "the site: share of this month's intervals so far with data" })),
      },
      {
        description:
          'of the scope, electricity only: the site figures equal GET /api/dashboard overview; an area has cost and carbon only when it is metered; every utility: utilities.*.allUtilities',
      },
    ),
    weeklyEnergy: Type.Object({
      days: Type.Array(
        Type.Object({ day: Type.String({ format: 'date' }), kwh: Type.Union([Type.Number(), Type.Null()], { description: 'null: no data that day' }) }),
        { minItems: 7, maxItems: 7, description: 'the last 7 site days of the scope, oldest first' },
      ),
      totalKwh: Type.Number(),
    }),
    utilities: Type.Union([Type.Object({ today: UtilityPeriod, month: UtilityPeriod }), Type.Null()], {
      description: 'every utility and the solar balance of the site, today and this month; null in an area view and on a site metering electricity import only',
    }),
    areas: Type.Array(WallboardArea, { description: 'every area, the largest energy today first' }),
    alerts: Type.Object({
      counts: Type.Object({ critical: Type.Integer(), warning: Type.Integer(), info: Type.Integer() }, { description: 'active, not shelved, in the scope' }),
      active: Type.Array(WallboardAlert, {
        description: 'active critical then warning alerts of the scope, the longest-standing first within a level: titles only, no message text, no people',
      }),
      more: Type.Integer({ description: 'active critical and warning alerts beyond the list' }),
    }),
    openFaults: Type.Integer(),
    equipmentFaults: Type.Optional(
      Type.Integer({ description: 'equipment faults the detection rules found that are still going on, site-wide: a count only (issue 54)' }),
    ),
    gateway: Type.Object({
      state: stringEnum(['up', 'degraded', 'down', 'unknown'] as const, 'degraded: the gateway answers, but meter collections fail'),
      checkedAt: Type.Union([Timestamp, Type.Null()]),
    }),
    dataState: DataState,
    generatedAt: Timestamp,
  },
  { description: 'Public and read-only: what the wallboard page shows, for the site or one area. No personal data, no alert message text.' },
);
export type WallboardPayloadView = Static<typeof WallboardPayload>;
