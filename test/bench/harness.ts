// Benchmark plumbing: build, the bare-Koa baseline and the compiled service as child processes, the load-generator child,
// and /proc readings (RSS, CPU time). run.ts decides what to measure; nothing here judges a figure.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LoadFigures, LoadJob } from './load.ts';

export type { LoadFigures, LoadJob };

export const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = path.resolve(BENCH_DIR, '..', '..');
export const RESULTS_DIR = path.join(BENCH_DIR, 'results');
const serviceEntry = (root: string) => path.join(root, 'dist', 'src', 'main.js');
const CLI_ENTRY = path.join(ROOT, 'dist', 'cli', 'emsctl.js');
/** The simulator's default credentials (`emsctl gateway simulate` without EMS_IOT_USERNAME/PASSWORD). */
export const SIMULATOR_CREDENTIALS = { username: 'ems', password: 'ems-simulator' };
const CLOCK_TICKS = 100;

export type Child = { pid: number; url: string; child: ChildProcess; stop(): Promise<void> };
export type ServiceChild = Child & { logFile: string; startupMs: number; stderr: () => string };

/**
 * `npm run build` in this checkout (or `root`, another checkout compared against). tsc still emits when another file in
 * the tree has a type error, so a failure is reported, not fatal.
 */
export async function buildService(root = ROOT): Promise<{ ok: boolean; ms: number; errors: string[] }> {
  const started = performance.now();
  const { code, output } = await collect(spawn('npm', ['run', '--silent', 'build'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] }));
  const errors = output.split('\n').filter((line) => /error TS\d+/.test(line));
  if (!fs.existsSync(serviceEntry(root))) throw new Error(`npm run build produced no ${serviceEntry(root)}:\n${output}`);
  return { ok: code === 0, ms: Math.round(performance.now() - started), errors };
}

function collect(child: ChildProcess): Promise<{ code: number | null; output: string; stdout: string }> {
  let output = '';
  let stdout = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk;
    stdout += chunk;
  });
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output, stdout }));
  });
}

/** A port nobody listens on right now (the service is told its port, so a warn-level log needs no "started" line). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function stopper(child: ChildProcess): () => Promise<void> {
  return async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  };
}

function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffered = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk;
      const end = buffered.indexOf('\n');
      if (end !== -1) resolve(buffered.slice(0, end));
    });
    child.once('exit', (code) => reject(new Error(`child exited (${code}) before it was ready`)));
  });
}

/** The fastify + better-sqlite3 alerts page (fastifyAlerts.ts) on the service's database file, logging to `logFile`. */
export async function startFastifyReference(dataDir: string, logFile: string): Promise<Child> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(BENCH_DIR, 'fastifyAlerts.ts'), dataDir, logFile], {
    cwd: ROOT,
    env: { ...process.env, NODE_ENV: 'production' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const { url } = JSON.parse(await firstLine(child)) as { url: string };
  return { pid: child.pid!, url, child, stop: stopper(child) };
}

export async function startBaseline(): Promise<Child> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(BENCH_DIR, 'baseline.ts')], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  const { url } = JSON.parse(await firstLine(child)) as { url: string };
  return { pid: child.pid!, url, child, stop: stopper(child) };
}

function withoutEmsVariables(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('EMS_')) env[key] = value;
  return env;
}

/** The environment of an installed service: nothing inherited from the caller's EMS_* settings. */
function serviceEnv(dataDir: string, port: number, logLevel: string, gatewayUrl: string | undefined): NodeJS.ProcessEnv {
  return {
    ...withoutEmsVariables(),
    NODE_ENV: 'production',
    EMS_DATA_DIR: dataDir,
    EMS_HOST: '127.0.0.1',
    EMS_PORT: String(port),
    EMS_LOG_LEVEL: logLevel,
    ...(gatewayUrl
      ? { EMS_IOT_BASE_URL: gatewayUrl, EMS_IOT_USERNAME: SIMULATOR_CREDENTIALS.username, EMS_IOT_PASSWORD: SIMULATOR_CREDENTIALS.password }
      : { EMS_IOT_BASE_URL: 'sim' }),
    // Long enough that no token expires during a full run; it changes no per-request cost.
    EMS_ACCESS_TOKEN_TTL: '2h',
  };
}

/**
 * The gateway simulator in its own process (`emsctl gateway simulate`), as the real gateway is its own box: the
 * proxy's CPU is then the service's alone, not shared with an in-process simulator.
 */
export async function startSimulator(): Promise<Child> {
  const child = spawn(process.execPath, [CLI_ENTRY, '--json', 'gateway', 'simulate', '--port', '0'], {
    cwd: ROOT,
    env: withoutEmsVariables(),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const { url } = JSON.parse(await firstLine(child)) as { url: string };
  return { pid: child.pid!, url, child, stop: stopper(child) };
}

/** bcrypt's ceiling on this machine right now: cost-10 compares per second on every core, nothing else running. */
export async function bcryptCeiling(seconds: number): Promise<{ hashesPerSec: number; cpuMsEach: number }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(BENCH_DIR, 'bcryptCeiling.ts'), String(seconds)], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return JSON.parse(await firstLine(child)) as { hashesPerSec: number; cpuMsEach: number };
}

