// Suspect runs (issue 52): a run of one repeated value (a flat zero: a dead meter or logger) on a meter whose recent
// history reads more is not taken as consumption. Its intervals read as `suspect` (FLAG_SUSPECT, laid over the stored
// flags by StoredDays) and stay out of baselines, anomaly models and EnPIs until a person confirms the run as real (a
// closed building); then they count as measured. Found by the collector's data watch and by the history import alike,
// by one rule per commodity (SUSPECT_RUN_INTERVALS, docs/energy-data-quality.md "Suspect runs").
import type { Actor, AuditLog } from '../platform/db/auditTrail.ts';
import type { Db } from '../platform/db/client.ts';
import { NotFound } from '../platform/errors.ts';
import { addDays, dayIntervals, dayOf, INTERVAL_MS } from '../platform/time/calendar.ts';
import { KWH_SCALE } from './intervalCodec.ts';
import { SLICE_MS, type IntervalStore } from './store.ts';

/**
 * The shortest run (15-minute intervals) that is suspect, per kind of meter; null: not watched.
 * - An electricity incomer (a site grid-import meter) never reads one value for 4 hours: even a closed building draws
 *   a base load that moves at 0.1 Wh.
 * - An electricity sub-meter may be off over a weekend (Friday evening to Monday morning is ~61 h): 72 hours.
 * - Gas, water and heat read 0 at night and over weekends: 72 hours.
 * - PV (generation) reads 0 every night (up to ~16 h): 48 hours, a whole day without any output between two nights.
 * - Grid export reads 0 whenever the building uses all its PV makes (every night, whole winter weeks): not watched.
 */
export const SUSPECT_RUN_INTERVALS = { incomer: 16, subMeter: 288, gas: 288, water: 288, heat: 288, generation: 192, export: null } as const;
/** The history a run is held against: the last 7 days of counted (present, not suspect) intervals before it. */
export const REFERENCE_INTERVALS = 672;
/** A run is judged only with at least a day of history before it. */
export const MIN_REFERENCE_INTERVALS = 96;
/** "Reads more": the history's mean interval is at least this many times the run's value (and above 0). */
export const READS_MORE_FACTOR = 2;
/** How far back the collector's watch looks for a run still going on (and its history). */
const WATCH_DAYS = 8;

export type WatchedMeter = { id: number; name: string; kind: string; commodity: string; role: string; site: boolean };

/** The shortest suspect run of a meter (intervals), or null when its kind is not watched (virtual meters, grid export). */
export function suspectRunIntervals(meter: Pick<WatchedMeter, 'kind' | 'commodity' | 'role' | 'site'>): number | null {
  if (meter.kind === 'virtual') return null;
  if (meter.commodity === 'gas' || meter.commodity === 'water' || meter.commodity === 'heat') return SUSPECT_RUN_INTERVALS[meter.commodity];
  if (meter.role === 'export') return SUSPECT_RUN_INTERVALS.export;
  if (meter.role === 'generation') return SUSPECT_RUN_INTERVALS.generation;
  return meter.site ? SUSPECT_RUN_INTERVALS.incomer : SUSPECT_RUN_INTERVALS.subMeter;
}

export type FoundRun = { startAt: number; intervals: number; value: number };

/** An import's days laid over what is stored (NaN: the file brings nothing for that interval). */
type Overlay = (day: string) => { kwh: ArrayLike<number> } | undefined;

/**
 * The suspect runs of a series of consecutive intervals (NaN: missing; a missing interval ends a run). A run of one
 * value (to the store's 0.1 Wh) of at least `minIntervals` is suspect when the REFERENCE_INTERVALS counted intervals
 * before it (at least MIN_REFERENCE_INTERVALS of them) have a mean above 0 and at least READS_MORE_FACTOR times the
 * run's value. A suspect run's intervals never join the history the next run is held against.
 */
