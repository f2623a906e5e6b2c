// Benchmark: the longest event-loop block while the collector backfills 7 days for 500 new meters from a gateway's
// history (over real HTTP), against the longest block over the same time with the loop idle (baseline, same run).
// Prints figures; asserts nothing (a busy box would make any threshold flaky).
import { performance } from 'node:perf_hooks';
import { startBadGateway } from '../helpers/badGateway.ts';
import { startTestServer } from '../helpers/server.ts';

const METERS = Number(process.env.BENCH_METERS ?? 500);
const DAY = 86_400_000;

/** Watches the loop with a 1 ms timer: the longest gap between two ticks beyond the 1 ms asked for. */
function loopWatch() {
  let last = performance.now();
  let longest = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last - 1);
    last = now;
  }, 1);
  return {
    stop() {
      clearInterval(timer);
      return longest;
    },
  };
}

const now = Date.now();
const gateway = await startBadGateway();
for (let m = 0; m < METERS; m += 1) {
  const code = `bench.${m}.kwh`;
  const rows = [];
  for (let at = now - 7 * DAY; at <= now; at += 5 * 60_000) rows.push({ at, value: 1000 + (m % 7) * ((at - (now - 7 * DAY)) / 3_600_000) });
  gateway.history.set(code, rows);
  gateway.set(code, { value: rows.at(-1)!.value });
}
const server = await startTestServer({ EMS_IOT_BASE_URL: gateway.url, EMS_IOT_USERNAME: gateway.username, EMS_IOT_PASSWORD: gateway.password });
const { deps } = server.service;
deps.db.sqlite.transaction(() => {
  for (let m = 0; m < METERS; m += 1) deps.energy.meters.create({ name: `Bench ${m}`, code: `bench.${m}.kwh`, kind: 'energy', area: `Area ${m % 10}` }, null);
})();

const idle = loopWatch();
await new Promise((resolve) => setTimeout(resolve, 2000));
const baseline = idle.stop();

// The collector's own slices (each one transaction), timed from outside.
let longestSlice = 0;
let longestWork = 0;
const works: number[] = [];
const transaction = deps.energy.store.transaction.bind(deps.energy.store);
deps.energy.store.transaction = <R>(fn: () => R): R => {
  const t0 = performance.now();
  try {
    return transaction(() => {
      const t1 = performance.now();
      try {
        return fn();
      } finally {
        const took = performance.now() - t1;
        longestWork = Math.max(longestWork, took);
        works.push(took);
      }
    });
  } finally {
    longestSlice = Math.max(longestSlice, performance.now() - t0);
  }
};
const watch = loopWatch();
const started = performance.now();
const result = await deps.collector.collect();
const seconds = (performance.now() - started) / 1000;
const longest = watch.stop();
const rows = deps.db.sqlite.prepare('SELECT count(*) FROM meter_days').pluck().get() as number;
console.log(`7-day backfill of ${METERS} meters: ${result.filled} history readings, ${rows} day rows in ${seconds.toFixed(1)} s`);
console.log(`longest collector slice (one transaction): ${longestSlice.toFixed(1)} ms, of which the work inside it ${longestWork.toFixed(1)} ms`);
const sorted = [...works].sort((a, b) => b - a);
console.log(
  `slices: ${works.length}; first ${works[0]?.toFixed(1)} ms; median ${sorted[Math.floor(sorted.length / 2)]?.toFixed(1)} ms; 95th percentile ${sorted[Math.floor(sorted.length * 0.05)]?.toFixed(1)} ms`,
);
console.log(
  `longest event-loop block: ${longest.toFixed(1)} ms during the backfill, ${baseline.toFixed(1)} ms idle (baseline); ratio ${(longest / Math.max(baseline, 0.1)).toFixed(1)}×`,
);
await server.close();
await gateway.close();
