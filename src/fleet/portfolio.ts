// The portfolio reads: health per site, the EUI ranking, one alert list across sites, a site's meters. Every read is
// limited to the sites the user may see (`sites` null = all). All figures come from small per-site tables the ingest
// keeps current (sites, site_day_counts, site_months), never from a scan of the interval partitions.
import type pg from 'pg';
import { FleetError } from './errors.ts';
import { completeOn, EUI_KWH_SET, type KeptEuiRow, keptEuiPage, MIN_COMPLETENESS, NOT_ENERGY } from './portfolioKept.ts';
import type { SiteHealth } from './schema.ts';

export type SiteHealthRow = {
  id: string;
  /** The site's name at the fleet: the one given at enrolment. */
  name: string;
  /** The name the box gives itself (its site settings), shown beside; null until its first metadata. */
  boxName: string | null;
  /** The install id of the box that is the site (null until a box with one has sent). */
  installId: string | null;
  status: 'ok' | 'stale' | 'refusing' | 'clock' | 'revoked' | 'never';
  lastContactAt: string | null;
  /** Seconds between now and the newest interval the fleet holds: "connected" is not health, fresh data is. */
  syncLagSec: number | null;
  unsentRows: number | null;
  clockSkewSec: number | null;
  /** Share of yesterday's (UTC) 15-minute intervals stored, over the site's declared meters. */
  completeness: number | null;
  version: string | null;
  lastBackupAgeSec: number | null;
  lastRefusal: string | null;
  openAlerts: number;
  /** healthy / warning / stale by the rules of HEALTH_RULES (docs/fleet.md), with the reasons that set it. */
  grade: HealthGrade;
  reasons: HealthReason[];
};

export type HealthGrade = 'healthy' | 'warning' | 'stale';
export type HealthReason = 'never' | 'revoked' | 'lag' | 'refusing' | 'clock' | 'skew' | 'completeness' | 'backup';

/** Data older than this makes a site "stale". */
const STALE_SEC = 3600;

/** The thresholds of the health grade; docs/fleet.md states them. */
export const HEALTH_RULES = {
  /** Newest interval older than this (or none): stale. */
  staleLagSec: STALE_SEC,
  /** Yesterday's intervals below this share: warning. */
  minCompleteness: MIN_COMPLETENESS,
  /** Clock difference beyond this either way: warning (rows > 15 min ahead are quarantined and raise the clock alarm). */
  maxClockSkewSec: 300,
  /** No good backup for longer than this (or none reported): warning. */
  maxBackupAgeSec: 48 * 3600,
} as const;

/**
 * Stale: the fleet holds no recent data (never sent, revoked, or the newest interval over an hour old), whatever the
 * connection says. Warning: the data is recent but something will make it wrong or lost (batches refused, clock
 * alarm or skew, yesterday incomplete, no recent backup). Healthy: none of these.
 */
export function gradeOf(row: Omit<SiteHealthRow, 'grade' | 'reasons'>): { grade: HealthGrade; reasons: HealthReason[] } {
  const stale: HealthReason[] = [];
  if (row.status === 'revoked') stale.push('revoked');
  else if (row.status === 'never') stale.push('never');
  else if (row.syncLagSec === null || row.syncLagSec > HEALTH_RULES.staleLagSec) stale.push('lag');
  const warn: HealthReason[] = [];
  if (row.status === 'revoked' || row.status === 'never') return { grade: 'stale', reasons: stale };
  if (row.lastRefusal) warn.push('refusing');
  if (row.status === 'clock') warn.push('clock');
  if (row.clockSkewSec !== null && Math.abs(row.clockSkewSec) > HEALTH_RULES.maxClockSkewSec) warn.push('skew');
  if (row.completeness !== null && row.completeness < HEALTH_RULES.minCompleteness) warn.push('completeness');
  if (row.lastBackupAgeSec === null || row.lastBackupAgeSec > HEALTH_RULES.maxBackupAgeSec) warn.push('backup');
  const reasons = [...stale, ...warn];
  return { grade: stale.length > 0 ? 'stale' : warn.length > 0 ? 'warning' : 'healthy', reasons };
}

