// Shapes of notification rules and of the notification record shown on an alert.
import { Type, type Static } from '@sinclair/typebox';
import { ALERT_LEVELS } from '../../platform/db/schema/facility.ts';
import { NOTIFICATION_KINDS, NOTIFICATION_STATUSES } from '../../platform/db/schema/alarms.ts';
import { Email, PageQuery, Timestamp, stringEnum } from '../../platform/http/schemas.ts';

const Emails = Type.Array(Email, { maxItems: 50, uniqueItems: true });

export const NotificationRule = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  levels: Type.Array(stringEnum(ALERT_LEVELS)),
  area: Type.Union([Type.String(), Type.Null()], { description: 'null: every area' }),
  recipients: Type.Array(Type.String()),
  escalateAfterMin: Type.Union([Type.Integer(), Type.Null()], {
    description: 'a critical alert still unacknowledged after this many minutes goes to escalateTo',
  }),
  escalateTo: Type.Array(Type.String()),
  enabled: Type.Boolean(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type NotificationRuleView = Static<typeof NotificationRule>;

const RuleFields = {
  name: Type.String({ minLength: 1, maxLength: 100 }),
  levels: Type.Array(stringEnum(ALERT_LEVELS), { minItems: 1, uniqueItems: true }),
  area: Type.Union([Type.String({ minLength: 1, maxLength: 200 }), Type.Null()]),
  recipients: Type.Array(Email, { minItems: 1, maxItems: 50, uniqueItems: true }),
  escalateAfterMin: Type.Union([Type.Integer({ minimum: 1, maximum: 7 * 24 * 60 }), Type.Null()]),
  escalateTo: Emails,
  enabled: Type.Boolean(),
};

export const NotificationRuleCreate = Type.Object(
  {
    name: RuleFields.name,
    levels: RuleFields.levels,
    recipients: RuleFields.recipients,
    area: Type.Optional(RuleFields.area),
    escalateAfterMin: Type.Optional(RuleFields.escalateAfterMin),
    escalateTo: Type.Optional(RuleFields.escalateTo),
    enabled: Type.Optional(RuleFields.enabled),
  },
  { additionalProperties: false },
);
export type NotificationRuleCreateInput = Static<typeof NotificationRuleCreate>;

export const NotificationRuleUpdate = Type.Partial(Type.Object(RuleFields), { additionalProperties: false, minProperties: 1 });
export type NotificationRuleUpdateInput = Static<typeof NotificationRuleUpdate>;

export const NotificationRuleListQuery = Type.Object({ ...PageQuery }, { additionalProperties: false });

export const NotificationSend = Type.Object({
  id: Type.Integer(),
  alertId: Type.Union([Type.Integer(), Type.Null()]),
  ruleId: Type.Union([Type.Integer(), Type.Null()]),
  kind: stringEnum(NOTIFICATION_KINDS),
  recipient: Type.String(),
  status: stringEnum(NOTIFICATION_STATUSES),
  error: Type.Union([Type.String(), Type.Null()]),
  at: Timestamp,
});
