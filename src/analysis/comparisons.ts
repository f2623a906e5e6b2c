// Period comparisons for the site, an area or a meter: a period against the one before it and the same period a year
// earlier, in one call. A period still running is compared like for like (the same elapsed days and 15-minute
// intervals of each reference period); a period whose meters lack days is marked incomplete, with the days named.
import type { EnergyFigures, Totals } from '../energy/index.ts';
import type { StoredDays } from '../metering/index.ts';
import type { Tariffs } from '../pricing/index.ts';
import type { Db } from '../platform/db/client.ts';
import { Kept } from '../platform/db/kept.ts';
import { addDays, dayIntervals, daysBetween, INTERVAL_MS } from '../platform/time/calendar.ts';
import { BadRequest } from '../platform/errors.ts';
import { WeatherNormalisation, type WeatherNormalisedChange } from './normalisation.ts';
import { round } from '../platform/numbers.ts';

export const PERIODS = ['day', 'week', 'month', 'year', 'custom'] as const;
export type PeriodKind = (typeof PERIODS)[number];
export type Target = { meterId?: number; area?: string };

export type PeriodFigure = {
  from: string;
  to: string;
  /** The instant the figures run to: the period's end, or for a running period the like-for-like cut. */
  through: string;
  kwh: number;
  cost: number;
  carbonKg: number;
  /** The figures stop before the period's end (a running period, and the references cut to match it). */
  partial: boolean;
  /** Every meter of the target has a stored day for every day counted. */
  complete: boolean;
  /** Stored meter-days ÷ expected meter-days over the days counted (0…1). */
  coverage: number;
  /** Days where at least one meter of the target has nothing stored (at most 31 listed). */
  missingDays: string[];
};

export type Comparison = {
  period: PeriodKind;
  target: { kind: 'site' | 'area' | 'meter'; meterId?: number; area?: string; meters: number };
  timezone: string;
  currency: string;
  current: PeriodFigure;
  previous: PeriodFigure;
  lastYear: PeriodFigure;
  change: { previous: Change; lastYear: Change };
  /** period=month: the change against the previous month normalised for weather (src/analysis/normalisation.ts); else null. */
  weatherNormalised: WeatherNormalisedChange | null;
};
type Change = { kwh: number | null; percent: number | null; cost: number | null };

const MAX_MISSING_LISTED = 31;
type DayRead = (day: string) => { start: number; kwh: Float64Array };
/** Days from `from` to `to` by date arithmetic (a year of addDays calls costs milliseconds a request). */
const dayCount = (from: string, to: string) => Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000);

/** The calendar date `years` later (29 February becomes the 28th in a common year). */
function addYears(day: string, years: number): string {
  const [y, m, d] = day.split('-').map(Number);
  const last = new Date(Date.UTC(y + years, m, 0)).getUTCDate();
  return `${y + years}-${String(m).padStart(2, '0')}-${String(Math.min(d, last)).padStart(2, '0')}`;
}

function addMonths(day: string, months: number): string {
  const [y, m] = day.split('-').map(Number);
  const index = y * 12 + (m - 1) + months;
  return `${Math.floor(index / 12)}-${String((index % 12) + 1).padStart(2, '0')}-01`;
}

/** The period of a kind containing `at` (custom: [from, to)), its predecessor and the same period a year earlier. */
export function periodsOf(
  kind: PeriodKind,
  at: string,
  custom?: { from: string; to: string },
): { current: [string, string]; previous: [string, string]; lastYear: [string, string] } {
  switch (kind) {
    case 'day':
      // A year earlier is 364 days back: the same weekday, so a Monday is compared with a Monday.
      return { current: [at, addDays(at, 1)], previous: [addDays(at, -1), at], lastYear: [addDays(at, -364), addDays(at, -363)] };
    case 'week': {
      const weekday = (new Date(`${at}T00:00:00Z`).getUTCDay() + 6) % 7;
      const monday = addDays(at, -weekday);
      return { current: [monday, addDays(monday, 7)], previous: [addDays(monday, -7), monday], lastYear: [addDays(monday, -364), addDays(monday, -357)] };
    }
    case 'month': {
      const first = `${at.slice(0, 7)}-01`;
      return { current: [first, addMonths(first, 1)], previous: [addMonths(first, -1), first], lastYear: [addMonths(first, -12), addMonths(first, -11)] };
    }
    case 'year': {
      const first = `${at.slice(0, 4)}-01-01`;
      return { current: [first, addYears(first, 1)], previous: [addYears(first, -1), first], lastYear: [addYears(first, -1), first] };
    }
    case 'custom': {
      // One rule for "a year earlier" (issue 41 item 10): a period of days (day, week, custom) is compared with the same
      // days 52 weeks (364 days) earlier, the same weekdays; a calendar period (month, year) with the same calendar
      // period. A custom period compared by calendar date put a Tuesday against a Wednesday.
      const { from, to } = custom!;
      const length = dayCount(from, to);
      return { current: [from, to], previous: [addDays(from, -length), from], lastYear: [addDays(from, -364), addDays(to, -364)] };
    }
  }
}

