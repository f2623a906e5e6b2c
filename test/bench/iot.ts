// Benchmark: the IoT proxy against a bare Koa hello-world and against calling the simulator directly, in one run.
// Run: node --import tsx test/bench/iot.ts   (BENCH_DURATION=seconds per figure, BENCH_PROFILE=1 writes CPU profiles of the services)
// Every server is its own child process; autocannon runs here. The simulator runs alone, as a gateway on its own box would,
// and `EMS_IOT_BASE_URL` points the service at it; rows below the targets' rows help read them (the service's own chain, a
// minimal Koa relay, the default in-process simulator). It prints figures and whether the issue's targets were met; it never fails on a time.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const here = fileURLToPath(import.meta.url);
const root = path.resolve(path.dirname(here), '..', '..');
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const WARMUP = Math.min(3, DURATION);
const PROFILE_DIR = path.join(os.tmpdir(), 'ems-bench-profiles');
const BODY = JSON.stringify({ codes: ['meter.main.kwh', 'temp.zone1', 'sp.zone1'] });

type Target = { name: string; url: string; method: 'GET' | 'POST'; headers: Record<string, string>; body?: string };
type Figures = { target: string; connections: number; rps: number; p50: number; p99: number; non2xx: number; errors: number };

/** Child role: a bare Koa hello-world, the baseline a proxied request is compared with. */
async function serveBareKoa(): Promise<void> {
  const { default: Koa } = await import('koa');
  const app = new Koa();
  app.use((ctx) => {
    ctx.body = 'Hello World';
  });
  const server = app.listen(0, '127.0.0.1', () => {
    const { port } = server.address() as { port: number };
    process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}` })}\n`);
  });
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
}

function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffered = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const end = buffered.indexOf('\n');
      if (end !== -1) resolve(buffered.slice(0, end));
    });
    child.once('exit', (code) => reject(new Error(`child exited (${code}) before it was ready`)));
  });
}

/** Waits for a log line matching `msg` in the service's log file. */
async function logEntry(file: string, msg: string, child: ChildProcess): Promise<Record<string, unknown>> {
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`service exited with ${child.exitCode}`);
    const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
    for (const line of text.split('\n')) {
      if (!line.includes(msg)) continue;
      const entry = JSON.parse(line) as Record<string, unknown>;
      if (entry.msg === msg) return entry;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no "${msg}" in the service log`);
}

async function postJson(url: string, body: unknown, token?: string): Promise<any> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${url}: ${response.status} ${await response.text()}`);
  return response.json();
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** One autocannon run; latencies are kept at full resolution (autocannon's own histogram rounds to whole ms). */
async function measure(target: Target, connections: number, duration: number): Promise<Figures> {
  const latencies: number[] = [];
  const instance = autocannon({ url: target.url, method: target.method, headers: target.headers, body: target.body, connections, duration, pipelining: 1 });
  instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
    if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
  });
  const result = await instance;
  const sorted = Float64Array.from(latencies).sort();
  return {
    target: target.name,
    connections,
    rps: latencies.length / duration,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}

type RunningService = { url: string; accessToken: string; pid: number; simulatorUrl: string | undefined };

