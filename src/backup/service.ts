// The backup schedule: its single row, the node-cron task that runs it, and one run recorded in that row (service and emsctl alike).
import type { Statement } from 'better-sqlite3';
import cron, { type ScheduledTask } from 'node-cron';
import { AuditLog } from '../db/auditTrail.ts';
import type { Db } from '../db/client.ts';
import { BadRequest } from '../http/errors.ts';
import type { AuthUser } from '../http/route.ts';
import type { Logger } from '../logger.ts';
import { BackupBusy, createBackup, type BackupResult } from './archive.ts';
import type { BackupScheduleChanges, BackupScheduleView } from './schemas.ts';

type ScheduleRow = {
  enabled: number;
  cron: string;
  retention: number;
  lastRunAt: string | null;
  lastStatus: string | null;
  lastFile: string | null;
  updatedAt: string;
};

const SELECT_ROW = `SELECT enabled, cron, retention, last_run_at AS lastRunAt, last_status AS lastStatus, last_file AS lastFile,
  updated_at AS updatedAt FROM backup_schedule WHERE id = 1`;

const selectRow = new WeakMap<Db, Statement<[]>>();

export function readSchedule(db: Db): ScheduleRow {
  let statement = selectRow.get(db);
  if (!statement) selectRow.set(db, (statement = db.sqlite.prepare(SELECT_ROW)));
  const row = statement.get() as ScheduleRow | undefined;
  // Seeded by migration 0001; a database without it was edited by hand.
  if (!row) throw new Error('backup_schedule row 1 is missing');
  return row;
}

export type BackupOutcome =
  | { status: 'ok'; backup: BackupResult }
  | { status: 'failed'; error: string }
  | { status: 'skipped'; reason: string };

/**
 * One backup run with the schedule's retention, recorded in the schedule row: lastRunAt always,
 * lastStatus "ok" or "failed: <reason>", lastFile only on success (it names the newest good backup).
 * A run refused because another is in progress is "skipped" and leaves the row alone. Never throws.
 */
export async function performBackup(
  db: Db,
  dataDir: string,
  logger: Pick<Logger, 'info' | 'warn' | 'error'>,
  options: { trigger: 'scheduled' | 'manual' | 'emsctl'; pagesPerStep?: number; signal?: AbortSignal },
): Promise<BackupOutcome> {
  let outcome: BackupOutcome;
  try {
    const { retention } = readSchedule(db);
    const backup = await createBackup(db.sqlite, dataDir, {
      retention,
      purpose: `${options.trigger} backup (pid ${process.pid})`,
      pagesPerStep: options.pagesPerStep,
      signal: options.signal,
    });
    outcome = { status: 'ok', backup };
  } catch (error) {
    if (error instanceof BackupBusy) {
      logger.warn({ trigger: options.trigger, reason: error.message }, 'backup skipped: another run is in progress');
      return { status: 'skipped', reason: error.message };
    }
    outcome = { status: 'failed', error: (error as Error).message };
  }
  const now = new Date().toISOString();
  try {
    if (outcome.status === 'ok') {
      db.sqlite.prepare('UPDATE backup_schedule SET last_run_at = ?, last_status = ?, last_file = ? WHERE id = 1').run(now, 'ok', outcome.backup.name);
    } else {
      db.sqlite.prepare('UPDATE backup_schedule SET last_run_at = ?, last_status = ? WHERE id = 1').run(now, `failed: ${outcome.error}`.slice(0, 500));
    }
  } catch (error) {
    logger.error({ err: error }, 'could not record the backup outcome');
  }
  if (outcome.status === 'ok') {
    const { name, sizeBytes, fileCount, linked, copied, durationMs, deleted } = outcome.backup;
    logger.info({ trigger: options.trigger, file: name, sizeBytes, fileCount, linked, copied, durationMs, deleted }, 'backup completed');
  } else {
    logger.error({ trigger: options.trigger, reason: outcome.error }, 'backup failed');
  }
  return outcome;
}

export function assertValidCron(expression: string): void {
  if (!cron.validate(expression)) {
    throw new BadRequest('Invalid cron expression', [{ path: 'body.cron', message: 'must be a valid cron expression (5 or 6 fields, e.g. "0 3 * * *")' }]);
  }
}

type SchedulerDeps = { db: Db; dataDir: string; logger: Logger };

