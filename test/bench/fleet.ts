// Benchmark of the fleet service (issue 43) on this box, PostgreSQL beside it (a private, durable cluster: fsync on).
// 1. Ingest: SITES sites send bounded batches (14,400 interval rows = 150 meter days, as the site box sends them) over
//    real HTTP, INGEST_CONCURRENCY at a time; rows/s against the 20,000 target, and against a same-run baseline: the
//    same rows written by one INSERT … SELECT unnest per batch straight into PostgreSQL (no HTTP, JSON or checks).
// 2. Portfolio: PORTFOLIO_SITES sites × 13 months of day rollups, monthly totals, alerts and day counts generated in
//    PostgreSQL, then the health, EUI and alert pages asked REQUESTS times each: p50/p99 against the 200 ms target.
// Prints figures; asserts nothing. BENCH_SITES, BENCH_BATCHES, BENCH_PORTFOLIO_SITES scale it.
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { addUser } from '../../src/fleet/app.ts';
import { createEnrolmentCode } from '../../src/fleet/enrolment.ts';
import type { Batch } from '../../src/fleet/schemas.ts';
import { startFleet, startFleetDatabaseWith } from '../helpers/fleet.ts';

const SITES = Number(process.env.BENCH_SITES ?? 8);
const BATCHES = Number(process.env.BENCH_BATCHES ?? 4);
const METERS_PER_SITE = 150;
const INGEST_CONCURRENCY = 4;
const PORTFOLIO_SITES = Number(process.env.BENCH_PORTFOLIO_SITES ?? 500);
const REQUESTS = 100;

const cluster = await startFleetDatabaseWith({ durable: true });
const fleet = await startFleet(cluster.url, { maxConcurrentIngests: INGEST_CONCURRENCY });
const sql = new pg.Pool({ connectionString: cluster.url, max: 4 });

function batchOf(after: number, dayIndex: number, firstDay: number): Batch {
  // One batch: 150 meters × one day of 96 intervals (what a site sends per batch in a catch-up).
  const intervals: NonNullable<Batch['intervals']> = [];
  const days: NonNullable<Batch['days']> = [];
  let seq = after;
  const dayStart = firstDay + dayIndex * 86_400_000;
  for (let m = 1; m <= METERS_PER_SITE; m++) {
    seq++;
    let total = 0;
    for (let i = 0; i < 96; i++) {
      const value = Math.round((0.5 + ((m * 7 + i) % 13) / 10) * 10_000) / 10_000;
      total += value;
      intervals.push({ meter: String(m), start: new Date(dayStart + i * 900_000).toISOString(), value, quality: 'measured', seq });
    }
    days.push({ meter: String(m), day: new Date(dayStart).toISOString().slice(0, 10), value: total, cost: total * 0.3, carbonKg: total * 0.4, seq });
  }
  return { sentAt: new Date().toISOString(), after, through: seq, intervals, days };
}

const meters = Array.from({ length: METERS_PER_SITE }, (_, i) => ({
  key: String(i + 1),
  name: `Meter ${i + 1}`,
  commodity: i === 1 ? 'gas' : 'electricity',
  unit: 'kWh',
  area: null,
  siteTotal: i < 2,
}));

async function enrolDirect(name: string): Promise<{ siteId: string; credential: string }> {
  const { code } = await createEnrolmentCode(fleet.db.pool, name);
  const response = await fetch(`${fleet.url}/api/fleet/enrol`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ code }),
  });
  return (await response.json()) as { siteId: string; credential: string };
}

