// Whether the database can take writes: a write refused for lack of space (SQLITE_FULL, ENOSPC) is remembered until a
// later write succeeds, and a data dir with (almost) no space left counts as full before anything fails.
import fs from 'node:fs';
import type { Db } from './client.ts';

/** Below this much space left for the service's user the data dir counts as full (a WAL frame is ~4 KiB). */
export const MIN_FREE_BYTES = 1024 * 1024;

export class StorageWatch {
  private readonly changes;
  /** total_changes() when a write failed for lack of space: any write since (more changes) means there is room again. */
  private failedAt: number | null = null;

  constructor(
    db: Db,
    private readonly dataDir: string,
  ) {
    // Raw: the connection's change counter reads no table (test/structure/rawStatements.test.ts lets such statements through).
    this.changes = db.sqlite.prepare('SELECT total_changes()').pluck();
  }

  noteFull(): void {
    try {
      this.failedAt = this.changes.get() as number;
    } catch {
      this.failedAt = -1;
    }
  }

  /** 'full' while the last space failure has not been followed by a successful write, or the disk has < 1 MiB left. */
  state(): 'ok' | 'full' {
    if (this.failedAt !== null) {
      if ((this.changes.get() as number) === this.failedAt) return 'full';
      this.failedAt = null;
    }
    try {
      const stats = fs.statfsSync(this.dataDir);
      if (stats.bavail * stats.bsize < MIN_FREE_BYTES) return 'full';
    } catch {
      // statfs unsupported here: only failed writes tell
    }
    return 'ok';
  }
}

const watches = new WeakMap<Db, StorageWatch>();

/** The one watch of a database (the error renderer notes failures, health reads them). */
export function storageWatchOf(db: Db, dataDir: string): StorageWatch {
  let watch = watches.get(db);
  if (!watch) watches.set(db, (watch = new StorageWatch(db, dataDir)));
  return watch;
}
