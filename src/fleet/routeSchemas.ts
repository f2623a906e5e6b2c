// What the fleet's routes take and answer, as TypeBox schemas (JSON Schema): the OpenAPI document (src/fleet/openapi.ts)
// publishes them, the staff app's fleet types are generated from that document (src/fleet/webApiTypes.ts), and the
// contract fuzzer (test/fuzz/fleetFuzzer.ts) checks every answer against them. The batch and the enrolment bodies are
// the ones the fleet validates with (src/fleet/schemas.ts).
import { type TSchema, Type } from '@sinclair/typebox';

const Uuid = Type.String({ format: 'uuid' });
const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const DateTime = Type.String({ format: 'date-time' });

/** Every refusal: a stable code (src/fleet/errors.ts), a message, and sometimes details (the field, the cursor). */
export const FleetErrorSchema = Type.Object(
  { error: Type.String(), code: Type.String(), details: Type.Optional(Type.Unknown()) },
  { additionalProperties: false },
);

export const HealthGradeSchema = Type.Union([Type.Literal('healthy'), Type.Literal('warning'), Type.Literal('stale')]);
export const HealthReasonSchema = Type.Union(
  (['never', 'revoked', 'lag', 'refusing', 'clock', 'skew', 'completeness', 'backup'] as const).map((reason) => Type.Literal(reason)),
);

export const SiteHealthSchema = Type.Object(
  {
    id: Uuid,
    name: Type.String({ description: 'The name given at enrolment.' }),
    boxName: Nullable(Type.String({ description: 'What the box calls itself.' })),
    installId: Nullable(Type.String()),
    status: Type.Union((['ok', 'stale', 'refusing', 'clock', 'revoked', 'never'] as const).map((status) => Type.Literal(status))),
    lastContactAt: Nullable(DateTime),
    syncLagSec: Nullable(Type.Number()),
    unsentRows: Nullable(Type.Number()),
    clockSkewSec: Nullable(Type.Number()),
    completeness: Nullable(Type.Number()),
    version: Nullable(Type.String()),
    lastBackupAgeSec: Nullable(Type.Number()),
    lastRefusal: Nullable(Type.String()),
    openAlerts: Type.Integer({ minimum: 0 }),
    grade: HealthGradeSchema,
    reasons: Type.Array(HealthReasonSchema),
  },
  { additionalProperties: false },
);

const PageFields = { total: Type.Integer({ minimum: 0 }), page: Type.Integer({ minimum: 1 }), pageSize: Type.Integer({ minimum: 1 }) };

export const HealthPageSchema = Type.Object(
  {
    items: Type.Array(SiteHealthSchema),
    ...PageFields,
    counts: Type.Object({ healthy: Type.Integer(), warning: Type.Integer(), stale: Type.Integer() }, { additionalProperties: false }),
  },
  { additionalProperties: false },
);

export const EuiRowSchema = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    floorAreaM2: Nullable(Type.Number()),
    eui: Nullable(Type.Number()),
    euiLastYear: Nullable(Type.Number()),
    change: Nullable(Type.Number()),
    byCommodity: Type.Record(
      Type.String(),
      Type.Object(
        { eui: Nullable(Type.Number()), euiLastYear: Nullable(Type.Number()), kwh: Type.Number(), kwhLastYear: Type.Number() },
        { additionalProperties: false },
      ),
    ),
    rank: Nullable(Type.Integer({ minimum: 1 })),
  },
  { additionalProperties: false },
);

export const EuiPageSchema = Type.Object({ items: Type.Array(EuiRowSchema), ...PageFields, maxEui: Nullable(Type.Number()) }, { additionalProperties: false });

export const FleetAlertSchema = Type.Object(
  {
    siteId: Uuid,
    siteName: Type.String(),
    source: Type.Union([Type.Literal('site'), Type.Literal('fleet')]),
    id: Type.String(),
    title: Type.String(),
    level: Type.String(),
    status: Type.String(),
    occurredAt: DateTime,
    ackRequest: Type.Optional(
      Type.Object(
        { by: Type.String(), at: DateTime },
        { additionalProperties: false, description: "Acknowledged from the fleet by `by` at `at`, on its way to the site's box (active site alerts only)." },
      ),
    ),
  },
  { additionalProperties: false },
);

