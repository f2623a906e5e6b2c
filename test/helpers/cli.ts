// Runs the real emsctl as a child process: the compiled CLI (test/helpers/compiledBuild.ts, built once from the current
// sources), as installed, ~0.3 s a call instead of ~1.9 s through tsx. EMS_CLI_FROM_SOURCE=1 runs the TS launcher instead.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { compiledBuild } from './compiledBuild.ts';
import { trackChild } from './serviceProcess.ts';

const sourceLauncher = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../cli/emsctl.js');
/** A call that has not ended after this long is killed and fails the test (it never hangs the suite). */
const CALL_LIMIT_MS = 180_000;

export type CliResult = { code: number; stdout: string; stderr: string };

/**
 * Resolved when a test file imports this helper, not inside a test: the first build of the compiled tree takes a
 * minute or more on a busy box, which must not count against a test's own timeout (module loading has none).
 */
const entry = process.env.EMS_CLI_FROM_SOURCE === '1' ? sourceLauncher : path.join(compiledBuild(), 'dist', 'cli', 'emsctl.js');

export function cliEntry(): string {
  return entry;
}

export function runCli(args: string[], options: { env?: Record<string, string>; input?: string } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env, ...options.env };
    delete env.NODE_OPTIONS;
    const child = trackChild(spawn(process.execPath, [entry, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] }));
    let stdout = '';
    let stderr = '';
    const limit = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`emsctl ${args.join(' ')} did not end within ${CALL_LIMIT_MS / 1000} s (killed); stderr: ${stderr}`));
    }, CALL_LIMIT_MS);
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', (error) => {
      clearTimeout(limit);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(limit);
      resolve({ code: code ?? -1, stdout, stderr });
    });
    // A call that ends before reading its input (Node refusing a missing --env-file at once) closes the pipe: EPIPE on
    // stdin is that, not a failure of the call, whose exit code and output the caller checks.
    child.stdin.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') reject(error);
    });
    child.stdin.end(options.input ?? '');
  });
}
