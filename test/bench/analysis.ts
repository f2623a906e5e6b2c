// Energy-management benchmark: 500 meters × 3 years of daily rows seeded into the real interval store, with 3 years of
// outdoor temperatures; a baseline fit per meter against reading the same days alone (the floor), in process; then
// comparison queries over every meter and period kind under 50 connections, for the merge base with main ("before")
// and this checkout ("after") on the same data in the same run, against bare Koa. BENCH_DATA_DIR keeps the seeded
// data for the next run; BENCH_CPU_PROF=1 writes a CPU profile of each service (node --cpu-prof).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AuditLog } from '../../src/platform/db/auditTrail.ts';
import { closeDatabase, databasePath, openDatabase } from '../../src/platform/db/client.ts';
import { addDays, dayIntervals, daysBetween } from '../../src/platform/time/calendar.ts';
import { buildEnergy } from '../../src/energy/module.ts';
import { Baselines } from '../../src/analysis/baselines.ts';
import { OutdoorTemperatures } from '../../src/analysis/weather.ts';
import { buildService, cpuSeconds, postJson, ROOT, runLoad, startBaseline, startService, type ServiceChild } from './harness.ts';
import { createSiteMeters, openSeeding } from './seeding.ts';

const METERS = Number(process.env.BENCH_METERS ?? 500);
const DAYS = Number(process.env.BENCH_DAYS ?? 365 * 3);
const CONNECTIONS = 50;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const fmt = (value: number | null, digits = 2) => (value === null || !Number.isFinite(value) ? 'n/a' : value.toFixed(digits));

/** A deterministic outdoor temperature: season plus a weekly wobble, with a diurnal swing. */
const outdoor = (dayIndex: number, hour: number) =>
  10.5 - 7.5 * Math.cos((2 * Math.PI * (dayIndex - 20)) / 365.25) + 3 * Math.sin(dayIndex * 0.9) + 3.5 * Math.cos((2 * Math.PI * (hour - 15)) / 24);

function seed(dataDir: string, today: string): { seconds: number; ids: number[] } {
  const seeded = openSeeding(dataDir);
  const { db, energy } = seeded;
  const started = performance.now();
  const ids = createSiteMeters(seeded, METERS);
  const first = addDays(today, -DAYS);
  const temps = db.sqlite.prepare("INSERT INTO outdoor_days (code, day, hourly_c, samples) VALUES ('temp.outdoor', ?, ?, 48)");
  daysBetween(first, today).forEach((day, d) => {
    const { start, count } = dayIntervals('UTC', day);
    const hourly = Float32Array.from({ length: 24 }, (_, h) => outdoor(d, h));
    const hdd = hourly.reduce((sum, t) => sum + Math.max(0, 15.5 - t), 0) / 24;
    const weekend = [0, 6].includes(new Date(`${day}T00:00:00Z`).getUTCDay());
    db.sqlite.transaction(() => {
      temps.run(day, Buffer.from(hourly.buffer));
      energy.store.save(
        ids.map((meterId, m) => {
          const kwh = new Float32Array(count);
          const level = (m === 0 ? 45 : 0.5 + (m % 7)) * (weekend ? 0.6 : 1) * (1 + 0.04 * hdd);
          for (let i = 0; i < count; i += 1) kwh[i] = level * (1 + 0.3 * Math.sin((i / count) * 2 * Math.PI + m)) * (1 + 0.05 * Math.random());
          return { meterId, day, start, kwh, flags: new Uint8Array(count), maxKw: null, stored: null };
        }),
      );
    })();
  });
  const seconds = (performance.now() - started) / 1000;
  db.sqlite.pragma('wal_checkpoint(TRUNCATE)');
  closeDatabase(db);
  return { seconds, ids };
}

/** Fits a baseline for every meter over the first two years; the floor is reading the same days' energy alone. */
async function baselineFigures(dataDir: string, ids: number[], today: string): Promise<{ fitMs: number; readMs: number; meters: number; cvMedian: number }> {
  const db = openDatabase(databasePath(dataDir));
  const energy = buildEnergy(db, new AuditLog(db));
  const refuse = async () => {
    throw new Error('the bench keeps every temperature day: the gateway is never asked');
  };
  const baselines = new Baselines(energy.days, energy.figures, energy.tariffs, new OutdoorTemperatures(db, { history: refuse }, energy.timezone));
  const baselineFrom = addDays(today, -DAYS);
  const baselineTo = addDays(baselineFrom, 730);
  let started = performance.now();
  for (const meterId of ids) energy.figures.byDay(baselineFrom, today, { meterId });
  const readMs = performance.now() - started;
  const cvs: number[] = [];
  started = performance.now();
  for (const meterId of ids) {
    const fit = await baselines.fit({
      target: { meterId },
      baselineFrom,
      baselineTo,
      reportFrom: baselineTo,
      temperatureCode: 'temp.outdoor',
      heatingBaseC: 15.5,
      coolingBaseC: 21,
      holidays: [],
    });
    cvs.push(fit.statistics.cvRmsePercent);
  }
  const fitMs = performance.now() - started;
  closeDatabase(db);
  cvs.sort((a, b) => a - b);
  return { fitMs, readMs, meters: ids.length, cvMedian: cvs[Math.floor(cvs.length / 2)] };
}

