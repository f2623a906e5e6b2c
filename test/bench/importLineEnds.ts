// Benchmark (issue 39 #5): a dry-run history import of a CR-only file ("CSV (Macintosh)") against the same rows with
// \n line ends (the same-run baseline): time, peak RSS, the longest event-loop stall and the answer's size, at
// BENCH_MIB sizes (default 8,32). Prints figures and ratios; asserts nothing.
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { addDays, dayIntervals, siteDay } from '../../src/platform/time/calendar.ts';
import { startTestServer } from '../helpers/server.ts';

const SIZES = (process.env.BENCH_MIB ?? '8,32').split(',').map(Number);
const Q = 15 * 60_000;

const server = await startTestServer();
const admin = await server.createUser({ role: 'admin' });
await server.request('POST', '/api/meters', { token: admin.accessToken, body: { name: 'Main', code: 'meter.main.kwh', kind: 'energy', site: true } });

/** At least `mib` MiB of rows (3,000 days at most: the import's age limit), rows repeated past that. */
function file(mib: number, end: string): string {
  const today = siteDay('UTC');
  const rows: string[] = [];
  let length = 0;
  for (let d = 3000; length < mib * 1024 * 1024; d = d === 1 ? 3000 : d - 1) {
    const { start, count } = dayIntervals('UTC', addDays(today, -d));
    for (let i = 0; i < count; i += 1) {
      const row = `meter.main.kwh,${new Date(start + i * Q).toISOString()},1.5`;
      rows.push(row);
      length += row.length + end.length;
    }
  }
  return `meter,start,kwh${end}${rows.join(end)}${end}`;
}

async function measure(body: string) {
  global.gc?.();
  const stall = monitorEventLoopDelay({ resolution: 10 });
  let peak = process.memoryUsage().rss;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 20);
  stall.enable();
  const started = performance.now();
  const answer = await server.request('POST', '/api/energy/import?dryRun=true', {
    token: admin.accessToken,
    raw: body,
    headers: { 'content-type': 'text/csv' },
  });
  const ms = performance.now() - started;
  stall.disable();
  clearInterval(sampler);
  return {
    status: answer.status,
    ms: Math.round(ms),
    peakRssMb: Math.round(peak / 1048576),
    maxStallMs: Math.round(stall.max / 1e6),
    answerBytes: answer.text.length,
  };
}

for (const mib of SIZES) {
  const lf = await measure(file(mib, '\n'));
  const cr = await measure(file(mib, '\r'));
  console.log(
    JSON.stringify({
      mib,
      lf,
      cr,
      ratio: { time: +(cr.ms / lf.ms).toFixed(2), peakRss: +(cr.peakRssMb / lf.peakRssMb).toFixed(2) },
    }),
  );
}
await server.close();