/** GET once; resolves with the status, or undefined when nothing answers yet. */
function probe(url: string): Promise<number | undefined> {
  return new Promise((resolve) => {
    const request = http.get(url, { agent: false }, (response) => {
      response.resume();
      response.once('end', () => resolve(response.statusCode));
    });
    request.once('error', () => resolve(undefined));
    request.setTimeout(2000, () => request.destroy());
  });
}

/**
 * `node dist/src/main.js` in production mode on `dataDir`, its stdout (the JSON log) going to a file as journald
 * would take it. Resolves at the first 200 from GET /api/health; startupMs runs from spawn() to that answer.
 */
export async function startService(options: {
  dataDir: string;
  logLevel: string;
  nodeArgs?: string[];
  timeoutMs?: number;
  gatewayUrl?: string;
  root?: string;
  /** Added to the service's environment (e.g. EMS_SIM_METERS, or LD_PRELOAD + FAKETIME for a sped-up clock). */
  env?: NodeJS.ProcessEnv;
}): Promise<ServiceChild> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const logFile = path.join(options.dataDir, `service-${port}.log`);
  const log = fs.openSync(logFile, 'w');
  const started = performance.now();
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), serviceEntry(options.root ?? ROOT)], {
    cwd: options.root ?? ROOT,
    env: { ...serviceEnv(options.dataDir, port, options.logLevel, options.gatewayUrl), ...options.env },
    stdio: ['ignore', log, 'pipe'],
  });
  fs.closeSync(log);
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk));
  const deadline = started + (options.timeoutMs ?? 30_000);
  for (;;) {
    if (child.exitCode !== null) throw new Error(`service exited with ${child.exitCode}: ${stderr}`);
    if ((await probe(`${url}/api/health`)) === 200) break;
    if (performance.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`service did not answer /api/health within ${options.timeoutMs ?? 30_000} ms: ${stderr}`);
    }
    await sleep(5);
  }
  const startupMs = performance.now() - started;
  return { pid: child.pid!, url, child, logFile, startupMs, stderr: () => stderr, stop: stopper(child) };
}

/**
 * How systemd/ems.service in `root` runs node: the flags of its ExecStart line and its Environment= settings (but
 * NODE_ENV, which startService sets). A bench that measures memory starts the service with these, as installed.
 */
export function installedRuntime(root = ROOT): { nodeArgs: string[]; env: NodeJS.ProcessEnv } {
  const unit = fs.readFileSync(path.join(root, 'systemd', 'ems.service'), 'utf8');
  const exec = /^ExecStart=(.*)$/m.exec(unit)?.[1].trim().split(/\s+/) ?? [];
  const env: NodeJS.ProcessEnv = {};
  for (const [, key, value] of unit.matchAll(/^Environment=([A-Z_][A-Z0-9_]*)=(.*)$/gm)) if (key !== 'NODE_ENV') env[key] = value.trim();
  return { nodeArgs: exec.slice(1, -1), env };
}

/** Bytes the process has caused to be written to storage so far (/proc/<pid>/io write_bytes). */
export function writeBytes(pid: number): number {
  const io = fs.readFileSync(`/proc/${pid}/io`, 'utf8');
  return Number(/write_bytes:\s+(\d+)/.exec(io)?.[1] ?? Number.NaN);
}

/** The collector's last good collection; a failed probe (a kept-alive socket the server just closed) is asked again. */
export async function collectorHealth(service: { url: string }): Promise<{ collector: { lastOkAt: string | null; meters: number } }> {
  for (let attempt = 0; ; attempt += 1) {
    try {
      const response = await fetch(`${service.url}/api/health`);
      return (await response.json()) as { collector: { lastOkAt: string | null; meters: number } };
    } catch (error) {
      if (attempt >= 20) throw error;
      await sleep(250);
    }
  }
}

/** Waits until the collector has finished a collection (the first one, after a start, is the backfill); its time. */
export async function firstCollection(service: { url: string }, timeoutMs = 600_000): Promise<string> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const at = (await collectorHealth(service)).collector.lastOkAt;
    if (at) return at;
    if (performance.now() > deadline) throw new Error(`no collection finished in ${timeoutMs / 1000} s`);
    await sleep(500);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Runs the jobs side by side in the load-generator child. `onMeasuring` is called when the warm-up is over and the
 * measured window starts (the moment to read the server's CPU time).
 */
export async function runLoad(jobs: LoadJob[], onMeasuring?: () => void): Promise<LoadFigures[]> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(BENCH_DIR, 'load.ts'), JSON.stringify(jobs)], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let seen = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    const before = seen.includes('measuring\n');
    seen += chunk;
    if (!before && seen.includes('measuring\n')) onMeasuring?.();
  });
  const { code, output, stdout } = await collect(child);
  const line = stdout.trim().split('\n').pop() ?? '';
  if (code !== 0 || !line.startsWith('[')) throw new Error(`load generator failed (${code}): ${output}`);
  return JSON.parse(line) as LoadFigures[];
}

