// Fault shapes: the record, create/update bodies, list filters and the stats snapshot.
import { Type, type Static } from '@sinclair/typebox';
import { FAULT_SEVERITIES, FAULT_STATUSES } from '../../platform/db/schema/facility.ts';
import { PageQuery, Timestamp, stringEnum, stringEnumList, timeBound } from '../../platform/http/schemas.ts';

export const FaultSeverity = stringEnum(FAULT_SEVERITIES);
export const FaultStatus = stringEnum(FAULT_STATUSES, {
  description: 'open | in_progress | resolved | closed; any move is allowed (a fault can be reopened)',
});

const NullableText = (maxLength: number) => Type.Union([Type.String({ maxLength }), Type.Null()]);

export const Fault = Type.Object({
  id: Type.Integer(),
  device: Type.String(),
  code: Type.Union([Type.String(), Type.Null()]),
  description: Type.String(),
  severity: FaultSeverity,
  status: FaultStatus,
  area: Type.Union([Type.String(), Type.Null()]),
  assignee: Type.Union([Type.String(), Type.Null()]),
  reportedAt: Timestamp,
  resolvedAt: Type.Union([Timestamp, Type.Null()], {
    description: 'set by the server when the status becomes resolved or closed (kept from resolved to closed), cleared when the fault is reopened',
  }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type FaultView = Static<typeof Fault>;

const writable = {
  device: Type.String({ minLength: 1, maxLength: 200 }),
  code: Type.Optional(NullableText(100)),
  description: Type.Optional(Type.String({ maxLength: 4000 })),
  severity: FaultSeverity,
  status: Type.Optional(FaultStatus),
  area: Type.Optional(NullableText(200)),
  assignee: Type.Optional(NullableText(200)),
  reportedAt: Type.Optional(Timestamp),
};

export const FaultCreate = Type.Object(writable, {
  additionalProperties: false,
  description: 'status defaults to open; reportedAt defaults to now; resolvedAt is set by the server. Unknown fields are dropped.',
});
export type FaultCreateInput = Static<typeof FaultCreate>;

export const FaultUpdate = Type.Partial(Type.Object(writable), {
  additionalProperties: false,
  minProperties: 1,
  description: 'Partial update: omitted fields keep their value. resolvedAt follows the status and cannot be sent.',
});
export type FaultUpdateInput = Static<typeof FaultUpdate>;

export const FaultListQuery = Type.Object(
  {
    ...PageQuery,
    status: Type.Optional(stringEnumList(FAULT_STATUSES)),
    severity: Type.Optional(stringEnumList(FAULT_SEVERITIES)),
    area: Type.Optional(Type.String({ maxLength: 200 })),
    q: Type.Optional(Type.String({ maxLength: 200, description: 'substring of device, code, description or assignee' })),
    from: Type.Optional(timeBound('reportedAt at or after')),
    to: Type.Optional(timeBound('reportedAt at or before')),
  },
  { additionalProperties: false },
);
export type FaultListFilters = Static<typeof FaultListQuery>;

export const FaultStats = Type.Object(
  {
    total: Type.Integer(),
    open: Type.Integer(),
    inProgress: Type.Integer(),
    resolved: Type.Integer(),
    closed: Type.Integer(),
    bySeverity: Type.Object({ low: Type.Integer(), medium: Type.Integer(), high: Type.Integer(), critical: Type.Integer() }),
    mttrHours: Type.Union([Type.Number(), Type.Null()], {
      description: 'mean of resolvedAt − reportedAt over resolved and closed faults, in hours; null when there are none',
    }),
    updatedAt: Timestamp,
  },
  { description: 'A snapshot row rewritten in the same transaction as every fault write, so it always matches the faults table.' },
);
export type FaultStatsView = Static<typeof FaultStats>;
