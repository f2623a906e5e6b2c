// The one write path for everything a site sends: live rows, re-sent history and restatements are the same idempotent
// upserts keyed by (site, meter, start). A batch is checked whole before anything is written and written in one
// transaction: refused batches store nothing. The site is the credential's site, never anything in the payload.
import type pg from 'pg';
import { inTransaction } from './db.ts';
import { FleetError } from './errors.ts';
import { IntervalPartitions, monthOf } from './partitions.ts';
import { keptRaw, RETENTION_LOCK } from './retention.ts';
import { deleteDays, deleteMissing, upsertDays, upsertIntervals } from './ingestRows.ts';
import { refreshSiteEui } from './portfolio.ts';
import { HEALTH_FACTS_SET, healthFactValues } from './portfolioKept.ts';
import { type Batch, firstError, rangeError, validateBatch } from './schemas.ts';

export type IngestLimits = {
  /** Rows (intervals + days + alerts) one batch may carry. */
  maxRows: number;
  /** Interval rows starting later than the fleet's clock plus this are quarantined. */
  futureToleranceMs: number;
  /** A send time further than this from the fleet's clock raises the site clock alarm. */
  clockAlarmMs: number;
  /**
   * The oldest interval start and day a batch may carry, in days before the fleet's clock: the box imports at most
   * 3,660 days back (IMPORT_MAX_AGE_DAYS); older is refused (422 out_of_range), so no batch makes a partition for a
   * month outside what a box can hold.
   */
  historyDays: number;
};

export const DEFAULT_INGEST_LIMITS: IngestLimits = { maxRows: 20_000, futureToleranceMs: 15 * 60_000, clockAlarmMs: 5 * 60_000, historyDays: 3_700 };

export type IngestResult = {
  /**
   * The site and the sequence range (`after`, `acknowledged`] this answer acknowledges: the box moves its cursor only
   * on an answer naming its own site and the batch it sent (a proxy's page or another fleet's answer moves nothing).
   */
  siteId: string;
  after: number;
  /** The batch's `through`: every row of it is stored. The site moves its cursor there when the batch was contiguous. */
  acknowledged: number;
  stored: { intervals: number; days: number; alerts: number; deletedAlerts: number };
  quarantined: number;
  clockSkewMs: number;
};

const INTERVAL_MS = 15 * 60_000;
/** First key of the two-key advisory lock that lets one batch per site in at a time (second key: the site). */
export const SITE_LOCK = 4_204_303;
/**
 * First key of the ingest slots (second key: the slot, 1..slots): a batch is stored only while its transaction holds
 * one, so the limit on batches stored at once holds for the database, whatever number of instances share it.
 */
export const SLOT_LOCK = 4_204_304;

