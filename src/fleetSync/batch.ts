// Builds the next batch from the site's SQLite: the rows whose sequence is above the cursor, oldest first and bounded
// (contiguous: the fleet's acknowledgement may then move the cursor to the batch's last sequence), or after an
// outage the newest day ahead of the history. Intervals go with their quality; a missing interval is not sent at all.
import { FLAG_ESTIMATED, FLAG_IMPORTED, type HeldDay, KWH_SCALE, quantize, storedFlags, storedKwh } from '../metering/index.ts';
import { kwhPerM3ByDay } from '../pricing/index.ts';
import { and, asc, eq, gt } from 'drizzle-orm';
import type { Db } from '../platform/db/client.ts';
import { forgetAcknowledged } from '../platform/db/acknowledged.ts';
import {
  alerts,
  areaFloorAreas,
  calorificVersions,
  meterDays,
  meterDaysDropped,
  meters,
  platformConfig,
  syncDeletedAlerts,
  syncSequence,
} from '../platform/db/schema/index.ts';
import { addDays, dayIntervals } from '../platform/time/calendar.ts';
import { addDropped, DROPPED_DAYS_PER_BATCH, droppedAbove } from './droppedDays.ts';

/**
 * A batch is bounded by rows (intervals + day rows): 15,000, with ALERTS_PER_BATCH alerts under the fleet's 20,000 per
 * batch. Whole days (97 rows each) fill it at ~154 meter days (a catch-up); live days, trimmed to the intervals the fleet
 * has not stored, take a row or two each, so a 500-meter box's 15-minute write goes in one batch, not four (each batch
 * costs the box a read mark and a link-row write). DAYS_PER_BATCH caps the meter days read for one batch.
 */
export const ROWS_PER_BATCH = 15_000;
export const DAYS_PER_BATCH = 1_000;
export const ALERTS_PER_BATCH = 500;

export type SiteBatch = {
  sentAt: string;
  after: number;
  through: number;
  /** The newest day sent ahead of the history (not every row up to `through`): the fleet's cursor stays at `after`. */
  ahead?: true;
  site?: { name: string; timezone: string; floorAreaM2: number | null };
  areas?: Array<{ name: string; floorAreaM2: number | null }>;
  meters?: Array<{ key: string; name: string; commodity: string; unit: string; area: string | null; siteTotal: boolean }>;
  intervals: Array<{ meter: string; start: string; value: number; quality: 'measured' | 'estimated' | 'imported'; seq: number }>;
  /**
   * `value` in the meter's unit (m³ for gas); `kwh` on gas days only: value × the calorific value × correction in force
   * that day, as the site's own gas kWh (left out when the box has no calorific version at all).
   */
  days: Array<{ meter: string; day: string; value: number; kwh?: number; cost: number; carbonKg: number; seq: number; missing?: MissingRun[] }>;
  alerts: Array<{
    id: number;
    title: string;
    level: string;
    status: string;
    occurredAt: string;
    acknowledgedAt: string | null;
    resolvedAt: string | null;
    seq: number;
  }>;
  /** Alerts deleted on the box (sync_deleted_alerts); the key is left out when there are none. */
  deletedAlerts?: Array<{ id: number; seq: number }>;
  /**
   * Meter days deleted whole on the box (a clock step back across midnight: meter_days_dropped, src/fleetSync/droppedDays.ts),
   * each with its day's span [from, to) in the site's zone: the fleet removes what it stored of each under a lower sequence. The key is left out when there are none, so a
   * fleet older than this field sees no change until a box drops a day (the fleet is upgraded before its boxes).
   */
  deletedDays?: Array<{ meter: string; day: string; from: string; to: string; seq: number }>;
  /**
   * What the collector holds ahead of its rows (it writes hourly: issue 44), with no sequence of its own: the fleet
   * stores it under the batch's `after`, so the next write of the row (a higher sequence) replaces it. Sent only when
   * nothing else is waiting (`after` is then the newest sequence the fleet stored); the key is left out when nothing
   * is held.
   */
  held?: {
    intervals: Array<{ meter: string; start: string; value: number; quality: 'measured' | 'estimated' | 'imported' }>;
    days: Array<{ meter: string; day: string; value: number; kwh?: number; cost: number; carbonKg: number }>;
  };
  health?: Record<string, unknown>;
};

