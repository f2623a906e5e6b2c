// What the last copy to EMS_BACKUP_TARGET and the last restore drill found: one small JSON file in the backups folder.
import fs from 'node:fs';
import path from 'node:path';
import { backupsDir } from './paths.ts';

export type TargetCheck = {
  dir: string;
  at: string;
  status: 'ok' | 'failed';
  /** The backup that was copied (ok) or that failed to copy. */
  backup: string | null;
  error: string | null;
};

export type DrillCheck = {
  at: string;
  status: 'ok' | 'failed';
  backup: string | null;
  durationMs: number;
  /** Tables and rows found in the restored copy; null when the drill failed before counting. */
  tables: number | null;
  rows: number | null;
  /** Files of the manifest restored with their sizes. */
  files: number | null;
  error: string | null;
};

export type BackupChecks = { target: TargetCheck | null; drill: DrillCheck | null };

/**
 * Kept beside the backups (not in the database) so a restore never rolls it back and a damaged database
 * cannot hide it. Written only under the backup lock; read by the service, health and emsctl.
 */
export const CHECKS_FILE = 'checks.json';

function checksPath(dataDir: string): string {
  return path.join(backupsDir(dataDir), CHECKS_FILE);
}

export function readChecks(dataDir: string): BackupChecks {
  try {
    const parsed = JSON.parse(fs.readFileSync(checksPath(dataDir), 'utf8')) as Partial<BackupChecks>;
    return { target: parsed.target ?? null, drill: parsed.drill ?? null };
  } catch {
    return { target: null, drill: null };
  }
}

/** Replaces one entry; the file is swapped in whole so a reader never sees half of it. */
export function recordCheck<K extends keyof BackupChecks>(dataDir: string, key: K, value: BackupChecks[K]): void {
  const file = checksPath(dataDir);
  const next = { ...readChecks(dataDir), [key]: value };
  const partial = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(partial, `${JSON.stringify(next, null, 1)}\n`, { mode: 0o640 });
  fs.renameSync(partial, file);
}

/** Reads the file again only when it changed: cheap enough for /api/health. */
export function cachedChecks(dataDir: string): () => BackupChecks {
  let stamp = '';
  let value: BackupChecks = { target: null, drill: null };
  return () => {
    let now = 'absent';
    try {
      const stat = fs.statSync(checksPath(dataDir));
      now = `${stat.mtimeMs}:${stat.size}:${stat.ino}`;
    } catch {
      // no checks yet
    }
    if (now !== stamp) {
      stamp = now;
      value = readChecks(dataDir);
    }
    return value;
  };
}
