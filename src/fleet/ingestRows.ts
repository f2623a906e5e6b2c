// The row writers of one stored batch (issue 55, fewer statements per batch): the sequenced rows and the held rows of a
// batch go in ONE upsert per table, not one per kind. drizzle cannot say INSERT … SELECT FROM unnest(arrays), which
// sends a whole batch as a few array parameters (one round trip, no 65,535-parameter ceiling): raw SQL, as named
// statements (each pooled connection parses and plans them once, not at every sync).
import type pg from 'pg';
import type { Batch } from './schemas.ts';

type IntervalRow = NonNullable<Batch['intervals']>[number];
type DayRow = NonNullable<Batch['days']>[number];

/**
 * The held rows a batch's sequenced rows do not name: held rows go under the batch's `after`, below every sequenced row
 * of the batch, so where both name one row the sequenced one wins (as when the held rows were stored second).
 */
export function heldNotSequenced<T>(sequenced: T[], held: T[], key: (row: T) => string): T[] {
  if (held.length === 0 || sequenced.length === 0) return held;
  const named = new Set(sequenced.map(key));
  return held.filter((row) => !named.has(key(row)));
}

/**
 * Intervals, sequenced and held, in one statement: rows new to the fleet are inserted (their count goes to the site's
 * day counts, their newest start to `latest_interval_at`), stored rows are updated when the row is newer: a sequenced
 * row over a lower sequence, a held row (under `after`) over the held row before it where value or quality differ. A
 * held row never replaces a row stored above `after`. Returns the rows inserted or updated.
 */
export async function upsertIntervals(client: pg.PoolClient, siteId: string, rows: IntervalRow[], held: IntervalRow[]): Promise<number> {
  const all = [...rows, ...heldNotSequenced(rows, held, (r) => `${r.meter}\0${Date.parse(r.start)}`)];
  if (all.length === 0) return 0;
  const result = await client.query<{ written: string }>({
    name: 'fleet-upsert-intervals',
    text: `with u as (
       select * from unnest($2::text[], $3::timestamptz[], $4::float8[], $5::text[], $6::bigint[], $7::bool[]) as u(m, s, v, q, n, h)
     ), updated as (
       update intervals i set value = u.v, quality = u.q, seq = u.n from u
       where i.site_id = $1 and i.meter_key = u.m and i.start = u.s
         and case when u.h then i.seq <= u.n and (i.value <> u.v or i.quality <> u.q) else i.seq < u.n end
       returning 1
     ), written as (
       insert into intervals (site_id, meter_key, start, value, quality, seq)
       select $1, m, s, v, q, n from u
       on conflict (site_id, meter_key, start) do nothing
       returning start
     ), counted as (
       insert into site_day_counts (site_id, day, rows)
       select $1, (start at time zone 'UTC')::date, count(*) from written group by 2
       on conflict (site_id, day) do update set rows = site_day_counts.rows + excluded.rows
     ), latest as (
       update sites set latest_interval_at = greatest(latest_interval_at, (select max(start) from written)) where id = $1
     )
     select (select count(*) from written) + (select count(*) from updated) as written`,
    values: [
      siteId,
      all.map((r) => r.meter),
      all.map((r) => r.start),
      all.map((r) => r.value),
      all.map((r) => r.quality),
      all.map((r) => r.seq),
      all.map((_, i) => i >= rows.length),
    ],
  });
  return Number(result.rows[0]!.written);
}

/**
 * Day rows, sequenced and held, in one upsert (a row replaces a lower sequence, or the same sequence with other
 * figures: a held day row over the held one before it), then the monthly totals of the months it wrote. Returns the
 * rows written and their months ('YYYY-MM').
 */