/**
 * A run of intervals a sequenced day row does not hold, [from, to): the fleet removes what it stored there under a lower
 * sequence. An interval the box dropped (its clock stepped back: metering/clockStep.ts) is not sent, and without this
 * the fleet kept the value it had (the soak's week, issue 56: meter 7 on 2 Nov, 96 intervals at the fleet, 95 on the box).
 */
export type MissingRun = { from: string; to: string };

/** The runs of intervals a day row does not hold (NaN, or past its stored length), in order; none when it holds all. */
export function missingRuns(values: ArrayLike<number>, count: number, start: number): MissingRun[] {
  const runs: MissingRun[] = [];
  let from = -1;
  for (let i = 0; i <= count; i++) {
    const missing = i < count && (i >= values.length || Number.isNaN(values[i]!));
    if (missing && from < 0) from = i;
    if (!missing && from >= 0) {
      runs.push({ from: new Date(start + from * 900_000).toISOString(), to: new Date(start + i * 900_000).toISOString() });
      from = -1;
    }
  }
  return runs;
}

/** Gas and water are metered in m³, electricity and heat in kWh (docs/commodities.md). */
const UNITS: Record<string, string> = { electricity: 'kWh', heat: 'kWh', gas: 'm3', water: 'm3' };

type MeterRow = typeof meters.$inferSelect;

/**
 * Whether a meter counts to the site's total of its commodity, as the site's own figures count it (energy/commodities.ts):
 * electricity by the meter's site flag; gas, heat and water by their supply meters (role import, not virtual), the
 * unzoned ones when there are any, else all of them. A gas meter cannot carry the site flag, so before this every
 * gas and heat meter reached the fleet as not counting and stayed out of its EUI.
 */
function countsToSiteTotal(meter: MeterRow, all: MeterRow[]): boolean {
  if (meter.commodity === 'electricity') return meter.site;
  const supply = (m: MeterRow) => m.commodity === meter.commodity && m.role === 'import' && m.kind !== 'virtual';
  if (!supply(meter)) return false;
  return meter.area === null || !all.some((m) => supply(m) && m.area === null);
}

export function metadata(db: Db): Pick<SiteBatch, 'site' | 'areas' | 'meters'> {
  const config = db.orm.select({ siteName: platformConfig.siteName, timezone: platformConfig.timezone }).from(platformConfig).get();
  const areas = db.orm.select().from(areaFloorAreas).orderBy(asc(areaFloorAreas.area)).all();
  const meterRows = db.orm.select().from(meters).orderBy(asc(meters.id)).all();
  const areaNames = new Set([...areas.map((a) => a.area), ...meterRows.flatMap((m) => (m.area ? [m.area] : []))]);
  const floor = areas.reduce((sum, a) => sum + a.floorAreaM2, 0);
  return {
    site: { name: config?.siteName ?? 'EMS', timezone: config?.timezone ?? 'UTC', floorAreaM2: floor > 0 ? floor : null },
    areas: [...areaNames].sort().map((name) => ({ name, floorAreaM2: areas.find((a) => a.area === name)?.floorAreaM2 ?? null })),
    meters: meterRows.map((m) => ({
      key: String(m.id),
      name: m.name,
      commodity: m.commodity,
      unit: UNITS[m.commodity] ?? 'kWh',
      area: m.area,
      siteTotal: countsToSiteTotal(m, meterRows),
    })),
  };
}

type Quality = 'measured' | 'estimated' | 'imported';

function quality(flag: number): Quality {
  if (flag & FLAG_IMPORTED) return 'imported';
  if (flag & FLAG_ESTIMATED) return 'estimated';
  return 'measured';
}

type DayRow = typeof meterDays.$inferSelect;

const QUALITY_CODES = { measured: 1, estimated: 2, imported: 3 } as const;
/** A meter day as the fleet stored it from this process: its intervals, and its day row's figures (`totals`). */
type DayContent = { values: Float64Array; qualities: Uint8Array; totals?: string };

/** A day row's figures as one comparable key: a held day row goes only when this differs from what the fleet stored. */
function totalsKey(day: { value: number; cost: number; carbonKg: number; kwh?: number }): string {
  return `${day.value}|${day.cost}|${day.carbonKg}|${day.kwh ?? ''}`;
}

