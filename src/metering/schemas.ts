// Shapes of the meters (/api/meters) and the history import (/api/energy/import), served by metering's route tables.
import { Type } from '@sinclair/typebox';
import { COMMODITIES, METER_KINDS, METER_ROLES } from '../platform/db/schema/index.ts';
import { displayTextPattern, ErrorBody, stringEnum, Timestamp } from '../platform/http/schemas.ts';

const Name = Type.String({ minLength: 1, maxLength: 100, pattern: displayTextPattern(true) });
export const AreaName = Type.String({
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