/** Parses and checks a batch without touching the database; throws FleetError for anything that would be refused. */
export function checkBatch(body: unknown, limits: IngestLimits, now: number = Date.now()): Batch {
  if (!validateBatch(body)) {
    const field = rangeError(validateBatch);
    if (field !== undefined) {
      const error = validateBatch.errors!.find((e) => e.instancePath === field)!;
      throw new FleetError('out_of_range', `batch refused: ${field} ${error.message ?? 'is out of range'}`, { details: { field } });
    }
    throw new FleetError('invalid_batch', `batch refused: ${firstError(validateBatch)}`);
  }
  const batch = body;
  deletedDaysLimit(batch);
  const rows =
    (batch.intervals?.length ?? 0) +
    (batch.days?.length ?? 0) +
    (batch.alerts?.length ?? 0) +
    (batch.deletedAlerts?.length ?? 0) +
    (batch.deletedDays?.length ?? 0) +
    (batch.held?.intervals.length ?? 0) +
    (batch.held?.days.length ?? 0);
  if (rows > limits.maxRows) throw new FleetError('batch_too_large', `batch refused: ${rows} rows, at most ${limits.maxRows} per batch`);
  if (batch.through < batch.after) throw new FleetError('invalid_batch', `batch refused: through (${batch.through}) is below after (${batch.after})`);
  const oldest = now - limits.historyDays * 86_400_000;
  const tooOld = (ms: number, field: string, shown: string) => {
    if (ms < oldest) {
      throw new FleetError(
        'out_of_range',
        `batch refused: /${field} ${shown} is more than ${limits.historyDays} days before the fleet's clock (the oldest a site may send)`,
        { details: { field: `/${field}` } },
      );
    }
  };
  const inRange = (seq: number, where: string) => {
    if (seq <= batch.after || seq > batch.through) {
      throw new FleetError('invalid_batch', `batch refused: ${where} has sequence ${seq}, outside (${batch.after}, ${batch.through}]`);
    }
  };
  const checkIntervals = (rows: Array<{ meter: string; start: string; value: number; seq?: number }>, where: string) => {
    const seen = new Set<string>();
    for (const [i, row] of rows.entries()) {
      if (row.seq !== undefined) inRange(row.seq, `${where}/${i}`);
      const start = Date.parse(row.start);
      tooOld(start, `${where}/${i}/start`, row.start);
      if (start % INTERVAL_MS !== 0) throw new FleetError('invalid_batch', `batch refused: ${where}/${i} start ${row.start} is not on a 15-minute boundary`);
      if (!Number.isFinite(row.value)) throw new FleetError('invalid_batch', `batch refused: ${where}/${i} value is not finite`);
      const key = `${row.meter}\0${start}`;
      if (seen.has(key)) throw new FleetError('invalid_batch', `batch refused: ${where}/${i} repeats meter ${row.meter} at ${row.start}`);
      seen.add(key);
    }
  };
  const checkDays = (rows: Array<{ meter: string; day: string; seq?: number; missing?: MissingRun[] }>, where: string) => {
    const seen = new Set<string>();
    for (const [i, row] of rows.entries()) {
      if (row.seq !== undefined) inRange(row.seq, `${where}/${i}`);
      missingRunsRule(row, `${where}/${i}`);
      tooOld(Date.parse(`${row.day}T23:59:59Z`), `${where}/${i}/day`, row.day);
      const key = `${row.meter}\0${row.day}`;
      if (seen.has(key)) throw new FleetError('invalid_batch', `batch refused: ${where}/${i} repeats meter ${row.meter} on ${row.day}`);
      seen.add(key);
    }
  };
  checkIntervals(batch.intervals ?? [], 'intervals');
  checkDays(batch.days ?? [], 'days');
  checkIntervals(batch.held?.intervals ?? [], 'held/intervals');
  checkDays(batch.held?.days ?? [], 'held/days');
  const seen = new Set<string>();
  for (const [i, row] of (batch.alerts ?? []).entries()) {
    inRange(row.seq, `alerts/${i}`);
    if (seen.has(String(row.id))) throw new FleetError('invalid_batch', `batch refused: alerts/${i} repeats alert ${row.id}`);
    seen.add(String(row.id));
  }
  seen.clear();
  for (const [i, row] of (batch.deletedAlerts ?? []).entries()) {
    inRange(row.seq, `deletedAlerts/${i}`);
    if (seen.has(String(row.id))) throw new FleetError('invalid_batch', `batch refused: deletedAlerts/${i} repeats alert ${row.id}`);
    seen.add(String(row.id));
  }
  checkDays(batch.deletedDays ?? [], 'deletedDays');
  deletedDaysRule(batch.deletedDays ?? []);
  const meterKeys = new Set<string>();
  for (const meter of batch.meters ?? []) {
    if (meterKeys.has(meter.key)) throw new FleetError('invalid_batch', `batch refused: meter ${meter.key} is declared twice`);
    meterKeys.add(meter.key);
  }
  return batch;
}

/**
 * Meter days one batch may name as deleted (a box sends at most 1,000: src/fleetSync/droppedDays.ts). Each removes a
 * day of intervals, so a batch naming more is refused whole (422), as a day row's missing runs are bounded to its day.
 */
export const MAX_DELETED_DAYS = 1_000;

function deletedDaysLimit(batch: Batch): void {
  const named = batch.deletedDays?.length ?? 0;
  if (named > MAX_DELETED_DAYS) {
    throw new FleetError('out_of_range', `batch refused: /deletedDays names ${named} meter days, at most ${MAX_DELETED_DAYS} per batch`, {
      details: { field: '/deletedDays' },
    });
  }
}