export function findSuspectRuns(start: number, kwh: ArrayLike<number>, minIntervals: number): FoundRun[] {
  const found: FoundRun[] = [];
  const reference = new Float64Array(REFERENCE_INTERVALS);
  let filled = 0;
  let next = 0;
  let sum = 0;
  const remember = (value: number) => {
    if (filled === REFERENCE_INTERVALS) sum -= reference[next];
    else filled += 1;
    reference[next] = value;
    sum += value;
    next = (next + 1) % REFERENCE_INTERVALS;
  };
  let i = 0;
  while (i < kwh.length) {
    if (Number.isNaN(kwh[i])) {
      i += 1;
      continue;
    }
    const units = Math.round(kwh[i] * KWH_SCALE);
    let end = i + 1;
    while (end < kwh.length && !Number.isNaN(kwh[end]) && Math.round(kwh[end] * KWH_SCALE) === units) end += 1;
    const value = units / KWH_SCALE;
    const mean = filled ? sum / filled : 0;
    if (end - i >= minIntervals && filled >= MIN_REFERENCE_INTERVALS && mean > 0 && mean >= READS_MORE_FACTOR * value) {
      found.push({ startAt: start + i * INTERVAL_MS, intervals: end - i, value });
    } else {
      for (let k = i; k < end; k += 1) remember(value);
    }
    i = end;
  }
  return found;
}

export type SuspectRun = {
  id: number;
  meterId: number;
  meterName: string;
  startAt: string;
  endAt: string;
  intervals: number;
  hours: number;
  value: number;
  source: 'collector' | 'import';
  confirmedAt: string | null;
  confirmedBy: number | null;
};

type RunRow = {
  id: number;
  meterId: number;
  meterName: string;
  startAt: number;
  intervals: number;
  value: number;
  source: 'collector' | 'import';
  confirmedAt: string | null;
  confirmedBy: number | null;
};

/** The owner of `meter_suspect_runs`: finds runs in a meter's intervals, records them (merged with those known), confirms them. */
export class SuspectRuns {
  private readonly watched;
  private readonly overlapping;
  private readonly insert;
  private readonly extend;
  private readonly byId;
  private readonly list;
  private readonly confirmRow;
  private readonly latestOf;

  constructor(
    private readonly db: Db,
    private readonly store: Pick<IntervalStore, 'load' | 'heldDays'>,
    private readonly timezone: () => string,
    private readonly audit: AuditLog,
  ) {
    const sqlite = db.sqlite;
    // raw SQL: the meters the watch reads (metering's own table), as plain rows
    this.watched = sqlite.prepare("SELECT id, name, kind, commodity, role, site FROM meters WHERE enabled = 1 AND kind <> 'virtual' ORDER BY id");
    // raw SQL: a meter's runs touching [start, end) (end-inclusive: a run that goes on is the same run), by its (meter_id, start_at) index
    this.overlapping = sqlite.prepare(
      `SELECT id, start_at AS startAt, intervals, value, confirmed_at AS confirmedAt FROM meter_suspect_runs
       WHERE meter_id = ? AND start_at <= ? AND start_at + intervals * ${INTERVAL_MS} >= ? ORDER BY start_at`,
    );
    // raw SQL: a new run, its id returned (RETURNING) for the answer
    this.insert = sqlite.prepare(
      'INSERT INTO meter_suspect_runs (meter_id, start_at, intervals, value, source, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id',
    );
    // raw SQL: a known run grown (the collector saw it go on, or an import covered more of it)
    this.extend = sqlite.prepare('UPDATE meter_suspect_runs SET intervals = ?, updated_at = ? WHERE id = ?');
    const select = `SELECT r.id, r.meter_id AS meterId, m.name AS meterName, r.start_at AS startAt, r.intervals, r.value, r.source,
       r.confirmed_at AS confirmedAt, r.confirmed_by AS confirmedBy FROM meter_suspect_runs r JOIN meters m ON m.id = r.meter_id`;
    // raw SQL: one run with its meter's name
    this.byId = sqlite.prepare(`${select} WHERE r.id = ?`);
    // raw SQL: runs with their meters' names, filtered by meter and state, newest first
    this.list = sqlite.prepare(
      `${select} WHERE (@meterId IS NULL OR r.meter_id = @meterId) AND (@open IS NULL OR (r.confirmed_at IS NULL) = @open) ORDER BY r.start_at DESC, r.id DESC LIMIT @limit`,
    );
    // raw SQL: the confirmation, once (a second one changes nothing)
    this.confirmRow = sqlite.prepare('UPDATE meter_suspect_runs SET confirmed_at = ?, confirmed_by = ?, updated_at = ? WHERE id = ? AND confirmed_at IS NULL');
    // raw SQL: a meter's latest run start, for the watch's window
    this.latestOf = sqlite.prepare('SELECT max(start_at) FROM meter_suspect_runs WHERE meter_id = ?').pluck();
  }