console.log(`analysis benchmark: ${METERS} meters × ${DAYS} days, ${os.cpus().length} cores, load average ${os.loadavg()[0].toFixed(1)}`);
await buildService();
const today = new Date().toISOString().slice(0, 10);
// BENCH_DATA_DIR: a data dir an earlier run seeded (seeding 500 × 3 years takes minutes); the fits are then skipped.
// A BENCH_DATA_DIR without a database yet is seeded and kept, for the next run to reuse.
const reused = process.env.BENCH_DATA_DIR && fs.existsSync(databasePath(process.env.BENCH_DATA_DIR)) ? process.env.BENCH_DATA_DIR : undefined;
const dataDir = reused ?? process.env.BENCH_DATA_DIR ?? fs.mkdtempSync(path.join(os.tmpdir(), 'ems-bench-analysis-'));
fs.mkdirSync(dataDir, { recursive: true });
const seeded = reused ? { seconds: 0, ids: Array.from({ length: METERS }, (_, i) => i + 1) } : seed(dataDir, today);
if (!reused) console.log(`seeded ${seeded.ids.length} meters × ${DAYS} days (and as many days of outdoor temperature) in ${fmt(seeded.seconds, 1)} s`);
const fits = reused ? null : await baselineFigures(dataDir, seeded.ids, today);
if (fits)
  console.log(
    `baseline fit, 2 years of daily data + a 1-year report per meter: ${fmt(fits.fitMs / fits.meters, 2)} ms per meter, ${fmt(fits.fitMs / 1000, 1)} s for ${fits.meters} meters; ` +
      `reading the same 3 years of days alone ${fmt(fits.readMs / fits.meters, 2)} ms per meter (ratio ${fmt(fits.fitMs / fits.readMs, 1)}); median CV(RMSE) ${fmt(fits.cvMedian, 1)} %`,
  );

/** The code this work started from (the merge base with main), exported and built beside this checkout; node_modules shared. */
async function beforeRoot(): Promise<{ root: string; commit: string }> {
  const commit = execFileSync('git', ['merge-base', 'HEAD', 'main'], { cwd: ROOT, encoding: 'utf8' }).trim();
  const root = path.join(os.tmpdir(), `ems-analysis-before-${commit.slice(0, 12)}`);
  if (!fs.existsSync(path.join(root, 'dist', 'src', 'main.js'))) {
    fs.mkdirSync(root, { recursive: true });
    execFileSync('bash', ['-c', `git archive ${commit} | tar -x -C ${JSON.stringify(root)}`], { cwd: ROOT });
    if (!fs.existsSync(path.join(root, 'node_modules'))) fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(root, 'node_modules'));
    await buildService(root);
  }
  return { root, commit };
}

type Row = { name: string; rps: number; p99: number; cpuMsPerRequest: number };
const measure = async (rows: Row[], name: string, url: string, pid: number, requestHeaders: Record<string, string> = {}, paths?: string[]) => {
  let cpuStart = 0;
  const [figures] = await runLoad(
    [{ name, url, method: 'GET', headers: requestHeaders, paths, connections: CONNECTIONS, warmupSec: 2, durationSec: SECONDS }],
    () => (cpuStart = cpuSeconds(pid)),
  );
  const cpu = cpuSeconds(pid) - cpuStart;
  if (figures.non2xx || figures.errors) throw new Error(`${name}: ${JSON.stringify(figures.statuses)} errors ${figures.errors}`);
  rows.push({ name, rps: figures.rps, p99: figures.p99, cpuMsPerRequest: (cpu * 1000) / figures.answered });
};

/**
 * Waits until the service's start-up work is over (the collector's backfill from the built-in simulator, the day's
 * anomaly check): under 5 % of a core for a second, at most a minute.
 */
async function settle(service: ServiceChild): Promise<void> {
  const deadline = Date.now() + 60_000;
  let last = cpuSeconds(service.pid);
  while (Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    if (service.child.exitCode !== null || service.child.signalCode !== null)
      throw new Error(`the service stopped (${service.child.exitCode ?? service.child.signalCode}): ${service.stderr()}`);
    const now = cpuSeconds(service.pid);
    if (now - last < 0.05) return;
    last = now;
  }
}

