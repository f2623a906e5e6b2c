// Request and response shapes of /api/system/backup-schedule.
import { Type, type Static } from '@sinclair/typebox';
import { NullableTimestamp, Timestamp } from '../../platform/http/schemas.ts';

const Cron = Type.String({
  minLength: 1,
  maxLength: 120,
  description: 'node-cron expression, 5 fields (minute first) or 6 (second first), in the local time zone of the box; default "30 3 * * *" (03:30 nightly)',
  examples: ['30 3 * * *'],
});

const Count = (what: string, min: number) => Type.Integer({ minimum: min, maximum: 1000, description: what });

const Retention = Type.Object(
  {
    daily: Count('the last N days with a backup keep their newest one (at least 1)', 1),
    weekly: Count('the last N ISO weeks (Monday to Sunday) with a backup keep their newest one', 0),
    monthly: Count('the last N calendar months with a backup keep their newest one', 0),
  },
  {
    description:
      'Grandfather-father-son retention, counted in the local time of the box; one backup can count as daily, weekly and monthly at once. The newest backup is always kept. Applied after each successful run, here and on EMS_BACKUP_TARGET.',
  },
);

const TargetCheck = Type.Object(
  {
    dir: Type.String({ description: 'EMS_BACKUP_TARGET' }),
    at: NullableTimestamp,
    status: Type.Union([Type.Literal('ok'), Type.Literal('failed'), Type.Literal('never')], {
      description: 'outcome of the last copy; "never": none since this target was set',
    }),
    backup: Type.Union([Type.String(), Type.Null()]),
    error: Type.Union([Type.String(), Type.Null()]),
  },
  { description: 'The last copy of a backup to EMS_BACKUP_TARGET; null when no target is set' },
);

export const DrillCheck = Type.Object(
  {
    at: Timestamp,
    status: Type.Union([Type.Literal('ok'), Type.Literal('failed')]),
    backup: Type.Union([Type.String(), Type.Null()]),
    durationMs: Type.Integer(),
    tables: Type.Union([Type.Integer(), Type.Null()]),
    rows: Type.Union([Type.Integer(), Type.Null()]),
    files: Type.Union([Type.Integer(), Type.Null()]),
    error: Type.Union([Type.String(), Type.Null()]),
  },
  {
    description:
      'The last restore drill (weekly, after a scheduled backup): the backup restored into a temp dir, integrity_check, rows per table compared with the backup, files checked, migrations applied',
  },
);

export const BackupSchedule = Type.Object({
  enabled: Type.Boolean(),
  cron: Cron,
  retention: Retention,
  lastRunAt: NullableTimestamp,
  lastStatus: Type.Union([Type.String(), Type.Null()], { description: '"ok", or "failed: <reason>", of the last run; read-only' }),
  lastFile: Type.Union([Type.String(), Type.Null()], { description: 'name of the newest successful backup in <data dir>/backups/; read-only' }),
  nextRunAt: Type.Union([Timestamp, Type.Null()], { description: 'when the schedule fires next; null while disabled' }),
  timezone: Type.String({
    description: "the box's own time zone, the one the cron's times of day are read in (not necessarily the site's): show nextRunAt in it beside the cron",
  }),
  updatedAt: Timestamp,
  target: Type.Union([TargetCheck, Type.Null()]),
  drill: Type.Union([DrillCheck, Type.Null()]),
});
export type BackupScheduleView = Static<typeof BackupSchedule>;

export const BackupScheduleUpdate = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean()),
    cron: Type.Optional(Cron),
    retention: Type.Optional(
      Type.Union([
        Type.Partial(Retention, { minProperties: 1 }),
        Type.Integer({ minimum: 1, maximum: 1000, description: 'a plain number (the earlier keep-N form) sets the daily count and leaves weekly and monthly' }),
      ]),
    ),
  },
  {
    minProperties: 1,
    description: 'Fields left out keep their value; read-only fields sent back from a GET are ignored. A body with no writable field is 400.',
  },
);
export type BackupScheduleChanges = Static<typeof BackupScheduleUpdate>;

/** GET /api/system/backups: the backups on the box, newest first, and the last restore drill. */
export const BackupList = Type.Object({
  items: Type.Array(
    Type.Object({
      name: Type.String({ description: 'ems-<UTC timestamp>.db: the name to download it by' }),
      createdAt: Timestamp,
      sizeBytes: Type.Integer({ minimum: 0, description: 'the database file' }),
      fileCount: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
        description: 'files of the uploads, models and avatars trees captured beside it; null: database only',
      }),
      filesBytes: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
    }),
  ),
  drill: Type.Union([DrillCheck, Type.Null()], { description: 'the last restore drill (scheduled, emsctl or from here)' }),
  lastRestore: Type.Union(
    [
      Type.Object({
        backup: Type.String(),
        requestedBy: Type.String({ description: 'who asked for it' }),
        requestedAt: Timestamp,
        finishedAt: Timestamp,
        status: Type.Union([Type.Literal('ok'), Type.Literal('failed')]),
        error: Type.Union([Type.String(), Type.Null()], { description: 'why it failed; the data dir was then left as it was' }),
        replacedDir: Type.Union([Type.String(), Type.Null()], { description: 'where the replaced database and files were moved on the box' }),
      }),
      Type.Null(),
    ],
    { description: 'the last restore asked from the staff app (POST /api/system/backups/{name}/restore); null: none yet' },
  ),
});

/** POST /api/system/backups: what a backup run now did. */
export const BackupRun = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('failed'), Type.Literal('skipped')]),
  name: Type.Optional(Type.String()),
  sizeBytes: Type.Optional(Type.Integer({ minimum: 0 })),
  durationMs: Type.Optional(Type.Integer({ minimum: 0 })),
  reason: Type.Optional(Type.String({ description: 'why it failed or was skipped (another run in progress, the service stopping)' })),
});

export const BackupName = Type.Object({
  name: Type.String({ pattern: '^ems-\\d{8}T\\d{6}\\.\\d{3}Z\\.db$', maxLength: 40, description: 'a backup name from GET /api/system/backups' }),
});
