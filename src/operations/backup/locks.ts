// Lock files in the data dir: "a service runs on this data dir" (restore refuses) and "a backup or restore is in progress" (runs never overlap).
import fs from 'node:fs';
import path from 'node:path';
import { DatabaseOpenError } from '../../platform/db/client.ts';

/** Held by a running service for its whole life; `emsctl backup restore` refuses while a live process holds it. */
export const SERVICE_LOCK_FILE = 'service.lock';
/** Held during one backup run or restore, by the service or by emsctl, whichever started it. */
export const BACKUP_LOCK_FILE = path.join('backups', '.lock');

type LockOwner = { pid: number; processStart: string | null; since: string; purpose: string };

/**
 * The kernel's start time of a process (clock ticks since boot, /proc/<pid>/stat field 22), so a pid the
 * kernel reused after a crash is not mistaken for the lock's owner. null where /proc is not there.
 */
function processStart(pid: number): string | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count fields from the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

function alive(owner: LockOwner): boolean {
  try {
    process.kill(owner.pid, 0);
  } catch (error) {
    // EPERM: the process exists but belongs to another user (e.g. the service runs as ems, root asks).
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const start = processStart(owner.pid);
  return owner.processStart === null || start === null || start === owner.processStart;
}

function readOwner(file: string): LockOwner | null {
  try {
    const owner = JSON.parse(fs.readFileSync(file, 'utf8')) as LockOwner;
    return Number.isSafeInteger(owner.pid) && owner.pid > 0 ? owner : null;
  } catch {
    return null;
  }
}

/** The live holder of a lock file, or null when there is none (no file, unreadable, or its process is gone). */
export function lockHolder(file: string): LockOwner | null {
  const owner = readOwner(file);
  return owner && alive(owner) ? owner : null;
}

export type HeldLock = { file: string; release(): void };

export class LockBusy extends Error {
  override name = 'LockBusy';
  constructor(
    message: string,
    readonly holder: LockOwner | null,
  ) {
    super(message);
  }
}

function createExclusive(file: string, text: string): boolean {
  try {
    fs.writeFileSync(file, text, { flag: 'wx', mode: 0o640 });
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

function busy(file: string, holder: LockOwner | null): LockBusy {
  const who = holder ? `${holder.purpose} (pid ${holder.pid}, since ${holder.since})` : 'another process';
  return new LockBusy(`${who} holds ${file}`, holder);
}

/**
 * Creates the lock file exclusively (O_EXCL), taking over a stale one whose process is gone.
 * Throws LockBusy when a live process holds it. Two processes taking over the same stale lock at the
 * same instant could both win; on one box with one service and an admin's shell that is accepted.
 */
export function acquireLock(file: string, purpose: string): HeldLock {
  const mine: LockOwner = { pid: process.pid, processStart: processStart(process.pid), since: new Date().toISOString(), purpose };
  const text = `${JSON.stringify(mine)}\n`;
  if (!createExclusive(file, text)) {
    const holder = lockHolder(file);
    if (holder) throw busy(file, holder);
    // Stale: its process died (kill -9, power loss). Remove it and try once more.
    fs.rmSync(file, { force: true });
    if (!createExclusive(file, text)) throw busy(file, readOwner(file));
  }
  let released = false;
  return {
    file,
    release() {
      if (released) return;
      released = true;
      // Only remove our own file: a later holder may have taken over after a restart.
      const owner = readOwner(file);
      if (owner?.pid === process.pid && owner.since === mine.since) fs.rmSync(file, { force: true });
    },
  };
}

/**
 * The service's claim on its data dir, taken before the database opens. Another live process holding it
 * (a second service, or emsctl restoring a backup) stops this start with a clear message; a stale file from
 * a crash is taken over. The same process may take it again (tests restart a service on one data dir).
 */
export function holdServiceLock(dataDir: string): HeldLock {
  const file = path.join(dataDir, SERVICE_LOCK_FILE);
  try {
    return acquireLock(file, 'the EMS service');
  } catch (error) {
    if (!(error instanceof LockBusy)) throw error;
    if (error.holder?.pid !== process.pid) {
      throw new DatabaseOpenError(
        `data dir ${dataDir} is in use by ${error.holder?.purpose ?? 'another process'} (pid ${error.holder?.pid ?? '?'}); only one service may run on it`,
      );
    }
    fs.rmSync(file, { force: true });
    return acquireLock(file, 'the EMS service');
  }
}

/** The pid of a live service holding this data dir, or null. */
export function runningService(dataDir: string): LockOwner | null {
  return lockHolder(path.join(dataDir, SERVICE_LOCK_FILE));
}
