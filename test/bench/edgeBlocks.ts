// The longest event-loop block of background tasks, measured in this process with perf_hooks.monitorEventLoopDelay:
// a bulk action on 5,000 alerts through the HTTP API, the collector at 500 meters against the simulator in its own
// process (the first start's 7-day backfill, a steady collection, the 15-minute write, a day of backfill), and a
// virtual meter's rebuild on 500 terms.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { AuditLog } from '../../src/db/auditTrail.ts';
import { closeDatabase, databasePath, openDatabase } from '../../src/db/client.ts';
import { Collector } from '../../src/energy/collector.ts';
import { buildEnergy } from '../../src/energy/module.ts';
import { IotGateway } from '../../src/iot/service.ts';
import { createLogger } from '../../src/logger.ts';
import { startTestServer } from '../helpers/server.ts';
import { ROOT, SIMULATOR_CREDENTIALS } from './harness.ts';

const METERS = Number(process.env.BENCH_METERS ?? 500);
const ALERTS = 5000;

export type Block = { task: string; maxMs: number; note?: string };

async function longestBlock(task: () => Promise<unknown>): Promise<{ maxMs: number; ms: number }> {
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  const started = performance.now();
  histogram.enable();
  await task();
  // One more turn so a block at the very end is sampled.
  await new Promise((resolve) => setTimeout(resolve, 20));
  histogram.disable();
  return { maxMs: histogram.max / 1e6, ms: performance.now() - started };
}

async function bulkAction(): Promise<Block> {
  const server = await startTestServer();
  try {
    const operator = await server.createUser({ role: 'operator' });
    const sqlite = server.service.deps.db.sqlite;
    const insert = sqlite.prepare(`INSERT INTO alerts (title, message, level, source, status, occurred_at, created_at, updated_at) VALUES (?, 'bench', 'warning', 'bench', 'active', ?, ?, ?)`);
    const at = new Date().toISOString();
    sqlite.transaction(() => {
      for (let i = 0; i < ALERTS; i += 1) insert.run(`bench-bulk ${i}`, at, at, at);
    })();
    let status = 0;
    const { maxMs, ms } = await longestBlock(async () => {
      status = (await server.request('POST', '/api/alerts/bulk', { token: operator.accessToken, body: { action: 'acknowledge', filter: { q: 'bench-bulk' } } })).status;
    });
    return { task: `bulk acknowledge of ${ALERTS.toLocaleString('en-US')} alerts (before: 4.3 s)`, maxMs, note: `answered ${status} after ${(ms / 1000).toFixed(1)} s` };
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

async function collectorBlocks(): Promise<Block[]> {
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
      for (const code of ['meter.hvac.kwh', 'meter.lighting.kwh', 'meter.it.kwh']) ids.push(energy.meters.create({ name: code, code, kind: 'energy', area: 'Plant' }, null).id);
      for (let i = 1; ids.length < METERS; i += 1) {
        const n = String(i).padStart(3, '0');
        ids.push(energy.meters.create({ name: `Tenant ${n}`, code: `meter.sub.${n}.kwh`, kind: 'energy', area: 'Tenants' }, null).id);
      }
    })();
    let offset = 0;
    const collector = new Collector({ db, iot, store: energy.store, logger, intervalMs: 60_000, timezone: energy.timezone, holdOpenInterval: true, now: () => Date.now() + offset });
    let measured = await longestBlock(() => collector.collect());
    rows.push({ task: `collector, first start: 7-day backfill of ${METERS} meters`, maxMs: measured.maxMs, note: `${(measured.ms / 1000).toFixed(1)} s in all` });
    measured = await longestBlock(() => collector.collect());
    rows.push({ task: `collector, one collection of ${METERS} meters held in memory`, maxMs: measured.maxMs });
    // The next 15-minute interval: this collection writes every held day row.
    offset = 15 * 60_000;
    measured = await longestBlock(() => collector.collect());
    rows.push({ task: `collector, the 15-minute write of ${METERS} day rows`, maxMs: measured.maxMs });
    await collector.stop();
    db.sqlite.prepare('UPDATE meter_state SET last_at = ?').run(Date.now() - 86_400_000);
    const fresh = new Collector({ db, iot, store: energy.store, logger, intervalMs: 60_000, timezone: energy.timezone, holdOpenInterval: true });
    measured = await longestBlock(() => fresh.collect());
    rows.push({ task: `collector, one day of backfill × ${METERS} meters`, maxMs: measured.maxMs, note: `${(measured.ms / 1000).toFixed(1)} s in all` });
    await fresh.stop();
    measured = await longestBlock(async () => {
      energy.meters.create({ name: 'Rest of building', kind: 'virtual', area: 'Other', terms: [{ meterId: ids[0], sign: 1 }, ...ids.slice(1).map((meterId) => ({ meterId, sign: -1 as const }))] }, null);
    });
    rows.push({ task: `virtual meter on ${METERS} terms × 8 days: rebuild`, maxMs: measured.maxMs, note: 'runs in the meter write: not sliced yet' });
  } finally {
    await iot.close();
    closeDatabase(db);
    sim.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  return rows;
}

export async function measureBlocks(): Promise<Block[]> {
  return [await bulkAction(), ...(await collectorBlocks())];
}