/** Owns the node-cron task: started with the service, rescheduled by every PUT, stopped (and any run aborted) on close. */
export class BackupScheduler {
  private task: ScheduledTask | null = null;
  private running: Promise<BackupOutcome> | null = null;
  private readonly abort = new AbortController();
  private stopped = false;
  private readonly update;
  private readonly audit: AuditLog;

  constructor(private readonly deps: SchedulerDeps) {
    this.audit = new AuditLog(deps.db);
    this.update = deps.db.sqlite.prepare('UPDATE backup_schedule SET enabled = @enabled, cron = @cron, retention = @retention, updated_at = @updatedAt WHERE id = 1');
  }

  /** node-cron's own messages (missed runs under load) as JSON lines like every other log, not console text. */
  private readonly cronLogger = {
    info: (message: string) => this.deps.logger.debug({ component: 'node-cron' }, message),
    warn: (message: string) => this.deps.logger.warn({ component: 'node-cron' }, message),
    error: (message: string | Error, err?: Error) => this.deps.logger.error({ component: 'node-cron', err: err ?? message }, String(message)),
    debug: (message: string | Error) => this.deps.logger.debug({ component: 'node-cron' }, String(message)),
  };

  start(): void {
    this.reschedule(readSchedule(this.deps.db));
  }

  get(): BackupScheduleView {
    return this.present(readSchedule(this.deps.db));
  }

  /** Validates, stores (with its audit entry, in one transaction) and reschedules at once. */
  change(changes: BackupScheduleChanges, actor: AuthUser): BackupScheduleView {
    if (changes.cron !== undefined) assertValidCron(changes.cron);
    const row = this.deps.db.sqlite.transaction(() => {
      const before = readSchedule(this.deps.db);
      const next = {
        enabled: changes.enabled ?? Boolean(before.enabled),
        cron: changes.cron ?? before.cron,
        retention: changes.retention ?? before.retention,
      };
      this.update.run({ ...next, enabled: next.enabled ? 1 : 0, updatedAt: new Date().toISOString() });
      this.audit.record({
        actor,
        action: 'update',
        resource: 'backup_schedule',
        resourceId: 1,
        before: { enabled: Boolean(before.enabled), cron: before.cron, retention: before.retention },
        after: next,
      });
      return readSchedule(this.deps.db);
    })();
    this.reschedule(row);
    return this.present(row);
  }

  /** Runs a backup now unless one is in progress in this process (the lock file covers other processes). */
  runNow(trigger: 'scheduled' | 'manual' = 'manual'): Promise<BackupOutcome> {
    if (this.stopped) return Promise.resolve({ status: 'skipped', reason: 'the service is stopping' });
    if (this.running) {
      this.deps.logger.warn({ trigger }, 'backup skipped: the previous run is still in progress');
      return Promise.resolve({ status: 'skipped', reason: 'the previous run is still in progress' });
    }
    const run = performBackup(this.deps.db, this.deps.dataDir, this.deps.logger, { trigger, signal: this.abort.signal }).finally(() => {
      this.running = null;
    });
    this.running = run;
    return run;
  }

  /** Stops the schedule, aborts a run in progress between two copy steps and waits for it to let go of the database. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.cancelTask();
    this.abort.abort();
    await this.running;
  }

  private cancelTask(): void {
    // destroy() also removes the task from node-cron's global registry.
    void this.task?.destroy();
    this.task = null;
  }

  private reschedule(row: ScheduleRow): void {
    this.cancelTask();
    if (this.stopped || !row.enabled) return;
    try {
      this.task = cron.schedule(row.cron, () => void this.runNow('scheduled'), { name: 'ems-backup', logger: this.cronLogger });
    } catch (error) {
      // A row edited by hand with a bad expression: the service keeps running, the status says why.
      this.deps.logger.error({ err: error, cron: row.cron }, 'backup schedule not started: invalid cron expression');
      this.deps.db.sqlite.prepare('UPDATE backup_schedule SET last_status = ? WHERE id = 1').run(`failed: invalid cron expression "${row.cron}"`);
      return;
    }
    this.deps.logger.info({ cron: row.cron, retention: row.retention, nextRunAt: this.task.getNextRun()?.toISOString() ?? null }, 'backup schedule active');
  }

  private present(row: ScheduleRow): BackupScheduleView {
    return {
      enabled: Boolean(row.enabled),
      cron: row.cron,
      retention: row.retention,
      lastRunAt: row.lastRunAt,
      lastStatus: row.lastStatus,
      lastFile: row.lastFile,
      nextRunAt: this.task?.getNextRun()?.toISOString() ?? null,
      updatedAt: row.updatedAt,
    };
  }
}
