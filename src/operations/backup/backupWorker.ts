// The entry of the backup worker thread (started by offThread.ts): a whole backup run, the integrity check and row
// counts of a fresh copy, or the whole restore drill, away from the request thread. Nothing imports this file; it answers one task and ends.
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { databasePath } from '../../platform/db/client.ts';
import { createBackup, rowCounts } from './archive.ts';
import { runRestoreDrill } from './drill.ts';
import { BackupInvalid } from './errors.ts';
import { answerParent, yieldCpuToRequests } from '../../platform/workerThread.ts';
import type { BackupTask } from './offThread.ts';

/**
 * A whole backup run (copy, check, captured trees, manifest, target copy, retention) from this thread's own read-only
 * connection, copied in one step: a stepwise copy restarts at every write of the service (another connection now).
 */
async function backup(task: Extract<BackupTask, { kind: 'backup' }>, signal: AbortSignal): Promise<unknown> {
  const source = new Database(databasePath(task.dataDir), { readonly: true, fileMustExist: true });
  try {
    return await createBackup(source, task.dataDir, { ...task.options, pagesPerStep: 0x7fffffff, signal, checkCopy: async (file) => checkCopy(file) });
  } finally {
    source.close();
  }
}

function run(task: BackupTask, signal: AbortSignal): unknown {
  if (task.kind === 'drill') return runRestoreDrill(task.dataDir, task.options);
  if (task.kind === 'backup') return backup(task, signal);
  return checkCopy(task.file);
}

function checkCopy(file: string): Record<string, number> {
  const copy = new Database(file);
  try {
    // The copy inherits WAL mode; a backup should be one self-contained file.
    copy.pragma('journal_mode = DELETE');
    const check = copy.pragma('integrity_check', { simple: true });
    if (check !== 'ok') throw new BackupInvalid(`the copy failed integrity_check: ${String(check)}`);
    return rowCounts(copy);
  } finally {
    copy.close();
  }
}

if (!isMainThread && parentPort && (workerData as BackupTask | undefined)?.kind) {
  const port = parentPort;
  yieldCpuToRequests();
  // The service stopping aborts a backup between its steps.
  const abort = new AbortController();
  port.on('message', (message: { abort?: boolean }) => {
    if (message.abort) abort.abort();
  });
  void answerParent(
    (answer) => {
      port.postMessage(answer);
      port.close();
    },
    () => run(workerData as BackupTask, abort.signal),
  );
}
