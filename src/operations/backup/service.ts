// The backup schedule in the service: the cron timer that runs it (box clock), one run recorded in the schedule row, the weekly restore drill.
import fs from 'node:fs';
import { databasePath } from '../../platform/db/client.ts';
import { boxTimezone, CronTimer } from '../../platform/jobs/cron.ts';
import { type Job, RunRecord } from '../../platform/jobs/jobs.ts';
import { Repeating } from '../../platform/jobs/lifecycle.ts';
import type { Db } from '../../platform/db/client.ts';
import type { AuthUser } from '../../platform/http/route.ts';
import type { Logger } from '../../platform/logger.ts';
import { BackupBusy, clearInterruptedRun, createBackup, listBackups, type BackupInfo, type BackupResult } from './archive.ts';
import { Conflict } from '../../platform/errors.ts';
import { cachedChecks, readChecks, type BackupChecks, type DrillCheck } from './checks.ts';
import { drillDue, runRestoreDrill } from './drill.ts';
import { backupOffThread, restoreDrillOffThread } from './offThread.ts';
import {
  applyScheduleDefaults,
  changeSchedule,
  DEFAULT_BACKUP_CRON,
  readSchedule,
  recordRun,
  readStoredSchedule,
  type ScheduleChanges,
  type StoredSchedule,
} from './schedule.ts';
import { describeRetention } from './retention.ts';
import type { Static } from '@sinclair/typebox';
import type { BackupList, BackupScheduleView } from './schemas.ts';
import { lastRestore } from './guidedRestore.ts';

export { assertValidCron, readSchedule } from './schedule.ts';

/** Space a backup leaves free on the data disk beyond its own size: the database, its WAL and the collector's writes go on. */
export const BACKUP_SPARE_BYTES = 16 * 1024 * 1024;

/**
 * Why a backup would fill the data disk, or null when it fits: it needs about the database and its WAL (uploads are
 * hard-linked), and leaves BACKUP_SPARE_BYTES free. A backup that took the last bytes would turn a full disk into a
 * stopped service (issue 56).
 */
export function backupSpaceProblem(dataDir: string): string | null {
  const file = databasePath(dataDir);
  const size = (name: string) => {
    try {
      return fs.statSync(name).size;
    } catch {
      return 0;
    }
  };
  const needed = size(file) + size(`${file}-wal`);
  let free: number;
  try {
    const stats = fs.statfsSync(dataDir);
    free = stats.bavail * stats.bsize;
  } catch {
    return null; // statfs unsupported: the copy itself tells
  }
  if (free >= needed + BACKUP_SPARE_BYTES) return null;
  const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
  return `not enough disk space: a backup needs about ${mib(needed)} MiB and ${mib(BACKUP_SPARE_BYTES)} MiB must stay free, ${mib(free)} MiB are free (emsctl status shows what takes the space)`;
}

export type BackupOutcome = { status: 'ok'; backup: BackupResult } | { status: 'failed'; error: string } | { status: 'skipped'; reason: string };

type RunLogger = Pick<Logger, 'info' | 'warn' | 'error'>;

/**
 * One backup run with the schedule's retention, recorded in the schedule row: lastRunAt always,
 * lastStatus "ok" or "failed: <reason>", lastFile only on success (it names the newest good backup).
 * A run refused because another is in progress is "skipped" and leaves the row alone. A failed copy to
 * EMS_BACKUP_TARGET is a warning: the local backup stands and the run is "ok". Never throws.
 */
