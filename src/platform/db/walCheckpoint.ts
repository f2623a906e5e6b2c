// WAL checkpoints off the commit path (issue 29). SQLite's automatic checkpoint runs inside whichever COMMIT takes the
// WAL past 1,000 pages: copying them into the database file held that commit, and every request behind it, 59–110 ms.
// The service's connection turns it off (wal_autocheckpoint = 0, src/platform/db/client.ts) and this job takes its place: every
// CHECK_INTERVAL_MS it reads the WAL's frame count from the wal-index header (a few bytes of the -shm file, through a
// descriptor held open: WalIndex; no statement), and from WAL_CHECKPOINT_FRAMES on (the same 1,000 pages, so the disk
// writes of an edge box stay what they were) runs a PASSIVE checkpoint in a short-lived worker thread on its own
// connection (walCheckpointWorker.ts). PASSIVE never waits for a writer or a reader; what it could not copy is copied
// by the next one. The WAL is reset from its start by the first write after a whole checkpoint and cut back to
// journal_size_limit, so it stays bounded.
import fs from 'node:fs';
import { runWorker } from '../workerThread.ts';

/** Frames in the WAL from which the job checkpoints: SQLite's own default threshold. */
export const WAL_CHECKPOINT_FRAMES = 1000;
/** How often the job looks at the WAL. */
export const CHECK_INTERVAL_MS = 10_000;

export type CheckpointResult = { busy: number; log: number; checkpointed: number };

/**
 * The wal-index header of one database (the first bytes of its -shm file), read through one descriptor held open until
 * close(). Never a descriptor opened and closed per look: closing any descriptor of a file drops every POSIX lock the
 * process holds on that file, SQLite's own included (https://www.sqlite.org/howtocorrupt.html, 2.2). A per-look open
 * and close dropped the connection's shared lock on the -shm's "dead man switch" byte; the next process to open the
 * database (emsctl, a health check) then took itself for the only user, truncated the -shm under the service's
 * mapping and rebuilt it, and the service died of SIGBUS when it next touched the mapping.
 */
export class WalIndex {
  private fd: number | null = null;

  constructor(readonly databaseFile: string) {}

  /**
   * Frames written to the WAL since its last reset (mxFrame of the header: bytes 16–19, native byte order,
   * https://www.sqlite.org/walformat.html); 0 while there is no -shm file (no WAL in use).
   */
  frames(): number {
    const fd = this.descriptor();
    if (fd === null) return 0;
    const header = Buffer.alloc(48);
    if (fs.readSync(fd, header, 0, 48, 0) < 48) return 0;
    // The header's first field is the version, 3007000, written in the machine's byte order.
    return header.readUInt32LE(0) === 3007000 ? header.readUInt32LE(16) : header.readUInt32BE(16);
  }

  /** Only once the process's connections to the database are closed (see above). */
  close(): void {
    if (this.fd === null) return;
    fs.closeSync(this.fd);
    this.fd = null;
  }

  /**
   * The descriptor, opened on the first look that finds the file and then kept: the -shm the connection maps stays the
   * same file for as long as the connection is open.
   */
  private descriptor(): number | null {
    if (this.fd !== null) return this.fd;
    try {
      this.fd = fs.openSync(`${this.databaseFile}-shm`, 'r');
    } catch {
      return null;
    }
    return this.fd;
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
export function walCheckpointJob(index: WalIndex, onError: (error: unknown) => void, frames = WAL_CHECKPOINT_FRAMES): () => Promise<CheckpointResult | null> {
  return async () => {
    try {
      if (index.frames() < frames) return null;
      return await checkpointOffThread(index.databaseFile);
    } catch (error) {
      onError(error);
      return null;
    }
  };
}
