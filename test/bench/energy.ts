// Energy benchmark: 500 meters × 1 year seeded into the real interval store; bytes per meter-interval on disk; the weekly
// chart and the overview under 50 connections against bare Koa in the same run; a year of 15-minute CSV for one meter;
// the collector at 500 meters (CPU per collection, one day of backfill) against the simulator in its own process.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { AuditLog } from '../../src/platform/db/auditTrail.ts';
import { closeDatabase, databasePath, openDatabase } from '../../src/platform/db/client.ts';
import { addDays } from '../../src/platform/time/calendar.ts';
import { Collector } from '../../src/metering/collector.ts';
import { buildEnergy } from '../../src/energy/module.ts';
import { IotGateway } from '../../src/gateway/service.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { buildService, cpuSeconds, freePort, postJson, rssMiB, runLoad, sleep, startBaseline, startService, SIMULATOR_CREDENTIALS, ROOT } from './harness.ts';
import { createSiteMeters, openSeeding, seedDays } from './seeding.ts';

const METERS = Number(process.env.BENCH_METERS ?? 500);
const DAYS = Number(process.env.BENCH_DAYS ?? 365);
const CONNECTIONS = 50;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const fmt = (value: number | null, digits = 2) => (value === null || !Number.isFinite(value) ? 'n/a' : value.toFixed(digits));

function seed(dataDir: string): { seconds: number; bytesPerInterval: number; intervals: number } {
  const seeded = openSeeding(dataDir);
  const { db } = seeded;
  const started = performance.now();
  const today = new Date().toISOString().slice(0, 10);
  const ids = createSiteMeters(seeded, METERS);
  const intervals = seedDays(seeded, ids, addDays(today, -DAYS + 1), addDays(today, 1));
  // The collector's state as a running box would have it: read a minute ago, nothing to backfill.
  const state = db.sqlite.prepare('INSERT INTO meter_state (meter_id, last_at, last_value, demand_kw) VALUES (?, ?, 0, 100)');
  db.sqlite.transaction(() => {
    for (const id of ids) state.run(id, Date.now() - 60_000);
  })();
  const seconds = (performance.now() - started) / 1000;
  db.sqlite.pragma('wal_checkpoint(TRUNCATE)');
  db.sqlite.exec('VACUUM');
  const pages = (db.sqlite.prepare("SELECT sum(pgsize) FROM dbstat WHERE name IN ('meter_days', 'meter_months')").pluck().get() as number) ?? 0;
  seeded.close();
  return { seconds, bytesPerInterval: pages / intervals, intervals };
}

async function startSimulatorWith(subMeters: number): Promise<{ url: string; pid: number; stop(): void }> {
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
  return { url: (JSON.parse(line) as { url: string }).url, pid: child.pid!, stop: () => child.kill('SIGTERM') };
}

async function collectorFigures(): Promise<{ cpuPercent: number; collectMs: number; dayBackfillSec: number; weekBackfillSec: number }> {
  const sim = await startSimulatorWith(METERS);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ems-bench-collector-'));
  const db = openDatabase(databasePath(dataDir));
  const audit = new AuditLog(db);
  const energy = buildEnergy(db, audit);
  const logger = createLogger('warn');
  const iot = new IotGateway({ baseUrl: sim.url, timeoutMs: 30_000, credentials: SIMULATOR_CREDENTIALS, db, logger, audit });
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
  const collector = new Collector({ db, iot, store: energy.store, logger, intervalMs: 60_000, timezone: energy.timezone });
  // First start: 7 days of history for every meter.
  let started = performance.now();
  await collector.collect();
  const weekBackfillSec = (performance.now() - started) / 1000;
  // One day of backfill: every meter last read a day ago.
  db.sqlite.prepare('UPDATE meter_state SET last_at = ?').run(Date.now() - 86_400_000);
  started = performance.now();
  await collector.collect();
  const dayBackfillSec = (performance.now() - started) / 1000;
  // Steady state: one collection a minute; CPU of this process per collection.
  const rounds = 10;
  const cpu0 = process.cpuUsage();
  started = performance.now();
  for (let i = 0; i < rounds; i += 1) await collector.collect();
  const collectMs = (performance.now() - started) / rounds;
  const used = process.cpuUsage(cpu0);
  const cpuPerCollectSec = (used.user + used.system) / 1e6 / rounds;
  await iot.close();
  closeDatabase(db);
  sim.stop();
  return { cpuPercent: (cpuPerCollectSec / 60) * 100, collectMs, dayBackfillSec, weekBackfillSec };
}