export async function siteHealth(pool: pg.Pool, sites: string[] | null, now = Date.now()): Promise<SiteHealthRow[]> {
  const result = await pool.query<{
    id: string;
    name: string;
    box_name: string | null;
    install_id: string | null;
    revoked_at: Date | null;
    last_contact_at: Date | null;
    latest_interval_at: Date | null;
    clock_skew_ms: number | null;
    health: SiteHealth | null;
    last_refusal: string | null;
    meters: string;
    yesterday_rows: number | null;
    clock_alarm: boolean;
    open_alerts: string;
  }>(
    `select s.id, s.name, s.box_name, s.install_id, s.revoked_at, s.last_contact_at, s.latest_interval_at, s.clock_skew_ms, s.health, s.last_refusal,
       s.meter_count as meters,
       (select c.rows from site_day_counts c where c.site_id = s.id and c.day = ($2::timestamptz at time zone 'UTC')::date - 1) as yesterday_rows,
       exists (select 1 from fleet_alarms a where a.site_id = s.id and a.cleared_at is null and a.kind = 'site_clock') as clock_alarm,
       (select count(*) from site_alerts a where a.site_id = s.id and a.status <> 'resolved') as open_alerts
     from sites s where ($1::uuid[] is null or s.id = any($1::uuid[])) order by s.name, s.id`,
    [sites, new Date(now)],
  );
  return result.rows.map((row) => {
    const facts = factsOf(
      {
        revoked: row.revoked_at !== null,
        contacted: row.last_contact_at !== null,
        latestMs: row.latest_interval_at?.getTime() ?? null,
        skewMs: row.clock_skew_ms,
        lastBackupAt: row.health?.lastBackupAt ?? null,
        refusing: row.last_refusal !== null,
        meters: Number(row.meters),
        yesterdayRows: row.yesterday_rows,
        clockAlarm: row.clock_alarm,
      },
      now,
    );
    const health = {
      id: row.id,
      name: row.name,
      boxName: row.box_name,
      installId: row.install_id,
      status: facts.status,
      lastContactAt: row.last_contact_at?.toISOString() ?? null,
      syncLagSec: facts.syncLagSec,
      unsentRows: row.health?.unsentRows ?? null,
      clockSkewSec: facts.clockSkewSec,
      completeness: facts.completeness,
      version: row.health?.version ?? null,
      lastBackupAgeSec: facts.lastBackupAgeSec,
      lastRefusal: row.last_refusal,
      openAlerts: Number(row.open_alerts),
    };
    return { ...health, ...gradeOf(health) };
  });
}

/** What a site's status and grade are made of, as the sites row and its small tables hold it. */
type HealthInputs = {
  revoked: boolean;
  contacted: boolean;
  latestMs: number | null;
  skewMs: number | null;
  lastBackupAt: string | null;
  refusing: boolean;
  meters: number;
  yesterdayRows: number | null;
  clockAlarm: boolean;
};

/** The status and the figures the grade is judged on: one rule for the whole list and for a page's rows. */
function factsOf(input: HealthInputs, now: number): Pick<SiteHealthRow, 'status' | 'syncLagSec' | 'clockSkewSec' | 'completeness' | 'lastBackupAgeSec'> {
  // Never below 0: a box whose clock is ahead sends intervals up to the quarantine's 15 minutes after the fleet's now.
  const lag = input.latestMs !== null ? Math.max(0, Math.round((now - input.latestMs) / 1000)) : null;
  const backup = input.lastBackupAt ? Date.parse(input.lastBackupAt) : null;
  const status: SiteHealthRow['status'] = input.revoked
    ? 'revoked'
    : !input.contacted
      ? 'never'
      : input.refusing
        ? 'refusing'
        : input.clockAlarm
          ? 'clock'
          : lag === null || lag > STALE_SEC
            ? 'stale'
            : 'ok';
  const meters = input.meters;
  return {
    status,
    syncLagSec: lag,
    clockSkewSec: input.skewMs === null ? null : Math.round(input.skewMs / 1000),
    completeness: meters > 0 && input.yesterdayRows !== null ? Math.min(1, input.yesterdayRows / (meters * 96)) : meters > 0 ? 0 : null,
    lastBackupAgeSec: backup === null ? null : Math.round((now - backup) / 1000),
  };
}

