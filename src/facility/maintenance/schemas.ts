// Maintenance record shapes: the record, create/update bodies and the list filters.
import { Type, type Static } from '@sinclair/typebox';
import { MAINTENANCE_STATUSES, MAINTENANCE_TYPES } from '../../platform/db/schema/facility.ts';
import { NullableTimestamp, PageQuery, Timestamp, stringEnum, stringEnumList, timeBound } from '../../platform/http/schemas.ts';

const NullableText = (maxLength: number) => Type.Union([Type.String({ maxLength }), Type.Null()]);

export const MaintenanceType = stringEnum(MAINTENANCE_TYPES);
export const MaintenanceStatus = stringEnum(MAINTENANCE_STATUSES, { description: 'any move is allowed' });

export const Maintenance = Type.Object({
  id: Type.Integer(),
  equipment: Type.String(),
  type: MaintenanceType,
  description: Type.String(),
  status: MaintenanceStatus,
  scheduledAt: NullableTimestamp,
  completedAt: Type.Union([Timestamp, Type.Null()], { description: 'set by the server when the status becomes done, cleared when it leaves done' }),
  assignee: Type.Union([Type.String(), Type.Null()]),
  cost: Type.Union([Type.Number(), Type.Null()]),
  faultId: Type.Union([Type.Integer(), Type.Null()], { description: 'the fault this work addresses; null once that fault is deleted' }),
  alertId: Type.Union([Type.Integer(), Type.Null()], { description: 'the alert this work was opened from; null once that alert is deleted' }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type MaintenanceView = Static<typeof Maintenance>;

const writable = {
  equipment: Type.String({ minLength: 1, maxLength: 200 }),
  type: MaintenanceType,
  description: Type.Optional(Type.String({ maxLength: 4000 })),
  status: Type.Optional(MaintenanceStatus),
  scheduledAt: Type.Optional(Type.Union([Timestamp, Type.Null()])),
  assignee: Type.Optional(NullableText(200)),
  cost: Type.Optional(Type.Union([Type.Number({ minimum: 0, maximum: 1e12 }), Type.Null()])),
  faultId: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], { description: 'must be the id of an existing fault (400 otherwise)' })),
};

export const MaintenanceCreate = Type.Object(writable, {
  additionalProperties: false,
  description: 'status defaults to planned; completedAt is set by the server. Unknown fields are dropped.',
});
export type MaintenanceCreateInput = Static<typeof MaintenanceCreate>;

export const MaintenanceUpdate = Type.Partial(Type.Object(writable), {
  additionalProperties: false,
  minProperties: 1,
  description: 'Partial update: omitted fields keep their value; null clears a nullable field. completedAt follows the status.',
});
export type MaintenanceUpdateInput = Static<typeof MaintenanceUpdate>;

export const MaintenanceListQuery = Type.Object(
  {
    ...PageQuery,
    status: Type.Optional(stringEnumList(MAINTENANCE_STATUSES)),
    type: Type.Optional(stringEnumList(MAINTENANCE_TYPES)),
    faultId: Type.Optional(Type.Integer({ minimum: 1 })),
    q: Type.Optional(Type.String({ maxLength: 200, description: 'substring of equipment, description or assignee' })),
    from: Type.Optional(timeBound('scheduledAt at or after')),
    to: Type.Optional(timeBound('scheduledAt at or before')),
  },
  { additionalProperties: false, description: 'Newest first by createdAt; from/to select by scheduledAt.' },
);
export type MaintenanceListFilters = Static<typeof MaintenanceListQuery>;

export const MaintenanceFromBody = Type.Object(
  {
    type: Type.Optional(stringEnum(MAINTENANCE_TYPES)),
    description: Type.Optional(Type.String({ maxLength: 4000 })),
    scheduledAt: Type.Optional(Timestamp),
    assignee: Type.Optional(Type.Union([Type.String({ maxLength: 200 }), Type.Null()])),
  },
  { additionalProperties: false, description: 'Everything optional: equipment and description default from the alert or fault; type defaults to corrective.' },
);
export type MaintenanceFromInput = Static<typeof MaintenanceFromBody>;
