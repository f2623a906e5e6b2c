// The history import's survey and write: the plans (importPlan.ts) counted against the stored intervals (a dry run's
// answer), then, when nothing is refused and nothing overlaps (or replace was asked), written through the interval store
// one slice (one transaction) at a time, each slice taking a turn of the collector, with the audit before and after.
import type { Actor, AuditLog } from '../platform/db/auditTrail.ts';
import type { MeterTerm } from '../platform/db/schema/index.ts';
import { BadRequest, Conflict } from '../platform/errors.ts';
import type { MeterDirectory } from './meters.ts';
import { FLAG_IMPORTED, type IntervalStore, type VirtualMeter } from './store.ts';
import { LISTED, type MeterPlan, type DayPlan } from './importPlan.ts';
import { count, report, type ImportReport, type MeterReport, type Tally } from './importReport.ts';
import { lastRead, lastWrite, SLICE_MS, yieldLoop } from './importSlices.ts';

/** What the import needs of the collector: its turns (no collection in flight), and what it holds written first. */
export type CollectionTurns = { exclusive<T>(task: () => Promise<T>): Promise<T>; flush(): void };

export type WriteDeps = { store: IntervalStore; meters: MeterDirectory; audit: AuditLog; timezone: () => string };

/**
 * A background import's hold on its write (importJobs.ts): told the progress after each slice, asked before each slice
 * whether to stop. A stop undoes the slices written so far (undoWrite), so a cancelled import leaves nothing behind.
 */
export type WriteControl = { progress(done: number, total: number): void; cancelled(): boolean };

/** Thrown by writeImport once a cancelled import's written slices are undone. */
export class ImportCancelled extends Error {
  constructor(readonly undone: number) {
    super('The import was cancelled: the intervals written so far were taken back');
  }
}

/**
 * What one written meter-day held before the import: the slots it wrote and (with replace) their old values. Without
 * replace the import writes only empty slots, so their old state is "missing" and nothing more is kept (~100 B a day).
 */
type Undo = { meterId: number; day: string; slots: Uint8Array; kwh: Float64Array | null; flags: Uint8Array | null; maxKw: Float64Array | null };

/** Per meter: what the file would change against the store as it is now (read in slices). */
export async function survey(store: Pick<IntervalStore, 'load'>, plans: MeterPlan[], replace: boolean): Promise<MeterReport[]> {
  const reports: MeterReport[] = [];
  let sliceStart = performance.now();
  for (const plan of plans) {
    const tally: Tally = { new: 0, overlapping: 0, estimated: 0, kwh: 0, days: 0 };
    for (const day of plan.days.values()) {
      const stored = store.load(plan.meterId, day.day);
      count(day, stored, tally, replace);
      const took = performance.now() - sliceStart;
      if (took > SLICE_MS) {
        lastRead.longestMs = Math.max(lastRead.longestMs, took);
        await yieldLoop();
        sliceStart = performance.now();
      }
    }
    reports.push(report(plan, tally));
  }
  return reports;
}

/** Refused rows: 400 naming their lines; an overlap with stored intervals: 409 unless replace. Nothing is written. */
export function refuseUnwritable(surveyed: MeterReport[], replace: boolean): void {
  const refused = surveyed.flatMap((meter) =>
    meter.refused.map((problem) => ({ path: `line ${problem.line}`, message: `meter ${meter.meterId}: ${problem.message}` })),
  );
  if (refused.length)
    throw new BadRequest(`${surveyed.reduce((sum, meter) => sum + meter.intervals.refused, 0)} rows refused: nothing was imported`, refused.slice(0, LISTED));
  const overlapping = surveyed.filter((meter) => meter.intervals.overlapping > 0);
  if (overlapping.length && !replace) {
    throw new Conflict(
      'The file overlaps intervals already stored: nothing was imported (send replace=true to overwrite them)',
      overlapping.map((meter) => ({
        path: `meter ${meter.meterId}`,
        message: `${meter.intervals.overlapping} intervals between ${meter.from} and ${meter.to} are stored`,
      })),
    );
  }
}

/**
 * Writes the plans (surveyed again first: refused rows 400, overlaps 409 unless replace), one slice at a time, each in
 * a turn of the collector when there is one. The caller runs one write at a time (HistoryImport's queue).
 */