  /** The meters watched and their shortest suspect run. */
  meters(): Array<WatchedMeter & { minIntervals: number }> {
    const out: Array<WatchedMeter & { minIntervals: number }> = [];
    for (const meter of this.watched.all() as Array<Omit<WatchedMeter, 'site'> & { site: number }>) {
      const watched = { ...meter, site: meter.site === 1 };
      const minIntervals = suspectRunIntervals(watched);
      if (minIntervals !== null) out.push({ ...watched, minIntervals });
    }
    return out;
  }

  /**
   * A meter's intervals of the days [from, to) as one series: the stored days, what the collector holds over them, and
   * `overlay` (an import's days) over both; the intervals from `until` on (the one in progress) are left out.
   */
  series(meterId: number, from: string, to: string, overlay?: Overlay, until = Infinity) {
    const held = this.heldOf(meterId);
    const parts: ArrayLike<number>[] = [];
    for (let day = from; day < to; day = addDays(day, 1)) parts.push(this.dayValues(meterId, day, held, overlay));
    return this.joined(from, parts, until);
  }

  /** series(), giving the event loop back (`pause`) whenever SLICE_MS of work has passed: the import's year of days. */
  async seriesYielding(meterId: number, from: string, to: string, overlay: Overlay | undefined, pause: () => Promise<void>) {
    const held = this.heldOf(meterId);
    const parts: ArrayLike<number>[] = [];
    let sliceStart = performance.now();
    for (let day = from; day < to; day = addDays(day, 1)) {
      parts.push(this.dayValues(meterId, day, held, overlay));
      if (performance.now() - sliceStart > SLICE_MS) {
        await pause();
        sliceStart = performance.now();
      }
    }
    return this.joined(from, parts, Infinity);
  }

  private heldOf(meterId: number): Map<string, ArrayLike<number>> {
    const held = new Map<string, ArrayLike<number>>();
    for (const day of this.store.heldDays()) if (day.meterId === meterId) held.set(day.day, day.record.kwh);
    return held;
  }

  private dayValues(meterId: number, day: string, held: Map<string, ArrayLike<number>>, overlay?: Overlay): ArrayLike<number> {
    const base = held.get(day) ?? this.store.load(meterId, day).kwh;
    const over = overlay?.(day)?.kwh;
    return over ? Float64Array.from(base, (value, i) => (Number.isNaN(over[i]) ? value : over[i])) : base;
  }

  private joined(from: string, parts: ArrayLike<number>[], until: number): { start: number; kwh: Float64Array } {
    const start = dayIntervals(this.timezone(), from).start;
    let length = 0;
    for (const part of parts) length += part.length;
    const kwh = new Float64Array(length);
    let at = 0;
    for (const part of parts) {
      kwh.set(part, at);
      at += part.length;
    }
    const cut = Math.floor((until - start) / INTERVAL_MS);
    if (cut < length) kwh.fill(NaN, Math.max(0, cut));
    return { start, kwh };
  }