export async function performBackup(
  db: Db,
  dataDir: string,
  logger: RunLogger,
  options: { trigger: 'scheduled' | 'manual' | 'emsctl'; target?: string; pagesPerStep?: number; signal?: AbortSignal },
): Promise<BackupOutcome> {
  let outcome: BackupOutcome;
  const space = backupSpaceProblem(dataDir);
  if (space) {
    logger.warn({ trigger: options.trigger, reason: space }, 'backup skipped: the data disk is (nearly) full');
    try {
      recordRun(db, { lastRunAt: new Date().toISOString(), lastStatus: `failed: skipped, ${space}`.slice(0, 500) });
    } catch {
      // the disk is full: the schedule row may not take the note either; the log line says it
    }
    return { status: 'skipped', reason: space };
  }
  try {
    const { retention } = readStoredSchedule(db);
    const purpose = `${options.trigger} backup (pid ${process.pid})`;
    // The service's runs in a worker thread (issue 29: no background task holds the event loop over 50 ms); emsctl
    // has no requests to serve and copies through its own connection.
    const backup =
      options.trigger === 'emsctl'
        ? await createBackup(db.sqlite, dataDir, { retention, target: options.target, purpose, pagesPerStep: options.pagesPerStep, signal: options.signal })
        : await backupOffThread<BackupResult>(dataDir, { retention, target: options.target, purpose }, options.signal);
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
      recordRun(db, { lastRunAt: now, lastStatus: 'ok', lastFile: outcome.backup.name });
    } else {
      recordRun(db, { lastRunAt: now, lastStatus: `failed: ${outcome.error}`.slice(0, 500) });
    }
  } catch (error) {
    logger.error({ err: error }, 'could not record the backup outcome');
  }
  if (outcome.status === 'ok') {
    const { name, sizeBytes, fileCount, linked, copied, durationMs, deleted, target } = outcome.backup;
    logger.info({ trigger: options.trigger, file: name, sizeBytes, fileCount, linked, copied, durationMs, deleted }, 'backup completed');
    if (target?.status === 'ok') logger.info({ target: target.dir, file: name, deleted: target.deleted }, 'backup copied to the backup target');
    else if (target) logger.warn({ target: target.dir, file: name, reason: target.error }, 'backup not copied to the backup target; the local backup is kept');
  } else {
    logger.error({ trigger: options.trigger, reason: outcome.error }, 'backup failed');
  }
  return outcome;
}

/** performDrill with the drill in a worker thread: the service's weekly drill never holds its requests. */
export async function performDrillOffThread(dataDir: string, logger: RunLogger, options: { backup?: string; trigger: string }): Promise<DrillCheck | null> {
  let drill: DrillCheck;
  try {
    drill = await restoreDrillOffThread(dataDir, { backup: options.backup, purpose: `${options.trigger} restore drill (pid ${process.pid})` });
  } catch (error) {
    if (error instanceof BackupBusy) {
      logger.warn({ trigger: options.trigger, reason: error.message }, 'restore drill skipped: a backup or restore is in progress');
      return null;
    }
    throw error;
  }
  logDrill(drill, logger, options.trigger);
  return drill;
}

function logDrill(drill: DrillCheck, logger: RunLogger, trigger: string): void {
  const { backup, durationMs, tables, rows, files, error } = drill;
  if (drill.status === 'ok') logger.info({ trigger, backup, durationMs, tables, rows, files }, 'restore drill passed');
  else logger.error({ trigger, backup, durationMs, reason: error }, 'restore drill failed');
}

/** The drill with its log line; a drill refused because a backup or restore runs is skipped (null). */
export function performDrill(dataDir: string, logger: RunLogger, options: { backup?: string; trigger: string }): DrillCheck | null {
  let drill: DrillCheck;
  try {
    drill = runRestoreDrill(dataDir, { backup: options.backup, purpose: `${options.trigger} restore drill (pid ${process.pid})` });
  } catch (error) {
    if (error instanceof BackupBusy) {
      logger.warn({ trigger: options.trigger, reason: error.message }, 'restore drill skipped: a backup or restore is in progress');
      return null;
    }
    throw error;
  }
  const { backup, durationMs, tables, rows, files, error } = drill;
  if (drill.status === 'ok') logger.info({ trigger: options.trigger, backup, durationMs, tables, rows, files }, 'restore drill passed');
  else logger.error({ trigger: options.trigger, backup, durationMs, reason: error }, 'restore drill failed');
  return drill;
}

/** The schedule, its outcome and the checks as the API and emsctl show them. */
export function presentSchedule(stored: StoredSchedule, checks: BackupChecks, target: string | undefined, nextRunAt: string | null): BackupScheduleView {
  const { row } = stored;
  return {
    enabled: stored.enabled,
    cron: stored.cron,
    retention: stored.retention,
    lastRunAt: row.lastRunAt,
    lastStatus: row.lastStatus,
    lastFile: row.lastFile,
    nextRunAt: stored.enabled ? nextRunAt : null,
    timezone: boxTimezone(),
    updatedAt: row.updatedAt,
    // A check made for another folder than the one set now says nothing about it.
    target: target ? (checks.target?.dir === target ? checks.target : { dir: target, at: null, status: 'never', backup: null, error: null }) : null,
    drill: checks.drill,
  };
}

