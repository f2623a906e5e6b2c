// The compiled program (tsc output) for tests that start many child processes: `node dist/cli/emsctl.js` answers in a
// fraction of the time `node --import tsx cli/emsctl.ts` takes (~0.3 s against ~1.9 s a call on a busy box).
//
// Built once per source state and shared by every test file and run: the tree lands in <tmp>/ems-compiled-<hash>, the
// hash covering every file tsc reads (src/, cli/, package.json, tsconfig*.json), the checkout the tree links its
// node_modules to, and the Node ABI those modules were built for (two checkouts, or one checkout's Node 20 and release
// runtime runs, would otherwise share a tree whose node_modules link leads to the other's, possibly deleted, modules). The first test file that needs it
// builds it (~60 s); the others wait on a lock directory, polling, with a limit generous enough for a busy box.
// The tree looks like a checkout after `npm run build`: package.json, src/ (the migrations are read from there),
// cli/, dist/, and node_modules as a link to this checkout's.
import { createHash } from 'node:crypto';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from './serviceProcess.ts';

const SOURCES = ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'src', 'cli'];
/** A build that has not finished after this long is taken to be dead (its process was killed) and started again. */
const STALE_LOCK_MS = 15 * 60_000;

/** The cache key of a checkout's compiled tree: its path, the Node ABI, and every source file tsc reads. */
export function compiledBuildKey(root: string = repoRoot, abi: string = process.versions.modules): string {
  const hash = createHash('sha256');
  hash.update(`${root}\0${abi}\0`);
  const add = (relative: string) => {
    const full = path.join(root, relative);
    const stat = fs.statSync(full);
    if (stat.isDirectory()) {
      for (const entry of fs.readdirSync(full).sort()) add(path.join(relative, entry));
    } else {
      hash.update(`${relative}\0`);
      hash.update(fs.readFileSync(full));
    }
  };
  for (const item of SOURCES) add(item);
  return hash.digest('hex').slice(0, 16);
}

function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

let cached: string | undefined;

/** The directory of a compiled tree matching the current sources (built now if no test built it before). */
export function compiledBuild(): string {
  if (cached) return cached;
  const dir = path.join(os.tmpdir(), `ems-compiled-${compiledBuildKey()}`);
  const lock = `${dir}.lock`;
  for (;;) {
    if (fs.existsSync(path.join(dir, 'dist', 'cli', 'emsctl.js'))) {
      // Readable by every user: a test runs the service as nobody against it. tsc may have run under the umask 027
      // an in-process test service sets (restrictFileModes), and mkdtemp makes 0700: open both up (links not followed).
      if ((fs.statSync(dir).mode & 0o777) !== 0o755 || (fs.statSync(path.join(dir, 'dist')).mode & 0o777) !== 0o755) {
        execFileSync('chmod', ['-R', 'u=rwX,go=rX', dir]);
      }
      return (cached = dir);
    }
    try {
      fs.mkdirSync(lock);
    } catch {
      // Another test file builds it: wait (polling), or take over a lock its dead builder left.
      const since = fs.statSync(lock, { throwIfNoEntry: false })?.mtimeMs;
      if (since !== undefined && Date.now() - since > STALE_LOCK_MS) fs.rmSync(lock, { recursive: true, force: true });
      else sleep(500);
      continue;
    }
    try {
      const work = fs.mkdtempSync(`${dir}.build-`);
      for (const item of SOURCES) fs.cpSync(path.join(repoRoot, item), path.join(work, item), { recursive: true });
      fs.symlinkSync(path.join(repoRoot, 'node_modules'), path.join(work, 'node_modules'));
      // Type errors are the typecheck step's business: tsc still emits, and the entry points must exist.
      spawnSync(process.execPath, [path.join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], {
        cwd: work,
        stdio: 'ignore',
      });
      for (const entry of ['dist/src/main.js', 'dist/cli/emsctl.js']) {
        if (!fs.existsSync(path.join(work, entry))) throw new Error(`tsc did not produce ${entry} in ${work}`);
      }
      fs.rmSync(dir, { recursive: true, force: true });
      fs.renameSync(work, dir);
    } finally {
      fs.rmSync(lock, { recursive: true, force: true });
    }
  }
}
