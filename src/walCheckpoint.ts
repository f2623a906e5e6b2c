// WAL checkpoints off the commit path (issue 29). SQLite's automatic checkpoint runs inside whichever COMMIT takes the
// WAL past 1,000 pages: copying them into the database file held that commit, and every request behind it, 59–110 ms.
// The service's connection turns it off (wal_autocheckpoint = 0, src/db/client.ts) and this job takes its place: every
// CHECK_INTERVAL_MS it reads the WAL's frame count from the wal-index header (a few bytes of the -shm file, no
// statement), and from WAL_CHECKPOINT_FRAMES on (the same 1,000 pages, so the disk writes of an edge box stay what they
// were) runs a PASSIVE checkpoint in a short-lived worker thread on its own connection (walCheckpointWorker.ts). PASSIVE
// never waits for a writer or a reader; what it could not copy is copied by the next one. The WAL is reset from its
// start by the first write after a whole checkpoint and cut back to journal_size_limit, so it stays bounded.
import fs from 'node:fs';
import { runWorker } from './workerThread.ts';

/** Frames in the WAL from which the job checkpoints: SQLite's own default threshold. */
export const WAL_CHECKPOINT_FRAMES = 1000;
/** How often the job looks at the WAL. */
export const CHECK_INTERVAL_MS = 10_000;

export type CheckpointResult = { busy: number; log: number; checkpointed: number };

/**
 * Frames written to the WAL since its last reset (mxFrame of the wal-index header: bytes 16–19, native byte order,
 * https://www.sqlite.org/walformat.html); 0 when there is no -shm file (no WAL in use).
 */
export function walFrames(databaseFile: string): number {
  let fd: number;
  try {
    fd = fs.openSync(`${databaseFile}-shm`, 'r');
  } catch {
    return 0;
  }
  try {
    const header = Buffer.alloc(48);
    if (fs.readSync(fd, header, 0, 48, 0) < 48) return 0;
    // The header's first field is the version, 3007000, written in the machine's byte order.
    return header.readUInt32LE(0) === 3007000 ? header.readUInt32LE(16) : header.readUInt32BE(16);
  } finally {
    fs.closeSync(fd);
  }
}

/** A PASSIVE checkpoint of the database in a worker thread: the event loop only posts and receives a message. */
export function checkpointOffThread(databaseFile: string): Promise<CheckpointResult> {
  return runWorker<CheckpointResult>(
    import.meta.url,
    'walCheckpointWorker',
    { databaseFile },
    { what: 'the WAL checkpoint worker', resourceLimits: { maxOldGenerationSizeMb: 16 } },
  );
}

/** The job's one run (for Repeating): a checkpoint when the WAL holds `frames` or more. Never throws. */
export function walCheckpointJob(
  databaseFile: string,
  onError: (error: unknown) => void,
  frames = WAL_CHECKPOINT_FRAMES,
): () => Promise<CheckpointResult | null> {
  return async () => {
    try {
      if (walFrames(databaseFile) < frames) return null;
      return await checkpointOffThread(databaseFile);
    } catch (error) {
      onError(error);
      return null;
    }
  };
}
