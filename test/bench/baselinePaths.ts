// A file of an older checkout (a benchmark's baseline) by today's path: the restructuring (commit 7d97222, issue 40)
// moved src/ into contexts and the tests into test/<context>/, so a baseline before it holds today's
// src/platform/db/client.ts as src/db/client.ts. The moves are read from that commit (git, rename detection as it
// recorded them), not listed by hand.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from './harness.ts';

/** The commit that regrouped src/ into contexts. */
export const RESTRUCTURING = '7d97222';

let moved: Map<string, string> | null = null;
/** Today's path → the path before the restructuring, for every file it moved. */
function movedFiles(): Map<string, string> {
  if (moved) return moved;
  const out = execFileSync('git', ['show', '--format=', '-M', '--name-status', RESTRUCTURING], { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 26 });
  moved = new Map();
  for (const line of out.split('\n')) {
    const [status, before, after] = line.split('\t');
    if (status?.startsWith('R') && before && after) moved.set(after, before);
  }
  return moved;
}

/**
 * Where `file` (today's path, relative to the checkout) is in the checkout at `root`: today's path when it is there,
 * else the path it had before the restructuring when that is there, else null (the file is newer than the checkout).
 */
export function findAt(root: string, file: string): string | null {
  if (fs.existsSync(path.join(root, file))) return file;
  const before = movedFiles().get(file);
  return before && fs.existsSync(path.join(root, before)) ? before : null;
}

/** Like findAt, but the file must be there: an error names both paths tried. */
export function pathAt(root: string, file: string): string {
  const found = findAt(root, file);
  if (found === null) {
    const before = movedFiles().get(file);
    throw new Error(`${file} is not in ${root}${before ? ` (nor ${before}, its path before ${RESTRUCTURING})` : ''}`);
  }
  return found;
}
