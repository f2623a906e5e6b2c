// How complete the stored energy is: per meter (or the site, or an area) and site day, the share of the intervals that
// have happened which are measured, estimated (spread over a gap the history could not fill), suspect (in an unconfirmed
// suspect run: a flat zero on a meter that reads more, issue 52) or missing (no data). An interval of several meters
// counts as measured only when every one of them measured it, as missing when any lacks it, else as suspect when any
// is suspect, else as estimated when any is estimated.
import { FLAG_ESTIMATED, FLAG_SUSPECT, type OpenIntervals, type StoredDays } from '../metering/index.ts';
import { addDays, dayIntervals, daysBetween, INTERVAL_MS } from '../platform/time/calendar.ts';
import { round } from '../platform/numbers.ts';

export type Shares = { measured: number; estimated: number; missing: number; suspect: number };
export type DayCompleteness = { day: string; intervals: number } & Shares;

const share = (part: number, whole: number) => (whole ? round(part / whole, 4) : 0);

export class EnergyCompleteness {
  /** open: what the collector holds in memory and has not written yet (edge), overlaid on the stored rows. */
  constructor(
    /** Metering's reader of the stored days. */
    private readonly days: StoredDays,
    private readonly open: () => OpenIntervals | null | undefined = () => null,
  ) {}

  /** Per site day in [from, to): shares over the intervals before `now` (a day still to come has none). */
  byDay(ids: number[], from: string, to: string, timezone: string, now: number = Date.now()): DayCompleteness[] {
    const days = daysBetween(from, to);
    // Per interval of the range: 0 missing, 1 measured, 2 estimated, 3 suspect; combined over the meters.
    const layout = days.map((day) => dayIntervals(timezone, day));
    const state = layout.map(({ count }) => new Uint8Array(count).fill(ids.length ? 1 : 0));
    const index = new Map(days.map((day, i) => [day, i]));
    const open = this.open();
    for (const id of ids) {
      const seen = days.map(() => false);
      for (const { day, kwh: stored, flags } of this.days.decodedDays(id, from, to)) {
        const i = index.get(day);
        if (i === undefined) continue;
        seen[i] = true;
        const kwh = open?.kwh(id, day) ?? stored;
        const target = state[i];
        for (let k = 0; k < target.length; k += 1) {
          if (k >= kwh.length || Number.isNaN(kwh[k])) target[k] = 0;
          else if (target[k] !== 0 && (flags[k] ?? 0) & FLAG_SUSPECT) target[k] = 3;
          else if (target[k] === 1 && (flags[k] ?? 0) & FLAG_ESTIMATED) target[k] = 2;
        }
      }
      seen.forEach((was, i) => {
        if (!was) state[i].fill(0);
      });
    }
    return days.map((day, i) => {
      const { start, count } = layout[i];
      const happened = Math.max(0, Math.min(count, Math.ceil((now - start) / INTERVAL_MS)));
      let measured = 0;
      let estimated = 0;
      let suspect = 0;
      for (let k = 0; k < happened; k += 1) {
        if (state[i][k] === 1) measured += 1;
        else if (state[i][k] === 2) estimated += 1;
        else if (state[i][k] === 3) suspect += 1;
      }
      return {
        day,
        intervals: happened,
        measured: share(measured, happened),
        estimated: share(estimated, happened),
        missing: share(happened - measured - estimated - suspect, happened),
        suspect: share(suspect, happened),
      };
    });
  }

  /**
   * The whole-day rule (analysis/wholeDays.ts) without decoding a day that says it by itself: a day is whole when every
   * meter of `ids` has a row holding every interval (the stored presence byte) and its last interval has started; it
   * is exactly what byDay would answer (missing 0 over every interval of the day). Days the presence byte cannot
   * settle — some meter's row lacking intervals or absent (whole or not, partial or empty: the combined state decides),
   * a row of the first format, a day the collector holds ahead of its row — are taken from byDay over their span.
   */
  wholeDays(ids: number[], from: string, to: string, timezone: string, now: number = Date.now()): { whole: Set<string>; partial: string[] } {
    const whole = new Set<string>();
    const unsettled: string[] = [];
    const open = this.open();
    const held = open ? new Set([...open.records()].map((record) => record.day)) : new Set<string>();
    const over = (day: string) => {
      const { start, count } = dayIntervals(timezone, day);
      return Math.ceil((now - start) / INTERVAL_MS) >= count;
    };
    for (const [day, complete, , legacy] of this.days.presencePerDay(JSON.stringify(ids), from, to)) {
      if (ids.length && complete === ids.length && !legacy && !held.has(day) && over(day)) whole.add(day);
      else unsettled.push(day);
    }
    // A held day without a row yet has no row above: it is settled by byDay too.
    for (const day of held) if (day >= from && day < to && !unsettled.includes(day) && !whole.has(day)) unsettled.push(day);
    const partial: string[] = [];
    if (unsettled.length) {
      unsettled.sort();
      const exact = this.byDay(ids, unsettled[0], addDays(unsettled[unsettled.length - 1], 1), timezone, now);
      const wanted = new Set(unsettled);
      for (const day of exact) {
        if (!wanted.has(day.day) || day.intervals === 0 || day.missing === 1) continue;
        if (day.missing === 0 && day.intervals === dayIntervals(timezone, day.day).count) whole.add(day.day);
        else partial.push(day.day);
      }
    }
    return { whole, partial: partial.sort() };
  }

  /** The shares over the whole range, weighted by intervals. */
  total(days: DayCompleteness[]): Shares & { intervals: number } {
    const intervals = days.reduce((sum, day) => sum + day.intervals, 0);
    const weigh = (key: keyof Shares) =>
      share(
        days.reduce((sum, day) => sum + day[key] * day.intervals, 0),
        intervals,
      );
    return { intervals, measured: weigh('measured'), estimated: weigh('estimated'), missing: weigh('missing'), suspect: weigh('suspect') };
  }
}
