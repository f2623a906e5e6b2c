// Benchmark: a history import of a year of 15-minute intervals for 100 meters (3.5 M rows, ~120 MB of CSV) over real
// HTTP: its time, the longest event-loop block during it (monitorEventLoopDelay) and the slowest answer of a request
// sent every 100 ms meanwhile, against the same figures over an idle stretch (baseline, same run). Then the dry run of
// the same file and the import's write slices. Prints figures; asserts nothing (a busy box would make a threshold flaky).
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { addDays, dayIntervals, siteDay } from '../../src/platform/time/calendar.ts';
import { lastRead, lastWrite } from '../../src/metering/importSlices.ts';
import { startTestServer, tempDir } from '../helpers/server.ts';

const METERS = Number(process.env.BENCH_METERS ?? 100);
const DAYS = Number(process.env.BENCH_DAYS ?? 365);
const Q = 15 * 60_000;

const server = await startTestServer();
const { deps } = server.service;
const admin = await server.createUser({ role: 'admin' });
const ids: number[] = [];
deps.db.sqlite.transaction(() => {
  for (let m = 0; m < METERS; m += 1)
    ids.push(
      deps.energy.meters.create({ name: `Bench ${m}`, code: `bench.${m}.kwh`, kind: 'energy', site: m === 0, area: m ? `Area ${m % 10}` : null }, null).id,
    );
  // The rest of the building: the site less every sub-meter, derived day by day as the import writes them.
  deps.energy.meters.create({ name: 'Rest', kind: 'virtual', area: 'Other', terms: ids.map((meterId, m) => ({ meterId, sign: m ? -1 : 1 })) }, null);
})();

// The file, written before anything is measured (the client's work must not count as the server's).
const dir = tempDir('ems-bench-import-');
const file = path.join(dir, 'history.csv');
const today = siteDay('UTC');
const first = addDays(today, -DAYS - 1);
const out = fs.openSync(file, 'w');
let rows = 0;
fs.writeSync(out, 'meter,start,kwh\n');
for (let d = 0; d < DAYS; d += 1) {
  const { start, count } = dayIntervals('UTC', addDays(first, d));
  for (let m = 0; m < METERS; m += 1) {
    let chunk = '';
    for (let i = 0; i < count; i += 1) chunk += `bench.${m}.kwh,${new Date(start + i * Q).toISOString()},${(0.5 + ((m * 7 + i) % 13) / 10).toFixed(3)}\n`;
    fs.writeSync(out, chunk);
    rows += count;
  }
}
fs.closeSync(out);
const bytes = fs.statSync(file).size;

function post(query: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      `${server.url}/api/energy/import${query}`,
      { method: 'POST', headers: { authorization: `Bearer ${admin.accessToken}`, 'content-type': 'text/csv', 'content-length': bytes } },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      },
    );
    request.on('error', reject);
    fs.createReadStream(file, { highWaterMark: 256 * 1024 }).pipe(request);
  });
}

/** Runs `work` while watching the loop and answering a health request every 100 ms. */
async function measured<T>(
  work: () => Promise<T>,
): Promise<{ result: T; ms: number; blockMs: number; slowestRequestMs: number; requests: number; rssMiB: number }> {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  let slowest = 0;
  let requests = 0;
  let rss = process.memoryUsage.rss();
  let running = true;
  const poller = (async () => {
    while (running) {
      const t0 = performance.now();
      await fetch(`${server.url}/api/health`).then((response) => response.text());
      slowest = Math.max(slowest, performance.now() - t0);
      requests += 1;
      rss = Math.max(rss, process.memoryUsage.rss());
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  const t0 = performance.now();
  const result = await work();
  const ms = performance.now() - t0;
  running = false;
  await poller;
  histogram.disable();
  return { result, ms, blockMs: histogram.max / 1e6, slowestRequestMs: slowest, requests, rssMiB: Math.round(rss / 1048576) };
}

const round = (value: number) => Math.round(value * 10) / 10;
console.log(`history import: ${METERS} meters × ${DAYS} days = ${rows.toLocaleString('en')} rows, ${(bytes / 1e6).toFixed(1)} MB`);
const idle = await measured(() => new Promise((resolve) => setTimeout(resolve, 3000)));
console.log(
  `baseline (idle 3 s):   longest loop block ${round(idle.blockMs)} ms, slowest /api/health ${round(idle.slowestRequestMs)} ms (${idle.requests} requests)`,
);
const dry = await measured(() => post('?dryRun=true'));
const dryRead = lastRead.longestMs;
console.log(
  `dry run:  ${(dry.ms / 1000).toFixed(1)} s (status ${dry.result.status}), longest loop block ${round(dry.blockMs)} ms (×${round(dry.blockMs / idle.blockMs)} baseline), slowest /api/health ${round(dry.slowestRequestMs)} ms (${dry.requests} requests); longest stretch of its own between yields ${round(dryRead)} ms`,
);
const real = await measured(() => post(''));
const report = real.result.status === 200 ? JSON.parse(real.result.body) : null;
console.log(
  `import:   ${(real.ms / 1000).toFixed(1)} s (status ${real.result.status}${report ? `, ${report.meters.reduce((sum: number, meter: { intervals: { new: number } }) => sum + meter.intervals.new, 0).toLocaleString('en')} intervals` : `: ${real.result.body.slice(0, 200)}`}), longest loop block ${round(real.blockMs)} ms (×${round(real.blockMs / idle.blockMs)} baseline), slowest /api/health ${round(real.slowestRequestMs)} ms (${real.requests} requests), peak RSS ${real.rssMiB} MiB (idle ${idle.rssMiB} MiB; the service's cap is 512 MiB)`,
);
console.log(`          reading and checking: longest stretch between yields ${round(lastRead.longestMs)} ms`);
console.log(
  `          write slices: ${lastWrite.slices}, longest ${round(lastWrite.longestMs)} ms; rows/s ${Math.round(rows / (real.ms / 1000)).toLocaleString('en')}; target: < 30 s, blocks ≤ 50 ms`,
);
const sorted = [...lastWrite.durations].sort((a, b) => a - b);
console.log(
  `          slice ms: median ${round(sorted[Math.floor(sorted.length / 2)] ?? 0)}, p95 ${round(sorted[Math.floor(sorted.length * 0.95)] ?? 0)}, longest 5 ${sorted.slice(-5).map(round).join(' ')}; slices over 50 ms at ${lastWrite.durations
    .map((ms, i) => (ms > 50 ? i : -1))
    .filter((i) => i >= 0)
    .slice(0, 10)
    .join(' ')}`,
);
const longestAt = lastWrite.durations.indexOf(lastWrite.longestMs);
console.log(
  `          the longest slice's commit (WAL write, a checkpoint when due): ${round(lastWrite.commits[longestAt] ?? 0)} ms; longest commit ${round(Math.max(0, ...lastWrite.commits))} ms`,
);
const stored = deps.db.sqlite.prepare('SELECT count(*) AS days, round(sum(total_kwh), 1) AS kwh FROM meter_days').get();
console.log(
  `stored: ${JSON.stringify(stored)}; load average ${(await import('node:os'))
    .loadavg()
    .map((v) => v.toFixed(1))
    .join(' ')}`,
);
await server.close();
fs.rmSync(dir, { recursive: true, force: true });