/**
 * What the fleet has stored of the recent meter days (today and yesterday), as this process sent it: each interval and
 * the day row's figures. A held day row (issue 55) goes only when its figures differ from these, a held interval only
 * when its value or quality does; the box clears all of it (and so sends everything held again) after any answer that
 * leaves unknown what the fleet holds: a 409 (a re-stamp, a second box), no answer, an answer that is not the fleet's
 * acknowledgement. A live meter day
 * is re-stamped at every collection, and re-sending its whole day every sync made a live batch carry up to 96 intervals
 * per meter when one or two had changed (the fleet's CPU grew with the hour of the day). With this, a meter day the
 * fleet has seen sends only the intervals whose value or quality differ from what the fleet stored; its day row (totals,
 * cost, carbon) always goes. Held in memory only: a new process (or a new link) starts empty and sends whole days once,
 * which the fleet's idempotent upserts absorb. Entries are staged while a batch is built and kept only once the fleet
 * answered 200 for it.
 */
export class SentIntervals {
  private readonly stored = new Map<string, DayContent>();
  private staged: Array<[string, DayContent]> = [];

  get(meter: string, day: string): DayContent | undefined {
    return this.stored.get(`${meter}|${day}`);
  }

  stage(meter: string, day: string, content: DayContent): void {
    this.staged.push([`${meter}|${day}`, content]);
  }

  /** The fleet stored the batch: its meter days are what the fleet holds; days older than the newest two are dropped. */
  commit(): void {
    let newest = '';
    for (const [key, content] of this.staged) {
      this.stored.set(key, content);
      const day = key.slice(key.indexOf('|') + 1);
      if (day > newest) newest = day;
    }
    this.staged = [];
    if (newest === '') return;
    const oldest = addDays(newest, -1);
    for (const key of this.stored.keys()) if (key.slice(key.indexOf('|') + 1) < oldest) this.stored.delete(key);
  }

  discard(): void {
    this.staged = [];
  }

  /** Staged entries so far; `unstage(n)` drops those after the first n (a meter day taken back out of a batch). */
  get stagedCount(): number {
    return this.staged.length;
  }

  unstage(count: number): void {
    this.staged.length = Math.min(count, this.staged.length);
  }

  clear(): void {
    this.stored.clear();
    this.staged = [];
  }

  get size(): number {
    return this.stored.size;
  }
}

/** What a batch's day rows need besides the row: the site's timezone, its gas meters and the calorific versions. */
type DayContext = { timezone: string; gasMeters: Set<number>; kwhPerM3: (day: string) => number };

function dayContext(tx: Pick<Tx, 'select'>): DayContext {
  const timezone = tx.select({ timezone: platformConfig.timezone }).from(platformConfig).get()?.timezone ?? 'UTC';
  const gasMeters = new Set(
    tx
      .select({ id: meters.id })
      .from(meters)
      .where(eq(meters.commodity, 'gas'))
      .all()
      .map((m) => m.id),
  );
  if (gasMeters.size === 0) return { timezone, gasMeters, kwhPerM3: () => Number.NaN };
  // A handful of rows, read in the batch's transaction: a back-dated version and the re-stamped days it restates
  // (metering/restate.ts) are seen together.
  const versions = tx
    .select({ validFrom: calorificVersions.validFrom, kwhPerM3: calorificVersions.kwhPerM3, correctionFactor: calorificVersions.correctionFactor })
    .from(calorificVersions)
    .orderBy(asc(calorificVersions.validFrom))
    .all();
  return { timezone, gasMeters, kwhPerM3: (day) => kwhPerM3ByDay(versions, [day]).get(day)! };
}

/**
 * A meter day's intervals as the fleet is to hold them (a missing one is never sent, never a 0): each one the fleet has
 * not stored as it is (`prior`) goes to `send`; returns the day's content, to remember once the fleet stored it.
 */
function trimmedIntervals(
  values: ArrayLike<number>,
  flags: ArrayLike<number>,
  count: number,
  prior: DayContent | undefined,
  send: (i: number, value: number, quality: Quality) => void,
): DayContent {
  const content: DayContent = { values: new Float64Array(count).fill(Number.NaN), qualities: new Uint8Array(count) };
  for (let i = 0; i < count; i++) {
    const value = values[i]!;
    if (Number.isNaN(value)) continue;
    const q = quality(flags[i] ?? 0);
    content.values[i] = value;
    content.qualities[i] = QUALITY_CODES[q];
    if (prior && prior.values[i] === value && prior.qualities[i] === QUALITY_CODES[q]) continue; // the fleet has it
    send(i, value, q);
  }
  return content;
}

/** A gas day's kWh: its volume × the calorific value × correction in force that day (undefined: not gas, or no version). */
function gasKwh(context: DayContext, meterId: number, day: string, volume: number): number | undefined {
  if (!context.gasMeters.has(meterId)) return undefined;
  const kwhPerM3 = context.kwhPerM3(day);
  return Number.isFinite(kwhPerM3) ? volume * kwhPerM3 : undefined;
}

