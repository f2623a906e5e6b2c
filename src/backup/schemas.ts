// Request and response shapes of /api/system/backup-schedule.
import { Type, type Static } from '@sinclair/typebox';
import { NullableTimestamp, Timestamp } from '../http/schemas.ts';

const Cron = Type.String({
  minLength: 1,
  maxLength: 120,
  description: 'node-cron expression, 5 fields (minute first) or 6 (second first), in the local time zone of the box; e.g. "0 3 * * *"',
  examples: ['0 3 * * *'],
});
const Retention = Type.Integer({ minimum: 1, maximum: 1000, description: 'how many backups to keep; older ones are deleted after each successful run' });

export const BackupSchedule = Type.Object({
  enabled: Type.Boolean(),
  cron: Cron,
  retention: Retention,
  lastRunAt: NullableTimestamp,
  lastStatus: Type.Union([Type.String(), Type.Null()], { description: '"ok", or "failed: <reason>", of the last run; read-only' }),
  lastFile: Type.Union([Type.String(), Type.Null()], { description: 'name of the newest successful backup in <data dir>/backups/; read-only' }),
  nextRunAt: Type.Union([Timestamp, Type.Null()], { description: 'when the schedule fires next; null while disabled' }),
  updatedAt: Timestamp,
});
export type BackupScheduleView = Static<typeof BackupSchedule>;

export const BackupScheduleUpdate = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean()),
    cron: Type.Optional(Cron),
    retention: Type.Optional(Retention),
  },
  { description: 'Fields left out keep their value; read-only fields sent back from a GET are ignored.' },
);
export type BackupScheduleChanges = Static<typeof BackupScheduleUpdate>;
