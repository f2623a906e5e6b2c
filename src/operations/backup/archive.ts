// Backups on disk, shared by the service and emsctl: online SQLite copy + hard-linked file trees, listing, retention, verification, restore.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { databasePath } from '../../platform/db/client.ts';
import { CHECKS_FILE, recordCheck, type TargetCheck } from './checks.ts';
import { acquireLock, BACKUP_LOCK_FILE, LockBusy, runningService, SERVICE_LOCK_FILE, type HeldLock } from './locks.ts';
import { BackupBusy, BackupInvalid, BackupNotFound } from './errors.ts';
import { checkCopyOffThread } from './offThread.ts';
import { copyToTarget } from './offsite.ts';
import { readUpkeep, writeUpkeep } from './upkeep.ts';
import { backupsDir } from './paths.ts';
import { backupsToKeep, type RetentionPolicy } from './retention.ts';

export { backupsDir };

/** The data dir's file trees a backup captures next to the database. */
export const CAPTURED_DIRS = ['uploads', 'models', 'avatars'] as const;
/** Where a restore moves what it replaced: <data dir>/replaced/<UTC timestamp>/. */
export const REPLACED_DIR = 'replaced';

const BACKUP_NAME = /^ems-(\d{8}T\d{6}\.\d{3}Z)\.db$/;
const MANIFEST = 'manifest.json';

export { BackupBusy, BackupInvalid, BackupNotFound } from './errors.ts';
export class ServiceRunning extends Error {
  override name = 'ServiceRunning';
}

export type BackupInfo = {
  name: string;
  file: string;
  createdAt: string;
  sizeBytes: number;
  /** The sibling folder holding the captured trees; null for a database-only backup. */
  filesDir: string | null;
  fileCount: number | null;
  filesBytes: number | null;
};

export type BackupResult = BackupInfo & {
  durationMs: number;
  linked: number;
  copied: number;
  deleted: string[];
  /** The copy to EMS_BACKUP_TARGET; null when none is set. */
  target: (TargetCheck & { deleted: string[] }) | null;
};

type ManifestEntry = { path: string; size: number };
type Manifest = {
  format: 1;
  database: string;
  createdAt: string;
  capture: 'hardlink';
  files: ManifestEntry[];
  totalBytes: number;
  /** Rows per table in the copy when it was taken, for the restore drill to compare with (absent in older backups). */
  rowCounts?: Record<string, number>;
};

/** 2025-01-31T03:00:00.123Z → 20250131T030000.123Z: sorts by time as text and is safe in every file system. */
function stamp(date: Date): string {
  return date.toISOString().replace(/[-:]/g, '');
}

function stampToIso(text: string): string {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})\.(\d{3})Z$/.exec(text)!;
  return `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}.${m[7]}Z`;
}

function filesDirOf(databaseFile: string): string {
  return databaseFile.replace(/\.db$/, '.files');
}

/** A file created by root (emsctl run without the wrapper) gets the data dir's owner, so the service can still prune it. */
export function matchDataDirOwner(dataDir: string, paths: string[]): void {
  if (process.getuid?.() !== 0) return;
  const { uid, gid } = fs.statSync(dataDir);
  if (uid === 0) return;
  for (const target of paths) {
    if (!fs.existsSync(target)) continue;
    fs.chownSync(target, uid, gid);
    if (fs.statSync(target).isDirectory()) {
      for (const entry of fs.readdirSync(target, { recursive: true, encoding: 'utf8' })) fs.lchownSync(path.join(target, entry), uid, gid);
    }
  }
}

export function backupLock(dataDir: string, purpose: string): HeldLock {
  try {
    return acquireLock(path.join(dataDir, BACKUP_LOCK_FILE), purpose);
  } catch (error) {
    if (error instanceof LockBusy) {
      const who = error.holder ? `${error.holder.purpose} (pid ${error.holder.pid}, since ${error.holder.since})` : 'another process';
      throw new BackupBusy(`a backup or restore is already in progress: ${who}`);
    }
    throw error;
  }
}

