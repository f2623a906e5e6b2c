// GET /metrics for an existing Prometheus: the service's own health (collector lag, gateway state, backup age, requests
// answered) and per-meter power and energy, as OpenMetrics text (or Prometheus text 0.0.4 for a scraper that does not
// ask for OpenMetrics). Opened by a static bearer token (EMS_METRICS_TOKEN): scrapers cannot refresh a 15-minute JWT.
import type { EnergyFigures } from '../../energy/index.ts';
import type { Meter, MeterDirectory } from '../../metering/index.ts';
import { bearerCredentials } from '../../platform/http/bearer.ts';
import crypto from 'node:crypto';
import type { Middleware } from 'koa';
import type { Db } from '../../platform/db/client.ts';
import { addDays } from '../../platform/time/calendar.ts';
import type { JobView } from '../../platform/jobs/jobs.ts';
import { round } from '../../platform/numbers.ts';

export type MetricsSources = {
  db: Db;
  token: string | undefined;
  collector: { health(): { lagSec: number | null; meters?: number } };
  gateway: { health(): { gateway: 'unknown' | 'reachable' | 'unreachable' } };
  backups: { health(): { lastGoodAt: string | null; lastStatus: 'ok' | 'failed' | null } };
  /** The meters and their current demand (metering's MeterDirectory). */
  meters: Pick<MeterDirectory, 'all' | 'demands'>;
  figures: EnergyFigures;
  startedAt: number;
  /** The periodic jobs (src/platform/jobs/jobs.ts); none in tests that build the metrics alone. */
  jobs?: { list(): JobView[] };
  /** The fault-detection rule engine's counts (issue 54); none in tests that build the metrics alone. */
  faultRules?: { stats: { evaluations: number; seconds: number; runners: number } };
  now?: () => number;
};

type Sample = { labels?: Record<string, string | number>; value: number };
type Family = { name: string; type: 'gauge' | 'counter'; help: string; unit?: string; samples: Sample[] };

const escape = (value: string) => value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
const labelText = (labels: Sample['labels']) =>
  labels && Object.keys(labels).length
    ? `{${Object.entries(labels)
        .map(([key, value]) => `${key}="${escape(String(value))}"`)
        .join(',')}}`
    : '';
const number = (value: number) => (Number.isNaN(value) ? 'NaN' : value === Infinity ? '+Inf' : value === -Infinity ? '-Inf' : String(value));

/** Families as exposition text: OpenMetrics 1.0 (counter families named without _total, ending in # EOF) or Prometheus 0.0.4. */
export function exposition(families: Family[], openMetrics: boolean): string {
  const lines: string[] = [];
  for (const family of families) {
    const base = openMetrics && family.type === 'counter' ? family.name.replace(/_total$/, '') : family.name;
    lines.push(`# HELP ${base} ${family.help}`, `# TYPE ${base} ${family.type}`);
    if (openMetrics && family.unit) lines.push(`# UNIT ${base} ${family.unit}`);
    for (const sample of family.samples) lines.push(`${family.name}${labelText(sample.labels)} ${number(sample.value)}`);
  }
  if (openMetrics) lines.push('# EOF');
  return `${lines.join('\n')}\n`;
}

const COUNTED_METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']);

export class Metrics {
  /** Requests answered since start, by method and status class. */
  private readonly requests = new Map<string, { method: string; code: string; count: number }>();

  constructor(private readonly sources: MetricsSources) {}

  /** Counts every answered request (the count is what a dashboard graphs as a rate). */
  counter(): Middleware {
    return async (ctx, next) => {
      try {
        await next();
      } finally {
        this.count(ctx.method, ctx.status);
      }
    };
  }

  /** Counts one answered request (the front door calls it for every request, as counter() does as a middleware). */
  count(requestMethod: string, status: number): void {
    const code = `${Math.floor(status / 100)}xx`;
    const method = COUNTED_METHODS.has(requestMethod) ? requestMethod : 'OTHER';
    const key = `${method} ${code}`;
    const entry = this.requests.get(key);
    if (entry) entry.count += 1;
    else this.requests.set(key, { method, code, count: 1 });
  }