function addDay(batch: SiteBatch, row: DayRow, context: DayContext, sent?: SentIntervals): void {
  const { start, count } = dayIntervals(context.timezone, row.day);
  const kwh = storedKwh(row.kwh);
  const flags = storedFlags(row.flags, row.kwh, count);
  const meter = String(row.meterId);
  const content = trimmedIntervals(kwh, flags, Math.min(count, kwh.length), sent?.get(meter, row.day), (i, value, q) =>
    batch.intervals.push({ meter, start: new Date(start + i * 900_000).toISOString(), value, quality: q, seq: row.syncSeq }),
  );
  const day: SiteBatch['days'][number] = { meter, day: row.day, value: row.totalKwh, cost: row.cost, carbonKg: row.carbonKg, seq: row.syncSeq };
  const kwhOfGas = gasKwh(context, row.meterId, row.day, row.totalKwh);
  if (kwhOfGas !== undefined) day.kwh = kwhOfGas;
  const missing = missingRuns(kwh, count, start);
  if (missing.length > 0) day.missing = missing;
  content.totals = totalsKey(day);
  sent?.stage(meter, row.day, content);
  batch.days.push(day);
}

/**
 * What the collector holds (IntervalStore.heldDays: its records with the rollups a write would store now), trimmed like
 * a live row: the intervals the fleet has not stored as they are, and the held day rows whose figures (kWh, cost,
 * carbon, gas kWh) differ from what the fleet stored of them (issue 55: a meter that used nothing since the last send
 * sends nothing). Bounded by `rows`: the days that do not fit go at the next send (what went is remembered once the
 * fleet stored it). Read outside any write transaction: nothing is marked, nothing written. Null when nothing is held
 * or nothing held differs from what the fleet has.
 */
export function heldPart(db: Db, held: readonly HeldDay[], sent: SentIntervals, rows = ROWS_PER_BATCH): NonNullable<SiteBatch['held']> | null {
  if (held.length === 0) return null;
  const context = dayContext(db.orm);
  const part: NonNullable<SiteBatch['held']> = { intervals: [], days: [] };
  for (const day of held) {
    const { record } = day;
    const meter = String(record.meterId);
    const before = part.intervals.length;
    const prior = sent.get(meter, record.day);
    // As the row will store them (0.1 Wh), so that the write's own batch finds them unchanged.
    const values = Float64Array.from(record.kwh, (raw) => quantize(raw, KWH_SCALE));
    const content = trimmedIntervals(values, record.flags, values.length, prior, (i, value, q) =>
      part.intervals.push({ meter, start: new Date(record.start + i * 900_000).toISOString(), value, quality: q }),
    );
    const total: NonNullable<SiteBatch['held']>['days'][number] = { meter, day: record.day, value: day.totalKwh, cost: day.cost, carbonKg: day.carbonKg };
    const kwhOfGas = gasKwh(context, record.meterId, record.day, day.totalKwh);
    if (kwhOfGas !== undefined) total.kwh = kwhOfGas;
    content.totals = totalsKey(total);
    const sendTotal = prior?.totals !== content.totals;
    const size = part.intervals.length + part.days.length + (sendTotal ? 1 : 0);
    if (before + part.days.length > 0 && size > rows) {
      part.intervals.length = before; // this day and the rest go at the next send
      break;
    }
    sent.stage(meter, record.day, content);
    if (sendTotal) part.days.push(total);
  }
  return part.intervals.length + part.days.length > 0 ? part : null;
}

function addAlert(batch: SiteBatch, row: typeof alerts.$inferSelect): void {
  batch.alerts.push({
    id: row.id,
    title: row.title.slice(0, 500),
    level: row.level,
    status: row.status,
    occurredAt: row.occurredAt,
    acknowledgedAt: row.acknowledgedAt,
    resolvedAt: row.resolvedAt,
    seq: row.syncSeq,
  });
}

type Tx = Parameters<Parameters<Db['orm']['transaction']>[0]>[0];

/**
 * Read and mark in one write transaction (BEGIN IMMEDIATE): a row changed after this read takes a new sequence (the
 * update trigger compares with sent_through), so the batch never carries stale content under a sequence the cursor
 * will pass. Written only when the mark moves: an idle tick writes nothing.
 */
const IMMEDIATE = { behavior: 'immediate' } as const;