/** Hard links (no second copy of the bytes); a copy where the file system refuses links (another device, FAT). */
function linkOrCopy(from: string, to: string): 'linked' | 'copied' {
  try {
    fs.linkSync(from, to);
    return 'linked';
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EXDEV' && code !== 'EPERM' && code !== 'EMLINK' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP') throw error;
    fs.copyFileSync(from, to);
    return 'copied';
  }
}

/** Mirrors the regular files of `from` into `to` (created), returning what it placed. Symlinks and devices are skipped. */
function mirrorTree(from: string, to: string, relativeTo: string, entries: ManifestEntry[], counts: { linked: number; copied: number }): void {
  fs.mkdirSync(to, { recursive: true, mode: 0o750 });
  if (!fs.existsSync(from)) return;
  for (const entry of fs.readdirSync(from, { withFileTypes: true })) {
    const source = path.join(from, entry.name);
    const target = path.join(to, entry.name);
    if (entry.isDirectory()) {
      mirrorTree(source, target, relativeTo, entries, counts);
    } else if (entry.isFile()) {
      let size: number;
      try {
        size = fs.statSync(source).size;
        counts[linkOrCopy(source, target)] += 1;
      } catch (error) {
        // Deleted between readdir and link: it is no longer part of the data.
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw error;
      }
      entries.push({ path: path.relative(relativeTo, target), size });
    }
  }
}

export function readManifest(filesDir: string): Manifest | null {
  try {
    return JSON.parse(fs.readFileSync(path.join(filesDir, MANIFEST), 'utf8')) as Manifest;
  } catch {
    return null;
  }
}

/** integrity_check plus "is this an EMS database"; throws BackupInvalid with the first problem. */
export function checkDatabaseFile(file: string): void {
  let sqlite: Database.Database;
  try {
    sqlite = new Database(file, { readonly: true, fileMustExist: true });
  } catch (error) {
    throw new BackupInvalid(`${file} cannot be opened as SQLite: ${(error as Error).message}`);
  }
  try {
    const result = sqlite.pragma('integrity_check', { simple: true });
    if (result !== 'ok') throw new BackupInvalid(`${file} fails integrity_check: ${String(result)}`);
    // raw SQL: SQLite's own catalogue (sqlite_master): is this file an EMS database
    const tables = sqlite.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('users', '__drizzle_migrations')").pluck().all();
    if (tables.length !== 2) throw new BackupInvalid(`${file} is not an EMS database (no users or migrations table)`);
  } catch (error) {
    if (error instanceof BackupInvalid) throw error;
    throw new BackupInvalid(`${file} cannot be read: ${(error as Error).message}`);
  } finally {
    sqlite.close();
  }
}

/** Every file the manifest lists is there with its size; throws BackupInvalid otherwise. */
export function checkFilesDir(filesDir: string): Manifest {
  const manifest = readManifest(filesDir);
  if (!manifest || !Array.isArray(manifest.files)) throw new BackupInvalid(`${filesDir} has no readable ${MANIFEST}`);
  for (const entry of manifest.files) {
    let size: number;
    try {
      size = fs.statSync(path.join(filesDir, entry.path)).size;
    } catch {
      throw new BackupInvalid(`${filesDir} is incomplete: ${entry.path} is missing`);
    }
    if (size !== entry.size) throw new BackupInvalid(`${filesDir} is damaged: ${entry.path} has ${size} bytes, the manifest says ${entry.size}`);
  }
  return manifest;
}

function describe(file: string): BackupInfo {
  const name = path.basename(file);
  const filesDir = filesDirOf(file);
  const manifest = readManifest(filesDir);
  return {
    name,
    file,
    createdAt: stampToIso(BACKUP_NAME.exec(name)![1]),
    sizeBytes: fs.statSync(file).size,
    filesDir: fs.existsSync(filesDir) ? filesDir : null,
    fileCount: manifest ? manifest.files.length : null,
    filesBytes: manifest ? manifest.totalBytes : null,
  };
}

/** Completed backups, newest first. A run in progress is invisible: it renames its files into place last. */
export function listBackups(dataDir: string): BackupInfo[] {
  return listBackupsIn(backupsDir(dataDir));
}

/** The same for any folder of backups (EMS_BACKUP_TARGET). */
export function listBackupsIn(dir: string): BackupInfo[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((name) => BACKUP_NAME.test(name))
    .sort()
    .reverse()
    .map((name) => describe(path.join(dir, name)));
}