/**
 * The grade of every visible site in SQL, from its own row alone: the same rules as gradeOf (HEALTH_RULES; the test
 * compares them on every page row). 0 = stale, 1 = warning, 2 = healthy. The grade is not a stored column: lag,
 * yesterday's completeness and the backup's age move with the clock, so a grade written by the ingest would stay
 * "healthy" for exactly the site that stopped sending. What the ingest keeps on the row is what the grade is judged on
 * (latest_interval_at, last_refusal, clock_skew_ms, and since fleet migration 0006 the open clock alarm, the last
 * backup's time and yesterday's completeness as of its last batch: portfolioKept.ts), so the ranking is one scan of
 * `sites` with no join and no JSON (issue 55 round 8; before, two hash joins and a JSON field cast per site: 26 → 4 ms
 * at 5,000 sites). A page on another UTC day than a site's last batch counts that site's yesterday as before.
 */
const GRADED_SITES = `
  select s.id, s.name,
    case when s.revoked_at is not null or s.last_contact_at is null or s.latest_interval_at is null or s.latest_interval_at <= $4::timestamptz then 0
         when s.last_refusal is not null or s.clock_alarm or s.clock_skew_ms >= $6::int or s.clock_skew_ms <= -$6::int
           or not (case when s.yday_on = $3::date then s.yday_ok else ${completeOn('s', '$2')} end)
           or s.last_backup_at is null or s.last_backup_at <= $5::timestamptz then 1
         else 2 end as grade
  from sites s
  where ($1::uuid[] is null or s.id = any($1::uuid[]))`;

/**
 * GRADED_SITES' parameters after the site list: the clock, its UTC day, and the thresholds as times (and the skew's as
 * ms), each the exact equivalent of the rule in seconds: `round(age in s) > N` is `age ≥ N + 0.5 s` (round half up).
 */
function gradeParams(now: number): [Date, string, Date, Date, number] {
  return [
    new Date(now),
    new Date(now).toISOString().slice(0, 10),
    new Date(now - (HEALTH_RULES.staleLagSec + 0.5) * 1000),
    new Date(now - (HEALTH_RULES.maxBackupAgeSec + 0.5) * 1000),
    (HEALTH_RULES.maxClockSkewSec + 0.5) * 1000,
  ];
}

const GRADES: HealthGrade[] = ['stale', 'warning', 'healthy'];

/** One page of the ranked list (stale, warning, healthy; then name, id) and the whole list's count per grade. */
async function rankedHealthPage(
  pool: pg.Pool,
  sites: string[] | null,
  now: number,
  page: ListPage,
): Promise<{ ids: string[]; counts: Record<HealthGrade, number> }> {
  // The counts per grade (one pass), and the page's ids in order: a top-N sort of the narrow rows (no window over all).
  const result = await pool.query<{ grade: number | null; n: string | null; ids: string[] | null }>(
    `with g as materialized (${GRADED_SITES})
     select grade, count(*) as n, null::uuid[] as ids from g group by grade
     union all
     select null, null, (select array_agg(p.id order by p.grade, p.name, p.id) from (select id, grade, name from g order by grade, name, id limit $7 offset $8) p)`,
    [sites, ...gradeParams(now), page.pageSize, (page.page - 1) * page.pageSize],
  );
  const counts: Record<HealthGrade, number> = { stale: 0, warning: 0, healthy: 0 };
  let ids: string[] = [];
  for (const row of result.rows) {
    if (row.grade !== null) counts[GRADES[row.grade]!] = Number(row.n);
    else ids = row.ids ?? [];
  }
  return { ids, counts };
}

/** A page of a list: which one, how many a page, and how many rows the whole list has. */
export type ListPage = { page: number; pageSize: number };

const GRADE_ORDER: Record<HealthGrade, number> = { stale: 0, warning: 1, healthy: 2 };

/** Rows in the health list's order: stale, warning, healthy, keeping the given order (name, id) within a grade. */
export function byGrade<T extends { grade: HealthGrade }>(rows: T[]): T[] {
  return rows.sort((a, b) => GRADE_ORDER[a.grade] - GRADE_ORDER[b.grade]);
}

/**
 * The health list a page at a time, ranked on the server (issue 55): stale sites first, then warnings, then healthy
 * ones; within a grade by name, then id (a stable order: the same page twice gives the same sites). `counts` are the
 * whole list's grades (the screen's totals), `site` limits the list to that one site (a site's own page).
 */
