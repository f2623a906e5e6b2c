// Load generator child: runs autocannon jobs side by side (warm-up, then the measured window) and prints one JSON line.
// Run by harness.ts in its own process so the generator never shares an event loop with what it measures.
import autocannon from 'autocannon';

export type LoadJob = {
  name: string;
  url: string;
  method: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /** Request bodies used in turn (e.g. one login per user); overrides `body`. */
  bodies?: string[];
  /** Paths (with query) used in turn on the url's host, e.g. every page of a list. */
  paths?: string[];
  connections: number;
  /** Requests per second over all connections (an open-ended load when left out). */
  overallRate?: number;
  warmupSec: number;
  durationSec: number;
};

export type LoadFigures = {
  name: string;
  connections: number;
  durationSec: number;
  /** 2xx answers per second over the measured window. */
  rps: number;
  /** Milliseconds at full hrtime resolution (autocannon's own histogram keeps whole milliseconds only). */
  p50: number;
  p99: number;
  mean: number;
  ok: number;
  /** Every answer in the window, 2xx or not (the denominator of CPU per request). */
  answered: number;
  non2xx: number;
  errors: number;
  statuses: Record<string, number>;
};

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

function options(job: LoadJob, durationSec: number): autocannon.Options {
  const base: autocannon.Options = {
    url: job.url,
    method: job.method,
    headers: job.headers ?? {},
    body: job.body,
    connections: job.connections,
    duration: durationSec,
    pipelining: 1,
    timeout: 30,
    ...(job.overallRate ? { overallRate: job.overallRate } : {}),
  };
  const { bodies, paths } = job;
  if (!bodies?.length && !paths?.length) return base;
  let nextBody = 0;
  let nextPath = 0;
  return {
    ...base,
    body: bodies?.length ? undefined : job.body,
    requests: [
      {
        method: job.method,
        setupRequest: (request: Record<string, unknown>) => {
          if (bodies?.length) request.body = bodies[nextBody++ % bodies.length];
          if (paths?.length) request.path = paths[nextPath++ % paths.length];
          return request;
        },
      },
    ] as autocannon.Request[],
  };
}

async function runOnce(job: LoadJob, durationSec: number, record: boolean): Promise<LoadFigures> {
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  const instance = autocannon(options(job, durationSec));
  if (record) {
    instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
      statuses[statusCode] = (statuses[statusCode] ?? 0) + 1;
      if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
    });
  }
  const result = await instance;
  const sorted = Float64Array.from(latencies).sort();
  const sum = latencies.reduce((total, value) => total + value, 0);
  return {
    name: job.name,
    connections: job.connections,
    durationSec,
    rps: latencies.length / durationSec,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    mean: latencies.length ? sum / latencies.length : Number.NaN,
    ok: latencies.length,
    answered: Object.values(statuses).reduce((total, n) => total + n, 0),
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    statuses,
  };
}

/**
 * Every job warms up at the same time, then every job is measured over the same window. The line "measuring" on
 * stdout marks the boundary, so the parent can read the server's CPU time over the measured window only.
 */
async function runJobs(jobs: LoadJob[]): Promise<LoadFigures[]> {
  await Promise.all(jobs.filter((job) => job.warmupSec > 0).map((job) => runOnce(job, job.warmupSec, false)));
  process.stdout.write('measuring\n');
  return Promise.all(jobs.map((job) => runOnce(job, job.durationSec, true)));
}

const spec = JSON.parse(process.argv[2] ?? '[]') as LoadJob[];
const figures = await runJobs(spec);
process.stdout.write(`${JSON.stringify(figures)}\n`);