function removeBackup(info: Pick<BackupInfo, 'file'>): void {
  fs.rmSync(info.file, { force: true });
  fs.rmSync(filesDirOf(info.file), { recursive: true, force: true });
}

/**
 * At start: the `.partial` leftovers of a run that died (kill -9, power loss) are removed at once, not at the next
 * run, and their names returned so the run is recorded as failed. Nothing is touched while another process (emsctl)
 * holds the backup lock: its partials are a run in progress.
 */
export function clearInterruptedRun(dataDir: string): string[] {
  const dir = backupsDir(dataDir);
  if (!fs.existsSync(dir) || !fs.readdirSync(dir).some((name) => name.endsWith('.partial'))) return [];
  let lock: HeldLock;
  try {
    lock = backupLock(dataDir, `clean-up of an interrupted backup (pid ${process.pid})`);
  } catch (error) {
    if (error instanceof BackupBusy) return [];
    throw error;
  }
  try {
    const left = fs.readdirSync(dir).filter((name) => name.endsWith('.partial'));
    removePartials(dir);
    return left;
  } finally {
    lock.release();
  }
}

/** Leftovers of a run that died (kill -9, power loss): only ever called under the backup lock. */
function removePartials(dir: string): void {
  for (const name of fs.readdirSync(dir)) {
    if (name.endsWith('.partial')) fs.rmSync(path.join(dir, name), { recursive: true, force: true });
  }
}

/** Rows per table of an open database, the migrations' bookkeeping and SQLite's own tables left out. */
export function rowCounts(sqlite: Database.Database): Record<string, number> {
  // raw SQL: SQLite's own catalogue (sqlite_master): every table of the copy, whatever the schema of its day
  const tables = sqlite
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> '__drizzle_migrations' ORDER BY name")
    .pluck()
    .all() as string[];
  const counts: Record<string, number> = {};
  // raw SQL: a row count of a table named at run time (from the catalogue, quoted): drizzle needs the table declared
  for (const table of tables)
    counts[table] = sqlite
      .prepare(`SELECT count(*) FROM "${table.replace(/"/g, '""')}"`)
      .pluck()
      .get() as number;
  return counts;
}

export type CreateBackupOptions = {
  retention: RetentionPolicy;
  /** EMS_BACKUP_TARGET: a second folder each verified backup is copied to. */
  target?: string;
  /** Who runs it, written into the lock file. */
  purpose?: string;
  /**
   * Pages copied per step. The service copies in steps between requests (its own writes on the same
   * connection update the copy); emsctl copies in one step, because a write by the service (another
   * connection) would restart a stepwise copy, forever under load. In WAL mode readers never block writers.
   */
  pagesPerStep?: number;
  /** Aborts between steps, e.g. when the service shuts down. */
  signal?: AbortSignal;
  /**
   * Switches the fresh copy to one self-contained file, integrity-checks it and counts its rows (a worker thread
   * unless given: the backup worker does it in its own thread).
   */
  checkCopy?: (file: string) => Promise<Record<string, number>>;
};

/**
 * One backup run: SQLite online backup into backups/ems-<UTC>.db.partial, switched to a single-file
 * journal and checked with integrity_check; the captured trees hard-linked into ems-<UTC>.files/ with a
 * manifest; both renamed into place; then the oldest beyond `retention` deleted.
 * The database is copied before the trees: an upload landing in between leaves an orphan file in the backup
 * (harmless), never a row without its file. Throws BackupBusy when another run or a restore holds the lock.
 */
