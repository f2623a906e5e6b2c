// `npm run bench`: every scenario in one run, as ratios to a bare Koa server measured in the same rounds (CPU per request
// the primary figure, throughput beside it), with a fastify + better-sqlite3 alerts page as the reference row.
// Flags: --quick (short windows, 1 round), --rounds N, --only id,id (alerts, alertPages, fastify, me, dashboard, iot,
// alertCreate, login, meWarn), --profile (service under --cpu-prof, summarised per scenario), --no-build, --no-children (skip iot.ts
// and uploads.ts), --no-cold-start, --against DIR (A/B: a second checkout's build — e.g. a git worktree of the commit
// before, with node_modules — runs every scenario beside this one in the same rounds, and idle RSS is read for both).
// `npm run bench -- --quick --only alerts --no-children --no-cold-start` takes about 30 s.
// Writes test/bench/results/latest.json.
// Figures are reported, never asserted: this is not part of `npm test`.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import {
  BENCH_DIR,
  bcryptCeiling,
  buildService,
  checkRequest,
  cpuSeconds,
  postJson,
  RESULTS_DIR,
  rssMiB,
  runLoad,
  runScript,
  sleep,
  spread,
  startBaseline,
  startFastifyReference,
  startService,
  startSimulator,
  type Child,
  type LoadFigures,
  type LoadJob,
  type ServiceChild,
  type Spread,
} from './harness.ts';
import { formatProfile, summarizeProfile, type ProfileSummary } from './profile.ts';
import { BENCH_PASSWORD, seedDataDir, type SeedSummary } from './seed.ts';

// ---- options ----

const argv = process.argv.slice(2);
const flag = (name: string) => argv.includes(`--${name}`);
const value = (name: string) => {
  const i = argv.indexOf(`--${name}`);
  return i === -1 ? undefined : argv[i + 1];
};
const QUICK = flag('quick');
const ROUNDS = Number(value('rounds') ?? (QUICK ? 1 : 3));
const WARMUP_SEC = QUICK ? 1 : 3;
const DURATION_SEC = QUICK ? 3 : 10;
const CONNECTIONS = 50;
const LOGIN_CONNECTIONS = 8;
/**
 * The dashboard users still reading while others sign in: a steady rate, not an open-ended flood. 30 logins/s at
 * ~60 ms of bcrypt each need both cores of a 2-core box by themselves, so the reads must leave room.
 */
const LOGIN_BACKGROUND_CONNECTIONS = 10;
const LOGIN_BACKGROUND_RATE = 200;
const ONLY = value('only')?.split(',');
const PROFILE = flag('profile');
const AGAINST = value('against') && path.resolve(value('against')!);
const COLD_STARTS = QUICK ? 1 : 3;
/** "Idle" RSS is read once V8's memory reducer has run: it shrinks the heap 10-20 s after the allocations stop. */
const IDLE_SETTLE_MS = QUICK ? 5000 : 30_000;
/** After the load, RSS must be back under its bound within this long. */
const AFTER_LOAD_SETTLE_MS = QUICK ? 5000 : 60_000;
const IDLE_MAX_MIB = 90;
const AFTER_LOAD_MAX_MIB = 120;
const JUST_STARTED_MS = 3000;
/**
 * How far bare Koa's own CPU per request may move within one run (its measurements at the start and end of every round,
 * highest over lowest) before the run is called starved and prints figures without verdicts: the ratios assume the
 * baseline and the scenarios met the same machine (issue 56; at load 25-30 it moved more than that).
 */
const BASELINE_DRIFT_MAX = 0.25;

// ---- scenarios ----

/** warnViewer signs in on the warn-level service: each data dir generated its own secret at first start. */
type Tokens = { viewer: string; operator: string; warnViewer?: string };
type Services = { info: ServiceChild; warn?: ServiceChild; reference?: Child };
type Context = { services: Services; tokens: Tokens; seed: SeedSummary };
type Check = { what: string; target: string; value: number; unit: string; met: boolean };
/** ratio: throughput against the baseline, round by round; cpuRatio: baseline CPU per request / the scenario's. */
type Summary = { rps: Spread; p50: Spread; p99: Spread; ratio: Spread; cpuUs: Spread; cpuRatio: Spread; extra: Record<string, Spread> };

type Scenario = {
  id: string;
  title: string;
  /** The first job is the scenario's own; further jobs run at the same time (background load). */
  jobs(ctx: Context): LoadJob[];
  checks(summary: Summary): Check[];
  /** Measured in the first round only (a side figure, not a target). */
  firstRoundOnly?: true;
  /** Extra figures from the background jobs, by name. */
  extra?: (figures: LoadFigures[]) => Record<string, number>;
  after?(ctx: Context, dataDir: string): void;
  /** The process whose CPU is measured; the service's by default. */
  pid?(ctx: Context): number;
  /** Not run against the --against build (it measures something else than the service). */
  ownOnly?: true;
  /** Shown as the target when the scenario has no checks. */
  note?: string;
};

