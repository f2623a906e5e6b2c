// The stored backup schedule: row 1 of backup_schedule plus the weekly/monthly retention in app_settings, its defaults, and audited changes.
import { eq, sql } from 'drizzle-orm';
import cron from 'node-cron';
import { boxTimezone, nextCronRun } from '../../platform/jobs/cron.ts';
import type { Actor } from '../../platform/db/auditTrail.ts';
import { AuditLog, everAudited } from '../../platform/db/auditTrail.ts';
import type { Db } from '../../platform/db/client.ts';
import { appSettings, backupSchedule } from '../../platform/db/schema/system.ts';
import { BadRequest } from '../../platform/errors.ts';
import { DEFAULT_RETENTION, type RetentionPolicy } from './retention.ts';

export type ScheduleRow = {
  enabled: boolean;
  cron: string;
  /** Days that keep their newest backup (the "daily" of the retention; before it, the plain count kept). */
  retention: number;
  lastRunAt: string | null;
  lastStatus: string | null;
  lastFile: string | null;
  updatedAt: string;
};

export type StoredSchedule = { enabled: boolean; cron: string; retention: RetentionPolicy; row: ScheduleRow };

/**
 * Nightly at 03:30 in the box's local time: after the daylight-saving changes of Europe and North America (which
 * happen between 01:00 and 03:00, so 03:30 occurs exactly once every night), before a working day starts, and
 * away from the full hours where report plans cluster.
 */
export const DEFAULT_BACKUP_CRON = '30 3 * * *';
/** What migration 0001 seeded: off, 03:00, keep 7. */
const SEEDED = { enabled: false, cron: '0 3 * * *', retention: 7 };
/** app_settings keys: the weekly/monthly half of the retention, and "the defaults of this version were applied". */
const RETENTION_SETTING = 'backup.retention';
const DEFAULTS_SETTING = 'backup.defaults';

function prepared(db: Db) {
  let found = statements.get(db);
  if (!found) {
    const { enabled, cron, retention, lastRunAt, lastStatus, lastFile, updatedAt } = backupSchedule;
    found = {
      row: db.orm
        .select({ enabled, cron, retention, lastRunAt, lastStatus, lastFile, updatedAt })
        .from(backupSchedule)
        .where(eq(backupSchedule.id, 1))
        .prepare(),
      setting: db.orm
        .select({ value: appSettings.value })
        .from(appSettings)
        .where(eq(appSettings.key, sql.placeholder('key')))
        .prepare(),
    };
    statements.set(db, found);
  }
  return found;
}

type Prepared = { row: { get(): ScheduleRow | undefined }; setting: { get(values: { key: string }): { value: string } | undefined } };
const statements = new WeakMap<Db, Prepared>();

function setting(db: Db, key: string): string | undefined {
  return prepared(db).setting.get({ key })?.value;
}

export function readSchedule(db: Db): ScheduleRow {
  const row = prepared(db).row.get();
  // Seeded by migration 0001; a database without it was edited by hand.
  if (!row) throw new Error('backup_schedule row 1 is missing');
  return row;
}

export function readStoredSchedule(db: Db): StoredSchedule {
  const row = readSchedule(db);
  let stored: Partial<RetentionPolicy> = {};
  try {
    stored = JSON.parse(setting(db, RETENTION_SETTING) ?? '{}') as Partial<RetentionPolicy>;
  } catch {
    // a value edited by hand: the defaults below
  }
  const count = (value: unknown, fallback: number) => (Number.isInteger(value) && (value as number) >= 0 ? (value as number) : fallback);
  return {
    enabled: row.enabled,
    cron: row.cron,
    retention: { daily: row.retention, weekly: count(stored.weekly, DEFAULT_RETENTION.weekly), monthly: count(stored.monthly, DEFAULT_RETENTION.monthly) },
    row,
  };
}

function writeSetting(db: Db, key: string, value: string): void {
  const updatedAt = new Date().toISOString();
  db.orm.insert(appSettings).values({ key, value, updatedAt }).onConflictDoUpdate({ target: appSettings.key, set: { value, updatedAt } }).run();
}