  /**
   * Records runs found on a meter: one that touches a known run of the same value grows it (a run that goes on is one
   * run, one alert); a confirmed run is not grown: what follows it is a run of its own. Answers the rows touched.
   */
  record(meterId: number, runs: FoundRun[], source: 'collector' | 'import', now = Date.now()): number[] {
    const at = new Date(now).toISOString();
    const touched: number[] = [];
    this.db.sqlite.transaction(() => {
      for (const run of runs) {
        let startAt = run.startAt;
        const end = run.startAt + run.intervals * INTERVAL_MS;
        let grown = false;
        const known = this.overlapping.all(meterId, end, startAt) as Array<{
          id: number;
          startAt: number;
          intervals: number;
          value: number;
          confirmedAt: string | null;
        }>;
        for (const row of known) {
          const rowEnd = row.startAt + row.intervals * INTERVAL_MS;
          if (row.confirmedAt !== null || row.value !== run.value) {
            // What a confirmed (or another) run already covers is not found again.
            if (rowEnd > startAt) startAt = rowEnd;
            continue;
          }
          if (end > rowEnd) this.extend.run((end - row.startAt) / INTERVAL_MS, at, row.id);
          touched.push(row.id);
          grown = true;
          break;
        }
        if (grown || startAt >= end) continue;
        const { id } = this.insert.get(meterId, startAt, (end - startAt) / INTERVAL_MS, run.value, source, at, at) as { id: number };
        touched.push(id);
      }
    })();
    return touched;
  }

  /**
   * The collector's watch: each watched meter's last WATCH_DAYS days (further back when a run it knows started
   * earlier, so that a run going on for weeks is still one run), its runs recorded. Answers how many rows were touched.
   */
  scan(now: number): number {
    const timezone = this.timezone();
    const today = dayOf(timezone, now);
    const current = Math.floor(now / INTERVAL_MS) * INTERVAL_MS;
    let touched = 0;
    for (const meter of this.meters()) {
      let from = addDays(today, -WATCH_DAYS);
      const latest = this.latestOf.get(meter.id) as number | null;
      if (latest !== null && latest < dayIntervals(timezone, from).start) {
        const back = addDays(dayOf(timezone, latest), -7);
        // At most 60 days back: a run older than that is not followed further (a new row continues it).
        if (back > addDays(today, -60)) from = back;
      }
      const { start, kwh } = this.series(meter.id, from, addDays(today, 1), undefined, current);
      const runs = findSuspectRuns(start, kwh, meter.minIntervals);
      if (runs.length) touched += this.record(meter.id, runs, 'collector', now).length;
    }
    return touched;
  }

  get(id: number): SuspectRun {
    const row = this.byId.get(id) as RunRow | undefined;
    if (!row) throw new NotFound('Suspect run not found');
    return view(row);
  }

  /** Runs, newest first: of one meter, open (unconfirmed) or confirmed ones only. */
  all(filter: { meterId?: number; open?: boolean; limit?: number } = {}): SuspectRun[] {
    const open = filter.open === undefined ? null : filter.open ? 1 : 0;
    return (this.list.all({ meterId: filter.meterId ?? null, open, limit: filter.limit ?? 500 }) as RunRow[]).map(view);
  }

  /** A person says the run is real (a closed building): its intervals count as measured from now on. Audited. */
  confirm(id: number, actor: Actor | null): SuspectRun {
    const before = this.get(id);
    if (before.confirmedAt !== null) return before;
    const at = new Date().toISOString();
    this.db.sqlite.transaction(() => {
      this.confirmRow.run(at, actor?.id ?? null, at, id);
      this.audit.record({ actor, action: 'confirm', resource: 'meter_suspect_runs', resourceId: id, before, after: { ...before, confirmedAt: at } });
    })();
    return this.get(id);
  }
}

function view(row: RunRow): SuspectRun {
  return {
    id: row.id,
    meterId: row.meterId,
    meterName: row.meterName,
    startAt: new Date(row.startAt).toISOString(),
    endAt: new Date(row.startAt + row.intervals * INTERVAL_MS).toISOString(),
    intervals: row.intervals,
    hours: row.intervals / 4,
    value: row.value,
    source: row.source,
    confirmedAt: row.confirmedAt,
    confirmedBy: row.confirmedBy,
  };
}