const json = { 'content-type': 'application/json' };
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const IOT_BODY = JSON.stringify({ codes: ['meter.main.kwh', 'temp.zone1', 'sp.zone1'] });
/** The targets (issue 44: auth/me ≥ 0.65, the alerts page ≥ 0.55, the dashboard ≥ 0.65) are on CPU per request (bare Koa's / the scenario's): it barely moves when other tenants of the machine take CPU away, while throughput does. */
const ratioCheck = (summary: Summary, min: number): Check => ({
  what: 'CPU ratio to bare Koa',
  target: `≥ ${min}`,
  value: summary.cpuRatio.median,
  unit: '',
  met: summary.cpuRatio.median >= min,
});
/** bcrypt's ceiling on this machine, measured after the rounds (the login target is a share of it). */
let CEILING: { hashesPerSec: number; cpuMsEach: number } | undefined;

const alertsJob = (ctx: Context, connections: number, name = 'GET /api/alerts?page=1&pageSize=20', overallRate?: number): LoadJob => ({
  name,
  url: `${ctx.services.info.url}/api/alerts?page=1&pageSize=20`,
  method: 'GET',
  headers: bearer(ctx.tokens.viewer),
  connections,
  overallRate,
  warmupSec: WARMUP_SEC,
  durationSec: DURATION_SEC,
});

const SCENARIOS: Scenario[] = [
  {
    id: 'alerts',
    title: 'GET /api/alerts?page=1&pageSize=20 (viewer)',
    jobs: (ctx) => [alertsJob(ctx, CONNECTIONS)],
    checks: (s) => [ratioCheck(s, 0.55), { what: 'p99', target: '≤ 20 ms', value: s.p99.median, unit: 'ms', met: s.p99.median <= 20 }],
  },
  {
    id: 'alertPages',
    title: 'GET /api/alerts, pages 1–32 of 20 in turn (viewer)',
    note: '(every read misses the 16 kept pages)',
    jobs: (ctx) => [
      { ...alertsJob(ctx, CONNECTIONS, 'GET /api/alerts?page=1..32'), paths: Array.from({ length: 32 }, (_, i) => `/api/alerts?page=${i + 1}&pageSize=20`) },
    ],
    checks: () => [],
  },
  {
    id: 'fastify',
    title: 'reference: the same page on fastify + better-sqlite3',
    note: '(reference: what a user would pick instead)',
    ownOnly: true,
    pid: (ctx) => ctx.services.reference!.pid,
    jobs: (ctx) => [{ ...alertsJob(ctx, CONNECTIONS, 'fastify GET /api/alerts (reference)'), url: ctx.services.reference!.url }],
    checks: () => [],
  },
  {
    id: 'me',
    title: 'GET /api/auth/me (viewer)',
    jobs: (ctx) => [
      {
        name: 'GET /api/auth/me',
        url: `${ctx.services.info.url}/api/auth/me`,
        method: 'GET',
        headers: bearer(ctx.tokens.viewer),
        connections: CONNECTIONS,
        warmupSec: WARMUP_SEC,
        durationSec: DURATION_SEC,
      },
    ],
    checks: (s) => [ratioCheck(s, 0.65)],
  },
  {
    id: 'dashboard',
    title: 'GET /api/dashboard (public)',
    jobs: (ctx) => [
      {
        name: 'GET /api/dashboard',
        url: `${ctx.services.info.url}/api/dashboard`,
        method: 'GET',
        connections: CONNECTIONS,
        warmupSec: WARMUP_SEC,
        durationSec: DURATION_SEC,
      },
    ],
    checks: (s) => [ratioCheck(s, 0.65)],
  },
  {
    id: 'iot',
    title: 'POST /api/iot/codes/values → simulator (own process)',
    jobs: (ctx) => [
      {
        name: 'POST /api/iot/codes/values',
        url: `${ctx.services.info.url}/api/iot/codes/values`,
        method: 'POST',
        headers: { ...json, ...bearer(ctx.tokens.viewer) },
        body: IOT_BODY,
        connections: CONNECTIONS,
        warmupSec: WARMUP_SEC,
        durationSec: DURATION_SEC,
      },
    ],
    checks: (s) => [ratioCheck(s, 0.5)],
  },
  {
    id: 'alertCreate',
    title: 'POST /api/alerts (operator)',
    jobs: (ctx) => [
      {
        name: 'POST /api/alerts',
        url: `${ctx.services.info.url}/api/alerts`,
        method: 'POST',
        headers: { ...json, ...bearer(ctx.tokens.operator) },
        body: JSON.stringify({
          title: 'AHU-1 high temperature',
          message: 'Supply air above its band.',
          level: 'warning',
          source: 'ahu-1.temp',
          area: 'Office North',
        }),
        connections: CONNECTIONS,
        warmupSec: WARMUP_SEC,
        durationSec: DURATION_SEC,
      },
    ],
    checks: (s) => [ratioCheck(s, 0.35)],
    // The list scenario must keep reading the seeded 10k rows, not 10k plus every alert created here.
    after: (_ctx, dataDir) => deleteAlertsAbove(dataDir, SEEDED_ALERTS_MAX_ID),
  },
  {
    id: 'login',
    title: `POST /api/auth/login, ${LOGIN_CONNECTIONS} conn. (+ GET /api/alerts ${LOGIN_BACKGROUND_RATE}/s on ${LOGIN_BACKGROUND_CONNECTIONS} conn.)`,
    jobs: (ctx) => [
      {
        name: 'POST /api/auth/login',
        url: `${ctx.services.info.url}/api/auth/login`,
        method: 'POST',
        headers: json,
        bodies: ctx.seed.loginUsers.map((username) => JSON.stringify({ username, password: BENCH_PASSWORD })),
        connections: LOGIN_CONNECTIONS,
        warmupSec: WARMUP_SEC,
        durationSec: DURATION_SEC,
      },
      alertsJob(ctx, LOGIN_BACKGROUND_CONNECTIONS, `GET /api/alerts during logins (${LOGIN_BACKGROUND_RATE}/s)`, LOGIN_BACKGROUND_RATE),
    ],
    extra: (figures) => ({ alertsP99: figures[1].p99, alertsRps: figures[1].rps }),
    checks: (s) => [
      ...(CEILING
        ? [
            {
              what: 'logins / bcrypt alone',
              target: '≥ 0.9',
              value: s.rps.median / CEILING.hashesPerSec,
              unit: '',
              met: s.rps.median / CEILING.hashesPerSec >= 0.9,
            },
          ]
        : []),
      { what: 'concurrent GET /api/alerts p99', target: '≤ 50 ms', value: s.extra.alertsP99.median, unit: 'ms', met: s.extra.alertsP99.median <= 50 },
    ],
  },
  {
    id: 'meWarn',
    title: 'GET /api/auth/me at EMS_LOG_LEVEL=warn (request log cost)',
    firstRoundOnly: true,
    jobs: (ctx) => [
      {
        name: 'GET /api/auth/me (warn)',
        url: `${ctx.services.warn!.url}/api/auth/me`,
        method: 'GET',
        headers: bearer(ctx.tokens.warnViewer!),
        connections: CONNECTIONS,
        warmupSec: WARMUP_SEC,
        durationSec: DURATION_SEC,
      },
    ],
    checks: () => [],
  },
];