export async function upsertDays(client: pg.PoolClient, siteId: string, rows: DayRow[], held: DayRow[]): Promise<{ written: number; months: string[] }> {
  const all = [...rows, ...heldNotSequenced(rows, held, (r) => `${r.meter}\0${r.day}`)];
  if (all.length === 0) return { written: 0, months: [] };
  const result = await client.query<{ day: string }>({
    name: 'fleet-upsert-days',
    text: `insert into day_rollups (site_id, meter_key, day, value, cost, carbon_kg, seq, kwh)
     select $1, * from unnest($2::text[], $3::date[], $4::float8[], $5::float8[], $6::float8[], $7::bigint[], $8::float8[])
     on conflict (site_id, meter_key, day) do update set value = excluded.value, cost = excluded.cost, carbon_kg = excluded.carbon_kg,
       seq = excluded.seq, kwh = excluded.kwh
     where day_rollups.seq < excluded.seq or (day_rollups.seq = excluded.seq
       and (day_rollups.value, day_rollups.cost, day_rollups.carbon_kg, day_rollups.kwh) is distinct from (excluded.value, excluded.cost, excluded.carbon_kg, excluded.kwh))
     returning day::text as day`,
    values: [
      siteId,
      all.map((r) => r.meter),
      all.map((r) => r.day),
      all.map((r) => r.value),
      all.map((r) => r.cost),
      all.map((r) => r.carbonKg),
      all.map((r) => r.seq),
      all.map((r) => r.kwh ?? null),
    ],
  });
  // Recompute the monthly totals of every month whose rows this batch wrote, from the stored days of the site's total meters,
  // in kWh: a meter in kWh by its value, any other (gas in m³) by the kWh its site sent with the day; a day with
  // neither (water, gas from a box that predates the kWh) is not energy and stays out.
  // Only the months of the rows written: a row sent again as it is stored (the same sequence and figures: a held day
  // row, a batch sent twice) writes nothing, and its month's totals are not recomputed.
  if (result.rows.length === 0) return { written: 0, months: [] };
  const months = [...new Set(result.rows.map((r) => r.day.slice(0, 7)))].sort();
  await siteMonths(client, siteId, months);
  return { written: result.rows.length, months };
}

/** The monthly totals of `months` ('YYYY-MM') recomputed from the stored days (see upsertDays). */
async function siteMonths(client: pg.PoolClient, siteId: string, months: string[]): Promise<void> {
  const firsts = months.map((m) => `${m}-01`);
  await client.query({
    name: 'fleet-site-months',
    text: `insert into site_months (site_id, commodity, month, value, cost, carbon_kg, days)
     select $1, m.commodity, date_trunc('month', d.day)::date, sum(case when m.unit = 'kWh' then d.value else d.kwh end), sum(d.cost),
       sum(d.carbon_kg), count(distinct d.day)
     from day_rollups d join site_meters m on m.site_id = d.site_id and m.key = d.meter_key and m.site_total = 1
       and (m.unit = 'kWh' or d.kwh is not null)
     where d.site_id = $1 and d.day >= $3::date and d.day < $4::date + interval '1 month'
       and date_trunc('month', d.day)::date = any($2::date[])
     group by m.commodity, date_trunc('month', d.day)
     on conflict (site_id, commodity, month) do update set value = excluded.value, cost = excluded.cost, carbon_kg = excluded.carbon_kg,
       days = excluded.days
     where (site_months.value, site_months.cost, site_months.carbon_kg, site_months.days)
       is distinct from (excluded.value, excluded.cost, excluded.carbon_kg, excluded.days)`,
    values: [siteId, firsts, firsts[0], firsts[firsts.length - 1]],
  });
}

/**
 * The intervals a sequenced day row says the box does not hold (`missing`): removed where the fleet stored them under a
 * lower sequence (an interval the box dropped after its clock stepped back; a row stored at or above the day's sequence
 * is newer than the row's word), and taken off the site's day counts. One statement. Returns the rows removed.
 */
