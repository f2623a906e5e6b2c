// The restore drill: a backup restored into a temp dir with the real restore steps, checked, counted, thrown away.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { closeDatabase, openDatabase } from '../../platform/db/client.ts';
import { backupLock, BackupInvalid, listBackups, matchDataDirOwner, readManifest, resolveBackup, restoreLocked, rowCounts, verifyBackup } from './archive.ts';
import { CHECKS_FILE, recordCheck, type DrillCheck } from './checks.ts';
import { backupsDir } from './paths.ts';

/** Drills live in <data dir>/tmp/ (the service may write there; same file system, so files are hard-linked, not copied). */
const DRILL_PREFIX = 'restore-drill-';
/** A drill is due when the last one started this long ago: weekly, with an hour of slack for a schedule that drifts. */
export const DRILL_INTERVAL_MS = 7 * 86_400_000 - 3_600_000;

export function drillDue(last: DrillCheck | null, now = Date.now()): boolean {
  return !last || now - Date.parse(last.at) >= DRILL_INTERVAL_MS;
}

function compareCounts(found: Record<string, number>, expected: Record<string, number> | undefined): void {
  if (!expected) return;
  for (const [table, rows] of Object.entries(expected)) {
    if (found[table] !== rows) throw new BackupInvalid(`table ${table} has ${found[table] ?? 'no'} rows after the restore, ${rows} when the backup was taken`);
  }
}

/**
 * Restores a backup (the newest unless one is named) into <data dir>/tmp/restore-drill-<time>/ with the same
 * steps as `emsctl backup restore`, then checks the result: integrity_check, rows per table equal to those the
 * backup recorded when it was taken, every captured file present with its size, and the current migrations apply.
 * The temp dir is removed afterwards whatever happened; the outcome is recorded in backups/checks.json.
 * Holds the backup lock (throws BackupBusy when a backup or restore is running). Failures are returned, not thrown.
 */
export function runRestoreDrill(dataDir: string, options: { backup?: string; purpose?: string } = {}): DrillCheck {
  // A mistyped name is the caller's error (BackupNotFound), not a failed drill.
  const named = options.backup ? resolveBackup(dataDir, options.backup) : undefined;
  const lock = backupLock(dataDir, options.purpose ?? `restore drill (pid ${process.pid})`);
  const started = performance.now();
  const at = new Date().toISOString();
  const tmpRoot = path.join(dataDir, 'tmp');
  let backupName: string | null = null;
  let result: DrillCheck;
  let counted: { tables: number; rows: number } | null = null;
  let files: number | null = null;
  let workDir: string | null = null;
  try {
    fs.mkdirSync(tmpRoot, { recursive: true, mode: 0o750 });
    for (const name of fs.readdirSync(tmpRoot)) {
      // A drill that died (power cut) left its copy behind: only ever removed under the backup lock.
      if (name.startsWith(DRILL_PREFIX)) fs.rmSync(path.join(tmpRoot, name), { recursive: true, force: true });
    }
    const file = named ?? listBackups(dataDir)[0]?.file;
    if (!file) throw new BackupInvalid(`there is no backup in ${backupsDir(dataDir)} to restore`);
    backupName = path.basename(file);
    const verified = verifyBackup(file);
    workDir = path.join(tmpRoot, `${DRILL_PREFIX}${at.replace(/[-:]/g, '')}`);
    fs.mkdirSync(workDir, { mode: 0o750 });
    restoreLocked(workDir, file, false, verified);

    const restoredDb = path.join(workDir, 'ems.db');
    const sqlite = new Database(restoredDb, { readonly: true, fileMustExist: true });
    let counts: Record<string, number>;
    try {
      const check = sqlite.pragma('integrity_check', { simple: true });
      if (check !== 'ok') throw new BackupInvalid(`the restored database fails integrity_check: ${String(check)}`);
      counts = rowCounts(sqlite);
    } finally {
      sqlite.close();
    }
    const manifest = verified.filesDir ? readManifest(verified.filesDir) : null;
    compareCounts(counts, manifest?.rowCounts);
    counted = { tables: Object.keys(counts).length, rows: Object.values(counts).reduce((sum, n) => sum + n, 0) };

    for (const entry of manifest?.files ?? []) {
      let size: number;
      try {
        size = fs.statSync(path.join(workDir, entry.path)).size;
      } catch {
        throw new BackupInvalid(`${entry.path} is missing after the restore`);
      }
      if (size !== entry.size) throw new BackupInvalid(`${entry.path} has ${size} bytes after the restore, ${entry.size} in the manifest`);
    }
    files = manifest?.files.length ?? 0;

    // The service would start on it: this version's migrations apply to the restored copy.
    closeDatabase(openDatabase(restoredDb));
    result = { at, status: 'ok', backup: backupName, durationMs: Math.round(performance.now() - started), ...counted, files, error: null };
  } catch (error) {
    result = {
      at,
      status: 'failed',
      backup: backupName,
      durationMs: Math.round(performance.now() - started),
      tables: counted?.tables ?? null,
      rows: counted?.rows ?? null,
      files,
      error: (error as Error).message,
    };
  } finally {
    try {
      if (workDir) fs.rmSync(workDir, { recursive: true, force: true });
    } catch {
      // removed by the next drill
    }
  }
  try {
    recordCheck(dataDir, 'drill', result);
    matchDataDirOwner(dataDir, [path.join(backupsDir(dataDir), CHECKS_FILE)]);
  } finally {
    lock.release();
  }
  return result;
}
