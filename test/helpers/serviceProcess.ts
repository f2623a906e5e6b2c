// The real service as a child process, for crash, shutdown and restore tests: the compiled service as installed
// (test/helpers/compiledBuild.ts, built once from the current sources; ~1.5 s faster a start than tsx), or
// `node --import tsx src/main.ts` with EMS_SERVICE_FROM_SOURCE=1.
import { spawn, type ChildProcess, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { compiledBuild } from './compiledBuild.ts';
import { testEnv } from './testEnv.ts';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export type ServiceProcess = {
  url: string;
  child: ChildProcessWithoutNullStreams;
  /** Every JSON log line so far. */
  lines(): Array<Record<string, unknown>>;
  /** Resolves with the first log line whose msg is `msg`. */
  waitForLog(msg: string): Promise<Record<string, unknown>>;
  /** Resolves with the exit code (or the signal name). */
  exited: Promise<number | string>;
  /** Everything written to stderr so far. */
  stderr(): string;
};

/**
 * Every child a helper spawned and that has not ended yet. When the test file's process ends by any path (a test
 * timed out, an assertion threw before the test's own kill, the runner cancelled the file), they are killed with it,
 * so no service or CLI outlives its test and holds a port or a data dir.
 */
const liveChildren = new Set<ChildProcess>();
const killLiveChildren = () => {
  for (const child of liveChildren) child.kill('SIGKILL');
};
process.on('exit', killLiveChildren);
// A live child's pipes keep the test file's process from ever exiting (so 'exit' never comes): a service left by a
// timed-out test kept a file of `npm test` alive for 20 minutes. Under the test runner, a file-level after hook
// kills what is left once the file's tests are done. (Outside it, e.g. in a benchmark, the exit handler alone.)
if (process.env.NODE_TEST_CONTEXT) {
  const { after } = await import('node:test');
  after(killLiveChildren);
}

export function trackChild<T extends ChildProcess>(child: T): T {
  liveChildren.add(child);
  child.once('close', () => liveChildren.delete(child));
  child.once('error', () => liveChildren.delete(child));
  return child;
}

/** How long a started service may take to log "EMS started" (migrations, a busy box) before it is killed as stuck. */
export const START_LIMIT_MS = 180_000;

/** Environment without the caller's EMS_* settings, so a developer's shell cannot change what the test sees. */
export function cleanEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith('EMS_') && key !== 'NODE_OPTIONS' && key !== 'NODE_ENV') env[key] = value;
  }
  return { ...env, ...extra };
}

/** The default entry point: the compiled service, or the TS source through tsx with EMS_SERVICE_FROM_SOURCE=1. */
/** The service's entry: the compiled build's dist/src/main.js (or src/main.ts through tsx with EMS_SERVICE_FROM_SOURCE=1). */
export function defaultArgs(): string[] {
  if (process.env.EMS_SERVICE_FROM_SOURCE === '1') return ['--import', 'tsx', path.join(repoRoot, 'src', 'main.ts')];
  return [path.join(compiledBuild(), 'dist', 'src', 'main.js')];
}

/**
 * A spawned service's environment: `env` over `testEnv(dataDir)`, so the alarm poll and the collection are off unless
 * the test asks (`LOOPS_AS_INSTALLED`, or its own interval), as in an in-process server; none of the caller's EMS_*.
 */
export const serviceEnv = (dataDir: string, env: Record<string, string> = {}) => cleanEnv(testEnv(dataDir, env));

/** `args` default to the compiled service (see defaultArgs); an installed tree passes its own dist/src/main.js. */
export async function spawnService(
  dataDir: string,
  env: Record<string, string> = {},
  args = defaultArgs(),
  /** The Node that runs it: this one, or e.g. a release's own runtime/bin/node. */
  nodeBin = process.execPath,
): Promise<ServiceProcess> {
  const child = trackChild(
    spawn(nodeBin, args, {
      cwd: repoRoot,
      env: serviceEnv(dataDir, env),
    }),
  );
  const parsed: Array<Record<string, unknown>> = [];
  const waiters: Array<{ msg: string; resolve: (line: Record<string, unknown>) => void }> = [];
  let buffer = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => {
    buffer += chunk;
    const complete = buffer.split('\n');
    buffer = complete.pop()!;
    for (const text of complete) {
      let line: Record<string, unknown>;
      try {
        line = JSON.parse(text);
      } catch {
        continue;
      }
      parsed.push(line);
      for (const waiter of waiters.filter((w) => w.msg === line.msg)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(line);
      }
    }
  });
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<number | string>((resolve) => child.on('close', (code, signal) => resolve(code ?? signal ?? -1)));
  const waitForLog = (msg: string) => {
    const seen = parsed.find((line) => line.msg === msg);
    if (seen) return Promise.resolve(seen);
    return new Promise<Record<string, unknown>>((resolve, reject) => {
      waiters.push({ msg, resolve });
      void exited.then((code) => reject(new Error(`service exited (${code}) before logging "${msg}": ${stderr.slice(-2000)}`)));
    });
  };
  // A start that neither logs "EMS started" nor exits within the limit is killed here: the caller never got the child
  // to kill, and a test waiting on it would otherwise hang the file.
  let limit: NodeJS.Timeout | undefined;
  try {
    const started = await Promise.race([
      waitForLog('EMS started'),
      new Promise<never>((_, reject) => {
        limit = setTimeout(
          () => reject(new Error(`service did not log "EMS started" within ${START_LIMIT_MS / 1000} s (killed): ${stderr.slice(-2000)}`)),
          START_LIMIT_MS,
        );
      }),
    ]);
    return { url: String(started.url), child, lines: () => parsed, waitForLog, exited, stderr: () => stderr };
  } catch (error) {
    child.kill('SIGKILL');
    await exited;
    throw error;
  } finally {
    clearTimeout(limit);
  }
}

export function initialAdminPassword(dataDir: string): string {
  return fs.readFileSync(path.join(dataDir, 'initial-admin-password'), 'utf8').trim();
}

export async function signInAdmin(url: string, dataDir: string): Promise<string> {
  const response = await fetch(`${url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: initialAdminPassword(dataDir) }),
  });
  if (response.status !== 200) throw new Error(`admin sign-in failed: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { accessToken: string }).accessToken;
}