export async function writeImport(
  deps: WriteDeps,
  collection: CollectionTurns | null,
  plans: MeterPlan[],
  header: Omit<ImportReport, 'accepted' | 'written' | 'meters'>,
  timezone: string,
  actor: Actor | null,
  control?: WriteControl,
): Promise<ImportReport> {
  const surveyed = await survey(deps.store, plans, header.replace);
  refuseUnwritable(surveyed, header.replace);
  const { store } = deps;
  const virtuals = deps.meters
    .all()
    .filter((meter) => meter.kind === 'virtual')
    .map((meter) => ({ id: meter.id, terms: (meter.terms ?? []) as MeterTerm[] }));
  auditStart(deps, actor, header, surveyed);
  // The work as a flat list of steps, run a slice (one transaction) at a time: day by day, every meter of the day,
  // then the virtual meters built on them (derived once a day, not once a meter), then the month peaks and the audit.
  const entries: { plan: MeterPlan; day: DayPlan }[] = [];
  for (const plan of plans) for (const day of plan.days.values()) entries.push({ plan, day });
  entries.sort((a, b) => (a.day.day < b.day.day ? -1 : a.day.day > b.day.day ? 1 : a.plan.meterId - b.plan.meterId));
  const tallies = new Map(plans.map((plan) => [plan.meterId, { new: 0, overlapping: 0, estimated: 0, kwh: 0, days: 0 } as Tally]));
  const months = new Set<string>();
  const steps: (() => void)[] = [];
  const undos: Undo[] = [];
  let next = 0;
  const importedIds = new Set(plans.map((plan) => plan.meterId));
  const affected = virtuals.filter((meter: VirtualMeter) => meter.terms.some((term) => importedIds.has(term.meterId)));
  entries.forEach(({ plan, day }, i) => {
    steps.push(() => {
      writeMeterDay(store, plan, day, header.replace, tallies.get(plan.meterId)!, control ? undos : null);
      months.add(`${plan.meterId}|${day.day.slice(0, 7)}`);
    });
    if (entries[i + 1]?.day.day !== day.day) {
      for (const meter of affected) {
        steps.push(() => {
          store.save([store.deriveVirtual(meter, day.day)]);
          months.add(`${meter.id}|${day.day.slice(0, 7)}`);
        });
      }
    }
  });
  // Replaced intervals may have held a month's peak: the touched months' peaks are taken again from their days.
  // In steps of 50 months, inserted next when the months are known.
  if (header.replace) {
    steps.push(() => {
      const list = [...months];
      const chunks = [];
      for (let i = 0; i < list.length; i += 50) chunks.push(() => store.recomputeMonthPeaks(list.slice(i, i + 50)));
      steps.splice(next, 0, ...chunks);
    });
  }
  const reports = () => plans.map((plan) => report(plan, tallies.get(plan.meterId)!));
  steps.push(() => auditWritten(deps, actor, header, reports()));
  const durations: number[] = [];
  const commits: number[] = [];
  const slice = async () => {
    // A cancel that came while the slice waited for the collector's turn: nothing more is written (the loop undoes).
    if (control?.cancelled()) return;
    // The file's days are the zone's it was read in: a time-zone move (which takes the collector's turns too) between
    // two slices re-keyed the days written so far, and the rest would land on the wrong days.
    if (deps.timezone() !== timezone)
      throw new Conflict(
        `The site time zone changed during the import: the days written before the change were moved with it, the rest not written (send the file again with replace=true)`,
      );
    // What the collector counted and holds in memory (the open interval) is written first: held, it would be saved
    // over this slice's rows later.
    collection?.flush();
    const sliceStart = performance.now();
    let inside = sliceStart;
    store.transaction(() => {
      do steps[next++]();
      while (next < steps.length && performance.now() - sliceStart < SLICE_MS);
      inside = performance.now();
    });
    commits.push(performance.now() - inside);
    durations.push(performance.now() - sliceStart);
  };
  while (next < steps.length) {
    if (control?.cancelled()) {
      const undone = await undoWrite(deps, collection, undos, affected, actor, header);
      throw new ImportCancelled(undone);
    }
    await (collection ? collection.exclusive(slice) : slice());
    control?.progress(next, steps.length);
    await yieldLoop();
  }
  Object.assign(lastWrite, { slices: durations.length, longestMs: Math.max(0, ...durations), durations, commits });
  return { ...header, accepted: true, written: true, meters: reports() };
}

/** The import's start in the audit trail (in its own transaction): what each meter is to get. */
function auditStart(deps: WriteDeps, actor: Actor | null, header: Omit<ImportReport, 'accepted' | 'written' | 'meters'>, surveyed: MeterReport[]): void {
  deps.store.transaction(() =>
    deps.audit.record({
      actor,
      action: 'import.start',
      resource: 'energy_history',
      after: {
        ...header,
        meters: surveyed.map((meter) => ({
          meterId: meter.meterId,
          from: meter.from,
          to: meter.to,
          intervals: meter.intervals.new + meter.intervals.overlapping,
          quantity: meter.quantity,
          unit: meter.unit,
        })),
      },
    }),
  );
}