/** Resident set size in MiB from /proc (Linux). */
export function rssMiB(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN);
  return kb / 1024;
}

/** User + system CPU seconds a process has used so far. */
export function cpuSeconds(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

export async function postJson<T>(url: string, body: unknown, token?: string): Promise<T> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`POST ${url}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

/** One request the way the load generator will send it; throws unless it is answered 2xx. */
export async function checkRequest(job: LoadJob): Promise<void> {
  const response = await fetch(job.url, { method: job.method, headers: job.headers, body: job.bodies?.[0] ?? job.body });
  const text = await response.text();
  if (!response.ok) throw new Error(`${job.name}: ${job.method} ${job.url} answered ${response.status} ${text.slice(0, 300)}`);
}

export type Spread = { median: number; min: number; max: number };

export function spread(values: number[]): Spread {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return { median: Number.NaN, min: Number.NaN, max: Number.NaN };
  const mid = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return { median, min: sorted[0], max: sorted[sorted.length - 1] };
}

/** Runs another benchmark script as a child; returns its stdout, stderr and exit code. */
export async function runScript(
  file: string,
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<{ code: number | null; stdout: string; output: string; ms: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, ['--import', 'tsx', file], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const timer = setTimeout(() => child.kill('SIGTERM'), timeoutMs);
  child.stdout!.on('data', (chunk: Buffer) => process.stdout.write(indent(chunk.toString())));
  const result = await collect(child);
  clearTimeout(timer);
  return { ...result, ms: Math.round(performance.now() - started) };
}

function indent(text: string): string {
  return text.replace(/^(?=.)/gm, '    │ ');
}

/**
 * Waits until the service is idle (< 5 % of a core over a second), at most `limitMs`: what a start runs besides (the
 * backfill of the simulated meters, the anomaly check of yesterday) then lands in no read figure.
 */
export async function waitUntilIdle(pid: number, limitMs = 120_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  let last = cpuSeconds(pid);
  while (Date.now() < deadline) {
    await sleep(1000);
    const now = cpuSeconds(pid);
    if (now - last < 0.05) return;
    last = now;
  }
}

/** A figure the edge benches print against its target (issue 29). */
export type TargetFigure = { name: string; value: string; target: string; met: boolean | null };

const figureMs = (value: number) => (Number.isFinite(value) ? value.toFixed(1) : 'n/a');

/** A read route's p99 at 50 connections against ≤ 20 ms; /api/auth/me is the floor every signed-in route shares. */
export function routeP99Figure(route: string, figure: LoadFigures): TargetFigure {
  const floor = route === '/api/auth/me';
  return {
    name: `${route} p99 at 50 connections`,
    value: `${figureMs(figure.p99)} ms (p50 ${figureMs(figure.p50)} ms, ${Number.isFinite(figure.rps) ? figure.rps.toFixed(0) : 'n/a'} req/s)`,
    target: floor ? 'none: the floor' : '≤ 20 ms',
    met: floor ? null : figure.p99 <= 20,
  };
}

/**
 * One route's runs, interleaved with the other routes' (the box's speed moves within minutes): the median p99 against
 * the target, every run's p99 and req/s beside it.
 */
export function routeP99MedianFigure(route: string, runs: LoadFigures[]): TargetFigure {
  const byP99 = [...runs].sort((a, b) => a.p99 - b.p99);
  const median = byP99[Math.floor((byP99.length - 1) / 2)];
  return {
    ...routeP99Figure(route, median),
    name: `${route} p99 at 50 connections, median of ${runs.length} runs`,
    value: `${figureMs(median.p99)} ms (runs: ${runs.map((run) => `${figureMs(run.p99)} ms at ${Number.isFinite(run.rps) ? run.rps.toFixed(0) : 'n/a'} req/s`).join(', ')})`,
  };
}

/** A year of one meter's 15-minute intervals as CSV (meter 2, to today), best of 3 against ≤ 1 s. */
export async function yearCsvFigure(url: string, headers: Record<string, string>): Promise<TargetFigure> {
  const to = new Date().toISOString().slice(0, 10);
  const from = new Date(Date.parse(`${to}T00:00:00Z`) - 365 * 86_400_000).toISOString().slice(0, 10);
  const times: number[] = [];
  let bytes = 0;
  for (let i = 0; i < 3; i += 1) {
    const started = performance.now();
    const response = await fetch(`${url}/api/energy/export.csv?meterId=2&from=${from}&to=${to}`, { headers });
    if (!response.ok) throw new Error(`export.csv answered ${response.status}`);
    bytes = (await response.arrayBuffer()).byteLength;
    times.push(performance.now() - started);
  }
  const best = Math.min(...times);
  const seconds = (ms: number) => (ms / 1000).toFixed(2);
  return {
    name: "a year of one meter's 15-minute intervals as CSV",
    value: `${seconds(best)} s (best of 3: ${times.map(seconds).join(', ')} s; ${(bytes / (1024 * 1024)).toFixed(1)} MiB)`,
    target: '≤ 1 s',
    met: best <= 1000,
  };
}