type MissingRun = { from: string; to: string };
/** A local day's midnight lies 14 h before to 12 h after its UTC midnight, and a day lasts at most 25 h. */
const DAY_STARTS_BEFORE_MS = 14 * 3_600_000;
const DAY_ENDS_AFTER_MS = (12 + 25) * 3_600_000;

/**
 * The runs of intervals a day row says it does not hold (the fleet deletes what it stored there): each on 15-minute
 * boundaries, not empty, and within the row's own day in any time zone, so a row can never reach another day's rows.
 */
function missingRunsRule(row: { day: string; missing?: MissingRun[] }, where: string): void {
  for (const [j, run] of (row.missing ?? []).entries()) runWithinDay(row.day, run, `/${where}/missing/${j}`);
}

/** One run of intervals [from, to) within `day` in any time zone (see missingRunsRule); `field` names it in the refusal. */
function runWithinDay(day: string, run: MissingRun, field: string, maxMs = DAY_ENDS_AFTER_MS + DAY_STARTS_BEFORE_MS): void {
  const midnight = Date.parse(`${day}T00:00:00Z`);
  const from = Date.parse(run.from);
  const to = Date.parse(run.to);
  if (from % INTERVAL_MS !== 0 || to % INTERVAL_MS !== 0) {
    throw new FleetError('invalid_batch', `batch refused: ${field} ${run.from}–${run.to} is not on 15-minute boundaries`);
  }
  if (!(from < to) || to - from > maxMs || from < midnight - DAY_STARTS_BEFORE_MS || to > midnight + DAY_ENDS_AFTER_MS) {
    throw new FleetError('out_of_range', `batch refused: ${field} ${run.from}–${run.to} is not a run of intervals within ${day}`, {
      details: { field },
    });
  }
}

/** A deleted meter day's span [from, to): the day in the site's zone, so within the day and at most 25 h long. */
function deletedDaysRule(rows: Array<{ day: string; from: string; to: string }>): void {
  for (const [i, row] of rows.entries()) runWithinDay(row.day, row, `/deletedDays/${i}`, 25 * 3_600_000);
}

/** The meters a batch's rows name. */
function namedMeters(batch: Batch): Set<string> {
  const named = new Set<string>();
  for (const row of [...(batch.intervals ?? []), ...(batch.held?.intervals ?? [])]) named.add(row.meter);
  for (const row of [...(batch.days ?? []), ...(batch.held?.days ?? []), ...(batch.deletedDays ?? [])]) named.add(row.meter);
  return named;
}

/** Every meter a row names must have been declared (in this batch or an earlier one). */
function unknownMeters(named: Set<string>, known: Set<string>): void {
  const unknown = [...named].filter((key) => !known.has(key));
  if (unknown.length > 0) {
    throw new FleetError('unknown_meter', `batch refused: rows for meters this site never declared: ${unknown.slice(0, 5).join(', ')}`, {
      details: { meters: unknown.slice(0, 100) },
    });
  }
}

/**
 * One box per site: once a box with an install id has sent for the site, a batch from any other box (another install
 * id, or none) is refused whole with 409 `second_box` (the rows stay on that box) and the site's alarm is raised.
 */
function oneBox(batch: Batch, siteBox: string | null): void {
  if (siteBox === null || batch.installId === siteBox) return;
  throw new FleetError(
    'second_box',
    "batch refused: another box is this site at the fleet (a copy of this box's credential, from a backup?); this box keeps its rows until a fleet admin says which box is the site",
    { details: { installId: batch.installId ?? null } },
  );
}

/**
 * The cursor rule: a batch starts exactly at the end of the last batch stored for the site (its `after` is the fleet's
 * cursor). Below it, the site went back (restored from an older backup, or an answer it never got): 409
 * `sequence_backwards`, and the box re-stamps its rows above the fleet's cursor. Above it, the fleet lost what it had
 * acknowledged (a primary that crashed before its standby had the last batches, then promoted; a database restored
 * from a backup): 409 `sequence_gap`, and the box moves its cursor back to the fleet's and sends everything above it
 * again (its rows keep their sequences; the upserts make a row the fleet still has harmless). The gap is judged only
 * for a box that sends its install id (every box since issue 55): its `after` is always the fleet's last acknowledgement.
 * A sender without one (older software) keeps the rule before: a batch above the cursor is taken.
 */
