// The ingest batch and the enrolment request, as TypeBox schemas compiled once with ajv: unknown fields are refused
// (a typo in a field name must not silently drop data), and "missing" is not a quality: a missing interval is not sent.
import { type Static, Type } from '@sinclair/typebox';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';

const Instant = Type.String({ format: 'date-time', maxLength: 40 });
const Key = Type.String({ minLength: 1, maxLength: 100 });

/**
 * The range of every number a site sends (docs/fleet.md, "Ranges"): outside it the batch is refused whole with 422
 * `out_of_range` naming the field. Wide enough for any real building (the box's own plausibility limit is 100 MW,
 * 25,000 kWh an interval), narrow enough that no sum the fleet keeps (a site month of 5,000 meters) leaves float8
 * and no EUI divides by a near-zero area.
 */
export const RANGES = {
  /** An interval's value in the meter's unit (kWh, m³) per 15 minutes. */
  intervalValue: { minimum: -1e6, maximum: 1e6 },
  /** A day row's value in the meter's unit. */
  dayValue: { minimum: -1e8, maximum: 1e8 },
  /** A gas day's kWh. */
  dayKwh: { minimum: -2e9, maximum: 2e9 },
  /** A day's cost in the site's currency. */
  dayCost: { minimum: -1e10, maximum: 1e10 },
  /** A day's carbon in kg. */
  dayCarbonKg: { minimum: -1e9, maximum: 1e9 },
  /** A site's or an area's floor area in m² (null: not known). */
  floorAreaM2: { minimum: 1, maximum: 1e7 },
  /** Sequences, alert ids, counts: JSON integers a float8 and a bigint both hold exactly. */
  integer: { minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
} as const;

const Seq = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER });
const AlertId = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER });
const FloorArea = Type.Union([Type.Number(RANGES.floorAreaM2), Type.Null()]);

export const QUALITIES = ['measured', 'estimated', 'imported'] as const;

/** An interval row's fields; a sequenced row adds `seq`, a held one has none. */
const IntervalFields = {
  meter: Key,
  start: Instant,
  value: Type.Number(RANGES.intervalValue),
  quality: Type.Union(QUALITIES.map((q) => Type.Literal(q))),
};

/** A day row's fields; a sequenced row adds `seq`, a held one has none. */
const DayFields = {
  meter: Key,
  day: Type.String({ format: 'date' }),
  /** In the meter's declared unit (m³ for gas). */
  value: Type.Number(RANGES.dayValue),
  /**
   * Gas days: the kWh the site converted `value` to (calorific value × correction in force that day). Optional: a box
   * that predates it still validates; its gas days then carry no kWh and stay out of the EUI.
   */
  kwh: Type.Optional(Type.Number(RANGES.dayKwh)),
  cost: Type.Number(RANGES.dayCost),
  carbonKg: Type.Number(RANGES.dayCarbonKg),
};