/**
 * What a comparison reads: day and month rows, which meters a target sums, prices, the site's time zone, the kept
 * outdoor temperatures (the weather-normalised change). The
 * collector's meter_state writes are not among them, so kept comparisons live until the interval store next writes.
 */
const WATCHED_TABLES = [
  'meter_days',
  'meter_months',
  'meter_fold',
  'meters',
  'tariff_versions',
  'platform_config',
  'calorific_versions',
  'outdoor_days',
  'meter_suspect_runs',
];
/** Comparisons kept at most (least recently asked dropped first): 2,048 × ~1.5 KB. */
export const KEPT_COMPARISONS = 2048;

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

export class Comparisons {
  /** Meter-day counts, kept until meter_days is written: an area's year is ~20 ms of index entries to count (measured at 50 meters). */
  private readonly counts: Kept<number>;
  /** Answers kept per question and 15-minute interval until a table they read is written; least recently asked dropped first. */
  private readonly kept: Kept<Comparison>;
  private readonly normalisation: WeatherNormalisation;

  constructor(
    db: Db,
    private readonly figures: EnergyFigures,
    private readonly tariffs: Tariffs,
    /** The stored day rows' counts (metering's reader over the (meter_id, day) key). */
    private readonly days: StoredDays,
  ) {
    const sqlite = db.sqlite;
    // The held days count too (StoredDays); their cache (metering.heldDays) reads the other four.
    this.counts = new Kept(sqlite, {
      name: 'comparisons.meterDays',
      tables: ['meter_days', 'meters', 'tariff_versions', 'calorific_versions', 'platform_config'],
      max: 5000,
    });
    this.kept = new Kept(sqlite, { name: 'comparisons', tables: WATCHED_TABLES, max: KEPT_COMPARISONS });
    this.normalisation = new WeatherNormalisation(db, figures, this.days);
  }

  /**
   * The comparison, kept: the same question in the same 15-minute interval is answered from memory until the data
   * version moves (a new interval written, a meter, tariff or setting changed). The answer is frozen: shared, not to be
   * modified.
   */
  compare(kind: PeriodKind, target: Target, options: { at?: string; from?: string; to?: string; now?: number } = {}): Comparison {
    const now = options.now ?? Date.now();
    // The interval index moves the like-for-like cut; the day is part of it (a day starts on an interval boundary).
    const key = `${kind}|${target.meterId ?? ''}|${target.area ?? ''}|${options.at ?? ''}|${options.from ?? ''}|${options.to ?? ''}|${Math.floor(now / INTERVAL_MS)}`;
    return this.kept.get(key, () => deepFreeze(this.compute(kind, target, options, now)));
  }

  /** How the kept answers were used since start (for the benchmark and the docs' figures). */
  get keptStats(): Kept<Comparison>['stats'] {
    return this.kept.stats;
  }

  private compute(kind: PeriodKind, target: Target, options: { at?: string; from?: string; to?: string }, now: number): Comparison {
    const today = this.figures.today(new Date(now));
    if (kind === 'custom' && (!options.from || !options.to))
      throw new BadRequest('Invalid query', [{ path: 'query.from', message: 'a custom period needs from and to' }]);
    const at = options.at ?? today;
    const periods = periodsOf(kind, at, kind === 'custom' ? { from: options.from!, to: options.to! } : undefined);
    const [from, to] = periods.current;
    if (to <= from) throw new BadRequest('Invalid query', [{ path: 'query.to', message: 'must be after from' }]);
    if (from > today)
      throw new BadRequest('Invalid query', [{ path: kind === 'custom' ? 'query.from' : 'query.at', message: `the period starts after today (${today})` }]);
    if (dayCount(from, to) > 366 * 5) throw new BadRequest('Invalid query', [{ path: 'query.to', message: 'at most 5 years' }]);
    const ids = this.figures.ids(target);
    const { timezone, currency } = this.figures.settings();
    // A running period counts its whole days up to today and today's finished intervals; each reference the same.
    const running = to > today;
    // One read of a day's intervals per call: today's serves both the cut and the current period's running day.
    const dayReads = new Map<string, { start: number; kwh: Float64Array }>();
    const readDay = (day: string) => {
      let read = dayReads.get(day);
      if (!read) dayReads.set(day, (read = this.figures.intervals(day, addDays(day, 1), target)));
      return read;
    };
    const cut = running ? { days: dayCount(from, today), intervals: this.finishedIntervals(today, readDay, now, timezone) } : null;
    const figure = ([f, t]: [string, string]) => this.figure(f, t, cut, target, ids, timezone, readDay);
    const current = figure(periods.current);
    const previous = figure(periods.previous);
    const lastYear = figure(periods.lastYear);
    // A reference without any data is no reference: no change at all, not the whole current figure (issue 41).
    const change = (reference: PeriodFigure): Change =>
      reference.coverage === 0
        ? { kwh: null, percent: null, cost: null }
        : {
            kwh: round(current.kwh - reference.kwh, 3),
            percent: reference.kwh > 0 ? round(((current.kwh - reference.kwh) / reference.kwh) * 100, 2) : null,
            cost: round(current.cost - reference.cost, 2),
          };
    const kindOf = target.meterId !== undefined ? 'meter' : target.area !== undefined ? 'area' : 'site';
    return {
      period: kind,
      target: { kind: kindOf, ...target, meters: ids.length },
      timezone,
      currency,
      current,
      previous,
      lastYear,
      change: { previous: change(previous), lastYear: change(lastYear) },
      weatherNormalised: kind === 'month' ? this.normalised(target, periods, cut) : null,
    };
  }