function markCarried(tx: Tx, through: number): void {
  const current = tx.select({ sentThrough: syncSequence.sentThrough }).from(syncSequence).where(eq(syncSequence.id, 1)).get()?.sentThrough ?? 0;
  if (through > current) tx.update(syncSequence).set({ sentThrough: through }).where(eq(syncSequence.id, 1)).run();
}

/**
 * The next contiguous batch above `cursor`: the first rows by sequence across meter days and alerts, read in one
 * transaction (a consistent snapshot). `contiguous` is always true here; `through` is the last row's sequence, or the
 * cursor when nothing is waiting.
 */
export function historyBatch(
  db: Db,
  cursor: number,
  sentAt: Date,
  limits: { days: number; alerts: number; rows?: number } = { days: DAYS_PER_BATCH, alerts: ALERTS_PER_BATCH, rows: ROWS_PER_BATCH },
  sent?: SentIntervals,
): SiteBatch {
  sent?.discard();
  return db.orm.transaction((tx) => {
    const context = dayContext(tx);
    const days = tx.select().from(meterDays).where(gt(meterDays.syncSeq, cursor)).orderBy(asc(meterDays.syncSeq)).limit(limits.days).all();
    const alertRows = tx.select().from(alerts).where(gt(alerts.syncSeq, cursor)).orderBy(asc(alerts.syncSeq)).limit(limits.alerts).all();
    const deletions = tx
      .select()
      .from(syncDeletedAlerts)
      .where(gt(syncDeletedAlerts.syncSeq, cursor))
      .orderBy(asc(syncDeletedAlerts.syncSeq))
      .limit(limits.alerts)
      .all();
    const drops = droppedAbove(tx, cursor);
    // The global first rows: everything up to the lower of the two lists' last sequences when a list was cut short.
    let through = Number.POSITIVE_INFINITY;
    if (days.length === limits.days) through = Math.min(through, days[days.length - 1]!.syncSeq);
    if (alertRows.length === limits.alerts) through = Math.min(through, alertRows[alertRows.length - 1]!.syncSeq);
    if (deletions.length === limits.alerts) through = Math.min(through, deletions[deletions.length - 1]!.syncSeq);
    if (drops.length === DROPPED_DAYS_PER_BATCH) through = Math.min(through, drops[drops.length - 1]!.syncSeq);
    const batch: SiteBatch = { sentAt: sentAt.toISOString(), after: cursor, through: cursor, intervals: [], days: [], alerts: [] };
    // Meter days in sequence order until the row budget is spent: the day that overflows goes back out, and the batch
    // ends at the sequence before it (the first day always goes: 97 rows at most).
    const budget = limits.rows ?? ROWS_PER_BATCH;
    let previousSeq = cursor;
    for (const row of days) {
      if (row.syncSeq > through) break;
      const intervalsBefore = batch.intervals.length;
      const stagedBefore = sent?.stagedCount ?? 0;
      addDay(batch, row, context, sent);
      if (batch.days.length > 1 && batch.intervals.length + batch.days.length > budget) {
        batch.intervals.length = intervalsBefore;
        batch.days.pop();
        sent?.unstage(stagedBefore);
        through = previousSeq;
        break;
      }
      previousSeq = row.syncSeq;
    }
    for (const row of alertRows) if (row.syncSeq <= through) addAlert(batch, row);
    const deleted = deletions.filter((row) => row.syncSeq <= through).map((row) => ({ id: row.alertId, seq: row.syncSeq }));
    if (deleted.length > 0) batch.deletedAlerts = deleted;
    const droppedSeqs = addDropped(batch, drops, through, context.timezone, sent && ((meter, day, content) => sent.stage(meter, day, content)));
    batch.through = Math.max(cursor, ...batch.days.map((d) => d.seq), ...batch.alerts.map((a) => a.seq), ...deleted.map((d) => d.seq), ...droppedSeqs);
    markCarried(tx, batch.through);
    return batch;
  }, IMMEDIATE);
}

/** The newest site day's rows above the cursor, sent ahead of the history after an outage (the cursor does not move). */
export function newestDayBatch(db: Db, cursor: number, day: string, sentAt: Date, sent?: SentIntervals): SiteBatch {
  sent?.discard();
  return db.orm.transaction((tx) => {
    const context = dayContext(tx);
    const days = tx
      .select()
      .from(meterDays)
      .where(and(eq(meterDays.day, day), gt(meterDays.syncSeq, cursor)))
      .all();
    const batch: SiteBatch = { sentAt: sentAt.toISOString(), after: cursor, through: cursor, ahead: true, intervals: [], days: [], alerts: [] };
    for (const row of days) addDay(batch, row, context, sent);
    batch.through = Math.max(cursor, ...batch.days.map((d) => d.seq));
    markCarried(tx, batch.through);
    return batch;
  }, IMMEDIATE);
}