function cursorRule(batch: Batch, cursor: number): void {
  if (batch.after < cursor) {
    throw new FleetError(
      'sequence_backwards',
      `batch refused: it starts after sequence ${batch.after}, below the cursor ${cursor} this site reported before (was the site restored from an older backup?)`,
      { details: { cursor } },
    );
  }
  if (batch.after > cursor && batch.installId !== undefined) {
    throw new FleetError(
      'sequence_gap',
      `batch refused: it starts after sequence ${batch.after}, but the fleet holds this site only up to ${cursor} (the fleet's database lost acknowledged batches: a failover or a restore); send from ${cursor} again`,
      { details: { cursor } },
    );
  }
}

/**
 * The site's row under its lock, with which of the meters a batch names it declared before. Named statements (here and
 * in ingestRows.ts): each pooled connection parses and plans them once, not at every sync (issue 55).
 */
const SITE_UNDER_LOCK = `select site_cursor, revoked_at, install_id, eui_month::text,
    (select array_agg(key) from site_meters where site_id = $1 and key = any($2::text[])) as known,
    (select raw_from::text from fleet_retention where id = 1) as raw_from
  from sites where id = $1`;
type SiteRow = {
  site_cursor: string;
  revoked_at: Date | null;
  install_id: string | null;
  eui_month: string | null;
  known: string[] | null;
  raw_from: string | null;
};

/**
 * The site's rules for a batch, the same before its transaction (precheck) and under the site's lock: a live site, its
 * one box, a cursor not going back, declared meters only (meters are never deleted: declared in an earlier batch or in this one).
 */
function siteRules(batch: Batch, named: Set<string>, row: SiteRow | undefined): SiteRow {
  if (!row || row.revoked_at) throw new FleetError('unauthenticated', 'this site credential is unknown or revoked');
  oneBox(batch, row.install_id);
  cursorRule(batch, Number(row.site_cursor));
  unknownMeters(named, new Set([...(row.known ?? []), ...(batch.meters ?? []).map((m) => m.key)]));
  return row;
}

export class Ingest {
  private readonly partitions: IntervalPartitions;

  constructor(
    private readonly pool: pg.Pool,
    private readonly limits: IngestLimits = DEFAULT_INGEST_LIMITS,
    /** The primary database's clock (src/fleet/clock.ts), so every instance quarantines the same rows. */
    private readonly now: () => number | Promise<number> = Date.now,
  ) {
    this.partitions = new IntervalPartitions(pool);
  }

  /** Checks a batch against the limits at the primary's clock (the date range of what it may store). */
  async check(body: unknown): Promise<Batch> {
    return checkBatch(body, this.limits, await this.now());
  }