export async function deleteMissing(client: pg.PoolClient, siteId: string, days: DayRow[]): Promise<number> {
  const runs = days.flatMap((day) => (day.missing ?? []).map((run) => ({ meter: day.meter, from: run.from, to: run.to, seq: day.seq })));
  if (runs.length === 0) return 0;
  const result = await client.query<{ removed: string }>({
    name: 'fleet-delete-missing',
    text: `with r as (
       select * from unnest($2::text[], $3::timestamptz[], $4::timestamptz[], $5::bigint[]) as r(m, f, t, n)
     ), gone as (
       delete from intervals i using r
       where i.site_id = $1 and i.meter_key = r.m and i.start >= r.f and i.start < r.t and i.seq < r.n
       returning i.start
     ), counted as (
       update site_day_counts c set rows = greatest(0, c.rows - g.n)
       from (select (start at time zone 'UTC')::date as day, count(*) as n from gone group by 1) g
       where c.site_id = $1 and c.day = g.day
     )
     select count(*) as removed from gone`,
    values: [siteId, runs.map((r) => r.meter), runs.map((r) => r.from), runs.map((r) => r.to), runs.map((r) => r.seq)],
  });
  return Number(result.rows[0]!.removed);
}

type DeletedDay = NonNullable<Batch['deletedDays']>[number];

/**
 * Meter days the box deleted whole (its clock stepped back across midnight: src/fleetSync/droppedDays.ts): what the
 * fleet stored of each under a lower sequence goes, its intervals ([from, to): the day in the site's zone, as the box
 * sends it; quarantined ones too) off the site's day counts, and its day row; then the totals of the months it left, a month left with no day of
 * its commodity losing its row. A day stored at or above the deletion's sequence (counted again after the drop) stays.
 * Returns the intervals removed and the months ('YYYY-MM') whose days changed.
 */
export async function deleteDays(client: pg.PoolClient, siteId: string, rows: DeletedDay[]): Promise<{ intervals: number; months: string[] }> {
  if (rows.length === 0) return { intervals: 0, months: [] };
  const result = await client.query<{ removed: string; days: string[] | null }>({
    name: 'fleet-delete-days',
    text: `with d as (
       select * from unnest($2::text[], $3::date[], $4::bigint[], $5::timestamptz[], $6::timestamptz[]) as d(m, day, n, f, t)
     ), gone as (
       delete from intervals i using d
       where i.site_id = $1 and i.meter_key = d.m and i.start >= d.f and i.start < d.t and i.seq < d.n
       returning i.start
     ), held as (
       delete from quarantined_intervals q using d
       where q.site_id = $1 and q.meter_key = d.m and q.start >= d.f and q.start < d.t and q.seq < d.n
     ), counted as (
       update site_day_counts c set rows = greatest(0, c.rows - g.n)
       from (select (start at time zone 'UTC')::date as day, count(*) as n from gone group by 1) g
       where c.site_id = $1 and c.day = g.day
     ), days as (
       delete from day_rollups r using d where r.site_id = $1 and r.meter_key = d.m and r.day = d.day and r.seq < d.n
       returning r.day
     )
     select (select count(*) from gone) as removed, (select array_agg(distinct to_char(day, 'YYYY-MM')) from days) as days`,
    values: [siteId, rows.map((r) => r.meter), rows.map((r) => r.day), rows.map((r) => r.seq), rows.map((r) => r.from), rows.map((r) => r.to)],
  });
  const months = (result.rows[0]!.days ?? []).sort();
  if (months.length > 0) {
    await siteMonths(client, siteId, months);
    // A month whose last day of a commodity went keeps no total of it (the recompute above writes only months with days).
    await client.query({
      name: 'fleet-empty-months',
      text: `delete from site_months s where s.site_id = $1 and s.month = any($2::date[]) and not exists (
         select 1 from day_rollups d join site_meters m on m.site_id = d.site_id and m.key = d.meter_key and m.site_total = 1
           and (m.unit = 'kWh' or d.kwh is not null)
         where d.site_id = $1 and m.commodity = s.commodity and d.day >= s.month and d.day < s.month + interval '1 month')`,
      values: [siteId, months.map((m) => `${m}-01`)],
    });
  }
  return { intervals: Number(result.rows[0]!.removed), months };
}