let SEEDED_ALERTS_MAX_ID = 0;

function deleteAlertsAbove(dataDir: string, maxId: number): void {
  const sqlite = new Database(path.join(dataDir, 'ems.db'));
  sqlite.pragma('busy_timeout = 5000');
  sqlite.prepare('DELETE FROM alerts WHERE id > ?').run(maxId);
  sqlite.close();
}

// ---- measuring ----

/** serverCpuPercent and cpuUsPerRequest cover the measured window only; CPU per request barely moves when other
 * tenants of the machine take CPU away, so it backs the throughput ratio on a noisy box. */
type Measured = LoadFigures & { serverCpuPercent: number; cpuUsPerRequest: number; window: { fromUs: number; toUs: number } };

const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);

async function measure(jobs: LoadJob[], pid: number): Promise<Measured[]> {
  let cpuStart = Number.NaN;
  let wallStart = Number.NaN;
  let fromUs = Number.NaN;
  const figures = await runLoad(jobs, () => {
    cpuStart = cpuSeconds(pid);
    wallStart = performance.now();
    fromUs = monotonicUs();
  });
  const window = { fromUs, toUs: monotonicUs() };
  const cpu = cpuSeconds(pid) - cpuStart;
  const wall = (performance.now() - wallStart) / 1000;
  const answered = figures.reduce((total, f) => total + f.answered, 0);
  return figures.map((f) => ({
    ...f,
    serverCpuPercent: Math.round((cpu / wall) * 100),
    cpuUsPerRequest: Math.round((cpu / answered) * 1e6 * 10) / 10,
    window,
  }));
}

function describe(f: Measured): string {
  const faults = f.non2xx || f.errors ? `  non-2xx ${f.non2xx} errors ${f.errors} ${JSON.stringify(f.statuses)}` : '';
  return `${f.name.padEnd(44)} c=${String(f.connections).padStart(2)} ${f.rps.toFixed(0).padStart(7)} req/s  p50 ${f.p50.toFixed(2).padStart(6)} ms  p99 ${f.p99.toFixed(2).padStart(6)} ms  server CPU ${f.serverCpuPercent}% ${f.cpuUsPerRequest.toFixed(0)} µs/req${faults}`;
}

async function tokenFor(url: string, username: string): Promise<string> {
  return (await postJson<{ accessToken: string }>(`${url}/api/auth/login`, { username, password: BENCH_PASSWORD })).accessToken;
}

// ---- the child benchmarks other helpers own ----

type ChildBench = { file: string; ran: boolean; code?: number | null; ms?: number; figures: Record<string, number | string>; output?: string; note?: string };

function lastJsonLine(stdout: string): Record<string, unknown> | undefined {
  for (const line of stdout.trim().split('\n').reverse()) {
    const text = line.trim();
    if (!text.startsWith('{')) continue;
    try {
      return JSON.parse(text) as Record<string, unknown>;
    } catch {
      // not a JSON line after all
    }
  }
  return undefined;
}

function numbersFrom(stdout: string, patterns: Record<string, RegExp>): Record<string, number> {
  const found: Record<string, number> = {};
  for (const [name, pattern] of Object.entries(patterns)) {
    const match = pattern.exec(stdout);
    if (match) found[name] = Number(match[1]);
  }
  return found;
}

