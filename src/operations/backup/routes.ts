// GET/PUT /api/system/backup-schedule (admin): the schedule the service runs its backups on.
import fs from 'node:fs';
import { Type } from '@sinclair/typebox';
import type { BackupScheduler } from './service.ts';
import type { AuditLog } from '../../platform/db/auditTrail.ts';
import { NotFound } from '../../platform/errors.ts';
import { defineRoute, Reply } from '../../platform/http/route.ts';
import { ErrorBody } from '../../platform/http/schemas.ts';
import { BackupList, BackupName, BackupRun, BackupSchedule, BackupScheduleUpdate, DrillCheck } from './schemas.ts';

const tags = ['system'];

export type BackupRouteNeeds = { backups: BackupScheduler; audit: AuditLog };

export function backupRoutes({ backups, audit }: BackupRouteNeeds) {
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
    // The box from the browser (issue 53): the backups, a backup now, the restore drill, a download; each audited.
    defineRoute({
      method: 'GET',
      path: '/api/system/backups',
      access: 'admin',
      summary: 'The backups on the box, newest first, and the last restore drill',
      description: 'Completed backups in <data dir>/backups (a run in progress is not listed). Changes nothing.',
      tags,
      schemas: { response: { 200: BackupList, 401: ErrorBody, 403: ErrorBody } },
      handler: () => backups.list(),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/system/backups',
      access: 'admin',
      summary: 'Take a backup now (audited)',
      description:
        'The same run as the schedule (the database, the uploads, models and avatars trees, the copy to EMS_BACKUP_TARGET, retention), answered when it is done. ' +
        'status skipped: another run is in progress. The audit trail records who asked and the outcome.',
      tags,
      schemas: { response: { 201: BackupRun, 401: ErrorBody, 403: ErrorBody } },
      handler: async ({ user }) => {
        const outcome = await backups.runNow('manual');
        const view =
          outcome.status === 'ok'
            ? { status: 'ok' as const, name: outcome.backup.name, sizeBytes: outcome.backup.sizeBytes, durationMs: outcome.backup.durationMs }
            : { status: outcome.status, reason: outcome.status === 'failed' ? outcome.error : outcome.reason };
        audit.record({ actor: user, action: 'backup.run', resource: 'backup', resourceId: view.name ?? null, after: view });
        return new Reply(201, view);
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/system/backups/drill',
      access: 'admin',
      summary: 'Run the restore drill now on the newest backup (audited)',
      description:
        'Restores the newest backup into a scratch folder, opens it, counts its tables and rows and checks its files against the manifest, then removes the copy; the live database is not touched. 409 while a backup or restore runs.',
      tags,
      schemas: { response: { 200: DrillCheck, 401: ErrorBody, 403: ErrorBody, 409: ErrorBody } },
      handler: async ({ user }) => {
        const drill = await backups.drillNow();
        audit.record({
          actor: user,
          action: 'backup.drill',
          resource: 'backup',
          resourceId: drill.backup,
          after: { status: drill.status, error: drill.error },
        });
        return drill;
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/system/backups/:name',
      access: 'admin',
      summary: "Download a backup's database file (audited)",
      description: 'The SQLite database of the backup as it was written; the captured file trees stay on the box. 404 for a name not listed.',
      tags,
      raw: { contentType: 'application/vnd.sqlite3' },
      schemas: {
        params: BackupName,
        response: { 200: Type.String({ description: 'the SQLite file' }), 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody },
      },
      handler: ({ params, user, ctx }) => {
        const backup = backups.find(params.name);
        if (!backup) throw new NotFound(`No backup named ${params.name}`);
        audit.record({ actor: user, action: 'backup.download', resource: 'backup', resourceId: backup.name });
        ctx.status = 200;
        ctx.type = 'application/vnd.sqlite3';
        ctx.attachment(backup.name);
        ctx.length = backup.sizeBytes;
        ctx.body = fs.createReadStream(backup.file);
      },
    }),
  ];
}