/**
 * Recovery from a sequence that went backwards (the fleet refused a batch whose `after` is below the cursor it holds:
 * the box was restored from an older backup): every meter day and alert above the box's cursor takes a new sequence
 * above the fleet's cursor, in the order they had, in one transaction. The box's cursor then becomes the fleet's, and
 * the next batches carry those rows again; the fleet's upserts let the higher sequence win, so it ends with what the box
 * holds. Writing sync_seq alone fires no re-stamping trigger (they watch the content columns). Returns the rows.
 */
export function resequenceAbove(db: Db, boxCursor: number, fleetCursor: number): number {
  return db.orm.transaction((tx) => {
    const rows = [
      ...tx
        .select({ day: meterDays.day, meterId: meterDays.meterId, seq: meterDays.syncSeq })
        .from(meterDays)
        .where(gt(meterDays.syncSeq, boxCursor))
        .all()
        .map((r) => ({ kind: 'day' as const, ...r, id: 0 })),
      ...tx
        .select({ id: alerts.id, seq: alerts.syncSeq })
        .from(alerts)
        .where(gt(alerts.syncSeq, boxCursor))
        .all()
        .map((r) => ({ kind: 'alert' as const, ...r, day: '', meterId: 0 })),
      ...tx
        .select({ id: syncDeletedAlerts.alertId, seq: syncDeletedAlerts.syncSeq })
        .from(syncDeletedAlerts)
        .where(gt(syncDeletedAlerts.syncSeq, boxCursor))
        .all()
        .map((r) => ({ kind: 'deleted' as const, ...r, day: '', meterId: 0 })),
      ...tx
        .select({ day: meterDaysDropped.day, meterId: meterDaysDropped.meterId, seq: meterDaysDropped.syncSeq })
        .from(meterDaysDropped)
        .where(gt(meterDaysDropped.syncSeq, boxCursor))
        .all()
        .map((r) => ({ kind: 'dropped' as const, ...r, id: 0 })),
    ].sort((a, b) => a.seq - b.seq);
    const current = tx.select({ value: syncSequence.value }).from(syncSequence).where(eq(syncSequence.id, 1)).get()?.value ?? 0;
    let next = Math.max(current, fleetCursor);
    for (const row of rows) {
      next++;
      if (row.kind === 'day')
        tx.update(meterDays)
          .set({ syncSeq: next })
          .where(and(eq(meterDays.day, row.day), eq(meterDays.meterId, row.meterId)))
          .run();
      else if (row.kind === 'alert') tx.update(alerts).set({ syncSeq: next }).where(eq(alerts.id, row.id)).run();
      else if (row.kind === 'dropped')
        tx.update(meterDaysDropped)
          .set({ syncSeq: next })
          .where(and(eq(meterDaysDropped.day, row.day), eq(meterDaysDropped.meterId, row.meterId)))
          .run();
      else tx.update(syncDeletedAlerts).set({ syncSeq: next }).where(eq(syncDeletedAlerts.alertId, row.id)).run();
    }
    tx.update(syncSequence).set({ value: next }).where(eq(syncSequence.id, 1)).run();
    return rows.length;
  }, IMMEDIATE);
}

/**
 * Acknowledged deletions kept on the box (a few bytes each): the fleet may lose batches it acknowledged (a primary that
 * crashed before its standby had them, a database restored from a backup), and then asks for everything above its older
 * cursor again (409 `sequence_gap`). Meter days and alerts are still in their tables to be sent again; a deletion has
 * nothing else left, so its entry stays here (below the cursor it is never counted or sent) until this many newer ones
 * exist. Alerts are deleted one at a time by people (DELETE /api/alerts/:id), so 10,000 reach years back.
 */
export const KEPT_DELETIONS = 10_000;

/** Drops the acknowledged deletions (at or below `cursor`) older than the newest `keep` entries. */
export function forgetAcknowledgedDeletions(db: Db, cursor: number, keep = KEPT_DELETIONS): void {
  forgetAcknowledged(db, syncDeletedAlerts, syncDeletedAlerts.syncSeq, cursor, keep);
}
