// The box's own upkeep survives a restore: the backup schedule, its retention and the record of the last backup run
// belong to the box, not to the data a backup holds. Restoring an older backup would otherwise bring back its old
// schedule and "last backup never" with newer backups on disk (issue 45). (The drill record is in checks.json, outside
// the database, and stays by itself.)
import { eq, inArray } from 'drizzle-orm';
import { closeDatabase, openDatabase } from '../../platform/db/client.ts';
import { appSettings, backupSchedule } from '../../platform/db/schema/system.ts';

/** app_settings rows of the schedule (src/operations/backup/schedule.ts): the retention, and "defaults applied". */
const UPKEEP_SETTINGS = ['backup.retention', 'backup.defaults'];

export type Upkeep = {
  schedule: {
    enabled: boolean;
    cron: string;
    retention: number;
    lastRunAt: string | null;
    lastStatus: string | null;
    lastFile: string | null;
    updatedAt: string;
  };
  settings: Array<{ key: string; value: string; updatedAt: string }>;
};

/** The upkeep rows of a database file, or the reason they cannot be read (a damaged file: the restore goes on). */
export function readUpkeep(file: string): Upkeep | { error: string } {
  let db: ReturnType<typeof openDatabase>;
  try {
    db = openDatabase(file, { migrate: false, quickCheck: false });
  } catch (error) {
    return { error: (error as Error).message };
  }
  try {
    const { enabled, cron, retention, lastRunAt, lastStatus, lastFile, updatedAt } = backupSchedule;
    const schedule = db.orm
      .select({ enabled, cron, retention, lastRunAt, lastStatus, lastFile, updatedAt })
      .from(backupSchedule)
      .where(eq(backupSchedule.id, 1))
      .get();
    if (!schedule) return { error: 'it has no backup schedule row' };
    const settings = db.orm
      .select({ key: appSettings.key, value: appSettings.value, updatedAt: appSettings.updatedAt })
      .from(appSettings)
      .where(inArray(appSettings.key, UPKEEP_SETTINGS))
      .all();
    return { schedule, settings };
  } catch (error) {
    return { error: (error as Error).message };
  } finally {
    closeDatabase(db);
  }
}

/** Writes the upkeep read from the replaced database into the restored one, in one transaction. */
export function writeUpkeep(file: string, upkeep: Upkeep): void {
  const db = openDatabase(file, { migrate: false, quickCheck: false });
  try {
    db.sqlite.transaction(() => {
      db.orm.update(backupSchedule).set(upkeep.schedule).where(eq(backupSchedule.id, 1)).run();
      db.orm.delete(appSettings).where(inArray(appSettings.key, UPKEEP_SETTINGS)).run();
      if (upkeep.settings.length) db.orm.insert(appSettings).values(upkeep.settings).run();
    })();
  } finally {
    closeDatabase(db);
  }
}