/**
 * One meter's day of the file written into its stored day: the file's intervals into the empty slots (every slot, with
 * replace), flagged imported, counted in `tally`; what the day held kept in `undos` when the write can be cancelled.
 */
function writeMeterDay(store: IntervalStore, plan: MeterPlan, day: DayPlan, replace: boolean, tally: Tally, undos: Undo[] | null): void {
  const record = store.load(plan.meterId, day.day);
  count(day, record, tally, replace);
  const undo: Undo | null = undos
    ? {
        meterId: plan.meterId,
        day: day.day,
        slots: new Uint8Array(day.kwh.length),
        kwh: replace ? Float64Array.from(record.kwh) : null,
        flags: replace ? Uint8Array.from(record.flags) : null,
        maxKw: replace && record.maxKw ? Float64Array.from(record.maxKw) : null,
      }
    : null;
  if (undo) undos?.push(undo);
  for (let k = 0; k < day.kwh.length; k += 1) {
    if (Number.isNaN(day.kwh[k])) continue;
    // Stored since the survey (the collector's backfill of a new meter) and not to be replaced: kept.
    if (!replace && !Number.isNaN(record.kwh[k])) continue;
    if (undo) undo.slots[k] = 1;
    record.kwh[k] = day.kwh[k];
    record.flags[k] = day.flags[k] | FLAG_IMPORTED;
    if (record.maxKw) record.maxKw[k] = NaN;
  }
  store.save([record]);
}

/** The import's audit entry, written with its last slice: what each meter got. */
function auditWritten(deps: WriteDeps, actor: Actor | null, header: Omit<ImportReport, 'accepted' | 'written' | 'meters'>, meters: ImportReport['meters']) {
  deps.audit.record({
    actor,
    action: 'import',
    resource: 'energy_history',
    after: { ...header, meters: meters.map(({ meterId, from, to, kwh, intervals, days }) => ({ meterId, from, to, kwh, intervals, days })) },
  });
}

/**
 * Takes a cancelled import's written meter-days back to what they held, a slice (one transaction) at a time in the
 * collector's turns: the slots it wrote get their old values (missing, without replace); a day left with nothing is
 * deleted (it had no row before); the virtual meters built on them are derived again and the months' peaks retaken.
 * Audited as import.cancel. Answers the meter-days undone.
 */
async function undoWrite(
  deps: WriteDeps,
  collection: CollectionTurns | null,
  undos: Undo[],
  affected: VirtualMeter[],
  actor: Actor | null,
  header: Omit<ImportReport, 'accepted' | 'written' | 'meters'>,
): Promise<number> {
  const { store } = deps;
  const months = new Set<string>();
  const days = new Set<string>();
  const steps: (() => void)[] = undos.map((undo) => () => {
    const record = store.load(undo.meterId, undo.day);
    let left = false;
    for (let k = 0; k < record.kwh.length; k += 1) {
      if (undo.slots[k]) {
        record.kwh[k] = undo.kwh ? undo.kwh[k] : NaN;
        record.flags[k] = undo.flags ? undo.flags[k] : 0;
        if (record.maxKw) record.maxKw[k] = undo.maxKw ? undo.maxKw[k] : NaN;
      }
      if (!Number.isNaN(record.kwh[k]) || record.flags[k]) left = true;
    }
    if (left) store.save([record]);
    else store.dropDay(undo.meterId, undo.day);
    months.add(`${undo.meterId}|${undo.day.slice(0, 7)}`);
    days.add(undo.day);
  });
  let next = 0;
  // The virtual meters' days, one step a day, inserted next once the undone days are known; then the peaks and audit.
  steps.push(() => {
    const derive = [...days].map((day) => () => {
      for (const meter of affected) {
        const derived = store.deriveVirtual(meter, day);
        if (derived.kwh.some((value) => !Number.isNaN(value))) store.save([derived]);
        else store.dropDay(meter.id, day);
        months.add(`${meter.id}|${day.slice(0, 7)}`);
      }
    });
    steps.splice(next, 0, ...derive);
  });
  steps.push(() => {
    store.recomputeMonthPeaks(months);
    deps.audit.record({ actor, action: 'import.cancel', resource: 'energy_history', after: { ...header, undone: undos.length } });
  });
  const slice = async () => {
    collection?.flush();
    const sliceStart = performance.now();
    store.transaction(() => {
      do steps[next++]();
      while (next < steps.length && performance.now() - sliceStart < SLICE_MS);
    });
  };
  while (next < steps.length) {
    await (collection ? collection.exclusive(slice) : slice());
    await yieldLoop();
  }
  return undos.length;
}