export type BackupHealth = {
  enabled: boolean;
  lastRunAt: string | null;
  lastStatus: 'ok' | 'failed' | null;
  lastGoodAt: string | null;
  target: 'ok' | 'failed' | 'never' | 'off';
  drill: { at: string; status: 'ok' | 'failed' } | null;
};

type SchedulerDeps = { db: Db; dataDir: string; logger: Logger; target?: string };

/** How often the scheduler looks for a schedule changed by emsctl (another process) and reschedules. */
const RELOAD_INTERVAL_MS = 10_000;

/** Owns the cron timer (src/platform/jobs/cron.ts, in the box's time zone): started with the service, rescheduled by every change, stopped (and any run aborted) on close. */
export class BackupScheduler {
  private task: CronTimer | null = null;
  /** Scheduled runs, for the job registry (manual runs are the admin's, not the schedule's). */
  private readonly scheduled = new RunRecord();
  private scheduleText = 'off';
  private running: Promise<BackupOutcome> | null = null;
  private readonly abort = new AbortController();
  private stopped = false;
  private scheduledFor: string | null = null;
  /** Re-reads the schedule for a change made by emsctl (another process); a named job of the registry. */
  readonly reloadJob = new Repeating(async () => this.reloadIfChanged(), RELOAD_INTERVAL_MS, 'backup schedule reload', { unref: true });
  /** checks.json as health reads it: re-read only when the file changed. */
  readonly checks: () => BackupChecks;

  constructor(private readonly deps: SchedulerDeps) {
    this.checks = cachedChecks(deps.dataDir);
  }

  /** The backup schedule as a named job (src/platform/jobs/jobs.ts). */
  get job(): Job {
    const scheduler = this;
    return {
      name: 'backup',
      get schedule() {
        return scheduler.scheduleText;
      },
      state: () => this.scheduled.state(this.task?.nextRun()?.getTime() ?? null),
    };
  }

  start(): void {
    if (applyScheduleDefaults(this.deps.db)) {
      this.deps.logger.info({ cron: DEFAULT_BACKUP_CRON }, 'backups switched on by default (nightly; change with emsctl backup schedule set)');
    }
    this.recordInterruptedRun();
    this.reschedule(readSchedule(this.deps.db));
    this.reloadJob.start();
  }

  /** A run the last process did not finish (its `.partial` files are left) is failed, and its files go at once. */
  private recordInterruptedRun(): void {
    const { db, dataDir, logger } = this.deps;
    try {
      const left = clearInterruptedRun(dataDir);
      if (left.length === 0) return;
      recordRun(db, {
        lastRunAt: new Date().toISOString(),
        lastStatus: 'failed: interrupted (the service stopped during the run); its partial files were removed',
      });
      logger.warn({ removed: left }, 'a backup interrupted by the last shutdown is recorded as failed; its partial files were removed');
    } catch (error) {
      logger.error({ err: error }, 'could not clean up an interrupted backup');
    }
  }

  get(): BackupScheduleView {
    return presentSchedule(readStoredSchedule(this.deps.db), readChecks(this.deps.dataDir), this.deps.target, this.task?.nextRun()?.toISOString() ?? null);
  }