export async function siteHealthPage(
  pool: pg.Pool,
  sites: string[] | null,
  query: ListPage & { site?: string },
  now = Date.now(),
): Promise<{ items: SiteHealthRow[]; total: number; page: number; pageSize: number; counts: Record<HealthGrade, number> }> {
  const visible = query.site === undefined ? sites : sites === null || sites.includes(query.site) ? [query.site] : [];
  // The page ranked in SQL; the page's rows in full (their open alerts counted).
  const { ids, counts } = await rankedHealthPage(pool, visible, now, query);
  const full = ids.length > 0 ? await siteHealth(pool, ids, now) : [];
  const byId = new Map(full.map((row) => [row.id, row]));
  // A site revoked or renamed between the two reads keeps its place on this page; its row is as read second.
  const items = ids.flatMap((id) => byId.get(id) ?? []);
  return { items, total: counts.stale + counts.warning + counts.healthy, page: query.page, pageSize: query.pageSize, counts };
}

export type EuiRow = {
  id: string;
  name: string;
  floorAreaM2: number | null;
  /** kWh/m²·year over the last 12 complete months, all fuels (water excluded) and per commodity. */
  eui: number | null;
  euiLastYear: number | null;
  /** eui / euiLastYear - 1, or null when either is missing. */
  change: number | null;
  byCommodity: Record<string, { eui: number | null; euiLastYear: number | null; kwh: number; kwhLastYear: number }>;
  rank: number | null;
};

/** A commodity's sums over `m` (site_months) against `b.this_month`: the last 12 complete months, and the 12 before. */
const EUI_SUMS = `coalesce(sum(m.value) filter (where m.month >= b.this_month - interval '12 months'), 0) as cur,
  sum(m.value) filter (where m.month < b.this_month - interval '12 months') as prev`;

/**
 * Keeps a site's EUI sums (site_eui) for the month of `now`, in the ingest's transaction: after a batch wrote the
 * monthly totals of a complete month, or when the site's sums are of another month (the month turned since). Three
 * statements, once a day or month per site; the ranking then reads two rows per site.
 */
export async function refreshSiteEui(client: pg.PoolClient, siteId: string, now: number): Promise<void> {
  const params = [siteId, new Date(now)];
  const month = `date_trunc('month', $2::timestamptz at time zone 'UTC')::date`;
  await client.query('delete from site_eui where site_id = $1', [siteId]);
  await client.query(
    `insert into site_eui (site_id, commodity, cur, prev)
     select m.site_id, m.commodity, ${EUI_SUMS} from site_months m, (select ${month} as this_month) b
     where m.site_id = $1 and m.month >= b.this_month - interval '24 months' and m.month < b.this_month
     group by m.site_id, m.commodity`,
    params,
  );
  await client.query(`update sites set eui_month = ${month}, ${EUI_KWH_SET} where id = $1`, params);
}

/**
 * Every site whose EUI sums are not of the month of `now` brought up to it in one pass (three statements over all sites):
 * what the ingest does site by site as batches arrive, for sites made or restored outside the ingest (the benchmark's).
 */
export async function refreshAllSiteEui(pool: pg.Pool, now: number): Promise<number> {
  const month = `date_trunc('month', $1::timestamptz at time zone 'UTC')::date`;
  const params = [new Date(now)];
  const stale = `select id from sites where eui_month is distinct from ${month}`;
  await pool.query(`delete from site_eui where site_id in (${stale})`, params);
  await pool.query(
    `insert into site_eui (site_id, commodity, cur, prev)
     select m.site_id, m.commodity, ${EUI_SUMS} from site_months m, (select ${month} as this_month) b
     where m.site_id in (${stale}) and m.month >= b.this_month - interval '24 months' and m.month < b.this_month
     group by m.site_id, m.commodity`,
    params,
  );
  return (await pool.query(`update sites set eui_month = ${month}, ${EUI_KWH_SET} where eui_month is distinct from ${month}`, params)).rowCount ?? 0;
}