  /** GET /metrics: 404 while no token is configured, 401 without the right bearer token. */
  endpoint(): Middleware {
    const expected = this.sources.token ? crypto.createHash('sha256').update(this.sources.token).digest() : null;
    return async (ctx, next) => {
      if (ctx.path !== '/metrics') return next();
      if (!expected) return next();
      if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
        ctx.status = 405;
        ctx.set('Allow', 'GET, HEAD');
        ctx.body = { error: 'Method not allowed', code: 'METHOD_NOT_ALLOWED' };
        return;
      }
      // The API's reading of the header (RFC 7235: any case of "Bearer", one or more spaces).
      const given = bearerCredentials(ctx.get('authorization')) ?? '';
      // Compared as digests of equal length: timingSafeEqual needs equal lengths, and a length must not leak either.
      if (!crypto.timingSafeEqual(crypto.createHash('sha256').update(given).digest(), expected)) {
        ctx.status = 401;
        ctx.set('WWW-Authenticate', 'Bearer realm="metrics"');
        ctx.body = { error: 'A valid metrics token is required (Authorization: Bearer <EMS_METRICS_TOKEN>)', code: 'UNAUTHENTICATED' };
        return;
      }
      const openMetrics = /application\/openmetrics-text/.test(ctx.get('accept'));
      ctx.type = openMetrics ? 'application/openmetrics-text; version=1.0.0; charset=utf-8' : 'text/plain; version=0.0.4; charset=utf-8';
      ctx.set('Cache-Control', 'no-store');
      ctx.body = exposition(this.families(), openMetrics);
    };
  }

  families(): Family[] {
    const { collector, gateway, backups, meters, figures } = this.sources;
    const now = (this.sources.now ?? Date.now)();
    const lag = collector.health().lagSec;
    const state = gateway.health().gateway;
    const backup = backups.health();
    const all = meters.all();
    const demand = this.sources.meters.demands();
    const labels = (meter: Meter) => ({ meter_id: meter.id, meter: meter.name, area: meter.area ?? '' });
    // Energy since the first stored day: whole months from the rollups, the current month by day (tomorrow: today included).
    const until = addDays(figures.today(new Date(now)), 1);
    return [
      { name: 'ems_up', type: 'gauge', help: 'The EMS service answers (always 1 when scraped).', samples: [{ value: 1 }] },
      {
        name: 'ems_uptime_seconds',
        type: 'gauge',
        help: 'Seconds since the service started.',
        unit: 'seconds',
        samples: [{ value: Math.round((now - this.sources.startedAt) / 1000) }],
      },
      {
        name: 'ems_collector_lag_seconds',
        type: 'gauge',
        help: 'Seconds since the meter collector last read the gateway successfully (NaN: never).',
        unit: 'seconds',
        samples: [{ value: lag ?? NaN }],
      },
      {
        name: 'ems_gateway_up',
        type: 'gauge',
        help: 'The IoT gateway answered its last probe or request (1), did not (0), or has not been tried yet (NaN).',
        samples: [{ value: state === 'reachable' ? 1 : state === 'unreachable' ? 0 : NaN }],
      },
      {
        name: 'ems_backup_age_seconds',
        type: 'gauge',
        help: 'Seconds since the newest verified backup (NaN: none yet).',
        unit: 'seconds',
        samples: [{ value: backup.lastGoodAt ? Math.round((now - Date.parse(backup.lastGoodAt)) / 1000) : NaN }],
      },
      {
        name: 'ems_backup_last_ok',
        type: 'gauge',
        help: 'The last backup run succeeded (1), failed (0), or none ran (NaN).',
        samples: [{ value: backup.lastStatus === 'ok' ? 1 : backup.lastStatus === 'failed' ? 0 : NaN }],
      },
      {
        name: 'ems_http_requests_total',
        type: 'counter',
        help: 'HTTP requests answered since the service started, by method and status class.',
        samples: [...this.requests.values()].map((entry) => ({ labels: { method: entry.method, code: entry.code }, value: entry.count })),
      },
      { name: 'ems_meters', type: 'gauge', help: 'Meters configured.', samples: [{ value: all.length }] },
      {
        name: 'ems_meter_power_kw',
        type: 'gauge',
        help: "A meter's current demand in kW: a power meter's last reading, an energy meter's mean over its last two readings.",
        samples: all.filter((meter) => demand.has(meter.id)).map((meter) => ({ labels: labels(meter), value: demand.get(meter.id)! })),
      },
      {
        name: 'ems_meter_energy_kwh_total',
        type: 'counter',
        help: "A meter's energy in kWh over every stored day (the sum of its 15-minute intervals, as the energy API counts it).",
        samples: all.map((meter) => ({
          labels: labels(meter),
          value: round(figures.totals('1970-01-01', until, { meterId: meter.id }).kwh, 3),
        })),
      },
      ...jobFamilies(this.sources.jobs?.list() ?? []),
      ...faultRuleFamilies(this.sources.faultRules?.stats),
    ];
  }
}

