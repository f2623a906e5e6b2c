// Alert shapes: the record, create/update bodies and the list filters.
import { Type, type Static } from '@sinclair/typebox';
import { ALERT_LEVELS, ALERT_STATUSES } from '../../platform/db/schema/facility.ts';
import { ALERT_NOTE_KINDS } from '../../platform/db/schema/alarms.ts';
import { NullableTimestamp, PageQuery, Timestamp, stringEnum, stringEnumList, timeBound } from '../../platform/http/schemas.ts';

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
  alarmKey: Type.Union([Type.String(), Type.Null()], { description: 'the gateway alarm occurrence this alert was raised for; null for other alerts' }),
  clearedAt: Type.Union([Timestamp, Type.Null()], {
    description: 'when the gateway reported the condition back to normal; the alert still needs acknowledging',
  }),
  shelvedUntil: Type.Union([Timestamp, Type.Null()], {
    description: 'shelved until then: out of the active counts (a time in the past means no longer shelved)',
  }),
  shelvedBy: UserId,
  shelveReason: Type.Union([Type.String(), Type.Null()]),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type AlertView = Static<typeof Alert>;

const NoteText = Type.String({ maxLength: 2000 });

export const AlertMoveBody = Type.Object(
  { note: Type.Optional(NoteText) },
  { additionalProperties: false, description: 'An optional note, kept with the move (who and when are the caller and now).' },
);
export const AlertCommentBody = Type.Object({ text: Type.String({ minLength: 1, maxLength: 2000 }) }, { additionalProperties: false });
export const AlertShelveBody = Type.Object(
  {
    durationMin: Type.Integer({ minimum: 1, maximum: 7 * 24 * 60, description: 'how long, in minutes (at most 7 days)' }),
    reason: Type.String({ minLength: 1, maxLength: 500 }),
  },
  { additionalProperties: false },
);

export const AlertNote = Type.Object({
  id: Type.Integer(),
  alertId: Type.Integer(),
  kind: stringEnum(ALERT_NOTE_KINDS),
  text: Type.String(),
  userId: UserId,
  username: Type.Union([Type.String(), Type.Null()]),
  at: Timestamp,
});
export type AlertNoteView = Static<typeof AlertNote>;

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

export const AlertBulk = Type.Object(
  {
    action: stringEnum(['acknowledge', 'resolve', 'shelve'] as const),
    filter: Type.Object(
      {
        ids: Type.Optional(Type.Array(Type.Integer({ minimum: 1 }), { minItems: 1, maxItems: 5000, uniqueItems: true })),
        status: Type.Optional(Statuses),
        level: Type.Optional(Levels),
        area: Type.Optional(Type.String({ maxLength: 200 })),
        q: Type.Optional(Type.String({ maxLength: 200 })),
        from: Type.Optional(timeBound('occurredAt at or after')),
        to: Type.Optional(timeBound('occurredAt at or before')),
      },
      { additionalProperties: false, description: 'the list filters of GET /api/alerts, plus ids; every alert matching all of them' },
    ),
    note: Type.Optional(NoteText),
    durationMin: Type.Optional(Type.Integer({ minimum: 1, maximum: 7 * 24 * 60 })),
    reason: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
  },
  { additionalProperties: false, description: 'shelve needs durationMin and reason' },
);
export type AlertBulkInput = Static<typeof AlertBulk>;
export const AlertBulkResult = Type.Object({
  matched: Type.Integer(),
  changed: Type.Integer(),
  skipped: Type.Integer({ description: 'matched, but the move did not apply (e.g. already resolved)' }),
});

/** GET /api/alerts/counts (AlertService.counts): one meaning per count, shared by every screen. */
export const AlertCounts = Type.Object({
  active: Type.Integer({ minimum: 0, description: 'status active, not shelved now, and still in alarm (not cleared at the source): the Active tab' }),
  critical: Type.Integer({ minimum: 0, description: 'active (as above) with level critical' }),
  cleared: Type.Integer({ minimum: 0, description: 'status active and not shelved, but returned to normal at the source: still to be acknowledged' }),
  acknowledged: Type.Integer({ minimum: 0, description: 'status acknowledged' }),
  shelved: Type.Integer({ minimum: 0, description: 'status active, shelved until a time still ahead: out of active until then' }),
  resolved: Type.Integer({ minimum: 0, description: 'resolved' }),
});