  /**
   * The month against the previous one normalised for weather, over whole days: a running month's whole days so far
   * and as many days of the previous month (the like-for-like cut's days; today's intervals are left out).
   */
  private normalised(target: Target, periods: ReturnType<typeof periodsOf>, cut: { days: number } | null): WeatherNormalisedChange {
    const whole = ([from, to]: [string, string]) => {
      const end = cut ? addDays(from, cut.days) : to;
      return { from, to: end < to ? end : to };
    };
    return this.normalisation.change(target, whole(periods.current), whole(periods.previous));
  }

  private countMeterDays(ids: number[], from: string, to: string): number {
    return this.counts.get(`${ids.join(',')}|${from}|${to}`, () => this.days.count(JSON.stringify(ids), from, to));
  }

  /**
   * Today's intervals that are over and hold data: the last interval with data may still be filling (the collector
   * reads every minute, or lags after an outage), so it is left out, and so is anything after it.
   */
  private finishedIntervals(today: string, readDay: DayRead, now: number, timezone: string): number {
    const elapsed = Math.floor((now - dayIntervals(timezone, today).start) / INTERVAL_MS);
    const { kwh } = readDay(today);
    let last = -1;
    for (let i = 0; i < kwh.length; i += 1) if (!Number.isNaN(kwh[i])) last = i;
    return Math.max(0, Math.min(elapsed, last));
  }

  /** A period's figures, cut after `cut.days` whole days and `cut.intervals` intervals of the next when given. */
  private figure(
    from: string,
    to: string,
    cut: { days: number; intervals: number } | null,
    target: Target,
    ids: number[],
    timezone: string,
    readDay: DayRead,
  ): PeriodFigure {
    const wholeEnd = cut ? (addDays(from, cut.days) < to ? addDays(from, cut.days) : to) : to;
    const totals: Totals = wholeEnd > from ? { ...this.figures.totals(from, wholeEnd, target) } : { kwh: 0, cost: 0, carbonKg: 0 };
    let through = dayIntervals(timezone, wholeEnd).start;
    let countedTo = wholeEnd;
    if (cut && wholeEnd < to && cut.intervals > 0) {
      // The running day's finished intervals, priced at the tariff of each.
      const { start, kwh } = readDay(wholeEnd);
      const { prices, version } = this.tariffs.prices(timezone, wholeEnd, start, kwh.length);
      const n = Math.min(cut.intervals, kwh.length);
      for (let i = 0; i < n; i += 1) {
        if (Number.isNaN(kwh[i])) continue;
        totals.kwh += kwh[i];
        totals.cost += kwh[i] * prices[i];
        totals.carbonKg += kwh[i] * version.carbonFactor;
      }
      through = start + n * INTERVAL_MS;
      countedTo = addDays(wholeEnd, 1);
    }
    const days = dayCount(from, countedTo);
    const expected = days * ids.length;
    const stored = expected ? this.countMeterDays(ids, from, countedTo) : 0;
    let missingDays: string[] = [];
    if (stored < expected) {
      const present = new Map(this.days.metersPerDay(JSON.stringify(ids), from, countedTo));
      missingDays = daysBetween(from, countedTo)
        .filter((day) => (present.get(day) ?? 0) < ids.length)
        .slice(0, MAX_MISSING_LISTED);
    }
    return {
      from,
      to,
      through: new Date(through).toISOString(),
      kwh: round(totals.kwh, 3),
      cost: round(totals.cost, 2),
      carbonKg: round(totals.carbonKg, 3),
      partial: countedTo < to || through < dayIntervals(timezone, to).start,
      complete: expected > 0 && stored === expected,
      coverage: expected ? round(stored / expected, 4) : 0,
      missingDays,
    };
  }
}