  /**
   * Stores a checked batch for the site the credential named; one transaction, refused whole on any rule. `slots`: how
   * many batches the whole fleet (every instance on this database) may store at once, this one included; beyond, 429.
   */
  async store(siteId: string, batch: Batch, slots = Number.MAX_SAFE_INTEGER): Promise<IngestResult> {
    const now = await this.now();
    const clockSkewMs = Date.parse(batch.sentAt) - now;
    // Held rows (what the site's collector holds ahead of its rows) take the batch's `after` as their sequence: they
    // replace what the fleet stored up to there, and the site's next write of those rows (a higher one) replaces them.
    const heldSeq = batch.after;
    const heldIntervals = (batch.held?.intervals ?? []).map((row) => ({ ...row, seq: heldSeq }));
    const heldDays = (batch.held?.days ?? []).map((row) => ({ ...row, seq: heldSeq }));
    const isFuture = (row: { start: string }) => Date.parse(row.start) > now + this.limits.futureToleranceMs;
    const live = (batch.intervals ?? []).filter((row) => !isFuture(row));
    const liveHeld = heldIntervals.filter((row) => !isFuture(row));
    const future = [...(batch.intervals ?? []).filter(isFuture), ...heldIntervals.filter(isFuture)];
    // Partitions only for the months of a batch that passed every check it can pass before its transaction (the
    // schema, the ranges, the history limit: checkBatch; the credential, the cursor and the declared meters: precheck),
    // and only for the rows it stores there (not the quarantined ones). The transaction checks the same again under
    // the site's lock; DDL stays out of it (a partition made inside would lock `intervals` for every site's ingest).
    // A batch whose months all have their partition (every live batch but the first of a month) goes straight to its
    // transaction, which makes the same checks under the site's lock: one statement less per sync (issue 55).
    const months = [...live, ...liveHeld].map((row) => monthOf(Date.parse(row.start)));
    if (this.partitions.missing(months).length > 0) {
      try {
        await this.precheck(siteId, batch);
      } catch (error) {
        await this.noteRefusal(siteId, error);
        throw error;
      }
      await this.partitions.ensure(months);
    }

    try {
      return await inTransaction(this.pool, async (client): Promise<IngestResult> => {
        // The site's lock (one batch per site at a time), the first free ingest slot and the retention lock shared (a drop of raw
        // months waits for this batch, retention.ts), all held to the commit: counted
        // in the database (pg_locks), not in this process, so two instances on one database keep the one limit.
        const locked = await client.query<{ ok: boolean; slot: number | null }>({
          name: 'fleet-ingest-locks',
          text: `select pg_try_advisory_xact_lock($1, hashtext($2)) as ok,
             (select i from generate_series(1, $4::int) i where pg_try_advisory_xact_lock($3, i) limit 1) as slot,
             pg_advisory_xact_lock_shared($5)`,
          values: [SITE_LOCK, siteId, SLOT_LOCK, Math.min(slots, 1_000), RETENTION_LOCK],
        });
        if (!locked.rows[0]!.ok) throw new FleetError('busy', 'another batch of this site is being stored', { retryAfterSec: 1 });
        if (locked.rows[0]!.slot === null) throw new FleetError('busy', 'the fleet is busy storing other batches', { retryAfterSec: 2 });
        const named = namedMeters(batch);
        const site = await client.query<SiteRow>({ name: 'fleet-ingest-site', text: SITE_UNDER_LOCK, values: [siteId, [...named]] });
        // Read under the lock: the meters declared before, and the kept raw months (retention.ts): a drop either finished
        // before or waits for this.
        const row = siteRules(batch, named, site.rows[0]);
        await this.storeMetadata(client, siteId, batch);
        // The held rows go with the sequenced ones, one upsert per table (ingestRows.ts); under a lower sequence, they
        // never replace a row of the same batch.
        const days = await upsertDays(client, siteId, batch.days ?? [], heldDays);
        // Meter days the box deleted whole go, with their months' totals (ingestRows.ts deleteDays).
        const dropped = await deleteDays(client, siteId, batch.deletedDays ?? []);
        const thisMonth = new Date(now).toISOString().slice(0, 7);
        // The site's EUI sums (site_eui) follow its complete months' totals, and the month turning.
        if (row.eui_month?.slice(0, 7) !== thisMonth || [...days.months, ...dropped.months].some((month) => month < thisMonth))
          await refreshSiteEui(client, siteId, now);
        // What the box's rows say it does not hold (intervals it dropped after a clock step back) goes.
        await deleteMissing(client, siteId, batch.days ?? []);
        const stored = {
          intervals: await upsertIntervals(client, siteId, ...keptRaw([live, liveHeld], row.raw_from)),
          days: days.written,
          alerts: await this.upsertAlerts(client, siteId, batch.alerts ?? []),
          deletedAlerts: await this.deleteAlerts(client, siteId, batch.deletedAlerts ?? []),
        };
        const quarantined = await this.quarantine(client, siteId, future, batch.sentAt);
        // The site clock alarm raised here when due; cleared in the same statement that moves the cursor otherwise.
        const alarming = await this.siteClockAlarm(client, siteId, clockSkewMs, quarantined);
        // The cursor is the end of what is now stored (a newest day sent ahead of the history leaves it): a batch from below it (a box restored from a backup even one batch
        // old, or the same batch again after a lost answer) is refused with it, and the box re-stamps its rows above it.
        // The first box to send with an install id becomes the site's box.
        await client.query({
          name: 'fleet-ingest-cursor',
          text: `with cleared as (
             update fleet_alarms set cleared_at = now() where not $6 and site_id = $1 and kind = 'site_clock' and cleared_at is null
           )
           update sites set site_cursor = greatest(site_cursor, $2), last_contact_at = now(), clock_skew_ms = $3,
             health = coalesce($4::jsonb, health), last_refusal = null, install_id = coalesce(install_id, $5), ${HEALTH_FACTS_SET} where id = $1`,
          values: [
            siteId,
            batch.ahead ? batch.after : batch.through,
            Math.max(-2e9, Math.min(2e9, clockSkewMs)),
            batch.health ? JSON.stringify(batch.health) : null,
            batch.installId ?? null,
            alarming,
            ...healthFactValues(batch.health, now),
          ],
        });
        return { siteId, after: batch.after, acknowledged: batch.through, stored, quarantined, clockSkewMs };
      });
    } catch (error) {
      await this.noteRefusal(siteId, error);
      throw error;
    }
  }

