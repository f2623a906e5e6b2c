// The entry of the backup worker thread (started by offThread.ts): integrity check and row counts of a fresh copy, or
// the whole restore drill, away from the request thread. Nothing imports this file; it answers one task and ends.
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { rowCounts } from './archive.ts';
import { runRestoreDrill } from './drill.ts';
import { BackupInvalid } from './errors.ts';
import type { BackupAnswer, BackupTask } from './offThread.ts';

function run(task: BackupTask): unknown {
  if (task.kind === 'drill') return runRestoreDrill(task.dataDir, task.options);
  const copy = new Database(task.file);
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
  let answer: BackupAnswer;
  try {
    answer = { ok: true, value: run(workerData as BackupTask) };
  } catch (error) {
    answer = { ok: false, name: (error as Error).name, message: (error as Error).message };
  }
  parentPort.postMessage(answer);
}
