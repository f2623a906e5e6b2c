// POST /api/system/backups/:name/restore (admin, audited): the guided restore from the staff app (issue 53).
import { Type } from '@sinclair/typebox';
import type { AuditLog } from '../../platform/db/auditTrail.ts';
import { BadRequest, Conflict, NotFound } from '../../platform/errors.ts';
import { defineRoute, Reply } from '../../platform/http/route.ts';
import { ErrorBody } from '../../platform/http/schemas.ts';
import { BackupInvalid } from './errors.ts';
import { requestRestore, restorePending } from './guidedRestore.ts';
import { BackupName } from './schemas.ts';
import type { BackupScheduler } from './service.ts';

export type RestoreRouteNeeds = {
  backups: BackupScheduler;
  audit: AuditLog;
  config: { dataDir: string };
  /** Restarts the service in this process (src/app/host.ts); absent where nothing hosts it (a test's bare service). */
  restart?: () => void;
};

const RestoreConfirm = Type.Object(
  { confirm: Type.String({ maxLength: 40, description: 'the backup name again: the caller has read what a restore replaces' }) },
  { additionalProperties: false },
);

const RestoreAccepted = Type.Object({
  backup: Type.String(),
  requestedAt: Type.String({ format: 'date-time' }),
  steps: Type.Array(Type.String(), { description: 'what happens now, in order: the page follows GET /api/health' }),
});

export function restoreRoutes({ backups, audit, config, restart }: RestoreRouteNeeds) {
  const { dataDir } = config;
  return [
    defineRoute({
      method: 'POST',
      path: '/api/system/backups/:name/restore',
      access: 'admin',
      summary: 'Restore a backup: the service stops, restores it and starts again (audited)',
      example: { confirm: 'ems-20261128T020000.000Z.db' },
      description:
        'Checks the backup (integrity, its captured files) while the service still runs, then answers 202 and restarts: ' +
        'the database and the uploads, models and avatars trees are replaced by the backup (what they replace is moved to ' +
        '<data dir>/replaced/<UTC>, never deleted), the service starts on the same port, and everyone signs in again. ' +
        'While it restores, every request answers 503; GET /api/health answers 200 again when it is back, and ' +
        'GET /api/system/backups carries the outcome (lastRestore). confirm must repeat the name. 409 for a damaged backup, while ' +
        'another restore waits, or where the service cannot restart itself (use "emsctl backup restore" then).',
      tags: ['system'],
      schemas: {
        params: BackupName,
        body: RestoreConfirm,
        response: { 202: RestoreAccepted, 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody },
      },
      handler: ({ params, body, user, ctx }) => {
        if (body.confirm !== params.name) {
          throw new BadRequest('confirm must repeat the backup name', [{ path: 'confirm', message: `must be ${params.name}` }]);
        }
        const backup = backups.find(params.name);
        if (!backup) throw new NotFound(`No backup named ${params.name}`);
        if (!restart) throw new Conflict('This service cannot restart itself here; stop it and use "emsctl backup restore"');
        if (restorePending(dataDir)) throw new Conflict('A restore is already under way');
        let request: ReturnType<typeof requestRestore>;
        try {
          request = requestRestore(dataDir, backup, user);
        } catch (error) {
          if (error instanceof BackupInvalid) throw new Conflict(`The backup cannot be restored: ${error.message}`);
          throw error;
        }
        audit.record({ actor: user, action: 'backup.restore.requested', resource: 'backup', resourceId: backup.name });
        // Restart once the answer is on its way: the page must hear the 202 before the service goes.
        // ('close' comes after the answer is sent, and also when the caller went away first: the request is then
        // applied all the same, never left waiting.)
        ctx.res.once('close', () => setImmediate(restart));
        return new Reply(202, {
          backup: request.backup,
          requestedAt: request.requestedAt,
          steps: ['checked', 'stopping', 'restoring', 'starting', 'sign-in'],
        });
      },
    }),
  ];
}
