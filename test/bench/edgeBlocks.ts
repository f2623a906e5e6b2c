// The longest event-loop block of background tasks, measured in this process with perf_hooks.monitorEventLoopDelay:
// a bulk action on 5,000 alerts through the HTTP API, the collector at 500 meters against the simulator in its own
// process (the first start's 7-day backfill, a steady collection, the 15-minute write, a day of backfill), and a
// virtual meter's rebuild on 500 terms. measureBlocks(root) loads the code under test from `root` (this checkout, or the
// code before, exported beside it by edge.ts), so both are measured in one run.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay, performance as perf, PerformanceObserver } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { findAt, pathAt } from './baselinePaths.ts';
import { ROOT, SIMULATOR_CREDENTIALS } from './harness.ts';

const METERS = Number(process.env.BENCH_METERS ?? 500);
const ALERTS = 5000;

export type Block = { task: string; maxMs: number; gcMs?: number; note?: string /** the main thread's busy time during the task */; activeMs?: number };

/**
 * The longest event-loop block while `task` runs, and the longest garbage-collection pause in it. The histogram's
 * first sample only starts its clock, so a block right after enable() would go unseen: the task starts after a few
 * samples were taken.
 */
export async function longestBlock(task: () => Promise<unknown>): Promise<{ maxMs: number; ms: number; gcMs: number; activeMs: number }> {
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  let gcMs = 0;
  const gc = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) gcMs = Math.max(gcMs, entry.duration);
  });
  gc.observe({ entryTypes: ['gc'] });
  histogram.enable();
  await new Promise((resolve) => setTimeout(resolve, 50));
  const started = performance.now();
  // The main thread's own busy time (event-loop utilisation): on a starved box a block can be the kernel not running
  // the thread at all; this says how much of the task ran on it.
  const elu = perf.eventLoopUtilization();
  await task();
  const ms = performance.now() - started;
  const activeMs = perf.eventLoopUtilization(elu).active;
  // One more turn so a block at the very end is sampled.
  await new Promise((resolve) => setTimeout(resolve, 30));
  histogram.disable();
  gc.disconnect();
  return { maxMs: histogram.max / 1e6, ms, gcMs, activeMs };
}

/** The modules under test, from a checkout's root. */
async function codeAt(root: string) {
  // Today's paths, or where a baseline before the restructuring holds them (baselinePaths.ts).
  const load = (file: string) => import(pathToFileURL(path.join(root, pathAt(root, file))).href);
  const [audit, client, collector, module, iot, logger, server] = await Promise.all(
    [
      'src/platform/db/auditTrail.ts',
      'src/platform/db/client.ts',
      'src/metering/collector.ts',
      'src/energy/module.ts',
      'src/gateway/service.ts',
      'src/platform/logger.ts',
      'test/helpers/server.ts',
    ].map(load),
  );
  return {
    AuditLog: audit.AuditLog as typeof import('../../src/platform/db/auditTrail.ts').AuditLog,
    ...(client as typeof import('../../src/platform/db/client.ts')),
    Collector: collector.Collector as typeof import('../../src/metering/collector.ts').Collector,
    buildEnergy: module.buildEnergy as typeof import('../../src/energy/module.ts').buildEnergy,
    IotGateway: iot.IotGateway as typeof import('../../src/gateway/service.ts').IotGateway,
    createLogger: logger.createLogger as typeof import('../../src/platform/logger.ts').createLogger,
    startTestServer: server.startTestServer as typeof import('../helpers/server.ts').startTestServer,
  };
}
type Code = Awaited<ReturnType<typeof codeAt>>;

async function bulkAction({ startTestServer }: Code): Promise<Block> {
  const server = await startTestServer();
  try {
    const operator = await server.createUser({ role: 'operator' });
    const sqlite = server.service.deps.db.sqlite;
    const insert = sqlite.prepare(
      `INSERT INTO alerts (title, message, level, source, status, occurred_at, created_at, updated_at) VALUES (?, 'bench', 'warning', 'bench', 'active', ?, ?, ?)`,
    );
    const at = new Date().toISOString();
    sqlite.transaction(() => {
      for (let i = 0; i < ALERTS; i += 1) insert.run(`bench-bulk ${i}`, at, at, at);
    })();
    // The route's validators are compiled on its first request (src/platform/http/validation.ts, ~0.1-0.2 s once after a start):
    // warmed with a call that matches nothing, so the figure is the bulk action's, not the route's cold start.
    await server.request('POST', '/api/alerts/bulk', { token: operator.accessToken, body: { action: 'acknowledge', filter: { ids: [0] } } });
    let status = 0;
    const { maxMs, ms, gcMs, activeMs } = await longestBlock(async () => {
      status = (await server.request('POST', '/api/alerts/bulk', { token: operator.accessToken, body: { action: 'acknowledge', filter: { q: 'bench-bulk' } } }))
        .status;
    });
    return {
      task: `bulk acknowledge of ${ALERTS.toLocaleString('en-US')} alerts, route warmed (before: 4.3 s)`,
      maxMs,
      gcMs,
      activeMs,
      note: `answered ${status} after ${(ms / 1000).toFixed(1)} s`,
    };
  } finally {
    await server.close();
  }
}

