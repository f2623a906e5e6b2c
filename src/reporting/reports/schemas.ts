// Report shapes: built-in templates and scheduled report plans.
import { Type, type Static } from '@sinclair/typebox';
import { REPORT_FORMATS } from '../../platform/db/schema/facility.ts';
import { REPORT_RUN_DELIVERIES, REPORT_RUN_STATUSES, REPORT_RUN_TRIGGERS } from '../../platform/db/schema/reports.ts';
import { DISPLAY_TEXT_RULE, displayTextPattern, Email, NullableTimestamp, PageQuery, Timestamp, stringEnum } from '../../platform/http/schemas.ts';

export const ReportTemplate = Type.Object({
  id: Type.Integer(),
  key: Type.String({ description: 'stable machine name, e.g. energy-daily' }),
  name: Type.String(),
  description: Type.String(),
});
export type ReportTemplateView = Static<typeof ReportTemplate>;

export const ReportTemplateList = Type.Object(
  { items: Type.Array(ReportTemplate) },
  { description: 'The built-in templates (seeded by migration), ordered by id; a short fixed list, so not paginated.' },
);

const ReportFormat = stringEnum(REPORT_FORMATS);
const Cron = Type.String({
  minLength: 1,
  maxLength: 100,
  description: 'node-cron expression: 5 fields (minute first) or 6 (second first), e.g. "0 7 * * MON"; checked with node-cron validate',
});
const Recipients = Type.Array(Email, { minItems: 1, maxItems: 50, uniqueItems: true, description: 'email addresses the report goes to' });

export const ReportPlan = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  templateId: Type.Integer(),
  cron: Type.String(),
  format: ReportFormat,
  recipients: Type.Array(Type.String()),
  enabled: Type.Boolean(),
  lastRunAt: NullableTimestamp,
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type ReportPlanView = Static<typeof ReportPlan>;

const writable = {
  name: Type.String({
    minLength: 1,
    maxLength: 200,
    pattern: displayTextPattern(true),
    description: `the report's title: no leading or trailing space, not blank; ${DISPLAY_TEXT_RULE}`,
  }),
  templateId: Type.Union([Type.Integer({ minimum: 1 }), Type.String({ minLength: 1, maxLength: 100 })], {
    description: 'a report template: its id or its key, e.g. "weekly-energy" (400 when there is none); answered as the id',
  }),
  cron: Cron,
  format: Type.Optional(ReportFormat),
  recipients: Recipients,
  enabled: Type.Optional(Type.Boolean()),
};

export const ReportPlanCreate = Type.Object(writable, {
  additionalProperties: false,
  description: 'format defaults to pdf (mailed with a CSV of the same figures), enabled to true; lastRunAt is kept by the server. Unknown fields are dropped.',
});
export type ReportPlanCreateInput = Static<typeof ReportPlanCreate>;

export const ReportPlanUpdate = Type.Partial(Type.Object(writable), {
  additionalProperties: false,
  minProperties: 1,
  description: 'Partial update: omitted fields keep their value; recipients, when sent, replace the whole list.',
});
export type ReportPlanUpdateInput = Static<typeof ReportPlanUpdate>;

export const ReportPlanListQuery = Type.Object(
  {
    ...PageQuery,
    q: Type.Optional(Type.String({ maxLength: 200, description: 'substring of the name' })),
    templateId: Type.Optional(Type.Integer({ minimum: 1 })),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, description: 'Newest first by createdAt.' },
);
export type ReportPlanListFilters = Static<typeof ReportPlanListQuery>;

export const ReportRunFileView = Type.Object({
  name: Type.String({ description: 'download name; GET /api/reports/runs/{id}/files/{name}' }),
  contentType: Type.String(),
  sizeBytes: Type.Integer(),
});

export const ReportRun = Type.Object({
  id: Type.Integer(),
  planId: Type.Integer(),
  trigger: stringEnum(REPORT_RUN_TRIGGERS, {
    description: 'schedule: on its cron; catch-up: a time missed while the service was down, run once at start; manual: run now',
  }),
  requestedBy: Type.Union([Type.Integer(), Type.Null()], { description: 'user who asked for a manual run' }),
  status: stringEnum(REPORT_RUN_STATUSES),
  format: Type.String(),
  periodFrom: Type.String({ format: 'date', description: 'first local day covered' }),
  periodTo: Type.String({ format: 'date', description: 'local day after the last one covered (exclusive)' }),
  startedAt: Timestamp,
  finishedAt: NullableTimestamp,
  durationMs: Type.Union([Type.Integer(), Type.Null()]),
  sizeBytes: Type.Union([Type.Integer(), Type.Null()], { description: 'bytes of all files of the run' }),
  mailAttempts: Type.Integer(),
  delivery: Type.Union([stringEnum(REPORT_RUN_DELIVERIES), Type.Null()], {
    description:
      'what became of the mail: sent (handed to the mail server), logged (EMS_SMTP_URL is not set: written to the service log only, nobody received it), ' +
      'failed (error says why); null while running or when no mail was tried (the build failed, or the daily cap)',
  }),
  error: Type.Union([Type.String(), Type.Null()]),
  files: Type.Array(ReportRunFileView, { description: 'empty once retention removed them (filesDeletedAt)' }),
  filesDeletedAt: NullableTimestamp,
});
export type ReportRunView = Static<typeof ReportRun>;

export const ReportRunListQuery = Type.Object({ ...PageQuery }, { additionalProperties: false, description: 'Newest first by startedAt.' });

export const ReportRunFileParams = Type.Object({
  id: Type.Integer({ minimum: 1 }),
  name: Type.String({ minLength: 1, maxLength: 255 }),
});