  /** The public summary in /api/health: times and outcomes only, no names, paths or error text. */
  health(): BackupHealth {
    const row = readSchedule(this.deps.db);
    const { target, drill } = this.checks();
    const lastGood = row.lastFile ? /^ems-(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})\.(\d{3})Z\.db$/.exec(row.lastFile) : null;
    return {
      enabled: Boolean(row.enabled),
      lastRunAt: row.lastRunAt,
      lastStatus: row.lastStatus === null ? null : row.lastStatus === 'ok' ? 'ok' : 'failed',
      lastGoodAt: lastGood ? `${lastGood[1]}-${lastGood[2]}-${lastGood[3]}T${lastGood[4]}:${lastGood[5]}:${lastGood[6]}.${lastGood[7]}Z` : null,
      target: !this.deps.target ? 'off' : target?.dir === this.deps.target ? target.status : 'never',
      drill: drill ? { at: drill.at, status: drill.status } : null,
    };
  }

  /** Validates, stores (with its audit entry, in one transaction) and reschedules at once. */
  change(changes: ScheduleChanges, actor: AuthUser): BackupScheduleView {
    const stored = changeSchedule(this.deps.db, changes, actor);
    this.reschedule(stored.row);
    return this.get();
  }

  /** The completed backups, newest first, and the last drill (GET /api/system/backups). */
  list(): Static<typeof BackupList> {
    const items = listBackups(this.deps.dataDir).map(({ name, createdAt, sizeBytes, fileCount, filesBytes }) => ({
      name,
      createdAt,
      sizeBytes,
      fileCount,
      filesBytes,
    }));
    const restored = lastRestore(this.deps.dataDir);
    const last = restored && {
      backup: restored.backup,
      requestedBy: restored.requestedBy.username,
      requestedAt: restored.requestedAt,
      finishedAt: restored.finishedAt,
      status: restored.status,
      error: restored.error,
      replacedDir: restored.replacedDir,
    };
    return { items, drill: readChecks(this.deps.dataDir).drill, lastRestore: last };
  }

  /** One backup by its exact name, or undefined (the name is matched against the listing, never joined as a path). */
  find(name: string): BackupInfo | undefined {
    return listBackups(this.deps.dataDir).find((backup) => backup.name === name);
  }

  /** The restore drill now, off the event loop; a backup or restore in progress is 409. */
  async drillNow(): Promise<DrillCheck> {
    const drill = await performDrillOffThread(this.deps.dataDir, this.deps.logger, { trigger: 'manual' });
    if (!drill) throw new Conflict('A backup or restore is in progress; try the drill again when it is done');
    return drill;
  }

  /** Runs a backup now unless one is in progress in this process (the lock file covers other processes). */
  runNow(trigger: 'scheduled' | 'manual' = 'manual'): Promise<BackupOutcome> {
    if (this.stopped) return Promise.resolve({ status: 'skipped', reason: 'the service is stopping' });
    if (this.running) {
      this.deps.logger.warn({ trigger }, 'backup skipped: the previous run is still in progress');
      return Promise.resolve({ status: 'skipped', reason: 'the previous run is still in progress' });
    }
    const run = this.backupThenDrill(trigger).finally(() => {
      this.running = null;
    });
    this.running = run;
    return run;
  }

  /** A scheduled backup is followed by the restore drill when the last one is a week old (or there is none yet). */
  private async backupThenDrill(trigger: 'scheduled' | 'manual'): Promise<BackupOutcome> {
    const { db, dataDir, logger, target } = this.deps;
    const outcome = await performBackup(db, dataDir, logger, { trigger, target, signal: this.abort.signal });
    if (trigger === 'scheduled' && outcome.status === 'ok' && !this.stopped && drillDue(readChecks(dataDir).drill)) {
      try {
        await performDrillOffThread(dataDir, logger, { backup: outcome.backup.name, trigger: 'scheduled' });
      } catch (error) {
        logger.error({ err: error }, 'restore drill could not run');
      }
    }
    return outcome;
  }

  /** Stops the schedule, aborts a run in progress between two copy steps and waits for it to let go of the database. */
  async stop(): Promise<void> {
    this.stopped = true;
    const reload = this.reloadJob.stop();
    this.cancelTask();
    this.abort.abort();
    await reload;
    await this.running;
  }

  private reloadIfChanged(): void {
    try {
      const row = readSchedule(this.deps.db);
      if (`${row.enabled}|${row.cron}` !== this.scheduledFor) this.reschedule(row);
    } catch (error) {
      this.deps.logger.error({ err: error }, 'could not re-read the backup schedule');
    }
  }

  private cancelTask(): void {
    this.task?.stop();
    this.task = null;
    this.scheduleText = 'off';
  }

  private reschedule(row: { enabled: boolean; cron: string }): void {
    this.cancelTask();
    this.scheduledFor = `${row.enabled}|${row.cron}`;
    if (this.stopped || !row.enabled) return;
    try {
      const task = new CronTimer(row.cron, boxTimezone(), () => void this.scheduled.track(() => this.runNow('scheduled')).catch(() => {}));
      this.scheduleText = `cron ${row.cron} (box time)`;
      task.start();
      this.task = task;
    } catch (error) {
      // A row edited by hand with a bad expression: the service keeps running, the status says why.
      this.deps.logger.error({ err: error, cron: row.cron }, 'backup schedule not started: invalid cron expression');
      recordRun(this.deps.db, { lastStatus: `failed: invalid cron expression "${row.cron}"` });
      return;
    }
    const { retention } = readStoredSchedule(this.deps.db);
    this.deps.logger.info(
      { cron: row.cron, retention: describeRetention(retention), target: this.deps.target ?? null, nextRunAt: this.task.nextRun()?.toISOString() ?? null },
      'backup schedule active',
    );
  }
}