/** The comparison questions against one build of the service on the seeded data dir; BENCH_CPU_PROF=1 profiles it. */
async function compareFigures(label: string, root: string): Promise<Row[]> {
  const profileDir = path.join(dataDir, `cpu-profile-${label}`);
  const nodeArgs = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  // No collector and no alarm polling: the built-in simulator's collections would otherwise burn the CPU measured here
  // (a restart backfills up to 7 days of every simulated meter). Kept answers losing to writes: the last row.
  const service = await startService({ dataDir, logLevel: 'warn', root, nodeArgs, env: { EMS_COLLECT_INTERVAL: 'off', EMS_ALARM_POLL_INTERVAL: 'off' } });
  const rows: Row[] = [];
  try {
    await settle(service);
    const password = fs.readFileSync(path.join(dataDir, 'initial-admin-password'), 'utf8').trim();
    const { accessToken } = await postJson<{ accessToken: string }>(`${service.url}/api/auth/login`, { username: 'admin', password });
    const headers = { authorization: `Bearer ${accessToken}` };
    // The service's own floor: an authenticated GET through the same middleware that reads one user row.
    await measure(rows, 'service floor: GET /api/auth/me', `${service.url}/api/auth/me`, service.pid, headers);
    // Meters in turn (every 5th: the load tool takes its paths on the command line), every period kind, now and a year ago.
    const kinds = ['day', 'week', 'month', 'year'];
    const paths = seeded.ids
      .filter((_, i) => i % 5 === 0)
      .flatMap((id) =>
        kinds.flatMap((kind) => [
          `/api/analysis/compare?period=${kind}&meterId=${id}`,
          `/api/analysis/compare?period=${kind}&meterId=${id}&at=${addDays(today, -365)}`,
        ]),
      );
    await measure(rows, `compare, ${paths.length} meter × period questions in turn`, `${service.url}${paths[0]}`, service.pid, headers, paths);
    const areas = Array.from({ length: 10 }, (_, i) =>
      kinds.map((kind) => `/api/analysis/compare?period=${kind}&area=${encodeURIComponent(`Area ${i + 1}`)}`),
    ).flat();
    await measure(rows, `compare, areas of 50 meters (${areas.length} questions)`, `${service.url}${areas[0]}`, service.pid, headers, areas);
    await measure(rows, 'compare, the site this month', `${service.url}/api/analysis/compare?period=month`, service.pid, headers);
    // The worst case for kept answers: another connection commits every second, so every question is computed afresh
    // about once a second (the collector writes intervals once every 15 minutes).
    const writer = openDatabase(databasePath(dataDir));
    const touch = writer.sqlite.prepare('UPDATE platform_config SET timezone = timezone WHERE id = 1');
    const timer = setInterval(() => touch.run(), 1000);
    try {
      await measure(
        rows,
        `compare, the ${paths.length} meter questions, another connection writing every second`,
        `${service.url}${paths[0]}`,
        service.pid,
        headers,
        paths,
      );
    } finally {
      clearInterval(timer);
      closeDatabase(writer);
    }
  } finally {
    await service.stop();
  }
  if (nodeArgs.length) console.log(`${label}: CPU profile in ${profileDir}`);
  return rows;
}

const TARGET_P99_MS = 20;
const baseline = await startBaseline();
const koa: Row[] = [];
try {
  await measure(koa, 'bare Koa /hello', baseline.url, baseline.pid);
} finally {
  await baseline.stop();
}
const before = process.env.BENCH_NO_BEFORE ? null : await beforeRoot();
const beforeRows = before ? await compareFigures('before', before.root) : null;
const afterRows = await compareFigures('after', ROOT);
const base = koa[0];
console.log(
  `\n${CONNECTIONS} connections, ${SECONDS} s each; target p99 ≤ ${TARGET_P99_MS} ms. before = the merge base with main (${before?.commit.slice(0, 12) ?? 'not run'}), after = this checkout, same data, same run.`,
);
console.log(
  `bare Koa /hello: ${Math.round(base.rps)} req/s, p99 ${fmt(base.p99, 1)} ms, ${fmt(base.cpuMsPerRequest, 3)} CPU ms/req (the box's floor in this run)`,
);
console.log('| request | before req/s | before p99 ms | before CPU ms/req | after req/s | after p99 ms | after CPU ms/req | ratio to bare Koa | p99 ≤ 20 ms |');
console.log('|---|---|---|---|---|---|---|---|---|');
afterRows.forEach((row, i) => {
  const old = beforeRows?.[i];
  console.log(
    `| ${row.name} | ${old ? Math.round(old.rps) : 'n/a'} | ${old ? fmt(old.p99, 1) : 'n/a'} | ${old ? fmt(old.cpuMsPerRequest, 3) : 'n/a'} | ` +
      `${Math.round(row.rps)} | ${fmt(row.p99, 1)} | ${fmt(row.cpuMsPerRequest, 3)} | ${fmt(row.rps / base.rps)} | ${row.p99 <= TARGET_P99_MS ? 'met' : 'NOT met'} |`,
  );
});
