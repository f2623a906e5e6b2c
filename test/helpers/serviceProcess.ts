// The real service as a child process (`node --import tsx src/main.ts`), for crash, shutdown and restore tests.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

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
};

/** Environment without the caller's EMS_* settings, so a developer's shell cannot change what the test sees. */
export function cleanEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith('EMS_') && key !== 'NODE_OPTIONS' && key !== 'NODE_ENV') env[key] = value;
  }
  return { ...env, ...extra };
}

/** `args` default to the TS entry point through tsx; an installed tree passes its compiled dist/src/main.js. */
export async function spawnService(dataDir: string, env: Record<string, string> = {}, args = ['--import', 'tsx', path.join(repoRoot, 'src', 'main.ts')]): Promise<ServiceProcess> {
  const child = spawn(process.execPath, args, {
    cwd: repoRoot,
    env: cleanEnv({ EMS_DATA_DIR: dataDir, EMS_PORT: '0', EMS_HOST: '127.0.0.1', EMS_LOG_LEVEL: 'info', ...env }),
  });
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
  const started = await waitForLog('EMS started');
  return { url: String(started.url), child, lines: () => parsed, waitForLog, exited };
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