export async function createBackup(source: Database.Database, dataDir: string, options: CreateBackupOptions): Promise<BackupResult> {
  const started = performance.now();
  const dir = backupsDir(dataDir);
  fs.mkdirSync(dir, { recursive: true, mode: 0o750 });
  const lock = backupLock(dataDir, options.purpose ?? `backup run by pid ${process.pid}`);
  try {
    removePartials(dir);
    let when = new Date();
    // Two runs in the same millisecond (back to back from the CLI and the scheduler): take the next one.
    while (fs.existsSync(path.join(dir, `ems-${stamp(when)}.db`))) when = new Date(when.getTime() + 1);
    const name = `ems-${stamp(when)}.db`;
    const file = path.join(dir, name);
    const partialDb = `${file}.partial`;
    const partialFiles = `${filesDirOf(file)}.partial`;

    const rate = options.pagesPerStep ?? 1000;
    await source.backup(partialDb, {
      progress: () => {
        if (options.signal?.aborted) throw new Error('backup aborted: the service is stopping');
        return rate;
      },
    });
    // Made one self-contained file, integrity-checked and counted in a worker thread (seconds on a year of data).
    const counts = await (options.checkCopy ?? checkCopyOffThread)(partialDb);

    const files: ManifestEntry[] = [];
    const placed = { linked: 0, copied: 0 };
    for (const sub of CAPTURED_DIRS) mirrorTree(path.join(dataDir, sub), path.join(partialFiles, sub), partialFiles, files, placed);
    const manifest: Manifest = {
      format: 1,
      database: name,
      createdAt: when.toISOString(),
      capture: 'hardlink',
      files,
      totalBytes: files.reduce((sum, entry) => sum + entry.size, 0),
      rowCounts: counts,
    };
    fs.writeFileSync(path.join(partialFiles, MANIFEST), `${JSON.stringify(manifest, null, 1)}\n`, { mode: 0o640 });

    // The folder first, the database last: a listed ems-*.db always has its complete folder.
    fs.renameSync(partialFiles, filesDirOf(file));
    fs.renameSync(partialDb, file);
    // It holds password hashes and the signing secret: no wider than the data dir allows.
    fs.chmodSync(file, 0o640);
    matchDataDirOwner(dataDir, [file, filesDirOf(file)]);

    const info = describe(file);
    let target: BackupResult['target'] = null;
    if (options.target) {
      target = copyToTarget(dataDir, options.target, info, options.retention, {
        checkDatabase: checkDatabaseFile,
        checkFiles: (dir) => void checkFilesDir(dir),
        list: listBackupsIn,
      });
      const { deleted: _pruned, ...check } = target;
      recordCheck(dataDir, 'target', check);
      matchDataDirOwner(dataDir, [path.join(dir, CHECKS_FILE)]);
    }

    const deleted: string[] = [];
    const all = listBackups(dataDir);
    const keep = backupsToKeep(all, options.retention);
    for (const old of all) {
      if (keep.has(old.name)) continue;
      removeBackup(old);
      deleted.push(old.name);
    }
    return { ...info, durationMs: Math.round(performance.now() - started), ...placed, deleted, target };
  } catch (error) {
    try {
      removePartials(dir);
    } catch {
      // the original error matters more
    }
    throw error;
  } finally {
    lock.release();
  }
}

/** A name from `backup list`, or a path to a backup file anywhere. */
export function resolveBackup(dataDir: string, reference: string): string {
  const candidates = [path.join(backupsDir(dataDir), reference), path.resolve(reference)];
  if (!reference.includes('/') && !reference.endsWith('.db')) candidates.unshift(path.join(backupsDir(dataDir), `${reference}.db`));
  const found = candidates.find((candidate) => fs.existsSync(candidate) && fs.statSync(candidate).isFile());
  if (!found) throw new BackupNotFound(`no backup named ${reference} (see "emsctl backup list")`);
  return found;
}

/** Verifies a backup without changing anything: database integrity and, unless dbOnly, its captured files. */
export function verifyBackup(file: string, options: { dbOnly?: boolean } = {}): { filesDir: string | null; fileCount: number } {
  checkDatabaseFile(file);
  if (options.dbOnly) return { filesDir: null, fileCount: 0 };
  const filesDir = filesDirOf(file);
  if (!file.endsWith('.db') || !fs.existsSync(filesDir)) {
    throw new BackupInvalid(`${file} has no captured files folder (${path.basename(filesDir)}); pass --db-only to restore the database alone`);
  }
  return { filesDir, fileCount: checkFilesDir(filesDir).files.length };
}

export type RestoreResult = {
  restored: string;
  replacedDir: string;
  fileCount: number;
  dbOnly: boolean;
  /**
   * kept: the backup schedule, retention and last-run record are the ones the box had before the restore; else why
   * they are the backup's (no database was there, or it could not be read).
   */
  upkeep: { kept: true } | { kept: false; reason: string };
};