async function childBench(name: string, patterns: Record<string, RegExp>): Promise<ChildBench> {
  const file = path.join(BENCH_DIR, name);
  if (!fs.existsSync(file)) return { file: name, ran: false, figures: {}, note: `${name} does not exist yet` };
  process.stdout.write(`\n== ${name} (separate script, own processes)\n`);
  // Their own knobs: iot.ts measures 13 figures, so 5 s each keeps the whole run under 10 minutes; uploads.ts 3 rounds.
  const env = QUICK ? { BENCH_DURATION: '2', BENCH_ROUNDS: '1' } : { BENCH_DURATION: '5', BENCH_ROUNDS: '3' };
  const result = await runScript(file, env, 6 * 60_000);
  const json = lastJsonLine(result.stdout);
  const figures: Record<string, number | string> = { ...numbersFrom(result.stdout, patterns) };
  if (json) for (const [key, v] of Object.entries(json)) if (typeof v === 'number' || typeof v === 'string') figures[key] = v;
  return { file: name, ran: true, code: result.code, ms: result.ms, figures, output: result.output.slice(-8000), ...(json ? { json } : {}) };
}

const IOT_PATTERNS = {
  ratio: /throughput proxied \/ bare Koa at 50 connections: ([\d.]+)/,
  addedP50Ms: /added p50 over the simulator direct at 1 connection: (-?[\d.]+) ms/,
  proxyRps50: /^proxied\s+50\s+([\d.]+)/m,
  bareKoaRps50: /^bare Koa hello-world\s+50\s+([\d.]+)/m,
  proxyP50At1: /^proxied\s+1\s+[\d.]+\s+([\d.]+)/m,
  simulatorP50At1: /^simulator direct\s+1\s+[\d.]+\s+([\d.]+)/m,
};

const UPLOAD_PATTERNS = {
  uploadRssGrowthMiB: /peak server RSS growth, upload:\s+(-?[\d.]+) MiB/,
  downloadRssGrowthMiB: /peak server RSS growth, download:\s+(-?[\d.]+) MiB/,
  uploadThroughputRatio: /upload throughput \/ fs write\+fsync throughput: ([\d.]+)/,
};

// ---- output ----

const fmt = (s: Spread, digits = 0) => (Number.isFinite(s.median) ? `${s.median.toFixed(digits)} (${s.min.toFixed(digits)}–${s.max.toFixed(digits)})` : '–');

type TableRow = { scenario: string; rps: string; p50: string; p99: string; ratio: string; cpu: string; target: string; result: string };