/**
 * Backups are on by default. Once per database: a schedule nobody ever changed (still as seeded, no audit entry,
 * never run) is switched on at DEFAULT_BACKUP_CRON; a schedule someone set keeps its cron, its on/off and its count
 * (which becomes the daily part of the retention; weekly and monthly start at their defaults). Returns true when
 * it switched backups on.
 */
export function applyScheduleDefaults(db: Db): boolean {
  return db.sqlite
    .transaction(() => {
      if (setting(db, DEFAULTS_SETTING) !== undefined) return false;
      const row = readSchedule(db);
      const touched = everAudited(db, 'backup_schedule');
      const seeded = !touched && row.lastRunAt === null && row.enabled === SEEDED.enabled && row.cron === SEEDED.cron && row.retention === SEEDED.retention;
      if (seeded) {
        db.orm
          .update(backupSchedule)
          .set({ enabled: true, cron: DEFAULT_BACKUP_CRON, retention: DEFAULT_RETENTION.daily, updatedAt: new Date().toISOString() })
          .where(eq(backupSchedule.id, 1))
          .run();
      }
      writeSetting(db, DEFAULTS_SETTING, JSON.stringify({ at: new Date().toISOString(), switchedOn: seeded }));
      return seeded;
    })
    .immediate();
}

/** The outcome of a run (or why none starts) in the schedule row; the schedule's own updated_at stays as it was. */
export function recordRun(db: Db, outcome: { lastRunAt?: string; lastStatus: string; lastFile?: string }): void {
  db.orm
    .update(backupSchedule)
    .set({ ...outcome, updatedAt: sql`${backupSchedule.updatedAt}` })
    .where(eq(backupSchedule.id, 1))
    .run();
}

export type ScheduleChanges = {
  enabled?: boolean;
  cron?: string;
  /** A plain number is the count of the keep-N schedule before: it sets the daily part and leaves the rest. */
  retention?: number | Partial<RetentionPolicy>;
};

export const CRON_MESSAGE = 'must be a valid cron expression (5 or 6 fields, e.g. "30 3 * * *")';

export function assertValidCron(expression: string): void {
  if (!cron.validate(expression)) throw new BadRequest('Invalid cron expression', [{ path: 'body.cron', message: CRON_MESSAGE }]);
}

/** When the expression fires next, without scheduling anything (emsctl, and a service whose schedule is off). */
export function nextRunOf(expression: string): string | null {
  if (!cron.validate(expression)) return null;
  const next = nextCronRun(expression, boxTimezone(), Date.now());
  return next === null ? null : new Date(next).toISOString();
}

/** Stores a change with its audit entry in one transaction (the API and emsctl alike); the caller reschedules. */
export function changeSchedule(db: Db, changes: ScheduleChanges, actor: Actor | null): StoredSchedule {
  if (changes.cron !== undefined) assertValidCron(changes.cron);
  return db.sqlite
    .transaction(() => {
      const before = readStoredSchedule(db);
      const retention =
        typeof changes.retention === 'number' ? { ...before.retention, daily: changes.retention } : { ...before.retention, ...(changes.retention ?? {}) };
      const next = { enabled: changes.enabled ?? before.enabled, cron: changes.cron ?? before.cron, retention };
      db.orm
        .update(backupSchedule)
        .set({ enabled: next.enabled, cron: next.cron, retention: retention.daily, updatedAt: new Date().toISOString() })
        .where(eq(backupSchedule.id, 1))
        .run();
      writeSetting(db, RETENTION_SETTING, JSON.stringify({ weekly: retention.weekly, monthly: retention.monthly }));
      // Whoever sets the schedule has decided: the defaults of a later start must not override it.
      if (setting(db, DEFAULTS_SETTING) === undefined) writeSetting(db, DEFAULTS_SETTING, JSON.stringify({ at: new Date().toISOString(), switchedOn: false }));
      new AuditLog(db).record({
        actor,
        action: 'update',
        resource: 'backup_schedule',
        resourceId: 1,
        before: { enabled: before.enabled, cron: before.cron, retention: before.retention },
        after: next,
      });
      return readStoredSchedule(db);
    })
    .immediate();
}
