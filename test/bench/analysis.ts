// Energy-management benchmark: 500 meters × 3 years of daily rows seeded into the real interval store, with 3 years of
// outdoor temperatures; a baseline fit per meter against reading the same days alone (the floor), in process; then
// comparison queries over every meter and period kind under 50 connections against bare Koa in the same run.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AuditLog } from '../../src/db/auditTrail.ts';
import { closeDatabase, databasePath, openDatabase } from '../../src/db/client.ts';
import { addDays, dayIntervals, daysBetween } from '../../src/energy/calendar.ts';
import { buildEnergy } from '../../src/energy/module.ts';
import { Baselines } from '../../src/analysis/baselines.ts';
import { OutdoorTemperatures } from '../../src/analysis/weather.ts';
import { buildService, cpuSeconds, postJson, runLoad, startBaseline, startService } from './harness.ts';

const METERS = Number(process.env.BENCH_METERS ?? 500);
const DAYS = Number(process.env.BENCH_DAYS ?? 365 * 3);
const CONNECTIONS = 50;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const fmt = (value: number | null, digits = 2) => (value === null || !Number.isFinite(value) ? 'n/a' : value.toFixed(digits));

/** A deterministic outdoor temperature: season plus a weekly wobble, with a diurnal swing. */
const outdoor = (dayIndex: number, hour: number) => 10.5 - 7.5 * Math.cos((2 * Math.PI * (dayIndex - 20)) / 365.25) + 3 * Math.sin(dayIndex * 0.9) + 3.5 * Math.cos((2 * Math.PI * (hour - 15)) / 24);

function seed(dataDir: string, today: string): { seconds: number; ids: number[] } {
  const db = openDatabase(databasePath(dataDir));
  const energy = buildEnergy(db, new AuditLog(db));
  const started = performance.now();
  const ids: number[] = [];
  db.sqlite.transaction(() => {
    ids.push(energy.meters.create({ name: 'Main incomer', code: 'meter.main.kwh', kind: 'energy', site: true }, null).id);
    for (let i = 1; i < METERS; i += 1) {
      const n = String(i).padStart(3, '0');
      ids.push(energy.meters.create({ name: `Sub-meter ${n}`, code: `meter.sub.${n}.kwh`, kind: 'energy', area: `Area ${(i % 10) + 1}` }, null).id);
    }
  })();
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
  const baselines = new Baselines(db, energy.figures, energy.tariffs, new OutdoorTemperatures(db, { relay: refuse }, energy.timezone));
  const baselineFrom = addDays(today, -DAYS);
  const baselineTo = addDays(baselineFrom, 730);
  let started = performance.now();
  for (const meterId of ids) energy.figures.byDay(baselineFrom, today, { meterId });
  const readMs = performance.now() - started;
  const cvs: number[] = [];
  started = performance.now();
  for (const meterId of ids) {
    const fit = await baselines.fit({ target: { meterId }, baselineFrom, baselineTo, reportFrom: baselineTo, temperatureCode: 'temp.outdoor', heatingBaseC: 15.5, coolingBaseC: 21, holidays: [] });
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
const reused = process.env.BENCH_DATA_DIR;
const dataDir = reused ?? fs.mkdtempSync(path.join(os.tmpdir(), 'ems-bench-analysis-'));
const seeded = reused ? { seconds: 0, ids: Array.from({ length: METERS }, (_, i) => i + 1) } : seed(dataDir, today);
if (!reused) console.log(`seeded ${seeded.ids.length} meters × ${DAYS} days (and as many days of outdoor temperature) in ${fmt(seeded.seconds, 1)} s`);
const fits = reused ? null : await baselineFigures(dataDir, seeded.ids, today);
if (fits) console.log(
  `baseline fit, 2 years of daily data + a 1-year report per meter: ${fmt(fits.fitMs / fits.meters, 2)} ms per meter, ${fmt(fits.fitMs / 1000, 1)} s for ${fits.meters} meters; ` +
    `reading the same 3 years of days alone ${fmt(fits.readMs / fits.meters, 2)} ms per meter (ratio ${fmt(fits.fitMs / fits.readMs, 1)}); median CV(RMSE) ${fmt(fits.cvMedian, 1)} %`,
);

const baseline = await startBaseline();
const service = await startService({ dataDir, logLevel: 'warn' });
try {
  const password = fs.readFileSync(path.join(dataDir, 'initial-admin-password'), 'utf8').trim();
  const { accessToken } = await postJson<{ accessToken: string }>(`${service.url}/api/auth/login`, { username: 'admin', password });
  const headers = { authorization: `Bearer ${accessToken}` };
  const rows: { name: string; rps: number; p99: number; cpuMsPerRequest: number }[] = [];
  const measure = async (name: string, url: string, pid: number, requestHeaders: Record<string, string> = {}, paths?: string[]) => {
    let cpuStart = 0;
    const [figures] = await runLoad([{ name, url, method: 'GET', headers: requestHeaders, paths, connections: CONNECTIONS, warmupSec: 2, durationSec: SECONDS }], () => (cpuStart = cpuSeconds(pid)));
    const cpu = cpuSeconds(pid) - cpuStart;
    if (figures.non2xx || figures.errors) throw new Error(`${name}: ${JSON.stringify(figures.statuses)} errors ${figures.errors}`);
    rows.push({ name, rps: figures.rps, p99: figures.p99, cpuMsPerRequest: (cpu * 1000) / figures.answered });
  };
  await measure('bare Koa /hello', baseline.url, baseline.pid);
  // Meters in turn (every 5th: the load tool takes its paths on the command line), every period kind, now and a year ago.
  const kinds = ['day', 'week', 'month', 'year'];
  const paths = seeded.ids.filter((_, i) => i % 5 === 0).flatMap((id) => kinds.flatMap((kind) => [`/api/analysis/compare?period=${kind}&meterId=${id}`, `/api/analysis/compare?period=${kind}&meterId=${id}&at=${addDays(today, -365)}`]));
  await measure(`compare, ${paths.length} meter × period questions in turn`, `${service.url}${paths[0]}`, service.pid, headers, paths);
  const areas = Array.from({ length: 10 }, (_, i) => kinds.map((kind) => `/api/analysis/compare?period=${kind}&area=${encodeURIComponent(`Area ${i + 1}`)}`)).flat();
  await measure(`compare, areas of 50 meters (${areas.length} questions)`, `${service.url}${areas[0]}`, service.pid, headers, areas);
  await measure('compare, the site this month', `${service.url}/api/analysis/compare?period=month`, service.pid, headers);
  const base = rows[0];
  console.log(`\n${CONNECTIONS} connections, ${SECONDS} s each (ratio = throughput against bare Koa in this run; target p99 ≤ 20 ms)`);
  console.log('| request | req/s | ratio | p99 ms | CPU ms/req |');
  console.log('|---|---|---|---|---|');
  for (const row of rows) console.log(`| ${row.name} | ${Math.round(row.rps)} | ${fmt(row.rps / base.rps)} | ${fmt(row.p99, 1)} | ${fmt(row.cpuMsPerRequest, 3)} |`);
} finally {
  await service.stop();
  await baseline.stop();
}
