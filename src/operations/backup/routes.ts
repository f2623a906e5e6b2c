// GET/PUT /api/system/backup-schedule (admin): the schedule the service runs its backups on.
import type { BackupScheduler } from './service.ts';
import { defineRoute } from '../../platform/http/route.ts';
import { ErrorBody } from '../../platform/http/schemas.ts';
import { BackupSchedule, BackupScheduleUpdate } from './schemas.ts';

const tags = ['system'];

export type BackupRouteNeeds = { backups: BackupScheduler };

export function backupRoutes({ backups }: BackupRouteNeeds) {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/system/backup-schedule',
      access: 'admin',
      summary: 'Read the backup schedule and the outcome of its last run',
      description: 'The cron expression, the retention counts, whether backups are enabled, and the last run (time, status, file, duration). Changes nothing.',
      tags,
      schemas: { response: { 200: BackupSchedule, 401: ErrorBody, 403: ErrorBody } },
      handler: () => backups.get(),
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/system/backup-schedule',
      access: 'admin',
      summary: 'Change the backup schedule; it takes effect at once',
      example: { enabled: true, cron: '30 3 * * *', retention: { daily: 7, weekly: 4, monthly: 6 } },
      description:
        'Backups go to <data dir>/backups/ems-<UTC timestamp>.db with the uploads, models and avatars trees hard-linked into ems-<UTC timestamp>.files/. ' +
        'Restore with "emsctl backup restore <name>" while the service is stopped.',
      tags,
      schemas: { body: BackupScheduleUpdate, response: { 200: BackupSchedule, 400: ErrorBody, 401: ErrorBody, 403: ErrorBody } },
      handler: ({ body, user }) => backups.change(body, user),
    }),
  ];
}
