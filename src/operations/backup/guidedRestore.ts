// The guided restore from the browser (issue 53): the route checks the backup and leaves a request in the data dir;
// the service then restarts (src/app/host.ts: in the same process, on the same port) and the start-up applies the
// request before it opens the database, with emsctl's own restoreBackup. The outcome is kept beside the database and
// written to the restored database's audit trail. Decision and steps: docs/staff-app.md "Restore a backup".
import fs from 'node:fs';
import path from 'node:path';
import type { Actor, AuditLog } from '../../platform/db/auditTrail.ts';
import type { Logger } from '../../platform/logger.ts';
import { restoreBackup, verifyBackup, type BackupInfo } from './archive.ts';

/** The request the next start applies; written by the route, removed by the start that applies it. */
export const RESTORE_PENDING_FILE = 'restore-pending.json';
/** The outcome of the last guided restore, read by GET /api/system/backups. */
export const RESTORE_LAST_FILE = 'restore-last.json';

export type RestoreRequest = { backup: string; dbOnly: boolean; requestedBy: Actor; requestedAt: string };

export type RestoreOutcome = RestoreRequest & {
  finishedAt: string;
  status: 'ok' | 'failed';
  /** Why it failed; the data dir is then as it was (restoreBackup puts back what it moved). */
  error: string | null;
  /** Where the replaced database and files were moved on the box (<data dir>/replaced/<UTC>). */
  replacedDir: string | null;
  fileCount: number | null;
};

function writeJson(file: string, value: unknown): void {
  const temp = `${file}.tmp`;
  fs.writeFileSync(temp, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 });
  fs.renameSync(temp, file);
}

function readJson<T>(file: string): T | null {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as T;
  } catch {
    return null;
  }
}

/**
 * Checks the backup (integrity and its captured files, as emsctl does before asking for downtime) and leaves the
 * request for the next start. Throws BackupInvalid for a damaged backup, before anything stops.
 */
export function requestRestore(dataDir: string, backup: BackupInfo, actor: Actor, now = new Date()): RestoreRequest {
  const dbOnly = backup.filesDir === null;
  verifyBackup(backup.file, { dbOnly });
  const request: RestoreRequest = { backup: backup.name, dbOnly, requestedBy: { id: actor.id, username: actor.username }, requestedAt: now.toISOString() };
  writeJson(path.join(dataDir, RESTORE_PENDING_FILE), request);
  return request;
}

/** Whether a restore waits for the next start (a second request meanwhile is refused). */
export function restorePending(dataDir: string): boolean {
  return fs.existsSync(path.join(dataDir, RESTORE_PENDING_FILE));
}

/**
 * At start, before the database is opened: applies a waiting request, once. The request file goes first, so a
 * restore that crashes the process is not tried again on every restart; the outcome says what happened.
 */
export function applyPendingRestore(dataDir: string, logger: Logger): RestoreOutcome | null {
  const pendingFile = path.join(dataDir, RESTORE_PENDING_FILE);
  const request = readJson<RestoreRequest>(pendingFile);
  if (!fs.existsSync(pendingFile)) return null;
  fs.rmSync(pendingFile, { force: true });
  if (!request || typeof request.backup !== 'string') {
    logger.error({ file: pendingFile }, 'restore request unreadable: nothing restored');
    return null;
  }
  let outcome: RestoreOutcome;
  try {
    const done = restoreBackup(dataDir, request.backup, { dbOnly: request.dbOnly === true });
    outcome = { ...request, finishedAt: new Date().toISOString(), status: 'ok', error: null, replacedDir: done.replacedDir, fileCount: done.fileCount };
    logger.warn(
      { backup: request.backup, requestedBy: request.requestedBy.username, replacedDir: done.replacedDir },
      'restored a backup (asked from the staff app)',
    );
  } catch (error) {
    outcome = { ...request, finishedAt: new Date().toISOString(), status: 'failed', error: (error as Error).message, replacedDir: null, fileCount: null };
    logger.error({ backup: request.backup, reason: (error as Error).message }, 'restore failed: the data dir is as it was');
  }
  writeJson(path.join(dataDir, RESTORE_LAST_FILE), outcome);
  return outcome;
}

/** The last guided restore's outcome, or null. */
export function lastRestore(dataDir: string): RestoreOutcome | null {
  return readJson<RestoreOutcome>(path.join(dataDir, RESTORE_LAST_FILE));
}

/** The restored database's audit trail says who restored what, when (the request's entry went with the replaced one). */
export function auditRestore(audit: AuditLog, outcome: RestoreOutcome | null): void {
  if (!outcome) return;
  audit.record({
    actor: outcome.requestedBy,
    action: 'backup.restore',
    resource: 'backup',
    resourceId: outcome.backup,
    after: { status: outcome.status, error: outcome.error, requestedAt: outcome.requestedAt, finishedAt: outcome.finishedAt, replacedDir: outcome.replacedDir },
  });
}
