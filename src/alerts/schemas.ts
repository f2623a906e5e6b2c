// Alert shapes: the record, create/update bodies and the list filters.
import { Type, type Static } from '@sinclair/typebox';
import { ALERT_LEVELS, ALERT_STATUSES } from '../db/schema/facility.ts';
import { NullableTimestamp, PageQuery, Timestamp, stringEnum, stringEnumList, timeBound } from '../http/schemas.ts';

export const AlertLevel = stringEnum(ALERT_LEVELS);
export const AlertStatus = stringEnum(ALERT_STATUSES, {
  description: 'active → acknowledged → resolved (active → resolved is allowed too); never backwards',
});

const Text = (maxLength: number) => Type.String({ minLength: 1, maxLength });
const NullableText = (maxLength: number) => Type.Union([Type.String({ maxLength }), Type.Null()]);
const UserId = Type.Union([Type.Integer(), Type.Null()], { description: 'user id, set by the server from the caller; null once that user is deleted' });

export const Alert = Type.Object({
  id: Type.Integer(),
  title: Type.String(),
  message: Type.String(),
  level: AlertLevel,
  source: Type.Union([Type.String(), Type.Null()], { description: 'device or point code' }),
  area: Type.Union([Type.String(), Type.Null()]),
  status: AlertStatus,
  occurredAt: Timestamp,
  acknowledgedAt: NullableTimestamp,
  acknowledgedBy: UserId,
  resolvedAt: NullableTimestamp,
  resolvedBy: UserId,
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type AlertView = Static<typeof Alert>;

export const AlertCreate = Type.Object(
  {
    title: Text(200),
    message: Type.Optional(Type.String({ maxLength: 4000 })),
    level: AlertLevel,
    source: Type.Optional(NullableText(200)),
    area: Type.Optional(NullableText(200)),
    occurredAt: Type.Optional(Timestamp),
  },
  { additionalProperties: false, description: 'A new alert is always active; lifecycle fields are set by the server. Unknown fields are dropped.' },
);
export type AlertCreateInput = Static<typeof AlertCreate>;

export const AlertUpdate = Type.Object(
  {
    title: Type.Optional(Text(200)),
    message: Type.Optional(Type.String({ maxLength: 4000 })),
    level: Type.Optional(AlertLevel),
    source: Type.Optional(NullableText(200)),
    area: Type.Optional(NullableText(200)),
    occurredAt: Type.Optional(Timestamp),
    status: Type.Optional(AlertStatus),
  },
  {
    additionalProperties: false,
    minProperties: 1,
    description:
      'Partial update: omitted fields keep their value. A status change follows the lifecycle (409 otherwise) and the server records who and when, ' +
      'exactly as POST /alerts/:id/acknowledge and /resolve do. acknowledgedBy/At and resolvedBy/At cannot be sent.',
  },
);
export type AlertUpdateInput = Static<typeof AlertUpdate>;

const Levels = stringEnumList(ALERT_LEVELS);
const Statuses = stringEnumList(ALERT_STATUSES);

export const AlertListQuery = Type.Object(
  {
    ...PageQuery,
    status: Type.Optional(Statuses),
    level: Type.Optional(Levels),
    area: Type.Optional(Type.String({ maxLength: 200 })),
    q: Type.Optional(Type.String({ maxLength: 200, description: 'substring of title, message or source' })),
    from: Type.Optional(timeBound('occurredAt at or after')),
    to: Type.Optional(timeBound('occurredAt at or before')),
  },
  { additionalProperties: false },
);
export type AlertListFilters = Static<typeof AlertListQuery>;
