// Opens the SQLite file fail-closed: pragmas, a quick_check, then the shipped migrations.
import fs from 'node:fs';
import path from 'node:path';
import { isMainThread } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { drizzle, type BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import * as schema from './schema/index.ts';
import { packageRoot } from '../packageRoot.ts';

export type Orm = BetterSQLite3Database<typeof schema>;
export type Db = { sqlite: Database.Database; orm: Orm; path: string };

export class DatabaseOpenError extends Error {
  override name = 'DatabaseOpenError';
}

/** The migrations ship as SQL in the source tree; dist/ code reads them from there too. */
export function migrationsFolder(): string {
  return path.join(packageRoot, 'src', 'platform', 'db', 'migrations');
}

export function databasePath(dataDir: string): string {
  return path.join(dataDir, 'ems.db');
}

/** How long emsctl waits for another process's write lock: it has no requests to keep answering. */
export const BLOCKING_BUSY_TIMEOUT_MS = 5000;
/**
 * How long the service waits for it inside a statement: better-sqlite3 waits on the event-loop thread, so every
 * request waited with it (up to 5 s). Longer waits happen between tries, with the event loop free (retryWhileBusy).
 */
export const SERVICE_BUSY_TIMEOUT_MS = 40;

/** What a reset WAL is cut back to when the service checkpoints it itself: 4 MiB, the 1,000 pages of SQLite's default. */
export const WAL_SIZE_LIMIT = 4 * 1024 * 1024;

/**
 * synchronous=NORMAL in WAL mode: a committed transaction survives a process crash; only a power loss
 * can drop the last few commits (never corrupt the file). ~18 µs per insert against ~257 µs for FULL.
 */
function applyPragmas(sqlite: Database.Database, busyTimeoutMs: number): void {
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma(`busy_timeout = ${busyTimeoutMs}`);
}

/**
 * The data dir holds the signing secret and every password hash: nothing written under it may be readable by other
 * local users, whatever umask the service or emsctl was started with. Files 0640 at most, directories 0750.
 */
export function restrictFileModes(dataDir: string): void {
  // The umask is the process's: a worker thread (the backup checks) cannot set it, and its main thread already did.
  if (isMainThread) process.umask(process.umask() | 0o027);
  ensureDirectory(dataDir, 0o750);
  tighten(dataDir, 0o750);
}

/**
 * mkdir -p, one level at a time. Node's recursive mkdir retries for ever (at full CPU) where a parent exists but refuses
 * a new child with ENOENT, as /proc and /sys do; here that is one error at once. A file in the way is ENOTDIR naming
 * that file (error.path).
 */
export function ensureDirectory(dir: string, mode: number): void {
  const missing: string[] = [];
  let current = path.resolve(dir);
  for (;;) {
    let stat: fs.Stats | undefined;
    try {
      stat = fs.statSync(current);
    } catch (error) {
      // ENOTDIR: a parent is a file; go on up to name it.
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
    }
    if (stat) {
      if (!stat.isDirectory()) throw Object.assign(new Error(`${current} is not a directory`), { code: 'ENOTDIR', path: current });
      break;
    }
    missing.unshift(current);
    const parent = path.dirname(current);
    if (parent === current) break;
    current = parent;
  }
  for (const level of missing) {
    try {
      fs.mkdirSync(level, { mode });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
}

/** Removes group-write and all "other" bits from what an earlier version (or umask) left behind. */
function tighten(file: string, allowed: number): void {
  try {
    const mode = fs.statSync(file).mode & 0o777;
    if ((mode & ~allowed) !== 0) fs.chmodSync(file, mode & allowed);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}

/**
 * quickCheck: false skips the start-up quick_check (it reads every page): for emsctl status, which only reads a few rows.
 * busyTimeoutMs: how long a statement waits for another process's lock (the service waits briefly and retries off the
 * event loop; emsctl waits the default).
 */
export function openDatabase(
  file: string,
  options: {
    migrate?: boolean;
    quickCheck?: boolean;
    busyTimeoutMs?: number;
    /**
     * false: no automatic WAL checkpoint inside a COMMIT (the service: its job checkpoints off the event loop,
     * src/platform/db/walCheckpoint.ts), and the WAL cut back to WAL_SIZE_LIMIT when it is reset.
     */
    autoCheckpoint?: boolean;
    /**
     * The connection's page cache in KiB (SQLite's default as better-sqlite3 builds it: 16 MiB), set before the
     * start-up quick_check reads every page: filled to 16 MiB and then shrunk, that cache left ~10 MiB of freed
     * malloc memory the process kept (idle RSS, issue 29).
     */
    cacheKiB?: number;
  } = {},
): Db {
  restrictFileModes(path.dirname(file));
  for (const suffix of ['', '-wal', '-shm']) tighten(file + suffix, 0o640);
  let sqlite: Database.Database;
  try {
    sqlite = new Database(file);
    if (options.cacheKiB !== undefined) sqlite.pragma(`cache_size = -${Math.max(0, Math.floor(options.cacheKiB))}`);
    applyPragmas(sqlite, BLOCKING_BUSY_TIMEOUT_MS);
    if (options.quickCheck !== false) {
      const check = sqlite.pragma('quick_check', { simple: true });
      if (check !== 'ok') throw new Error(`quick_check reported: ${String(check)}`);
    }
  } catch (error) {
    throw new DatabaseOpenError(`database ${file} cannot be used (${(error as Error).message}); restore a backup with "emsctl backup restore"`);
  }
  const orm = drizzle(sqlite, { schema });
  if (options.migrate !== false) {
    try {
      migrate(orm, { migrationsFolder: migrationsFolder() });
    } catch (error) {
      sqlite.close();
      throw new DatabaseOpenError(`database ${file}: migration failed (${(error as Error).message})`);
    }
  }
  // quick_check read every page of the file into this connection's cache (up to 16 MiB): let them go, an idle
  // service need not hold them, and requests read back only what they use.
  sqlite.pragma('shrink_memory');
  if (options.autoCheckpoint === false) {
    sqlite.pragma('wal_autocheckpoint = 0');
    sqlite.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT}`);
  }
  // Opening and migrating may wait the long way (nothing is served yet); what the caller runs later waits its own.
  if (options.busyTimeoutMs !== undefined) sqlite.pragma(`busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs))}`);
  return { sqlite, orm, path: file };
}

/**
 * A second, read-only connection to the service's database, for work in a worker thread (report building): no
 * migrations, no checks, no writes; it reads the committed state like any WAL reader and never blocks the service.
 */
export function openReadOnlyDatabase(file: string): Db {
  const sqlite = new Database(file, { readonly: true, fileMustExist: true });
  sqlite.pragma(`busy_timeout = ${BLOCKING_BUSY_TIMEOUT_MS}`);
  return { sqlite, orm: drizzle(sqlite, { schema }), path: file };
}

export function closeReadOnlyDatabase(db: Db): void {
  if (db.sqlite.open) db.sqlite.close();
}

export function closeDatabase(db: Db): void {
  if (!db.sqlite.open) return;
  try {
    db.sqlite.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    db.sqlite.close();
  }
}