// --- 1. Ingest ---------------------------------------------------------------------------------------------------
const firstDay = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth() - 2, 1);
const sites = await Promise.all(Array.from({ length: SITES }, (_, i) => enrolDirect(`Bench ${i}`)));
for (const site of sites) {
  const response = await fetch(`${fleet.url}/api/fleet/ingest`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${site.credential}` },
    body: JSON.stringify({ sentAt: new Date().toISOString(), after: 0, through: 0, site: { name: 'Bench', timezone: 'UTC', floorAreaM2: 5000 }, meters }),
  });
  if (response.status !== 200) throw new Error(`metadata: ${response.status} ${await response.text()}`);
}
// Bodies made before the clock starts: the client's JSON work must not count as the fleet's.
const work = sites.flatMap((site, s) =>
  Array.from({ length: BATCHES }, (_, b) => ({ site, s, b, body: JSON.stringify(batchOf(b * METERS_PER_SITE, b, firstDay)) })),
);
const perSite = new Map<number, typeof work>();
for (const item of work) perSite.set(item.s, [...(perSite.get(item.s) ?? []), item]);
const rowsTotal = work.length * METERS_PER_SITE * 96;
let busy = 0;
const started = performance.now();
const queues = [...perSite.values()];
await Promise.all(
  Array.from({ length: INGEST_CONCURRENCY }, async (_, worker) => {
    for (let q = worker; q < queues.length; q += INGEST_CONCURRENCY) {
      for (const item of queues[q]!) {
        for (;;) {
          const response = await fetch(`${fleet.url}/api/fleet/ingest`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${item.site.credential}` },
            body: item.body,
          });
          await response.arrayBuffer();
          if (response.status === 200) break;
          if (response.status !== 429) throw new Error(`ingest ${response.status}`);
          busy++;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }
    }
  }),
);
const ingestSec = (performance.now() - started) / 1000;

// Baseline: the same number of rows, one unnest INSERT per batch straight into PostgreSQL, same concurrency.
await sql.query(
  `create table baseline (site_id uuid, meter_key text, start timestamptz, value float8, quality text, seq bigint, primary key (site_id, meter_key, start))`,
);
const baseBatches = work.map((item) => batchOf(item.b * METERS_PER_SITE, item.b, firstDay));
const baseStarted = performance.now();
await Promise.all(
  Array.from({ length: INGEST_CONCURRENCY }, async (_, worker) => {
    for (let i = worker; i < baseBatches.length; i += INGEST_CONCURRENCY) {
      const rows = baseBatches[i]!.intervals!;
      await sql.query(
        `insert into baseline select $1, * from unnest($2::text[], $3::timestamptz[], $4::float8[], $5::text[], $6::bigint[]) on conflict do nothing`,
        [
          work[i]!.site.siteId,
          rows.map((r) => r.meter),
          rows.map((r) => r.start),
          rows.map((r) => r.value),
          rows.map((r) => r.quality),
          rows.map((r) => r.seq),
        ],
      );
    }
  }),
);
const baseSec = (performance.now() - baseStarted) / 1000;
const stored = (await sql.query('select count(*)::int as n from intervals')).rows[0].n as number;
const size = (
  await sql.query(
    `select pg_total_relation_size('intervals') + coalesce((select sum(pg_total_relation_size(inhrelid)) from pg_inherits where inhparent = 'intervals'::regclass), 0) as bytes`,
  )
).rows[0].bytes;
const ingestRate = rowsTotal / ingestSec;
console.log(
  JSON.stringify({
    ingest: {
      sites: SITES,
      batches: work.length,
      rowsPerBatch: METERS_PER_SITE * 96,
      rows: rowsTotal,
      stored,
      seconds: +ingestSec.toFixed(2),
      rowsPerSec: Math.round(ingestRate),
      targetRowsPerSec: 20_000,
      ratioToTarget: +(ingestRate / 20_000).toFixed(2),
      baselineRowsPerSec: Math.round(rowsTotal / baseSec),
      ratioToBaseline: +(baseSec / ingestSec).toFixed(2),
      turnedAway429: busy,
      bytesPerStoredRow: Math.round(Number(size) / stored),
    },
  }),
);