async function simulator(subMeters: number): Promise<{ url: string; stop(): void }> {
  const child = spawn(process.execPath, [path.join(ROOT, 'cli', 'emsctl.js'), '--json', 'gateway', 'simulate', '--port', '0'], {
    cwd: ROOT,
    env: { ...process.env, EMS_SIM_METERS: String(subMeters) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = await new Promise<string>((resolve) => {
    let seen = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      seen += chunk;
      if (seen.includes('\n')) resolve(seen.split('\n')[0]);
    });
  });
  return { url: (JSON.parse(line) as { url: string }).url, stop: () => child.kill('SIGTERM') };
}

async function collectorBlocks({
  AuditLog,
  closeDatabase,
  databasePath,
  openDatabase,
  Collector,
  buildEnergy,
  IotGateway,
  createLogger,
}: Code): Promise<Block[]> {
  const sim = await simulator(METERS);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ems-bench-edge-blocks-'));
  const db = openDatabase(databasePath(dataDir));
  const audit = new AuditLog(db);
  const energy = buildEnergy(db, audit);
  const logger = createLogger('warn');
  const iot = new IotGateway({ baseUrl: sim.url, timeoutMs: 60_000, credentials: SIMULATOR_CREDENTIALS, db, logger, audit });
  const rows: Block[] = [];
  try {
    const ids: number[] = [];
    db.sqlite.transaction(() => {
      ids.push(energy.meters.create({ name: 'Main incomer', code: 'meter.main.kwh', kind: 'energy', site: true }, null).id);
      for (const code of ['meter.hvac.kwh', 'meter.lighting.kwh', 'meter.it.kwh'])
        ids.push(energy.meters.create({ name: code, code, kind: 'energy', area: 'Plant' }, null).id);
      for (let i = 1; ids.length < METERS; i += 1) {
        const n = String(i).padStart(3, '0');
        ids.push(energy.meters.create({ name: `Tenant ${n}`, code: `meter.sub.${n}.kwh`, kind: 'energy', area: 'Tenants' }, null).id);
      }
    })();
    let offset = 0;
    const collector = new Collector({
      db,
      iot,
      store: energy.store,
      logger,
      intervalMs: 60_000,
      timezone: energy.timezone,
      holdOpenInterval: true,
      now: () => Date.now() + offset,
    });
    let measured = await longestBlock(() => collector.collect());
    rows.push({
      task: `collector, first start: 7-day backfill of ${METERS} meters`,
      maxMs: measured.maxMs,
      gcMs: measured.gcMs,
      note: `${(measured.ms / 1000).toFixed(1)} s in all`,
    });
    measured = await longestBlock(() => collector.collect());
    rows.push({ task: `collector, one collection of ${METERS} meters held in memory`, maxMs: measured.maxMs, gcMs: measured.gcMs });
    // The next 15-minute interval: this collection writes every held day row.
    offset = 15 * 60_000;
    measured = await longestBlock(() => collector.collect());
    rows.push({ task: `collector, the 15-minute write of ${METERS} day rows`, maxMs: measured.maxMs, gcMs: measured.gcMs });
    await collector.stop();
    db.sqlite.prepare('UPDATE meter_state SET last_at = ?').run(Date.now() - 86_400_000);
    const fresh = new Collector({ db, iot, store: energy.store, logger, intervalMs: 60_000, timezone: energy.timezone, holdOpenInterval: true });
    measured = await longestBlock(() => fresh.collect());
    rows.push({
      task: `collector, one day of backfill × ${METERS} meters`,
      maxMs: measured.maxMs,
      gcMs: measured.gcMs,
      note: `${(measured.ms / 1000).toFixed(1)} s in all`,
    });
    await fresh.stop();
    const rebuilds = (energy.store as { rebuilds?: { idle(): Promise<void> } }).rebuilds;
    measured = await longestBlock(async () => {
      energy.meters.create(
        {
          name: 'Rest of building',
          kind: 'virtual',
          area: 'Other',
          terms: [{ meterId: ids[0], sign: 1 }, ...ids.slice(1).map((meterId) => ({ meterId, sign: -1 as const }))],
        },
        null,
      );
      await rebuilds?.idle();
    });
    rows.push({
      task: `virtual meter on ${METERS} terms × 8 days: rebuild`,
      maxMs: measured.maxMs,
      gcMs: measured.gcMs,
      note: `${rebuilds ? 'after the meter write, in slices' : 'inside the meter write'}; ${(measured.ms / 1000).toFixed(2)} s in all`,
    });
  } finally {
    await iot.close();
    closeDatabase(db);
    sim.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  return rows;
}

/**
 * Commits of 100 pages each (alerts with a 3,000-character message) on the database as the service opens it, 40 in a
 * row (4,000 pages, four times SQLite's automatic checkpoint threshold): the slowest COMMIT and the longest block.
 * Before edgeloop2 the service's connection checkpointed inside the commit crossing 1,000 pages; since, a job does it
 * in a worker thread (src/platform/db/walCheckpoint.ts), run here as the service runs it after every commit.
 */
async function walCommits({ openDatabase, closeDatabase, databasePath }: Code, root: string): Promise<Block> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ems-bench-edge-wal-'));
  const db = openDatabase(databasePath(dataDir), { autoCheckpoint: false } as Parameters<typeof openDatabase>[1]);
  const walFile = findAt(root, 'src/platform/db/walCheckpoint.ts');
  const wal = walFile ? await import(pathToFileURL(path.join(root, walFile)).href) : null;
  // Since the lock fix the job reads through a held WalIndex; a baseline before it takes the path.
  const walIndex = wal?.WalIndex ? new wal.WalIndex(db.path) : null;
  const job = wal ? wal.walCheckpointJob(walIndex ?? db.path, (error: unknown) => console.error(error)) : null;
  const auto = db.sqlite.pragma('wal_autocheckpoint', { simple: true });
  const statement = db.sqlite.prepare(
    `INSERT INTO alerts (title, message, level, source, status, occurred_at, created_at, updated_at) VALUES ('wal', ?, 'info', 'bench', 'resolved', ?, ?, ?)`,
  );
  const message = 'x'.repeat(3000);
  let slowest = 0;
  let checkpoints = 0;
  try {
    const measured = await longestBlock(async () => {
      for (let round = 0; round < 40; round += 1) {
        const at = new Date().toISOString();
        const started = performance.now();
        db.sqlite.transaction(() => {
          for (let i = 0; i < 100; i += 1) statement.run(message, at, at, at);
        })();
        slowest = Math.max(slowest, performance.now() - started);
        if (job && (await job())) checkpoints += 1;
        await new Promise((resolve) => setImmediate(resolve));
      }
    });
    return {
      task: 'commits of 100 pages × 40 (WAL checkpoints: in the commit, or off the loop)',
      maxMs: measured.maxMs,
      gcMs: measured.gcMs,
      activeMs: measured.activeMs,
      note: `slowest COMMIT ${slowest.toFixed(0)} ms; wal_autocheckpoint ${auto}${job ? `, ${checkpoints} checkpoints in a worker thread` : ''}; WAL ${(fs.statSync(`${db.path}-wal`).size / 1048576).toFixed(1)} MiB at the end`,
    };
  } finally {
    closeDatabase(db);
    walIndex?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

export async function measureBlocks(root = ROOT): Promise<Block[]> {
  const code = await codeAt(root);
  // BENCH_EDGE_BLOCKS=bulk,wal,collector runs a part.
  const parts = new Set((process.env.BENCH_EDGE_BLOCKS ?? 'bulk,wal,collector').split(','));
  // The box's own noise: the longest block of a loop doing nothing but timers, over 5 s (a busy shared box starves the
  // process now and then; every figure below includes that).
  const idle = await longestBlock(() => new Promise((resolve) => setTimeout(resolve, 5000)));
  return [
    { task: "idle event loop, 5 s (the box's own noise)", maxMs: idle.maxMs, gcMs: idle.gcMs },
    ...(parts.has('bulk') ? [await bulkAction(code)] : []),
    ...(parts.has('wal') ? [await walCommits(code, root)] : []),
    ...(parts.has('collector') ? await collectorBlocks(code) : []),
  ];
}
