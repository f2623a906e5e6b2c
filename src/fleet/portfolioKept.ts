// What the portfolio's pages rank by, kept on each site's own row (fleet migration 0006, issue 55 round 8) so that a
// page reads its own rows: the EUI ranking is an index range scan (`sites_eui_rank`), the health list one scan of
// `sites` with no join and no JSON. The ingest writes these in statements it makes anyway (refreshSiteEui; the cursor
// statement), so a sync costs no more round trips.
import type pg from 'pg';

/** Yesterday's share of intervals below which a site is a warning (HEALTH_RULES.minCompleteness in portfolio.ts). */
export const MIN_COMPLETENESS = 0.95;

/** Commodities that are not energy: kept out of the all-fuels EUI. */
export const NOT_ENERGY = new Set(['water']);
const ENERGY = `e.commodity <> all(array[${[...NOT_ENERGY].map((c) => `'${c}'`).join(', ')}]::text[])`;

/**
 * The site's all-fuels sums from its `site_eui` rows, as the ranking's rules read them (EUI_SITES in portfolio.ts):
 * `eui_kwh` null when the site has no sums at all (no EUI), 0 when it has water only; `eui_kwh_prev` only when one of
 * its energy commodities has a figure the year before. For an `update sites set …` (the row is `sites`).
 */
export const EUI_KWH_SET = `eui_kwh = (select case when count(*) > 0 then coalesce(sum(e.cur) filter (where ${ENERGY}), 0) end
    from site_eui e where e.site_id = sites.id),
  eui_kwh_prev = (select case when bool_or(e.prev is not null) filter (where ${ENERGY}) then coalesce(sum(e.prev) filter (where ${ENERGY}), 0) end
    from site_eui e where e.site_id = sites.id)`;

/**
 * What the health grade is judged on, for the ingest's cursor statement (`update sites set …`; its `$4` the batch's
 * health or null, `$6` whether the site-clock alarm is open after the batch, and `$7`, `$8` healthFactValues'): the
 * alarm, the last good backup, and yesterday's completeness (MIN_COMPLETENESS) as of this batch's UTC day. The counts
 * and the meter count are this transaction's (written by earlier statements of the batch).
 */
export const HEALTH_FACTS_SET = `clock_alarm = $6,
  last_backup_at = case when $4::jsonb is null then last_backup_at else $8::timestamptz end,
  yday_on = ($7::timestamptz at time zone 'UTC')::date,
  yday_ok = ${completeOn('sites', '$7')}`;

/**
 * HEALTH_FACTS_SET's `$7` and `$8`: the fleet's now, and the batch's last good backup as a time (parsed here, as the
 * health list's rows read it: a time the schema let through that PostgreSQL could not read never fails the batch).
 */
export function healthFactValues(health: { lastBackupAt?: string | null } | undefined, now: number): [Date, Date | null] {
  const backup = health?.lastBackupAt ? Date.parse(health.lastBackupAt) : Number.NaN;
  return [new Date(now), Number.isFinite(backup) ? new Date(backup) : null];
}

/** Yesterday (UTC, of `at`) complete for the site row `s`: no meters, or at least the share HEALTH_RULES asks. */
export function completeOn(s: string, at: string): string {
  return `(${s}.meter_count = 0 or least(1, coalesce((select c.rows from site_day_counts c where c.site_id = ${s}.id
      and c.day = (${at}::timestamptz at time zone 'UTC')::date - 1), 0)::float8 / (${s}.meter_count * 96)) >= ${MIN_COMPLETENESS})`;
}

export type KeptEuiRow = {
  id: string | null;
  name: string;
  floor_area_m2: number | null;
  eui: number | null;
  eui_prev: number | null;
  max_eui: number | null;
  commodity: string | null;
  cur: number | null;
  prev: number | null;
};

/**
 * One page of the ranking from the kept figures, with the visible count and how many visible sites' figures are not of
 * the month of `now` (`stale`; the page's rows are then not to be used: after the month turns, until each site's next
 * batch or the fleet's upkeep (every 15 minutes, upkeep.ts), the page is ranked from the sums instead, portfolio.ts). One statement: the
 * page's sites read in the index's order (EUI descending, sites without one last, then name and id), each with its
 * `site_eui` rows by their key; `max_eui` is the whole list's first. Rows in the page's order, a site's commodities together.
 */
export async function keptEuiPage(
  pool: pg.Pool,
  sites: string[] | null,
  now: number,
  from: number,
  size: number,
): Promise<{ rows: KeptEuiRow[]; total: number; stale: number }> {
  const visible = `s.revoked_at is null and ($1::uuid[] is null or s.id = any($1::uuid[]))`;
  const result = await pool.query<KeptEuiRow & { total: string; stale: string }>(
    `with st as (
       select count(*) as total,
         count(*) filter (where s.eui_month is distinct from date_trunc('month', $2::timestamptz at time zone 'UTC')::date) as stale
       from sites s where ${visible}
     ), p as (
       select s.id, s.name, s.floor_area_m2, s.eui, s.eui_kwh_prev / nullif(s.floor_area_m2, 0) as eui_prev
       from sites s where ${visible} order by s.eui desc nulls last, s.name, s.id limit $4 offset $3
     )
     select st.total, st.stale, p.*, (select s.eui from sites s where ${visible} order by s.eui desc nulls last, s.name, s.id limit 1) as max_eui,
       t.commodity, t.cur, t.prev
     from st left join p on true
       left join lateral (select e.commodity, e.cur, e.prev from site_eui e where e.site_id = p.id offset 0) t on true
     order by p.eui desc nulls last, p.name, p.id, t.commodity`,
    [sites, new Date(now), from, size],
  );
  const first = result.rows[0];
  return { rows: result.rows, total: Number(first?.total ?? 0), stale: Number(first?.stale ?? 0) };
}

/**
 * Every site's health facts worked out again from `health`, the open alarms and the day counts as of `now`: what the
 * ingest keeps at each batch, for sites made or changed outside it (the benchmark's); the migration fills the first two.
 */
export async function refreshHealthFacts(pool: pg.Pool, now: number): Promise<number> {
  const result = await pool.query(
    `update sites set last_backup_at = (health->>'lastBackupAt')::timestamptz,
       clock_alarm = exists (select 1 from fleet_alarms a where a.site_id = sites.id and a.kind = 'site_clock' and a.cleared_at is null),
       yday_on = ($1::timestamptz at time zone 'UTC')::date, yday_ok = ${completeOn('sites', '$1')}`,
    [new Date(now)],
  );
  return result.rowCount ?? 0;
}