export async function euiRanking(pool: pg.Pool, sites: string[] | null, now = Date.now()): Promise<EuiRow[]> {
  const result = await pool.query<{
    id: string;
    name: string;
    floor_area_m2: number | null;
    commodity: string | null;
    cur: number | null;
    prev: number | null;
  }>(
    // Each site's sums as the ingest keeps them (site_eui, for the month in sites.eui_month); a site whose sums are of
    // another month (none sent since the month turned, or none yet) from its monthly totals, as before migration 0004.
    `with b as (select date_trunc('month', $2::timestamptz at time zone 'UTC')::date as this_month),
     vis as (select s.id, s.name, s.floor_area_m2, s.eui_month is not distinct from b.this_month as kept from sites s, b
       where s.revoked_at is null and ($1::uuid[] is null or s.id = any($1::uuid[]))),
     t as (
       select e.site_id, e.commodity, e.cur, e.prev from site_eui e join vis on vis.id = e.site_id and vis.kept
       union all
       select m.site_id, m.commodity, ${EUI_SUMS}
       from site_months m join vis on vis.id = m.site_id and not vis.kept, b
       where m.month >= b.this_month - interval '24 months' and m.month < b.this_month
       group by m.site_id, m.commodity
     )
     select vis.id, vis.name, vis.floor_area_m2, t.commodity, t.cur, t.prev from vis left join t on t.site_id = vis.id`,
    [sites, new Date(now)],
  );
  const bySite = new Map<string, EuiRow & { total: number; totalPrev: number; anyPrev: boolean }>();
  for (const row of result.rows) {
    let site = bySite.get(row.id);
    if (!site) {
      site = {
        id: row.id,
        name: row.name,
        floorAreaM2: row.floor_area_m2,
        eui: null,
        euiLastYear: null,
        change: null,
        byCommodity: {},
        rank: null,
        total: 0,
        totalPrev: 0,
        anyPrev: false,
      };
      bySite.set(row.id, site);
    }
    if (row.commodity === null) continue;
    const cur = row.cur ?? 0;
    const prev = row.prev ?? 0;
    const area = row.floor_area_m2;
    site.byCommodity[row.commodity] = {
      kwh: cur,
      kwhLastYear: prev,
      eui: area ? cur / area : null,
      euiLastYear: area && row.prev !== null ? prev / area : null,
    };
    if (!NOT_ENERGY.has(row.commodity)) {
      site.total += cur;
      site.totalPrev += prev;
      site.anyPrev ||= row.prev !== null;
    }
  }
  const rows = [...bySite.values()].map(({ total, totalPrev, anyPrev, ...site }) => {
    const area = site.floorAreaM2;
    const hasData = Object.keys(site.byCommodity).length > 0;
    site.eui = area && hasData ? total / area : null;
    site.euiLastYear = area && anyPrev ? totalPrev / area : null;
    site.change = site.eui !== null && site.euiLastYear ? site.eui / site.euiLastYear - 1 : null;
    return site;
  });
  // Highest intensity first: the sites most out of line lead. Sites without a floor area or data are listed last, unranked.
  rows.sort((a, b) => (b.eui ?? -1) - (a.eui ?? -1) || a.name.localeCompare(b.name));
  let rank = 0;
  for (const row of rows) if (row.eui !== null) row.rank = ++rank;
  return rows;
}

/**
 * Each visible site's sums (as euiRanking reads them: site_eui, or its monthly totals when those are of another month)
 * and the all-fuels figures, water left out (a site with water alone has data: an EUI of 0; a site with none, no EUI). The same rules as euiRanking, in SQL (test/fleet/portfolio.test.ts compares them).
 */
const EUI_SITES = `with b as (select date_trunc('month', $2::timestamptz at time zone 'UTC')::date as this_month),
     vis as (select s.id, s.name, s.floor_area_m2, s.eui_month is not distinct from b.this_month as kept from sites s, b
       where s.revoked_at is null and ($1::uuid[] is null or s.id = any($1::uuid[]))),
     t as materialized (
       select e.site_id, e.commodity, e.cur, e.prev from site_eui e join vis on vis.id = e.site_id and vis.kept
       union all
       select m.site_id, m.commodity, ${EUI_SUMS}
       from site_months m join vis on vis.id = m.site_id and not vis.kept, b
       where m.month >= b.this_month - interval '24 months' and m.month < b.this_month
       group by m.site_id, m.commodity
     ),
     a as (
       select t.site_id,
         coalesce(sum(t.cur) filter (where t.commodity <> all($3::text[])), 0) as total,
         coalesce(sum(t.prev) filter (where t.commodity <> all($3::text[])), 0) as total_prev,
         coalesce(bool_or(t.prev is not null) filter (where t.commodity <> all($3::text[])), false) as any_prev
       from t group by t.site_id
     ),
     e as materialized (
       select vis.id, vis.name, vis.floor_area_m2, a.total / nullif(vis.floor_area_m2, 0) as eui,
         case when a.any_prev then a.total_prev / nullif(vis.floor_area_m2, 0) end as eui_prev
       from vis left join a on a.site_id = vis.id
     )`;

