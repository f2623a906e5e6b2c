// The second copy: each verified backup copied to EMS_BACKUP_TARGET (a USB disk, an NFS mount), verified again there.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { TargetCheck } from './checks.ts';
import { backupsToKeep, type RetentionPolicy } from './retention.ts';

/** What a copy needs to know of a local backup (archive.ts's BackupInfo has more). */
export type LocalBackup = { name: string; file: string; filesDir: string | null; createdAt: string };

export type TargetDeps = {
  /** integrity_check and "is this an EMS database"; throws with the first problem. */
  checkDatabase(file: string): void;
  /** Every file of the folder's manifest present with its size; throws otherwise. */
  checkFiles(filesDir: string): void;
  /** The backups on the target, as archive.ts lists them. */
  list(dir: string): Array<{ name: string; file: string; createdAt: string }>;
};

function sha256(file: string): string {
  return createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

/** Real bytes, not links: the target is another file system, and it must survive the loss of this one. */
function copyTree(from: string, to: string): void {
  fs.mkdirSync(to, { recursive: true, mode: 0o750 });
  for (const entry of fs.readdirSync(from, { withFileTypes: true })) {
    const source = path.join(from, entry.name);
    const target = path.join(to, entry.name);
    if (entry.isDirectory()) copyTree(source, target);
    else if (entry.isFile()) fs.copyFileSync(source, target);
  }
}

/**
 * Why the target cannot take a copy, or null when it can. A folder on the data dir's own file system is refused:
 * it protects against nothing, and it is what an unmounted mount point looks like (the copy would fill the
 * system disk instead of the USB disk).
 */
export function targetProblem(dataDir: string, targetDir: string): string | null {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(targetDir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' ? `${targetDir} does not exist (is the disk mounted?)` : `${targetDir} cannot be read (${code})`;
  }
  if (!stat.isDirectory()) return `${targetDir} is not a folder`;
  if (stat.dev === fs.statSync(dataDir).dev)
    return `${targetDir} is on the same file system as the data dir ${dataDir} (is the disk mounted?); a copy there protects nothing`;
  try {
    fs.accessSync(targetDir, fs.constants.W_OK);
  } catch {
    return `${targetDir} is not writable by this process (uid ${process.getuid?.() ?? '?'})`;
  }
  return null;
}

/**
 * Copies one local backup (database and captured files) to the target as .partial, verifies the copy (the
 * database's sha256 equals the local one and passes integrity_check; every file of the manifest is there with its
 * size), renames it into place, then applies the same retention to the target. Never throws: the local backup is
 * already complete, so a failure here is reported, not fatal.
 */
export function copyToTarget(
  dataDir: string,
  targetDir: string,
  backup: LocalBackup,
  policy: RetentionPolicy,
  deps: TargetDeps,
): TargetCheck & { deleted: string[] } {
  const at = new Date().toISOString();
  const failed = (error: string) => ({ dir: targetDir, at, status: 'failed' as const, backup: backup.name, error, deleted: [] });
  const problem = targetProblem(dataDir, targetDir);
  if (problem) return failed(problem);

  const file = path.join(targetDir, backup.name);
  const filesDir = file.replace(/\.db$/, '.files');
  const partialDb = `${file}.partial`;
  const partialFiles = `${filesDir}.partial`;
  try {
    for (const name of fs.readdirSync(targetDir)) {
      if (name.endsWith('.partial')) fs.rmSync(path.join(targetDir, name), { recursive: true, force: true });
    }
    fs.copyFileSync(backup.file, partialDb);
    if (sha256(partialDb) !== sha256(backup.file)) throw new Error(`the copy of ${backup.name} differs from the local backup`);
    deps.checkDatabase(partialDb);
    if (backup.filesDir) {
      copyTree(backup.filesDir, partialFiles);
      deps.checkFiles(partialFiles);
      fs.renameSync(partialFiles, filesDir);
    }
    fs.renameSync(partialDb, file);
  } catch (error) {
    for (const leftover of [partialDb, partialFiles]) {
      try {
        fs.rmSync(leftover, { recursive: true, force: true });
      } catch {
        // the copy's own error says more
      }
    }
    return failed((error as Error).message);
  }

  const deleted: string[] = [];
  try {
    const onTarget = deps.list(targetDir);
    const keep = backupsToKeep(onTarget, policy);
    for (const old of onTarget) {
      if (keep.has(old.name)) continue;
      fs.rmSync(old.file, { force: true });
      fs.rmSync(old.file.replace(/\.db$/, '.files'), { recursive: true, force: true });
      deleted.push(old.name);
    }
  } catch (error) {
    return { dir: targetDir, at, status: 'failed', backup: backup.name, error: `copied, but pruning the target failed: ${(error as Error).message}`, deleted };
  }
  return { dir: targetDir, at, status: 'ok', backup: backup.name, error: null, deleted };
}
