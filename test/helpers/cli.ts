// Runs the real emsctl launcher as a child process.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const launcher = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../cli/emsctl.js');

export type CliResult = { code: number; stdout: string; stderr: string };

export function runCli(args: string[], options: { env?: Record<string, string>; input?: string } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env, ...options.env };
    delete env.NODE_OPTIONS;
    const child = spawn(process.execPath, [launcher, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}
