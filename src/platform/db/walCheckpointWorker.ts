// The entry of the WAL checkpoint worker (started by walCheckpoint.ts): one PASSIVE checkpoint on its own connection,
// answered with SQLite's three numbers, then it ends. Nothing imports this file.
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { answerParent, yieldCpuToRequests } from '../workerThread.ts';

if (!isMainThread && parentPort && typeof (workerData as { databaseFile?: string } | undefined)?.databaseFile === 'string') {
  const port = parentPort;
  yieldCpuToRequests();
  void answerParent(
    (answer) => port.postMessage(answer),
    () => {
      const sqlite = new Database((workerData as { databaseFile: string }).databaseFile, { fileMustExist: true });
      try {
        const [row] = sqlite.pragma('wal_checkpoint(PASSIVE)') as { busy: number; log: number; checkpointed: number }[];
        return row;
      } finally {
        sqlite.close();
      }
    },
  );
}