console.log(`energy benchmark: ${METERS} meters × ${DAYS} days, ${os.cpus().length} cores, load average ${os.loadavg()[0].toFixed(1)}`);
await buildService();
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ems-bench-energy-'));
const seeded = seed(dataDir);
console.log(
  `seeded ${seeded.intervals.toLocaleString('en-US')} meter-intervals in ${fmt(seeded.seconds, 1)} s; interval store on disk: ${fmt(seeded.bytesPerInterval)} bytes per meter-interval (target ≤ 12; 500 meters × 10 years ≈ ${fmt((seeded.bytesPerInterval * 500 * 35_064 * 10) / 1e9)} GB)`,
);

const baseline = await startBaseline();
const service = await startService({ dataDir, logLevel: 'warn' });
try {
  const password = fs.readFileSync(path.join(dataDir, 'initial-admin-password'), 'utf8').trim();
  const { accessToken } = await postJson<{ accessToken: string }>(`${service.url}/api/auth/login`, { username: 'admin', password });
  const headers = { authorization: `Bearer ${accessToken}` };
  const rows: { name: string; rps: number; p99: number; cpuMsPerRequest: number }[] = [];
  const measure = async (name: string, url: string, pid: number, requestHeaders: Record<string, string> = {}) => {
    let cpuStart = 0;
    const [figures] = await runLoad(
      [{ name, url, method: 'GET', headers: requestHeaders, connections: CONNECTIONS, warmupSec: 2, durationSec: SECONDS }],
      () => (cpuStart = cpuSeconds(pid)),
    );
    const cpu = cpuSeconds(pid) - cpuStart;
    if (figures.non2xx || figures.errors) throw new Error(`${name}: ${JSON.stringify(figures.statuses)} errors ${figures.errors}`);
    rows.push({ name, rps: figures.rps, p99: figures.p99, cpuMsPerRequest: (cpu * 1000) / figures.answered });
  };
  await measure('bare Koa /hello', baseline.url, baseline.pid);
  await measure('GET /api/overview/energy/weekly', `${service.url}/api/overview/energy/weekly`, service.pid, headers);
  await measure('GET /api/overview/stats', `${service.url}/api/overview/stats`, service.pid, headers);
  await measure('GET /api/energy/areas (10 areas)', `${service.url}/api/energy/areas`, service.pid, headers);
  const base = rows[0];
  console.log(`\n${CONNECTIONS} connections, ${SECONDS} s each (ratio = throughput against bare Koa in this run; CPU per request beside it)`);
  console.log('| request | req/s | ratio | p99 ms | CPU ms/req | CPU ratio |');
  console.log('|---|---|---|---|---|---|');
  for (const row of rows)
    console.log(
      `| ${row.name} | ${Math.round(row.rps)} | ${fmt(row.rps / base.rps)} | ${fmt(row.p99, 1)} | ${fmt(row.cpuMsPerRequest, 3)} | ${fmt(base.cpuMsPerRequest / row.cpuMsPerRequest)} |`,
    );

  // A year of one meter's 15-minute intervals as CSV: time to the last byte, the service's RSS growth meanwhile.
  const today = new Date().toISOString().slice(0, 10);
  const from = addDays(today, -DAYS + 1);
  const csvUrl = `${service.url}/api/energy/export.csv?meterId=2&from=${from}&to=${addDays(today, 1)}`;
  const csvRuns: { ms: number; bytes: number; growth: number }[] = [];
  for (let round = 0; round < 3; round += 1) {
    const rss0 = rssMiB(service.pid);
    let peak = rss0;
    const sampler = setInterval(() => (peak = Math.max(peak, rssMiB(service.pid))), 10);
    const t0 = performance.now();
    const response = await fetch(csvUrl, { headers });
    const bytes = (await response.arrayBuffer()).byteLength;
    const ms = performance.now() - t0;
    clearInterval(sampler);
    csvRuns.push({ ms, bytes, growth: peak - rss0 });
    await sleep(200);
  }
  const worst = csvRuns.reduce((a, b) => (b.ms > a.ms ? b : a));
  console.log(
    `\nCSV export, one meter × ${DAYS} days (${(worst.bytes / 1e6).toFixed(1)} MB): ${csvRuns.map((r) => `${Math.round(r.ms)} ms`).join(', ')}; RSS growth at most ${fmt(Math.max(...csvRuns.map((r) => r.growth)), 1)} MiB (targets ≤ 1 s, ≤ 20 MiB)`,
  );
} finally {
  await service.stop();
  await baseline.stop();
}

const collector = await collectorFigures();
console.log(
  `\ncollector, ${METERS} meters against the simulator in its own process: ${fmt(collector.collectMs, 0)} ms per collection, ` +
    `${fmt(collector.cpuPercent, 2)} % of one core at one collection a minute (target ≤ 2 %); ` +
    `backfill of one day × ${METERS} meters ${fmt(collector.dayBackfillSec, 1)} s (target ≤ 10 s), of 7 days on a first start ${fmt(collector.weekBackfillSec, 1)} s`,
);
void freePort;
