// Shapes of GET /api/audit: the trail entry and its filters.
import { Type } from '@sinclair/typebox';
import { PageQuery, Timestamp } from '../../platform/http/schemas.ts';

const TimeBound = (description: string) => Type.String({ format: 'date-time-or-date', description: `${description}; a date-only value means UTC midnight` });

export const AuditQuery = Type.Object({
  ...PageQuery,
  resource: Type.Optional(
    Type.String({ minLength: 1, maxLength: 64, description: 'the table name, e.g. users, alerts, faults, energy_areas, platform_config' }),
  ),
  resourceId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  action: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  userId: Type.Optional(Type.Integer({ minimum: 1, description: 'the acting user' })),
  from: Type.Optional(TimeBound('entries at or after')),
  to: Type.Optional(TimeBound('entries at or before (a date-only value includes that whole day)')),
});

export const AuditEntry = Type.Object({
  id: Type.Integer(),
  at: Timestamp,
  userId: Type.Union([Type.Integer(), Type.Null()], { description: 'the acting user; null for system actions' }),
  username: Type.Union([Type.String(), Type.Null()], { description: 'kept as it was when the entry was written' }),
  action: Type.String(),
  resource: Type.String(),
  resourceId: Type.Union([Type.String(), Type.Null()]),
  before: Type.Unknown({ description: 'the changed fields before the write (status and role changes always carry it), or null' }),
  after: Type.Unknown({ description: 'the changed fields after the write, or null' }),
});