  /** The refusal is what the portfolio shows for the site (its own sync status says the same). */
  private async noteRefusal(siteId: string, error: unknown): Promise<void> {
    if (error instanceof FleetError && error.code !== 'busy' && error.code !== 'unauthenticated') {
      await this.pool.query('update sites set last_refusal = $2, last_contact_at = now() where id = $1', [siteId, error.message]).catch(() => {});
    }
    if (error instanceof FleetError && error.code === 'second_box') {
      // A second box sends as this site: an alarm until an admin says which box is the site (POST /api/fleet/sites/:id/box).
      const { installId } = error.extra.details as { installId: string | null };
      await this.pool
        .query(
          `insert into fleet_alarms (site_id, kind, message)
           select id, 'second_box', 'second box: another box (install id ' || $2 || ') sends with this site''s credential; its rows are refused and kept on it. The site''s box is '
             || install_id || '. A fleet admin says which box is the site.' from sites where id = $1
             and not exists (select 1 from site_audit d where d.site_id = $1 and d.action = 'discard-second-box' and d.detail->>'installId' = $2)
           on conflict (site_id, kind) where cleared_at is null do update set message = excluded.message`,
          [siteId, installId ?? 'none: older software'],
        )
        .catch(() => {});
    }
  }

  /** The site's rules checked before the transaction (siteRules), for a batch that needs a partition made first. */
  private async precheck(siteId: string, batch: Batch): Promise<void> {
    const named = namedMeters(batch);
    const result = await this.pool.query<SiteRow>({ name: 'fleet-ingest-site', text: SITE_UNDER_LOCK, values: [siteId, [...named]] });
    siteRules(batch, named, result.rows[0]);
  }

  private async storeMetadata(client: pg.PoolClient, siteId: string, batch: Batch): Promise<void> {
    if (batch.site) {
      // The box's own name goes beside the site's name at the fleet (the enrolment name), never over it.
      await client.query('update sites set box_name = $2, timezone = $3, floor_area_m2 = $4 where id = $1', [
        siteId,
        batch.site.name,
        batch.site.timezone,
        batch.site.floorAreaM2,
      ]);
    }
    if (batch.areas) {
      // The site sends its whole list of areas: the set is replaced.
      await client.query('delete from site_areas where site_id = $1', [siteId]);
      await client.query('insert into site_areas (site_id, name, floor_area_m2) select $1, * from unnest($2::text[], $3::float8[])', [
        siteId,
        batch.areas.map((a) => a.name),
        batch.areas.map((a) => a.floorAreaM2),
      ]);
    }
    if (batch.meters && batch.meters.length > 0) {
      // Meters are upserted, never deleted: their stored rows stay attributable after the site retires a meter.
      const m = batch.meters;
      await client.query(
        `insert into site_meters (site_id, key, name, commodity, unit, area, site_total)
         select $1, * from unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::int[])
         on conflict (site_id, key) do update set name = excluded.name, commodity = excluded.commodity, unit = excluded.unit,
           area = excluded.area, site_total = excluded.site_total`,
        [
          siteId,
          m.map((x) => x.key),
          m.map((x) => x.name),
          m.map((x) => x.commodity),
          m.map((x) => x.unit),
          m.map((x) => x.area),
          m.map((x) => (x.siteTotal ? 1 : 0)),
        ],
      );
      await client.query('update sites set meter_count = (select count(*) from site_meters where site_id = $1) where id = $1', [siteId]);
    }
  }