// --- 2. Portfolio -------------------------------------------------------------------------------------------------
const genStarted = performance.now();
// Sites, meters, 13 months of day rollups for their two total meters, monthly totals, alerts and day counts: generated
// in PostgreSQL (the ingest above showed the write path; here the reads are measured at 500 sites).
await sql.query(
  `insert into sites (name, credential_hash, floor_area_m2, last_contact_at, latest_interval_at, clock_skew_ms, health, meter_count)
   select 'Portfolio ' || g, md5(random()::text) || g, 1000 + g, now(), now() - interval '20 minutes', 0,
     jsonb_build_object('version', '0.1.0', 'unsentRows', 0, 'lastBackupAt', now() - interval '5 hours'), 200
   from generate_series(1, $1) g`,
  [PORTFOLIO_SITES],
);
await sql.query(
  `insert into site_meters (site_id, key, name, commodity, unit, area, site_total)
   select s.id, m::text, 'Meter ' || m, case when m = 2 then 'gas' else 'electricity' end, 'kWh', null, case when m <= 2 then 1 else 0 end
   from sites s, generate_series(1, 200) m where s.name like 'Portfolio %'`,
);
await sql.query(
  `insert into day_rollups (site_id, meter_key, day, value, cost, carbon_kg, seq)
   select s.id, m::text, d::date, 100 + random() * 50, 30, 40, 1
   from sites s, generate_series(1, 2) m, generate_series(current_date - 395, current_date - 1, interval '1 day') d where s.name like 'Portfolio %'`,
);
await sql.query(
  `insert into site_months (site_id, commodity, month, value, cost, carbon_kg, days)
   select d.site_id, m.commodity, date_trunc('month', d.day)::date, sum(d.value), sum(d.cost), sum(d.carbon_kg), count(*)
   from day_rollups d join site_meters m on m.site_id = d.site_id and m.key = d.meter_key and m.site_total = 1
   group by 1, 2, 3 on conflict do nothing`,
);
await sql.query(
  `insert into site_day_counts (site_id, day, rows) select s.id, d::date, 200 * 96 from sites s, generate_series(current_date - 395, current_date, interval '1 day') d
   where s.name like 'Portfolio %'`,
);
await sql.query(
  `insert into site_alerts (site_id, alert_id, title, level, status, occurred_at, seq)
   select s.id, a, 'Alert ' || a, 'warning', case when a % 4 = 0 then 'active' else 'resolved' end, now() - a * interval '1 hour', 1
   from sites s, generate_series(1, 40) a where s.name like 'Portfolio %'`,
);
await sql.query('analyze');
const genSec = (performance.now() - genStarted) / 1000;
const { token } = await addUser(fleet.db.pool, 'bench-admin', 'admin');

async function timed(path: string): Promise<{ p50: number; p99: number; max: number; bytes: number }> {
  const times: number[] = [];
  let bytes = 0;
  for (let i = 0; i < REQUESTS; i++) {
    const t0 = performance.now();
    const response = await fetch(`${fleet.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
    const body = await response.arrayBuffer();
    times.push(performance.now() - t0);
    if (response.status !== 200) throw new Error(`${path}: ${response.status}`);
    bytes = body.byteLength;
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => +times[Math.min(times.length - 1, Math.ceil(q * times.length) - 1)]!.toFixed(1);
  return { p50: at(0.5), p99: at(0.99), max: +times[times.length - 1]!.toFixed(1), bytes };
}
// Baseline for the pages: the cheapest authenticated route (the health of the fleet service itself, one SELECT 1).
const baseline = await timed('/api/fleet/health');
const pages = {
  health: await timed('/api/fleet/sites'),
  eui: await timed('/api/fleet/eui'),
  alerts: await timed('/api/fleet/alerts?pageSize=50'),
};
const dbBytes = (await sql.query('select pg_database_size(current_database()) as b')).rows[0].b;
console.log(
  JSON.stringify({
    portfolio: {
      sites: (await sql.query('select count(*)::int as n from sites')).rows[0].n,
      dayRollups: (await sql.query('select count(*)::int as n from day_rollups')).rows[0].n,
      alerts: (await sql.query('select count(*)::int as n from site_alerts')).rows[0].n,
      generateSec: +genSec.toFixed(1),
      databaseMiB: Math.round(Number(dbBytes) / 1048576),
      targetP99Ms: 200,
      baselineMs: baseline,
      pages: Object.fromEntries(
        Object.entries(pages).map(([name, t]) => [
          name,
          { ...t, p99RatioToTarget: +(t.p99 / 200).toFixed(2), p50RatioToBaseline: +(t.p50 / baseline.p50).toFixed(1) },
        ]),
      ),
    },
  }),
);

await sql.end();
await fleet.close();
cluster.destroy();