function printTable(rows: TableRow[]): string {
  const header: TableRow = {
    scenario: 'scenario',
    rps: 'req/s',
    p50: 'p50 ms',
    p99: 'p99 ms',
    ratio: 'ratio to bare Koa',
    cpu: 'CPU µs/req (cost ratio)',
    target: 'target',
    result: 'measured → verdict',
  };
  const keys = Object.keys(header) as (keyof TableRow)[];
  const all = [header, ...rows];
  const widths = keys.map((key) => Math.max(...all.map((row) => row[key].length)));
  const line = (row: TableRow) => `| ${keys.map((key, i) => row[key].padEnd(widths[i])).join(' | ')} |`;
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

/** Same-run A/B: per scenario, the median CPU per request and throughput of A and B, and B's cost over A's round by round. */
function againstTable(
  scenarios: Scenario[],
  rounds: { scenarios: Record<string, Measured[]>; against: Record<string, Measured[]> }[],
  idle: { settledMiB: number; againstMiB?: number } | undefined,
  afterLoad: { rssMiB: number; againstMiB?: number } | undefined,
): string {
  const lines = ['| scenario | A CPU µs/req | B CPU µs/req | cost B/A | A req/s | B req/s | A p99 ms | B p99 ms |', '|---|---|---|---|---|---|---|---|'];
  for (const scenario of scenarios) {
    const paired = rounds.filter((r) => r.scenarios[scenario.id] && r.against[scenario.id]);
    if (paired.length === 0) continue;
    const a = paired.map((r) => r.against[scenario.id][0]);
    const b = paired.map((r) => r.scenarios[scenario.id][0]);
    const cost = spread(paired.map((r) => r.scenarios[scenario.id][0].cpuUsPerRequest / r.against[scenario.id][0].cpuUsPerRequest));
    const m = (list: Measured[], key: 'cpuUsPerRequest' | 'rps' | 'p99', digits = 0) => spread(list.map((f) => f[key])).median.toFixed(digits);
    lines.push(
      `| ${scenario.title} | ${m(a, 'cpuUsPerRequest')} | ${m(b, 'cpuUsPerRequest')} | ${fmt(cost, 2)} | ${m(a, 'rps')} | ${m(b, 'rps')} | ${m(a, 'p99', 1)} | ${m(b, 'p99', 1)} |`,
    );
  }
  if (idle?.againstMiB !== undefined)
    lines.push(
      `| idle RSS, ${IDLE_SETTLE_MS / 1000} s after start (MiB) | ${idle.againstMiB} | ${idle.settledMiB} | ${(idle.settledMiB / idle.againstMiB).toFixed(2)} | | | | |`,
    );
  if (afterLoad?.againstMiB !== undefined)
    lines.push(
      `| RSS ${AFTER_LOAD_SETTLE_MS / 1000} s after the load (MiB) | ${afterLoad.againstMiB.toFixed(1)} | ${afterLoad.rssMiB.toFixed(1)} | ${(afterLoad.rssMiB / afterLoad.againstMiB).toFixed(2)} | | | | |`,
    );
  return lines.join('\n');
}

// ---- main ----

async function main(): Promise<void> {
  const runStarted = performance.now();
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  const scenarios = SCENARIOS.filter((s) => !ONLY || ONLY.includes(s.id));
  process.stdout.write(
    `EMS benchmark: ${ROUNDS} round(s), ${WARMUP_SEC} s warm-up + ${DURATION_SEC} s measured per run, ${CONNECTIONS} connections unless stated\n`,
  );

  const build = flag('no-build') ? { ok: true, ms: 0, errors: [] as string[], skipped: true } : await buildService();
  process.stdout.write(`build: ${build.ok ? 'ok' : `tsc reported ${build.errors.length} error(s) in the tree; dist/ was still emitted`} (${build.ms} ms)\n`);
  for (const error of build.errors.slice(0, 5)) process.stdout.write(`  ${error}\n`);
  if (AGAINST) {
    const other = flag('no-build') ? { ok: true, ms: 0 } : await buildService(AGAINST);
    process.stdout.write(`build of ${AGAINST} (A, compared against): ${other.ok ? 'ok' : 'with tsc errors'} (${other.ms} ms)\n`);
  }

  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ems-bench-'));
  const warnDir = `${dataDir}-warn`;
  const againstDir = `${dataDir}-against`;
  process.on('exit', () => {
    for (const dir of [dataDir, warnDir, againstDir]) fs.rmSync(dir, { recursive: true, force: true });
  });
  const children: Child[] = [];
  const profileDir = path.join(RESULTS_DIR, 'profiles', new Date().toISOString().replace(/[:.]/g, '-'));
  const profiles: ProfileSummary[] = [];
  const rounds: {
    round: number;
    baseline: Measured;
    /** bare Koa again at the round's end: the run's verdicts hold only while the two stay close (BASELINE_DRIFT_MAX). */
    closingBaseline?: Measured;
    scenarios: Record<string, Measured[]>;
    against: Record<string, Measured[]>;
  }[] = [];
  let idleAfterLoad: { rssMiB: number; againstMiB?: number } | undefined;
  let ceiling: { hashesPerSec: number; cpuMsEach: number } | undefined;
  let seed: SeedSummary;
  try {
    seed = await seedDataDir(dataDir);
    SEEDED_ALERTS_MAX_ID = seed.counts.alerts;
    process.stdout.write(`seeded ${JSON.stringify(seed.counts)} in ${seed.ms} ms (${dataDir})\n`);
    const needWarn = scenarios.some((s) => s.id === 'meWarn');
    if (needWarn) fs.cpSync(dataDir, warnDir, { recursive: true });
    if (AGAINST) fs.cpSync(dataDir, againstDir, { recursive: true });

    const baseline = await startBaseline();
    children.push(baseline);
    const simulator = await startSimulator();
    children.push(simulator);
    const info = await startService({
      dataDir,
      logLevel: 'info',
      gatewayUrl: simulator.url,
      nodeArgs: PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
    });
    children.push(info);
    const services: Services = { info };
    if (needWarn) {
      services.warn = await startService({ dataDir: warnDir, logLevel: 'warn', gatewayUrl: simulator.url });
      children.push(services.warn);
    }
    if (scenarios.some((s) => s.id === 'fastify')) {
      services.reference = await startFastifyReference(dataDir, path.join(dataDir, 'fastify.log'));
      children.push(services.reference);
    }
    const tokens: Tokens = { viewer: await tokenFor(info.url, seed.viewer), operator: await tokenFor(info.url, seed.operator) };
    if (services.warn) tokens.warnViewer = await tokenFor(services.warn.url, seed.viewer);
    const ctx: Context = { services, tokens, seed };
    let againstCtx: Context | undefined;
    if (AGAINST) {
      const other = await startService({ dataDir: againstDir, logLevel: 'info', gatewayUrl: simulator.url, root: AGAINST });
      children.push(other);
      againstCtx = {
        services: { info: other },
        tokens: { viewer: await tokenFor(other.url, seed.viewer), operator: await tokenFor(other.url, seed.operator) },
        seed,
      };
      for (const job of scenarios.filter((s) => !s.ownOnly && s.id !== 'meWarn').flatMap((s) => s.jobs(againstCtx!))) await checkRequest(job);
      deleteAlertsAbove(againstDir, SEEDED_ALERTS_MAX_ID);
    }
    const baselineJob: LoadJob = {
      name: 'bare Koa + @koa/router (baseline)',
      url: baseline.url,
      method: 'GET',
      connections: CONNECTIONS,
      warmupSec: WARMUP_SEC,
      durationSec: DURATION_SEC,
    };
    for (const job of [baselineJob, ...scenarios.flatMap((s) => s.jobs(ctx))]) await checkRequest(job);
    deleteAlertsAbove(dataDir, SEEDED_ALERTS_MAX_ID);

    for (let round = 1; round <= ROUNDS; round++) {
      process.stdout.write(`\n== round ${round}/${ROUNDS}\n`);
      const [base] = await measure([baselineJob], baseline.pid);
      process.stdout.write(`  ${describe(base)}\n`);
      const entry = { round, baseline: base, scenarios: {} as Record<string, Measured[]>, against: {} as Record<string, Measured[]> };
      for (const scenario of scenarios) {
        if (scenario.firstRoundOnly && round > 1) continue;
        const pid = scenario.id === 'meWarn' ? services.warn!.pid : (scenario.pid?.(ctx) ?? info.pid);
        const own = async () => {
          const figures = await measure(scenario.jobs(ctx), pid);
          entry.scenarios[scenario.id] = figures;
          for (const f of figures)
            process.stdout.write(`  ${describe(f)}${f === figures[0] && scenario.id !== 'login' ? `  ratio ${(f.rps / base.rps).toFixed(2)}` : ''}\n`);
          scenario.after?.(ctx, dataDir);
        };
        const other = async (context: Context) => {
          const figures = await measure(scenario.jobs(context), context.services.info.pid);
          entry.against[scenario.id] = figures;
          process.stdout.write(`  A ${describe(figures[0])}\n`);
          scenario.after?.(context, againstDir);
        };
        // A and B take turns going first, so neither always runs on the warmer machine.
        const withOther = againstCtx && !scenario.ownOnly && scenario.id !== 'meWarn' ? againstCtx : undefined;
        if (withOther && round % 2 === 0) await other(withOther);
        await own();
        if (withOther && round % 2 === 1) await other(withOther);
      }
      const [closing] = await measure([baselineJob], baseline.pid);
      process.stdout.write(`  ${describe(closing)}  (bare Koa again, at the round's end)\n`);
      rounds.push({ ...entry, closingBaseline: closing });
    }

    await sleep(AFTER_LOAD_SETTLE_MS);
    idleAfterLoad = { rssMiB: rssMiB(info.pid), ...(againstCtx ? { againstMiB: rssMiB(againstCtx.services.info.pid) } : {}) };
    if (scenarios.some((s) => s.id === 'login')) {
      ceiling = CEILING = await bcryptCeiling(QUICK ? 2 : 5);
      process.stdout.write(`\n  bcrypt ceiling (cost 10, every core, nothing else running): ${ceiling.hashesPerSec}/s, ${ceiling.cpuMsEach} ms CPU each\n`);
    }
  } finally {
    for (const child of children.reverse()) await child.stop();
  }
  if (PROFILE) {
    // CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile: thread 0 is the event loop; the others are the bcrypt workers.
    const files = fs.existsSync(profileDir) ? fs.readdirSync(profileDir).filter((f) => /\.\d+\.0\.\d+\.cpuprofile$/.test(f)) : [];
    // The service's profile, cut to each scenario's measured windows (the baseline runs in another process).
    for (const f of files) {
      for (const scenario of scenarios.filter((s) => s.id !== 'meWarn')) {
        for (const r of rounds.filter((r) => r.scenarios[scenario.id])) {
          const { window } = r.scenarios[scenario.id][0];
          profiles.push(summarizeProfile(path.join(profileDir, f), 25, { label: `${scenario.id} round ${r.round}`, ...window }));
        }
      }
    }
    for (const p of profiles) process.stdout.write(`\n${formatProfile(p)}\n`);
  }

  // Other helpers' benchmarks, each in its own processes, after ours stopped so they do not share the CPU.
  const iot = flag('no-children') ? undefined : await childBench('iot.ts', IOT_PATTERNS);
  const uploads = flag('no-children') ? undefined : await childBench('uploads.ts', UPLOAD_PATTERNS);

  const coldStarts: { startupMs: number; rssAtFirstAnswerMiB: number }[] = [];
  let idle: { justStartedMiB: number; settledMiB: number; againstMiB?: number } | undefined;
  if (!flag('no-cold-start')) {
    process.stdout.write('\n== cold start (node dist/src/main.js on the seeded data dir until the first 200 from /api/health)\n');
    for (let i = 0; i < COLD_STARTS; i++) {
      const service = await startService({ dataDir, logLevel: 'info' });
      coldStarts.push({ startupMs: Math.round(service.startupMs), rssAtFirstAnswerMiB: Math.round(rssMiB(service.pid) * 10) / 10 });
      await service.stop();
      process.stdout.write(`  start ${i + 1}: first answer after ${Math.round(service.startupMs)} ms\n`);
    }
    const service = await startService({ dataDir, logLevel: 'info' });
    // The A build idles beside it on its own copy: both settle over the same 30 s of the same machine.
    const other = AGAINST ? await startService({ dataDir: againstDir, logLevel: 'info', root: AGAINST }) : undefined;
    await sleep(JUST_STARTED_MS);
    const justStartedMiB = Math.round(rssMiB(service.pid) * 10) / 10;
    await sleep(IDLE_SETTLE_MS - JUST_STARTED_MS);
    idle = { justStartedMiB, settledMiB: Math.round(rssMiB(service.pid) * 10) / 10, ...(other ? { againstMiB: Math.round(rssMiB(other.pid) * 10) / 10 } : {}) };
    await service.stop();
    await other?.stop();
    process.stdout.write(
      `  idle RSS: ${idle.justStartedMiB} MiB ${JUST_STARTED_MS / 1000} s after start, ${idle.settledMiB} MiB after ${IDLE_SETTLE_MS / 1000} s${other ? ` (A: ${idle.againstMiB} MiB)` : ''}\n`,
    );
  }

  // ---- summary ----
  // A starved run: bare Koa's own cost moved too much between its measurements, so the ratios compare different machines.
  const baselineCosts = rounds.flatMap((r) => [r.baseline.cpuUsPerRequest, r.closingBaseline?.cpuUsPerRequest ?? Number.NaN]).filter(Number.isFinite);
  const baselineDrift = baselineCosts.length ? Math.max(...baselineCosts) / Math.min(...baselineCosts) - 1 : 0;
  const starved = baselineDrift > BASELINE_DRIFT_MAX;
  const starvedNote = `NO VERDICT: bare Koa's own CPU per request moved ${(baselineDrift * 100).toFixed(0)} % within this run (${baselineCosts.map((c) => c.toFixed(0)).join(', ')} µs), more than the ${BASELINE_DRIFT_MAX * 100} % a verdict allows: the machine was starved; the figures are printed, the verdicts are not`;
  const rows: TableRow[] = [];
  const results: Record<string, unknown>[] = [];
  const baseRps = rounds.map((r) => r.baseline.rps);
  rows.push({
    scenario: 'bare Koa + @koa/router, small JSON (baseline)',
    rps: fmt(spread(baseRps)),
    p50: fmt(spread(rounds.map((r) => r.baseline.p50)), 2),
    p99: fmt(spread(rounds.map((r) => r.baseline.p99)), 2),
    ratio: '1',
    cpu: fmt(spread(rounds.map((r) => r.baseline.cpuUsPerRequest))),
    target: '–',
    result: '–',
  });
  for (const scenario of scenarios) {
    const measured = rounds.filter((r) => r.scenarios[scenario.id]);
    const own = measured.map((r) => r.scenarios[scenario.id][0]);
    const extraValues = measured.map((r) => (scenario.extra ? scenario.extra(r.scenarios[scenario.id]) : {}));
    const extra = Object.fromEntries(Object.keys(extraValues[0] ?? {}).map((key) => [key, spread(extraValues.map((e) => e[key]))]));
    const summary: Summary = {
      rps: spread(own.map((f) => f.rps)),
      p50: spread(own.map((f) => f.p50)),
      p99: spread(own.map((f) => f.p99)),
      ratio: spread(measured.map((r) => r.scenarios[scenario.id][0].rps / r.baseline.rps)),
      cpuUs: spread(own.map((f) => f.cpuUsPerRequest)),
      cpuRatio: spread(measured.map((r) => r.baseline.cpuUsPerRequest / r.scenarios[scenario.id][0].cpuUsPerRequest)),
      extra,
    };
    const checks = scenario.checks(summary);
    const failures = own.reduce((n, f) => n + f.non2xx + f.errors, 0);
    rows.push({
      scenario: scenario.title,
      rps: fmt(summary.rps),
      p50: fmt(summary.p50, 2),
      p99: fmt(summary.p99, 2),
      ratio: scenario.id === 'login' ? '–' : fmt(summary.ratio, 2),
      cpu: scenario.id === 'login' ? '–' : `${summary.cpuUs.median.toFixed(0)} (${summary.cpuRatio.median.toFixed(2)})`,
      target: checks.map((c) => `${c.what} ${c.target}`).join('; ') || (scenario.note ?? '(cost of the info request log)'),
      result:
        (checks
          .map(
            (c) =>
              `${c.value.toFixed(c.unit === 'ms' ? 1 : 2)}${c.unit === 'ms' ? ' ms' : c.unit === '/s' ? '/s' : ''} ${starved ? 'no verdict' : c.met ? 'met' : 'MISSED'}`,
          )
          .join('; ') || '–') +
        (scenario.id === 'login' && ceiling ? ` (bcrypt alone: ${ceiling.hashesPerSec}/s)` : '') +
        (failures ? ` [${failures} non-2xx/errors]` : ''),
    });
    results.push({ id: scenario.id, title: scenario.title, ...summary, checks: starved ? checks.map((c) => ({ ...c, met: null })) : checks, failures });
  }

  if (iot?.ran) {
    const f = iot.figures as Record<string, number>;
    const added = f.addedP50Ms;
    rows.push({
      scenario: 'IoT proxy vs simulator direct, 1 conn. (iot.ts)',
      rps: '–',
      p50: Number.isFinite(f.proxyP50At1) ? `${f.proxyP50At1.toFixed(3)} vs ${f.simulatorP50At1.toFixed(3)}` : '–',
      p99: '–',
      ratio: Number.isFinite(f.ratio) ? `${f.ratio.toFixed(2)} (iot.ts)` : '–',
      cpu: '–',
      target: 'added p50 ≤ 0.3 ms',
      result: Number.isFinite(added) ? `${added.toFixed(3)} ms ${starved ? 'no verdict' : added <= 0.3 ? 'met' : 'MISSED'}` : `not parsed (exit ${iot.code})`,
    });
  } else if (iot)
    rows.push({
      scenario: 'IoT proxy vs simulator direct, 1 conn.',
      rps: '–',
      p50: '–',
      p99: '–',
      ratio: '–',
      cpu: '–',
      target: 'added p50 ≤ 0.3 ms',
      result: iot.note ?? 'not run',
    });
  if (uploads) {
    const f = uploads.figures as Record<string, number>;
    for (const way of ['upload', 'download'] as const) {
      const growth = f[`${way}RssGrowthMiB`];
      rows.push({
        scenario: `100 MiB ${way}, peak RSS growth (uploads.ts)`,
        rps: '–',
        p50: '–',
        p99: '–',
        ratio: '–',
        cpu: '–',
        target: '≤ 40 MiB',
        result: !uploads.ran
          ? (uploads.note ?? 'not run')
          : Number.isFinite(growth)
            ? `${growth.toFixed(1)} MiB ${growth <= 40 ? 'met' : 'MISSED'}`
            : `not parsed (exit ${uploads.code})`,
      });
    }
  }
  const blank = { rps: '–', p50: '–', p99: '–', ratio: '–', cpu: '–' };
  if (coldStarts.length) {
    const start = spread(coldStarts.map((c) => c.startupMs));
    rows.push({
      scenario: 'cold start to first answered request',
      ...blank,
      target: '≤ 1.5 s',
      result: `${fmt(start)} ms ${starved ? 'no verdict' : start.median <= 1500 ? 'met' : 'MISSED'}`,
    });
  }
  if (idle) {
    const settled = `${IDLE_SETTLE_MS / 1000} s`;
    rows.push({
      scenario: `idle RSS, ${settled} after start`,
      ...blank,
      target: `≤ ${IDLE_MAX_MIB} MiB`,
      result: `${idle.settledMiB.toFixed(1)} MiB ${idle.settledMiB <= IDLE_MAX_MIB ? 'met' : 'MISSED'} (${idle.justStartedMiB.toFixed(1)} MiB at ${JUST_STARTED_MS / 1000} s)`,
    });
  }
  if (idleAfterLoad) {
    rows.push({
      scenario: `idle RSS, ${AFTER_LOAD_SETTLE_MS / 1000} s after the load above`,
      ...blank,
      target: `≤ ${AFTER_LOAD_MAX_MIB} MiB`,
      result: `${idleAfterLoad.rssMiB.toFixed(1)} MiB ${idleAfterLoad.rssMiB <= AFTER_LOAD_MAX_MIB ? 'met' : 'MISSED'}`,
    });
  }

  const table = printTable(rows);
  const totalSec = Math.round((performance.now() - runStarted) / 1000);
  process.stdout.write(
    `\n${table}\n\nmedian (min–max) over ${ROUNDS} round(s); ratios are taken round by round against the baseline measured in the same round. Whole run: ${totalSec} s.\n`,
  );
  process.stdout.write(
    starved
      ? `\n${starvedNote}.\n`
      : `\nbare Koa's own CPU per request moved ${(baselineDrift * 100).toFixed(0)} % within the run (a verdict needs ≤ ${BASELINE_DRIFT_MAX * 100} %).\n`,
  );
  const abTable = AGAINST ? againstTable(scenarios, rounds, idle, idleAfterLoad) : undefined;
  if (abTable) process.stdout.write(`\nA/B in the same rounds: A = ${AGAINST}, B = this checkout (cost ratio B/A < 1: B is cheaper)\n${abTable}\n`);

  const file = path.join(RESULTS_DIR, 'latest.json');
  const report = {
    finishedAt: new Date().toISOString(),
    durationSec: totalSec,
    machine: {
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model,
      totalMemMiB: Math.round(os.totalmem() / 2 ** 20),
      node: process.version,
      platform: `${os.platform()} ${os.release()}`,
    },
    options: {
      quick: QUICK,
      rounds: ROUNDS,
      warmupSec: WARMUP_SEC,
      durationSec: DURATION_SEC,
      connections: CONNECTIONS,
      loginConnections: LOGIN_CONNECTIONS,
      loginBackgroundConnections: LOGIN_BACKGROUND_CONNECTIONS,
      loginBackgroundRate: LOGIN_BACKGROUND_RATE,
      logLevel: 'info',
      only: ONLY ?? null,
      profile: PROFILE,
    },
    build,
    seed: seed!,
    scenarios: results,
    rounds,
    children: { iot, uploads },
    coldStarts,
    idle,
    idleAfterLoad,
    bcryptCeiling: ceiling,
    baselineDrift: { drift: baselineDrift, limit: BASELINE_DRIFT_MAX, starved },
    profiles,
    table,
    ...(abTable ? { against: AGAINST, abTable } : {}),
  };
  fs.writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(`results: ${path.relative(process.cwd(), file)}\n`);
}

await main();
