// Backup work that reads a whole database file (the service's backup runs, integrity_check, row counts, a restore
// drill's copy and migration) runs in a worker thread: on a year of data it takes seconds, and on the request thread it would hold every request (issue
// 29: no background task blocks the event loop for more than 50 ms). One short-lived worker per task; its errors come
// back as the same classes (BackupBusy, BackupNotFound, BackupInvalid), so callers handle them as before.
// The work itself is in backupWorker.ts, the worker's entry; this side only starts it and imports nothing of
// archive.ts or drill.ts (they import this file).
import { startWorker, type WorkerAnswer } from '../../platform/workerThread.ts';
import type { DrillCheck } from './checks.ts';
import { BackupBusy, BackupInvalid, BackupNotFound } from './errors.ts';
import type { RetentionPolicy } from './retention.ts';

export type BackupTask =
  | { kind: 'drill'; dataDir: string; options: { backup?: string; purpose?: string } }
  /** A whole backup run (createBackup) from the worker's own connection. */
  | { kind: 'backup'; dataDir: string; options: { retention: RetentionPolicy; target?: string; purpose?: string } }
  /** A fresh backup copy: switched to a self-contained file, checked, its rows counted. */
  | { kind: 'checkCopy'; file: string };

function errorClass(name: string): new (message: string) => Error {
  const known: Record<string, new (message: string) => Error> = { BackupBusy, BackupInvalid, BackupNotFound };
  return known[name] ?? Error;
}

function inWorker<T>(task: BackupTask, signal?: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const worker = startWorker(import.meta.url, 'backupWorker', task);
    let answered = false;
    const abort = () => worker.postMessage({ abort: true });
    signal?.addEventListener('abort', abort, { once: true });
    worker.once('exit', () => signal?.removeEventListener('abort', abort));
    worker.once('message', (answer: WorkerAnswer) => {
      answered = true;
      if (answer.ok) resolve(answer.value as T);
      else {
        const Class = errorClass(answer.name);
        reject(new Class(answer.message));
      }
    });
    worker.once('error', (error) => {
      answered = true;
      reject(error);
    });
    worker.once('exit', (code) => {
      if (!answered) reject(new Error(`the backup worker stopped (exit code ${code}) before it answered`));
    });
  });
}

/**
 * createBackup in a worker thread with its own read-only connection (the copy in one step there, the check, the
 * captured trees, the target copy and retention): a backup of a year of data held the event loop 0.17–0.26 s.
 * The same lock, files and result; aborted by `signal` between steps.
 */
export function backupOffThread<BackupResult>(
  dataDir: string,
  options: { retention: RetentionPolicy; target?: string; purpose?: string },
  signal?: AbortSignal,
): Promise<BackupResult> {
  // BackupResult is archive.ts's (this file imports nothing of it: archive.ts imports this file).
  if (signal?.aborted) return Promise.reject(new Error('backup aborted: the service is stopping'));
  return inWorker<BackupResult>({ kind: 'backup', dataDir, options }, signal);
}

/** runRestoreDrill in a worker thread (same lock, same record in checks.json). */
export function restoreDrillOffThread(dataDir: string, options: { backup?: string; purpose?: string } = {}): Promise<DrillCheck> {
  return inWorker<DrillCheck>({ kind: 'drill', dataDir, options });
}

/** A backup copy switched to one self-contained file, integrity-checked and its rows counted, in a worker thread. */
export function checkCopyOffThread(file: string): Promise<Record<string, number>> {
  return inWorker<Record<string, number>>({ kind: 'checkCopy', file });
}