export const AlertPageSchema = Type.Object({ items: Type.Array(FleetAlertSchema), ...PageFields }, { additionalProperties: false });

export const FleetMeterSchema = Type.Object(
  {
    key: Type.String(),
    name: Type.String(),
    commodity: Type.String(),
    unit: Type.String(),
    area: Nullable(Type.String()),
    siteTotal: Type.Boolean(),
    last30Days: Nullable(Type.Number()),
    last30DaysKwh: Nullable(Type.Number()),
    last30DaysCost: Nullable(Type.Number()),
  },
  { additionalProperties: false },
);

export const MetersSchema = Type.Object({ items: Type.Array(FleetMeterSchema) }, { additionalProperties: false });

export const FleetMeSchema = Type.Object(
  {
    name: Type.String(),
    role: Type.Union([Type.Literal('viewer'), Type.Literal('admin')]),
    sites: Nullable(Type.Array(Uuid, { description: 'The sites the user is limited to; null: every site.' })),
  },
  { additionalProperties: false },
);

export const ServiceHealthSchema = Type.Object({ status: Type.Literal('ok'), version: Type.String() }, { additionalProperties: false });

export const EnrolledSchema = Type.Object({ siteId: Uuid, credential: Type.String(), siteName: Type.String() }, { additionalProperties: false });

export const EnrolmentCodeSchema = Type.Object({ code: Type.String(), expiresAt: DateTime }, { additionalProperties: false });

export const AcknowledgementSchema = Type.Object(
  {
    siteId: Uuid,
    after: Type.Integer({ minimum: 0 }),
    acknowledged: Type.Integer({ minimum: 0 }),
    stored: Type.Object(
      { intervals: Type.Integer(), days: Type.Integer(), alerts: Type.Integer(), deletedAlerts: Type.Integer() },
      { additionalProperties: false },
    ),
    quarantined: Type.Integer({ minimum: 0 }),
    clockSkewMs: Type.Number(),
    acknowledgeAlerts: Type.Optional(
      Type.Array(Type.Object({ id: Type.Integer({ minimum: 1 }), occurredAt: DateTime, by: Type.String(), at: DateTime }, { additionalProperties: false }), {
        maxItems: 100,
        description:
          "The site's alerts a fleet user acknowledged (`by`, `at`) that the box has still to acknowledge: the alert with this id and time, if it is still active there. Left out when there are none.",
      }),
    ),
  },
  { additionalProperties: false },
);

/** `POST /api/fleet/sites/:id/alerts/:alert/acknowledge`: the request, on its way to the site's box. */
export const AckRequestSchema = Type.Object(
  { siteId: Uuid, alertId: Type.Integer({ minimum: 1 }), requestedBy: Type.String(), requestedAt: DateTime },
  { additionalProperties: false },
);

/** A site's alert: the site id and the box's alert number. */
export const SiteAlertParamsSchema = Type.Object({
  id: Type.String({ description: 'The site id (a UUID).' }),
  alert: Type.String({ description: "The alert's number on the site's box." }),
});

/** A route's `:id`: a site id. Anything else names no site (404, as a site outside the caller's list). */
export const SiteParamsSchema = Type.Object({ id: Type.String({ description: 'The site id (a UUID).' }) });

const PageQuery = {
  page: Type.Optional(Type.String({ pattern: '^[0-9]{1,7}$', description: 'From 1 (default 1).' })),
  pageSize: Type.Optional(Type.String({ pattern: '^[0-9]{1,3}$', description: '1 to 500.' })),
};
export const HealthQuerySchema = Type.Object({ ...PageQuery, site: Type.Optional(Uuid) }, { additionalProperties: false });
export const PageQuerySchema = Type.Object(PageQuery, { additionalProperties: false });
export const AlertQuerySchema = Type.Object(
  { ...PageQuery, status: Type.Optional(Type.Union([Type.Literal('open'), Type.Literal('all')])) },
  { additionalProperties: false },
);
export const AlertExportQuerySchema = AlertQuerySchema;
