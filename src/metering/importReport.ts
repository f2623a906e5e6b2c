// What a history import answers and audits, per meter: the file's span, its quantity in the meter's unit, and its
// intervals counted against the store as new, overlapping, refused or estimated.
import type { DayRecord } from './store.ts';
import { FLAG_ESTIMATED } from './store.ts';
import type { DayPlan, ImportForm, MeterPlan, Problem } from './importPlan.ts';

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

export function report(plan: MeterPlan, tally: Tally): MeterReport {
  const days = [...plan.days.keys()].sort();
  const quantity = Math.round(tally.kwh * 10_000) / 10_000;
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
  };
}

export function acceptable(meters: MeterReport[], replace: boolean): boolean {
  return meters.every((meter) => meter.intervals.refused === 0 && (replace || meter.intervals.overlapping === 0));
}