/** The periodic jobs: a scraper alerts on a job whose last start is too old, or whose failures grow. */
function jobFamilies(jobs: JobView[]): Family[] {
  const seconds = (ms: number | null) => (ms === null ? NaN : ms / 1000);
  const per = (value: (job: JobView) => number) => jobs.map((job) => ({ labels: { job: job.name, owner: job.owner }, value: value(job) }));
  return [
    { name: 'ems_job_runs_total', type: 'counter', help: 'Runs of each periodic job since the service started.', samples: per((job) => job.runs) },
    { name: 'ems_job_failures_total', type: 'counter', help: 'Runs of each periodic job that ended in an error.', samples: per((job) => job.failures) },
    { name: 'ems_job_running', type: 'gauge', help: 'The job is running now (1) or not (0).', samples: per((job) => (job.running ? 1 : 0)) },
    {
      name: 'ems_job_last_start_timestamp_seconds',
      type: 'gauge',
      help: 'When the job last started, Unix time (NaN: not yet).',
      unit: 'seconds',
      samples: per((job) => seconds(job.lastStartedAt)),
    },
    {
      name: 'ems_job_last_duration_seconds',
      type: 'gauge',
      help: 'How long its last finished run took (NaN: none finished, or not measured).',
      unit: 'seconds',
      samples: per((job) => seconds(job.lastDurationMs)),
    },
    {
      name: 'ems_job_next_run_timestamp_seconds',
      type: 'gauge',
      help: 'When the job runs next, Unix time (NaN: not scheduled, or running now).',
      unit: 'seconds',
      samples: per((job) => seconds(job.nextAt)),
    },
  ];
}

/** The rule engine: evaluations since start, the seconds they took (the gateway read excluded), the runners it steps. */
function faultRuleFamilies(stats: { evaluations: number; seconds: number; runners: number } | undefined): Family[] {
  if (!stats) return [];
  return [
    {
      name: 'ems_fdd_evaluations_total',
      type: 'counter',
      help: 'Fault-rule evaluations (one per collection) since the service started.',
      samples: [{ value: stats.evaluations }],
    },
    {
      name: 'ems_fdd_evaluation_seconds_total',
      type: 'counter',
      help: 'Seconds the fault-rule evaluations took, the gateway read excluded.',
      unit: 'seconds',
      samples: [{ value: round(stats.seconds, 6) }],
    },
    { name: 'ems_fdd_rule_runners', type: 'gauge', help: 'Rule and equipment pairs the last evaluation stepped.', samples: [{ value: stats.runners }] },
  ];
}
