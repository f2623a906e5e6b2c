// Export benchmark: a year of 15-minute data for 100 meters seeded into the real interval store, then exported over
// HTTP from the service in its own process as wide CSV, long CSV and wide XLSX while its resident memory is sampled
// every 20 ms. The bar: RSS growth ≤ 50 MiB for each (the file is streamed, never held). The baseline in the same run:
// one day of the same meters. BENCH_BEFORE=<git ref> also builds that commit's tree (git archive into a temp
// directory) and measures it first on the same data: before/after figures from one run on the same box load.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { addDays } from '../../src/platform/time/calendar.ts';
import { buildService, installedRuntime, postJson, ROOT, rssMiB, sleep, startService } from './harness.ts';
import { createSiteMeters, dailyCurve, openSeeding, seedDays } from './seeding.ts';

const METERS = Number(process.env.BENCH_METERS ?? 100);
const DAYS = Number(process.env.BENCH_DAYS ?? 365);
const LIMIT_MIB = 50;

function seed(dataDir: string): { from: string; to: string; seconds: number } {
  const seeded = openSeeding(dataDir);
  const started = performance.now();
  const to = new Date().toISOString().slice(0, 10);
  const from = addDays(to, -DAYS);
  // The daily curve without noise (the figures are about memory, not values).
  seedDays(seeded, createSiteMeters(seeded, METERS), from, to, (m, count) => dailyCurve(m, count, 0));
  seeded.close();
  return { from, to, seconds: (performance.now() - started) / 1000 };
}

type Figures = { name: string; mib: number; seconds: number; growthMiB: number };

async function measure(name: string, url: string, token: string, pid: number): Promise<Figures> {
  // The service settles between downloads: the growth is over its RSS right before this one.
  await sleep(1500);
  const before = rssMiB(pid);
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMiB(pid))), 20);
  const started = performance.now();
  const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  if (!response.ok || !response.body) throw new Error(`${name}: ${response.status} ${await response.text()}`);
  let bytes = 0;
  for await (const chunk of response.body) bytes += (chunk as Uint8Array).length;
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  peak = Math.max(peak, rssMiB(pid));
  return { name, mib: bytes / 2 ** 20, seconds, growthMiB: peak - before };
}

/** The tree of a git ref, built, in a temp directory (node_modules linked from this checkout). */
async function buildRef(ref: string): Promise<string> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ems-bench-before-'));
  const archive = execFileSync('git', ['archive', '--format=tar', ref], { cwd: ROOT, maxBuffer: 512 * 2 ** 20 });
  execFileSync('tar', ['-x', '-C', root], { input: archive });
  fs.symlinkSync(fs.realpathSync(path.join(ROOT, 'node_modules')), path.join(root, 'node_modules'));
  const build = await buildService(root);
  if (!build.ok) throw new Error(`build of ${ref} failed: ${build.errors.join('\n')}`);
  return root;
}

async function exportsOf(label: string, dataDir: string, root: string | undefined): Promise<Figures[]> {
  // As the systemd unit of that tree runs it: its node flags and Environment= (MALLOC_ARENA_MAX).
  const runtime = installedRuntime(root);
  const service = await startService({ dataDir, logLevel: 'warn', root, nodeArgs: runtime.nodeArgs, env: runtime.env });
  try {
    const password = fs.readFileSync(path.join(dataDir, 'initial-admin-password'), 'utf8').trim();
    const { accessToken } = await postJson<{ accessToken: string }>(`${service.url}/api/auth/login`, { username: 'admin', password });
    const base = `${service.url}/api/exports/energy?from=${seeded.from}&to=${seeded.to}`;
    const oneDay = `${service.url}/api/exports/energy?from=${seeded.from}&to=${addDays(seeded.from, 1)}`;
    // Warm-up: load the export modules (exceljs is loaded with the first XLSX) before anything is measured.
    await measure('warm-up csv', `${oneDay}`, accessToken, service.pid);
    await measure('warm-up xlsx', `${oneDay}&format=xlsx`, accessToken, service.pid);
    const rows: Figures[] = [];
    rows.push(await measure(`${label}: 1 day wide CSV`, `${oneDay}`, accessToken, service.pid));
    rows.push(await measure(`${label}: 1 day wide XLSX`, `${oneDay}&format=xlsx`, accessToken, service.pid));
    rows.push(await measure(`${label}: ${DAYS} days wide CSV`, `${base}`, accessToken, service.pid));
    rows.push(await measure(`${label}: ${DAYS} days long CSV (de, BOM)`, `${base}&layout=long&locale=de-DE&bom=true`, accessToken, service.pid));
    rows.push(await measure(`${label}: ${DAYS} days wide XLSX`, `${base}&format=xlsx`, accessToken, service.pid));
    return rows;
  } finally {
    await service.stop();
  }
}

// The service runs compiled, as in production.
const build = await buildService();
if (!build.ok) throw new Error(`build failed: ${build.errors.join('\n')}`);
const beforeRef = process.env.BENCH_BEFORE;
const beforeRoot = beforeRef ? await buildRef(beforeRef) : undefined;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ems-bench-exports-'));
const seeded = seed(dataDir);
console.log(`seeded ${METERS} meters × ${DAYS} days (${METERS * DAYS * 96} intervals) in ${seeded.seconds.toFixed(1)} s`);
try {
  const before = beforeRoot ? await exportsOf(`before (${beforeRef})`, dataDir, beforeRoot) : [];
  const after = await exportsOf('this tree', dataDir, undefined);
  console.log(`\n${'export'.padEnd(46)} ${'MiB'.padStart(8)} ${'s'.padStart(7)} ${'MiB/s'.padStart(7)} ${'RSS growth'.padStart(11)}`);
  for (const row of [...before, ...after]) {
    console.log(
      `${row.name.padEnd(46)} ${row.mib.toFixed(1).padStart(8)} ${row.seconds.toFixed(1).padStart(7)} ${(row.mib / row.seconds).toFixed(1).padStart(7)} ${`${row.growthMiB.toFixed(1)} MiB`.padStart(11)}`,
    );
  }
  if (before.length) {
    console.log('\nafter ÷ before (RSS growth, time):');
    for (let i = 2; i < after.length; i += 1)
      console.log(
        `  ${after[i].name.replace(/^this tree: /, '').padEnd(34)} ${(after[i].growthMiB / before[i].growthMiB).toFixed(2)}  ${(after[i].seconds / before[i].seconds).toFixed(2)}`,
      );
  }
  const baseline = Math.max(after[0].growthMiB, after[1].growthMiB);
  const worst = Math.max(...after.slice(2).map((row) => row.growthMiB));
  console.log(
    `\nworst year RSS growth ${worst.toFixed(1)} MiB (limit ${LIMIT_MIB}); one-day baseline ${baseline.toFixed(1)} MiB; ${worst <= LIMIT_MIB ? 'within' : 'OVER'} the limit`,
  );
  process.exitCode = worst <= LIMIT_MIB ? 0 : 1;
} finally {
  fs.rmSync(dataDir, { recursive: true, force: true });
  if (beforeRoot) fs.rmSync(beforeRoot, { recursive: true, force: true });
}