/** src/main.ts as installed (default log level, logs to a file like journald would take them), signed in as the initial admin. */
async function startService(children: ChildProcess[], iotEnv: Record<string, string>): Promise<RunningService> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ems-bench-iot-'));
  const logFile = path.join(dataDir, 'service.log');
  const log = fs.openSync(logFile, 'w');
  const profileArgs = process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`] : [];
  const child = spawn(process.execPath, [...profileArgs, '--import', 'tsx', path.join(root, 'src', 'main.ts')], {
    cwd: root,
    env: { ...process.env, EMS_DATA_DIR: dataDir, EMS_PORT: '0', EMS_HOST: '127.0.0.1', EMS_LOG_LEVEL: '', ...iotEnv },
    stdio: ['ignore', log, 'inherit'],
  });
  children.push(child);
  child.once('exit', () => fs.rmSync(dataDir, { recursive: true, force: true }));
  const started = await logEntry(logFile, 'EMS started', child);
  const simulatorUrl = iotEnv.EMS_IOT_BASE_URL === 'sim' ? ((await logEntry(logFile, 'IoT gateway simulator started', child)).url as string) : undefined;
  const url = started.url as string;
  const password = fs.readFileSync(path.join(dataDir, 'initial-admin-password'), 'utf8').trim();
  const { accessToken } = await postJson(`${url}/api/auth/login`, { username: 'admin', password });
  return { url, accessToken, pid: child.pid!, simulatorUrl };
}

async function startChild(children: ChildProcess[], ...role: string[]): Promise<{ url: string; pid: number }> {
  const child = spawn(process.execPath, ['--import', 'tsx', here, ...role], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  return { url: (JSON.parse(await firstLine(child)) as { url: string }).url, pid: child.pid! };
}

/** CPU seconds a process has used (Linux /proc), to show where the time goes; undefined elsewhere. */
function cpuSeconds(pid: number): number | undefined {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

async function main(): Promise<void> {
  const children: ChildProcess[] = [];
  const stop = () => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
  };
  process.on('exit', stop);
  try {
    const koa = await startChild(children, '--serve-bare-koa');
    const simulator = await startChild(children, '--serve-simulator');
    const proxy = await startService(children, { EMS_IOT_BASE_URL: simulator.url, EMS_IOT_USERNAME: 'ems', EMS_IOT_PASSWORD: 'ems-simulator' });
    const minimal = await startChild(children, '--serve-minimal-proxy', simulator.url);
    const inProcess = await startService(children, { EMS_IOT_BASE_URL: 'sim', EMS_IOT_USERNAME: '', EMS_IOT_PASSWORD: '' });
    const { token: gatewayToken } = await postJson(`${simulator.url}/auth/token`, { username: 'ems', password: 'ems-simulator' });

    const json = { 'content-type': 'application/json' };
    const values = (url: string, token: string) => ({ url, method: 'POST' as const, headers: { ...json, authorization: `Bearer ${token}` }, body: BODY });
    const plan: Array<{ target: Target; pid: number; connections: number[]; upstreamPid?: number }> = [
      { target: { name: 'bare Koa hello-world', url: `${koa.url}/`, method: 'GET', headers: {} }, pid: koa.pid, connections: [50, 1] },
      { target: { name: 'simulator direct', ...values(`${simulator.url}/codes/values`, gatewayToken) }, pid: simulator.pid, connections: [50, 1] },
      {
        target: { name: 'proxied', ...values(`${proxy.url}/api/iot/codes/values`, proxy.accessToken) },
        pid: proxy.pid,
        connections: [50, 1],
        upstreamPid: simulator.pid,
      },
      // For reading the figures: the service's own chain without the gateway (public, then authenticated), the least
      // any Koa proxy costs here, and the default set-up with the simulator inside the service process.
      { target: { name: 'service GET /api/health', url: `${proxy.url}/api/health`, method: 'GET', headers: {} }, pid: proxy.pid, connections: [50] },
      {
        target: { name: 'service GET /api/auth/me', url: `${proxy.url}/api/auth/me`, method: 'GET', headers: { authorization: `Bearer ${proxy.accessToken}` } },
        pid: proxy.pid,
        connections: [50, 1],
      },
      { target: { name: 'minimal Koa+undici relay', ...values(`${minimal.url}/`, '-') }, pid: minimal.pid, connections: [50, 1], upstreamPid: simulator.pid },
      {
        target: { name: 'proxied, in-process sim', ...values(`${inProcess.url}/api/iot/codes/values`, inProcess.accessToken) },
        pid: inProcess.pid,
        connections: [50, 1],
      },
    ];

    process.stdout.write(
      `POST codes/values ${BODY}; ${DURATION} s per figure after ${WARMUP} s warm-up; load average ${os.loadavg()[0].toFixed(1)} on ${os.cpus().length} cores\n`,
    );
    process.stdout.write(`${'target'.padEnd(26)} conns    req/s   p50 ms   p99 ms  CPU µs/req: server  simulator\n`);
    const figures: Figures[] = [];
    for (const { target, pid, connections, upstreamPid } of plan) {
      await measure(target, 50, WARMUP);
      for (const count of connections) {
        const before = [cpuSeconds(pid), upstreamPid ? cpuSeconds(upstreamPid) : undefined];
        const result = await measure(target, count, DURATION);
        const after = [cpuSeconds(pid), upstreamPid ? cpuSeconds(upstreamPid) : undefined];
        figures.push(result);
        const cpu = (i: number) =>
          before[i] === undefined || after[i] === undefined ? '-' : (((after[i]! - before[i]!) * 1e6) / (result.rps * DURATION)).toFixed(0);
        process.stdout.write(
          `${target.name.padEnd(26)} ${String(count).padStart(5)} ${result.rps.toFixed(0).padStart(8)} ${result.p50.toFixed(3).padStart(8)} ${result.p99.toFixed(3).padStart(8)} ${cpu(0).padStart(18)} ${cpu(1).padStart(10)}` +
            `${result.non2xx || result.errors ? `  (non-2xx ${result.non2xx}, errors ${result.errors})` : ''}\n`,
        );
      }
    }

    const find = (name: string, connections: number) => figures.find((f) => f.target === name && f.connections === connections)!;
    const ratio = find('proxied', 50).rps / find('bare Koa hello-world', 50).rps;
    const added = find('proxied', 1).p50 - find('simulator direct', 1).p50;
    const bare = find('bare Koa hello-world', 50).rps;
    const share = (name: string) => (find(name, 50).rps / bare).toFixed(2);
    process.stdout.write(`\nthroughput proxied / bare Koa at 50 connections: ${ratio.toFixed(2)} (target >= 0.5: ${ratio >= 0.5 ? 'met' : 'MISSED'})\n`);
    process.stdout.write(
      `  for reading it, / bare Koa: minimal relay ${share('minimal Koa+undici relay')}, service /api/health ${share('service GET /api/health')}, /api/auth/me ${share('service GET /api/auth/me')}, proxied with the in-process simulator ${share('proxied, in-process sim')}\n`,
    );
    process.stdout.write(
      `added p50 over the simulator direct at 1 connection: ${added.toFixed(3)} ms (target <= 0.3 ms: ${added <= 0.3 ? 'met' : 'MISSED'})\n`,
    );
    process.stdout.write(
      `  for reading it, at 1 connection: minimal relay adds ${(find('minimal Koa+undici relay', 1).p50 - find('simulator direct', 1).p50).toFixed(3)} ms; ` +
        `proxied minus /api/auth/me ${(find('proxied', 1).p50 - find('service GET /api/auth/me', 1).p50).toFixed(3)} ms\n`,
    );
    if (process.env.BENCH_PROFILE) process.stdout.write(`CPU profiles of the services: ${PROFILE_DIR}\n`);
  } finally {
    stop();
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/**
 * Child role: the least a Koa proxy can do (raw body through one undici Pool, answer relayed), no auth, log or schema.
 * Not the product: it shows what this machine allows a proxy at all, so the gap to the service can be read.
 */
async function serveMinimalProxy(): Promise<void> {
  const [{ default: Koa }, { Pool }] = await Promise.all([import('koa'), import('undici')]);
  const simulatorUrl = process.argv[process.argv.indexOf('--serve-minimal-proxy') + 1];
  const { token } = await postJson(`${simulatorUrl}/auth/token`, { username: 'ems', password: 'ems-simulator' });
  const pool = new Pool(simulatorUrl, { connections: 64 });
  const app = new Koa();
  app.use(async (ctx) => {
    const chunks: Buffer[] = [];
    for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
    const answer = await pool.request({
      method: 'POST',
      path: '/codes/values',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: Buffer.concat(chunks),
    });
    ctx.status = answer.statusCode;
    ctx.type = 'application/json';
    ctx.body = Buffer.from(await answer.body.arrayBuffer());
  });
  const server = app.listen(0, '127.0.0.1', () => {
    const { port } = server.address() as { port: number };
    process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}` })}\n`);
  });
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
}

/** Child role: the simulator alone, as a gateway on its own box would be. */
async function serveSimulator(): Promise<void> {
  const { startGatewaySimulator } = await import('../../src/gateway/simulator/server.ts');
  const simulator = await startGatewaySimulator({ host: '127.0.0.1', port: 0 });
  process.stdout.write(`${JSON.stringify({ url: simulator.url })}\n`);
  process.on('SIGTERM', () => void simulator.close().then(() => process.exit(0)));
}

if (process.argv.includes('--serve-bare-koa')) await serveBareKoa();
else if (process.argv.includes('--serve-minimal-proxy')) await serveMinimalProxy();
else if (process.argv.includes('--serve-simulator')) await serveSimulator();
else await main();