/**
 * The EUI ranking a page at a time (issue 55), nothing cached: ranked over every site the caller may see (rank 1 = the
 * highest EUI; sites without a floor area or data last, unranked; ties by name, then id), then paged; `maxEui` is the
 * whole list's highest, so a page's bars compare with the other pages'. When every visible site's figures are kept for
 * this month (round 8: sites.eui, fleet migration 0006), the page is an index range scan of its own rows
 * (keptEuiPage); otherwise (the month just turned) it is ranked in SQL from the sums (rankedEuiRows). Only the page's
 * sites are built in full (their commodities).
 */
export async function euiPage(
  pool: pg.Pool,
  sites: string[] | null,
  query: ListPage,
  now = Date.now(),
): Promise<{ items: EuiRow[]; total: number; page: number; pageSize: number; maxEui: number | null }> {
  const from = (query.page - 1) * query.pageSize;
  const kept = await keptEuiPage(pool, sites, now, from, query.pageSize);
  const { rows, total } = kept.stale === 0 ? kept : await rankedEuiRows(pool, sites, now, from, query.pageSize);
  const items: EuiRow[] = [];
  for (const row of rows) {
    if (row.id === null) continue;
    let site = items.at(-1);
    if (site?.id !== row.id) {
      const eui = row.eui;
      const euiLastYear = row.eui_prev;
      site = {
        id: row.id,
        name: row.name,
        floorAreaM2: row.floor_area_m2,
        eui,
        euiLastYear,
        change: eui !== null && euiLastYear ? eui / euiLastYear - 1 : null,
        byCommodity: {},
        // The page's rows come in the ranking's order, sites without an EUI last: the place is the rank.
        rank: eui === null ? null : from + items.length + 1,
      };
      items.push(site);
    }
    if (row.commodity === null) continue;
    const area = row.floor_area_m2;
    site.byCommodity[row.commodity] = {
      kwh: row.cur ?? 0,
      kwhLastYear: row.prev ?? 0,
      eui: area ? (row.cur ?? 0) / area : null,
      euiLastYear: area && row.prev !== null ? row.prev / area : null,
    };
  }
  return { items, total, page: query.page, pageSize: query.pageSize, maxEui: rows[0]?.max_eui ?? null };
}

/** A page of the ranking ranked in SQL from each site's sums (EUI_SITES): every visible site ranked, then cut. */
async function rankedEuiRows(pool: pg.Pool, sites: string[] | null, now: number, from: number, size: number): Promise<{ rows: KeptEuiRow[]; total: number }> {
  const result = await pool.query<KeptEuiRow & { total_rows: string }>(
    `${EUI_SITES},
     m as (select count(*) as total_rows, max(eui) as max_eui from e),
     p as (select e.*, row_number() over (order by e.eui desc nulls last, e.name, e.id) as place from e order by place limit $5 offset $4)
     select m.total_rows, m.max_eui, p.id, p.name, p.floor_area_m2, p.eui, p.eui_prev, t.commodity, t.cur, t.prev
     from m left join p on true left join t on t.site_id = p.id order by p.place, t.commodity`,
    [sites, new Date(now), [...NOT_ENERGY], from, size],
  );
  return { rows: result.rows, total: Number(result.rows[0]?.total_rows ?? 0) };
}

export type PortfolioAlert = {
  siteId: string;
  siteName: string;
  source: 'site' | 'fleet';
  id: string;
  title: string;
  level: string;
  status: string;
  occurredAt: string;
};