/** databasePath() and its WAL companions. */
const DB_FILES = ['ems.db', 'ems.db-wal', 'ems.db-shm'];

/**
 * Replaces the live database (and, unless dbOnly, the uploads/models/avatars trees) with a verified backup.
 * Refuses while a service holds the data dir; holds the service lock itself meanwhile, so a service started
 * during the restore refuses to start. What it replaces is moved, never deleted, to <data dir>/replaced/<UTC>/.
 */
export function restoreBackup(dataDir: string, reference: string, options: { dbOnly?: boolean } = {}): RestoreResult {
  // The backup is found and verified (integrity, manifest) before anything asks for downtime: a wrong name or a
  // damaged file is said while the service still runs, not after someone stopped it.
  const file = resolveBackup(dataDir, reference);
  const verified = verifyBackup(file, { dbOnly: options.dbOnly });
  const running = runningService(dataDir);
  if (running) {
    throw new ServiceRunning(
      `the EMS service is running on ${dataDir} (pid ${running.pid}, since ${running.since}); stop it first (systemctl stop ems), then restore`,
    );
  }
  let serviceLock: HeldLock;
  try {
    serviceLock = acquireLock(path.join(dataDir, SERVICE_LOCK_FILE), 'emsctl backup restore');
  } catch (error) {
    if (error instanceof LockBusy) throw new ServiceRunning(`the data dir ${dataDir} is in use (${error.message}); stop the service first`);
    throw error;
  }
  try {
    const lock = backupLock(dataDir, 'emsctl backup restore');
    try {
      const live = databasePath(dataDir);
      const upkeep = fs.existsSync(live) ? readUpkeep(live) : { error: 'there was no database to keep it from' };
      const result = restoreLocked(dataDir, file, options.dbOnly ?? false, verified);
      if ('error' in upkeep) return { ...result, upkeep: { kept: false, reason: upkeep.error } };
      writeUpkeep(live, upkeep);
      return { ...result, upkeep: { kept: true } };
    } finally {
      lock.release();
    }
  } finally {
    serviceLock.release();
  }
}

/**
 * The restore steps alone, into any folder (the restore drill's temp dir): the caller holds the locks and has
 * verified the backup.
 */
export function restoreLocked(dataDir: string, file: string, dbOnly: boolean, verified: ReturnType<typeof verifyBackup>): Omit<RestoreResult, 'upkeep'> {
  const { filesDir, fileCount } = verified;
  const replacedDir = path.join(dataDir, REPLACED_DIR, stamp(new Date()));
  fs.mkdirSync(replacedDir, { recursive: true, mode: 0o750 });

  const movedAside: string[] = [];
  const created: string[] = [];
  const live = databasePath(dataDir);
  try {
    // The database with its -wal and -shm, together: after a crash the -wal still holds committed rows.
    for (const name of [...DB_FILES, ...(dbOnly ? [] : CAPTURED_DIRS)]) {
      const current = path.join(dataDir, name);
      if (!fs.existsSync(current)) continue;
      fs.renameSync(current, path.join(replacedDir, name));
      movedAside.push(name);
    }
    const incoming = `${live}.restoring`;
    fs.copyFileSync(file, incoming);
    created.push(live);
    fs.renameSync(incoming, live);
    if (filesDir) {
      const counts = { linked: 0, copied: 0 };
      for (const sub of CAPTURED_DIRS) {
        created.push(path.join(dataDir, sub));
        mirrorTree(path.join(filesDir, sub), path.join(dataDir, sub), dataDir, [], counts);
      }
    }
    matchDataDirOwner(dataDir, created);
  } catch (error) {
    // Put back what was there, so a failed restore leaves the data dir as it found it.
    for (const target of created) fs.rmSync(target, { recursive: true, force: true });
    fs.rmSync(`${live}.restoring`, { force: true });
    for (const name of movedAside) fs.renameSync(path.join(replacedDir, name), path.join(dataDir, name));
    fs.rmSync(replacedDir, { recursive: true, force: true });
    throw error;
  }
  return { restored: file, replacedDir, fileCount, dbOnly };
}
