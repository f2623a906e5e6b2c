// The fleet process's own upkeep, one job (issue 55 round 8): at start and every UPKEEP_EVERY_MS it brings the EUI
// figures of sites that sent nothing since the month turned up to the month (so the ranking's page stays an index
// scan, portfolioKept.ts), and, when EMS_FLEET_KEEP_RAW_MONTHS is set, drops the raw months older than kept at start
// and once a day after (the same dropRawMonths and lock as `fleetctl drop-raw`, retention.ts). Any number of
// instances may run it side by side: the drop is idempotent under its lock, and a site's sums are refreshed under the
// site's ingest lock (a site whose batch holds it is skipped: that batch refreshes it).
import type pg from 'pg';
import { Repeating } from '../platform/jobs/lifecycle.ts';
import { inTransaction } from './db.ts';
import { SITE_LOCK } from './ingest.ts';
import { refreshSiteEui } from './portfolio.ts';
import { dropRawMonths } from './retention.ts';

/** How often the upkeep runs: a site that stopped sending has this month's EUI figures at most this long after the turn. */
export const UPKEEP_EVERY_MS = 15 * 60_000;
/** Raw months are dropped at start and then once this long after the last drop. */
export const RETENTION_EVERY_MS = 24 * 3_600_000;
/** Sites refreshed per round of the EUI upkeep (each in its own short transaction). */
const EUI_CHUNK = 200;

export type UpkeepOptions = {
  /** EMS_FLEET_KEEP_RAW_MONTHS: the months of raw intervals kept before the current one; null keeps every month. */
  keepRawMonths: number | null;
  /** Where the job says what it did (the process's logger). */
  logger: { info(fields: object, message: string): void; error(fields: object, message: string): void };
  /** The primary's clock (src/fleet/clock.ts). */
  now: () => number | Promise<number>;
  /** The monotonic clock the daily drop is timed on (tests move it). */
  monotonic?: () => number;
  /** The wait between runs (tests shorten it); UPKEEP_EVERY_MS. */
  everyMs?: number;
};

/**
 * Every site whose EUI sums are not of the month of `now` brought up to it, site by site under its ingest lock (a
 * site whose batch is being stored is skipped: that batch does it). Answers how many were refreshed and skipped.
 */
export async function keepEuiCurrent(pool: pg.Pool, now: number): Promise<{ refreshed: number; skipped: number }> {
  const month = `date_trunc('month', $1::timestamptz at time zone 'UTC')::date`;
  let refreshed = 0;
  let skipped = 0;
  const seen = new Set<string>();
  for (;;) {
    const stale = await pool.query<{ id: string }>(`select id from sites where eui_month is distinct from ${month} and not (id = any($2::uuid[])) limit $3`, [
      new Date(now),
      [...seen],
      EUI_CHUNK,
    ]);
    if (stale.rows.length === 0) return { refreshed, skipped };
    for (const { id } of stale.rows) {
      seen.add(id);
      const done = await inTransaction(pool, async (client) => {
        const locked = await client.query<{ ok: boolean }>('select pg_try_advisory_xact_lock($1, hashtext($2)) as ok', [SITE_LOCK, id]);
        if (!locked.rows[0]!.ok) return false;
        await refreshSiteEui(client, id, now);
        return true;
      });
      if (done) refreshed++;
      else skipped++;
    }
  }
}

/** The upkeep job of one fleet process (started by main.ts, stopped at shutdown). */
export function fleetUpkeep(pool: pg.Pool, options: UpkeepOptions): Repeating {
  const monotonic = options.monotonic ?? (() => performance.now());
  let droppedAt: number | null = null;
  const task = async () => {
    const now = await options.now();
    try {
      const eui = await keepEuiCurrent(pool, now);
      if (eui.refreshed > 0 || eui.skipped > 0) options.logger.info(eui, 'fleet upkeep: EUI figures brought up to the month');
    } catch (error) {
      options.logger.error({ err: error }, 'fleet upkeep: the EUI figures could not be brought up to the month');
    }
    if (options.keepRawMonths === null || (droppedAt !== null && monotonic() - droppedAt < RETENTION_EVERY_MS)) return;
    try {
      const { rawFrom, dropped } = await dropRawMonths(pool, options.keepRawMonths);
      droppedAt = monotonic();
      options.logger.info({ rawFrom, dropped, keepMonths: options.keepRawMonths }, 'fleet upkeep: raw intervals kept from the limit, older months dropped');
    } catch (error) {
      // Tried again at the next run (not a day later).
      options.logger.error({ err: error }, 'fleet upkeep: dropping the old raw months failed');
    }
  };
  return new Repeating(task, options.everyMs ?? UPKEEP_EVERY_MS, 'fleet upkeep', { unref: true });
}
