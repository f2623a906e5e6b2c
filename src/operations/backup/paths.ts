// Where backups live inside the data dir.
import path from 'node:path';

export function backupsDir(dataDir: string): string {
  return path.join(dataDir, 'backups');
}
