// What the site administration routes take and answer (src/fleet/siteAdmin.ts).
import { type Static, Type } from '@sinclair/typebox';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';

const Reason = Type.String({ minLength: 1, maxLength: 500, description: 'Why: kept in the site’s audit trail.' });

export const RenameSiteSchema = Type.Object({ name: Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' }) }, { additionalProperties: false });

export const SecondBoxDecisionSchema = Type.Object(
  {
    decision: Type.Union([Type.Literal('release'), Type.Literal('discard')]),
    /** The quarantined box's install id (in the alarm, and in `emsctl fleet status` on that box). */
    installId: Type.String({ pattern: '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' }),
    reason: Reason,
  },
  { additionalProperties: false },
);

export const SiteAuditEntrySchema = Type.Object(
  {
    id: Type.Integer(),
    at: Type.String({ format: 'date-time' }),
    user: Type.String(),
    action: Type.Union(
      (['rename', 'revoke', 'readmit', 'choose-box', 'release-second-box', 'discard-second-box', 'acknowledge-alert'] as const).map((a) => Type.Literal(a)),
    ),
    reason: Type.Union([Type.String(), Type.Null()]),
    detail: Type.Record(Type.String(), Type.Unknown()),
  },
  { additionalProperties: false },
);
export const SiteAuditPageSchema = Type.Object(
  { items: Type.Array(SiteAuditEntrySchema), total: Type.Integer({ minimum: 0 }), page: Type.Integer({ minimum: 1 }), pageSize: Type.Integer({ minimum: 1 }) },
  { additionalProperties: false },
);
export type AuditAction = Static<typeof SiteAuditEntrySchema>['action'];

const ajv = new Ajv({ allErrors: false, strict: true });
addFormats.default(ajv, ['date-time']);
export const validateRename = ajv.compile<Static<typeof RenameSiteSchema>>(RenameSiteSchema);
export const validateSecondBoxDecision = ajv.compile<Static<typeof SecondBoxDecisionSchema>>(SecondBoxDecisionSchema);