  private async upsertAlerts(client: pg.PoolClient, siteId: string, rows: NonNullable<Batch['alerts']>): Promise<number> {
    if (rows.length === 0) return 0;
    const result = await client.query(
      `insert into site_alerts (site_id, alert_id, title, level, status, occurred_at, acknowledged_at, resolved_at, seq)
       select $1, * from unnest($2::bigint[], $3::text[], $4::text[], $5::text[], $6::timestamptz[], $7::timestamptz[], $8::timestamptz[], $9::bigint[])
       on conflict (site_id, alert_id) do update set title = excluded.title, level = excluded.level, status = excluded.status,
         occurred_at = excluded.occurred_at, acknowledged_at = excluded.acknowledged_at, resolved_at = excluded.resolved_at, seq = excluded.seq
       where site_alerts.seq <= excluded.seq`,
      [
        siteId,
        rows.map((r) => r.id),
        rows.map((r) => r.title),
        rows.map((r) => r.level),
        rows.map((r) => r.status),
        rows.map((r) => r.occurredAt),
        rows.map((r) => r.acknowledgedAt),
        rows.map((r) => r.resolvedAt),
        rows.map((r) => r.seq),
      ],
    );
    return result.rowCount ?? 0;
  }

  /** A deletion removes the stored alert unless a later version of that id (a higher sequence) is stored. */
  private async deleteAlerts(client: pg.PoolClient, siteId: string, rows: NonNullable<Batch['deletedAlerts']>): Promise<number> {
    if (rows.length === 0) return 0;
    const result = await client.query(
      `delete from site_alerts a using unnest($2::bigint[], $3::bigint[]) as d(id, seq)
       where a.site_id = $1 and a.alert_id = d.id and a.seq <= d.seq`,
      [siteId, rows.map((r) => r.id), rows.map((r) => r.seq)],
    );
    return result.rowCount ?? 0;
  }

  private async quarantine(client: pg.PoolClient, siteId: string, rows: NonNullable<Batch['intervals']>, sentAt: string): Promise<number> {
    if (rows.length === 0) return 0;
    await client.query(
      `insert into quarantined_intervals (site_id, meter_key, start, value, quality, seq, site_sent_at)
       select $1, m, s, v, q, n, $7 from unnest($2::text[], $3::timestamptz[], $4::float8[], $5::text[], $6::bigint[]) as t(m, s, v, q, n)
       on conflict (site_id, meter_key, start) do update set value = excluded.value, quality = excluded.quality, seq = excluded.seq,
         received_at = now(), site_sent_at = excluded.site_sent_at
       where quarantined_intervals.seq <= excluded.seq`,
      [siteId, rows.map((r) => r.meter), rows.map((r) => r.start), rows.map((r) => r.value), rows.map((r) => r.quality), rows.map((r) => r.seq), sentAt],
    );
    return rows.length;
  }

  /** Raises (once) the site's "site clock" alarm from this batch's send time and quarantined rows; true when raised. */
  private async siteClockAlarm(client: pg.PoolClient, siteId: string, skewMs: number, quarantined: number): Promise<boolean> {
    if (Math.abs(skewMs) <= this.limits.clockAlarmMs && quarantined === 0) return false;
    const hours = (skewMs / 3_600_000).toFixed(1);
    const message = `site clock: the site's clock is ${hours} h ${skewMs >= 0 ? 'ahead of' : 'behind'} the fleet's${
      quarantined > 0 ? `; ${quarantined} interval rows from the future were quarantined` : ''
    }`;
    await client.query(
      `insert into fleet_alarms (site_id, kind, message) values ($1, 'site_clock', $2)
       on conflict (site_id, kind) where cleared_at is null do update set message = excluded.message`,
      [siteId, message],
    );
    return true;
  }
}