export const BatchSchema = Type.Object(
  {
    /** The site's clock when it sent the batch. */
    sentAt: Instant,
    /**
     * The sending box's install id (made at its first start, never in a backup): the fleet takes rows for a site from
     * one box only. Optional: a box that predates it is taken while the site has no install id recorded.
     */
    installId: Type.Optional(Type.String({ pattern: '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' })),
    /** The cursor the site holds (the last sequence the fleet acknowledged to it) and the highest sequence in the batch. */
    after: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
    through: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
    /**
     * The site's newest day sent ahead of its history after an outage: its rows are not every row up to `through`, so
     * the fleet's cursor stays at `after` (any other batch moves it to `through`).
     */
    ahead: Type.Optional(Type.Literal(true)),
    site: Type.Optional(
      Type.Object(
        {
          name: Type.String({ minLength: 1, maxLength: 200 }),
          timezone: Type.String({ minLength: 1, maxLength: 64 }),
          floorAreaM2: FloorArea,
        },
        { additionalProperties: false },
      ),
    ),
    areas: Type.Optional(
      Type.Array(Type.Object({ name: Key, floorAreaM2: FloorArea }, { additionalProperties: false }), {
        maxItems: 1000,
      }),
    ),
    meters: Type.Optional(
      Type.Array(
        Type.Object(
          {
            key: Key,
            name: Type.String({ minLength: 1, maxLength: 200 }),
            commodity: Type.String({ minLength: 1, maxLength: 32 }),
            unit: Type.String({ minLength: 1, maxLength: 16 }),
            area: Type.Union([Key, Type.Null()]),
            siteTotal: Type.Boolean(),
          },
          { additionalProperties: false },
        ),
        { maxItems: 5000 },
      ),
    ),
    intervals: Type.Optional(Type.Array(Type.Object({ ...IntervalFields, seq: Seq }, { additionalProperties: false }))),
    days: Type.Optional(
      Type.Array(
        Type.Object(
          {
            ...DayFields,
            seq: Seq,
            /**
             * The runs of intervals [from, to) the box's row does not hold: what the fleet stored there under a lower
             * sequence goes (an interval the box dropped after its clock stepped back). At most 50 runs fit a day of 100
             * intervals.
             */
            missing: Type.Optional(Type.Array(Type.Object({ from: Instant, to: Instant }, { additionalProperties: false }), { maxItems: 100 })),
          },
          { additionalProperties: false },
        ),
      ),
    ),
    alerts: Type.Optional(
      Type.Array(
        Type.Object(
          {
            id: AlertId,
            title: Type.String({ maxLength: 500 }),
            level: Type.String({ maxLength: 32 }),
            status: Type.String({ maxLength: 32 }),
            occurredAt: Instant,
            acknowledgedAt: Type.Union([Instant, Type.Null()]),
            resolvedAt: Type.Union([Instant, Type.Null()]),
            seq: Seq,
          },
          { additionalProperties: false },
        ),
      ),
    ),
    /** Alerts deleted on the site since its cursor: the fleet drops its copy (unless a later version is stored). */
    deletedAlerts: Type.Optional(Type.Array(Type.Object({ id: AlertId, seq: Seq }, { additionalProperties: false }), { maxItems: 1000 })),
    /**
     * Meter days the site deleted whole (its clock stepped back across midnight): the fleet removes what it stored of
     * each (intervals in [from, to): the day in the site's zone; the day row; what follows from them) under a lower
     * sequence. At most MAX_DELETED_DAYS (ingest.ts, 422 beyond), each day within the range a day row may have, its span
     * within that day.
     */
    deletedDays: Type.Optional(
      Type.Array(Type.Object({ meter: Key, day: Type.String({ format: 'date' }), from: Instant, to: Instant, seq: Seq }, { additionalProperties: false })),
    ),
    /**
     * What the site's collector holds ahead of its rows (it writes them hourly): rows without a sequence of their own,
     * stored under `after`, so any row the site sends later (a higher sequence) replaces them.
     */
    held: Type.Optional(
      Type.Object(
        {
          intervals: Type.Array(Type.Object(IntervalFields, { additionalProperties: false })),
          days: Type.Array(Type.Object(DayFields, { additionalProperties: false })),
        },
        { additionalProperties: false },
      ),
    ),
    health: Type.Optional(
      Type.Object(
        {
          version: Type.Optional(Type.String({ maxLength: 64 })),
          collector: Type.Optional(Type.String({ maxLength: 200 })),
          gateway: Type.Optional(Type.String({ maxLength: 200 })),
          lastBackupAt: Type.Optional(Type.Union([Instant, Type.Null()])),
          unsentRows: Type.Optional(Type.Integer(RANGES.integer)),
          oldestUnsentAt: Type.Optional(Type.Union([Instant, Type.Null()])),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export type Batch = Static<typeof BatchSchema>;

export const SiteBoxSchema = Type.Object(
  { installId: Type.String({ pattern: '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' }) },
  { additionalProperties: false },
);
export const EnrolSchema = Type.Object({ code: Type.String({ minLength: 8, maxLength: 100 }) }, { additionalProperties: false });
export const EnrolmentCodeRequestSchema = Type.Object(
  { siteName: Type.String({ minLength: 1, maxLength: 200 }), validHours: Type.Optional(Type.Integer({ minimum: 1, maximum: 24 * 30 })) },
  { additionalProperties: false },
);

const ajv = new Ajv({ allErrors: false, strict: true });
addFormats.default(ajv, ['date-time', 'date']);

export const validateBatch = ajv.compile<Batch>(BatchSchema);
export const validateSiteBox = ajv.compile<Static<typeof SiteBoxSchema>>(SiteBoxSchema);
export const validateEnrol = ajv.compile<Static<typeof EnrolSchema>>(EnrolSchema);
export const validateEnrolmentCodeRequest = ajv.compile<Static<typeof EnrolmentCodeRequestSchema>>(EnrolmentCodeRequestSchema);

/** Keywords of a number outside its range: the batch is well formed, its figures are not (422 `out_of_range`). */
const RANGE_KEYWORDS = new Set(['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum']);

/** The field a range error names ('/days/0/value'), or undefined when the first error is of another kind. */
export function rangeError(validate: { errors?: Array<{ instancePath: string; keyword: string }> | null }): string | undefined {
  const error = validate.errors?.find((e) => RANGE_KEYWORDS.has(e.keyword));
  return error ? error.instancePath : undefined;
}

/** The first validation error as one line a site operator can read. */
export function firstError(validate: { errors?: Array<{ instancePath: string; message?: string }> | null }): string {
  const error = validate.errors?.[0];
  return error ? `${error.instancePath || '/'} ${error.message ?? 'is invalid'}` : 'is invalid';
}
