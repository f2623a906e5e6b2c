// What a history import answers and audits, per meter: the file's span, its quantity in the meter's unit, and its
// intervals counted against the store as new, overlapping, refused or estimated.
import type { DayRecord } from './store.ts';
import { FLAG_ESTIMATED } from './store.ts';
import { LISTED, type DayPlan, type ImportForm, type MeterPlan, type Problem } from './importPlan.ts';
import { addDays, dayIntervals, INTERVAL_MS } from '../platform/time/calendar.ts';
import { yieldLoop } from './importSlices.ts';
import { findSuspectRuns, type FoundRun, type SuspectRuns } from './suspectRuns.ts';
import { round } from '../platform/numbers.ts';

export type MeterReport = {
  meterId: number;
  name: string;
  commodity: string;
  unit: 'kWh' | 'm³';
  from: string | null;
  to: string | null;
  /** What the file brings in the meter's unit (issue 41: a gas or water meter's m³ were reported as kWh). */
  quantity: number;
  /** The same in kWh; null for a meter counting m³ (gas before conversion, water: never energy). */
  kwh: number | null;
  intervals: { new: number; overlapping: number; refused: number; estimated: number };
  days: number;
  refused: Problem[];
  jitter: number;
  resets: number;
  gaps: number;
  /** Empty kwh cells of the file (missing intervals: nothing written for them). */
  empty: number;
  /** Intervals between the meter's first and last value in the file that it has no value for (empty cells and rows left out). */
  missing: number;
  /** Suspect runs of the file (suspectRuns.ts): a flat zero on a meter whose history reads more. */
  suspect: { runs: number; intervals: number; listed: Array<{ startAt: string; endAt: string; intervals: number; value: number }> };
};

export type ImportReport = {
  dryRun: boolean;
  replace: boolean;
  form: ImportForm;
  rows: number;
  /** True when the import was (or, in a dry run, would be) written: nothing refused, and no overlap unless replace. */
  accepted: boolean;
  written: boolean;
  meters: MeterReport[];
};

/** The running total of an import's write, for the audit and the answer. */
export type Tally = { new: number; overlapping: number; estimated: number; kwh: number; days: number };

export function count(day: DayPlan, stored: DayRecord, tally: Tally, replace: boolean): void {
  let touched = false;
  for (let i = 0; i < day.kwh.length; i += 1) {
    if (Number.isNaN(day.kwh[i])) continue;
    if (Number.isNaN(stored.kwh[i])) tally.new += 1;
    else {
      tally.overlapping += 1;
      if (!replace) continue;
    }
    touched = true;
    tally.kwh += day.kwh[i];
    if (day.flags[i] & FLAG_ESTIMATED) tally.estimated += 1;
  }
  if (touched) tally.days += 1;
}

export function report(plan: MeterPlan, tally: Tally, runs: FoundRun[] = []): MeterReport {
  const days = [...plan.days.keys()].sort();
  const quantity = round(tally.kwh, 4);
  return {
    meterId: plan.meterId,
    name: plan.name,
    commodity: plan.commodity,
    unit: plan.unit,
    from: days[0] ?? null,
    to: days.length ? days[days.length - 1] : null,
    quantity,
    kwh: plan.unit === 'kWh' ? quantity : null,
    intervals: { new: tally.new, overlapping: tally.overlapping, refused: plan.refusedCount, estimated: tally.estimated },
    days: tally.days,
    refused: plan.refused,
    jitter: plan.jitter,
    resets: plan.resets,
    gaps: plan.gaps,
    empty: plan.empty,
    missing: missingIn(plan),
    suspect: suspectSummary(runs),
  };
}

/** The intervals between the plan's first and last value with no value in the file. */
function missingIn(plan: MeterPlan): number {
  let first = Infinity;
  let last = -Infinity;
  let present = 0;
  for (const day of plan.days.values()) {
    for (let i = 0; i < day.kwh.length; i += 1) {
      if (Number.isNaN(day.kwh[i])) continue;
      const at = day.start + i * INTERVAL_MS;
      if (at < first) first = at;
      if (at > last) last = at;
      present += 1;
    }
  }
  return present ? (last - first) / INTERVAL_MS + 1 - present : 0;
}

/** A meter's suspect runs as the report gives them: how many, their intervals, the first LISTED. */
export function suspectSummary(runs: FoundRun[]): MeterReport['suspect'] {
  return {
    runs: runs.length,
    intervals: runs.reduce((sum, run) => sum + run.intervals, 0),
    listed: runs.slice(0, LISTED).map((run) => ({
      startAt: new Date(run.startAt).toISOString(),
      endAt: new Date(run.startAt + run.intervals * INTERVAL_MS).toISOString(),
      intervals: run.intervals,
      value: run.value,
    })),
  };
}

/**
 * The suspect runs each plan's meter would have once the file is in (its days over what is stored, the week before the
 * file as history), only those touching the file's span; a meter not watched has none. One meter at a time, yielding.
 */
export async function suspectsOf(suspects: SuspectRuns, plans: MeterPlan[], timezone: string): Promise<Map<number, FoundRun[]>> {
  const watched = new Map(suspects.meters().map((meter) => [meter.id, meter.minIntervals]));
  const out = new Map<number, FoundRun[]>();
  for (const plan of plans) {
    const minIntervals = watched.get(plan.meterId);
    const days = [...plan.days.keys()].sort();
    if (minIntervals === undefined || !days.length) continue;
    const first = days[0];
    const last = addDays(days[days.length - 1], 1);
    const { start, kwh } = await suspects.seriesYielding(plan.meterId, addDays(first, -7), last, (day) => plan.days.get(day), yieldLoop);
    const spanStart = dayIntervals(timezone, first).start;
    const runs = findSuspectRuns(start, kwh, minIntervals).filter((run) => run.startAt + run.intervals * INTERVAL_MS > spanStart);
    if (runs.length) out.set(plan.meterId, runs);
    await yieldLoop();
  }
  return out;
}

export function acceptable(meters: MeterReport[], replace: boolean): boolean {
  return meters.every((meter) => meter.intervals.refused === 0 && (replace || meter.intervals.overlapping === 0));
}