export async function alertList(
  pool: pg.Pool,
  sites: string[] | null,
  page: { page: number; pageSize: number; includeResolved: boolean },
): Promise<{ items: PortfolioAlert[]; total: number; page: number; pageSize: number }> {
  // Two index scans from the newest (site_alerts_open_time, fleet_alarms_open_time; migration 0004), each cut at the
  // end of the page, merged: a page reads at most page × pageSize rows of each, not every open alert (issue 55). Ties
  // at one time go by site, then source, then the alert's number, so the order is the same whatever the page.
  const filter = `($1::uuid[] is null or a.site_id = any($1::uuid[]))`;
  const open = (condition: string) => (page.includeResolved ? '' : `and ${condition}`);
  const union = `
    (select a.site_id, 'site' as source, 0 as src, a.alert_id as num, a.alert_id::text as id, a.title, a.level, a.status, a.occurred_at
      from site_alerts a where ${filter} ${open("a.status <> 'resolved'")} order by a.occurred_at desc, a.site_id, a.alert_id limit $2)
    union all
    (select a.site_id, 'fleet', 1, a.id, 'fleet-' || a.id, a.message, 'warning', case when a.cleared_at is null then 'active' else 'resolved' end, a.raised_at
      from fleet_alarms a where ${filter} ${open('a.cleared_at is null')} order by a.raised_at desc, a.site_id, a.id limit $2)`;
  const [result, counted] = await Promise.all([
    pool.query<{
      site_id: string;
      name: string;
      source: 'site' | 'fleet';
      id: string;
      title: string;
      level: string;
      status: string;
      occurred_at: Date;
    }>(
      `select u.*, s.name from (${union}) u join sites s on s.id = u.site_id
       order by u.occurred_at desc, u.site_id, u.src, u.num limit $3 offset $4`,
      [sites, page.page * page.pageSize, page.pageSize, (page.page - 1) * page.pageSize],
    ),
    pool.query<{ total: string }>(
      `select (select count(*) from site_alerts a where ${filter} ${open("a.status <> 'resolved'")})
         + (select count(*) from fleet_alarms a where ${filter} ${open('a.cleared_at is null')}) as total`,
      [sites],
    ),
  ]);
  return {
    items: result.rows.map((r) => ({
      siteId: r.site_id,
      siteName: r.name,
      source: r.source,
      id: r.id,
      title: r.title,
      level: r.level,
      status: r.status,
      occurredAt: r.occurred_at.toISOString(),
    })),
    total: Number(counted.rows[0]!.total),
    page: page.page,
    pageSize: page.pageSize,
  };
}

export async function siteMeters(pool: pg.Pool, sites: string[] | null, siteId: string, now = Date.now()) {
  if (sites && !sites.includes(siteId)) throw new FleetError('not_found', 'no such site');
  const site = await pool.query('select 1 from sites where id = $1', [siteId]);
  if (site.rowCount === 0) throw new FleetError('not_found', 'no such site');
  const result = await pool.query<{
    key: string;
    name: string;
    commodity: string;
    unit: string;
    area: string | null;
    site_total: number;
    last30: number | null;
    kwh30: number | null;
    cost30: number | null;
  }>(
    `select m.key, m.name, m.commodity, m.unit, m.area, m.site_total,
       (select sum(d.value) from day_rollups d where d.site_id = m.site_id and d.meter_key = m.key and d.day >= ($2::timestamptz at time zone 'UTC')::date - 30) as last30,
       (select sum(case when m.unit = 'kWh' then d.value else d.kwh end) from day_rollups d where d.site_id = m.site_id and d.meter_key = m.key
          and d.day >= ($2::timestamptz at time zone 'UTC')::date - 30) as kwh30,
       (select sum(d.cost) from day_rollups d where d.site_id = m.site_id and d.meter_key = m.key and d.day >= ($2::timestamptz at time zone 'UTC')::date - 30) as cost30
     from site_meters m where m.site_id = $1 order by m.key`,
    [siteId, new Date(now)],
  );
  return result.rows.map((r) => ({
    key: r.key,
    name: r.name,
    commodity: r.commodity,
    unit: r.unit,
    area: r.area,
    siteTotal: r.site_total === 1,
    last30Days: r.last30,
    /** The same days in kWh: a gas meter by the kWh its site sent; null for water (not energy) and kWh-less gas. */
    last30DaysKwh: r.kwh30,
    last30DaysCost: r.cost30,
  }));
}
