// Whole days and whole hours: the one rule every daily or hourly model of analysis/ counts its observations by (issue
// 52: a day stored with 8 of its 24 hours became a baseline day of a third of its energy). A day counts only when every
// one of its intervals is stored for every meter of the target (measured, or estimated by the documented spreading
// rule: docs/energy-data-quality.md), and the day is over; an hour likewise with its four intervals. A day with some
// data but not all of it is "partial": left out of the model and listed beside the figure, never counted as a day.
import type { EnergyFigures } from '../energy/index.ts';

export type Target = { meterId?: number; area?: string };
export type DayCounting = {
  /** Days of the range with every interval of every meter of the target stored. */
  whole: Set<string>;
  /** Days with some data but not every interval (listed with the figure; never a model's day). */
  partial: string[];
};

/** Intervals in an hour: an hour is whole when all of them are there. */
export const INTERVALS_PER_HOUR = 4;

/**
 * Which days of [from, to) are whole for the target, and which partial. Read from the figures (the intervals stored,
 * and those the collector still holds): a day is whole when none of its intervals is missing and the whole day has
 * happened. EnergyFigures.wholeDays settles most days from the stored rows' presence byte without decoding them and
 * decodes only the others (87 → see docs/energy-management.md "Cost"); the answer is byDay's.
 */
export function countDays(figures: Pick<EnergyFigures, 'wholeDays'>, target: Target, from: string, to: string): DayCounting {
  const { whole, partial } = figures.wholeDays(from, to, target);
  // Copies: the figures keep their answer for the next caller.
  return { whole: new Set(whole), partial: [...partial] };
}

/**
 * The hour of intervals [i, i + 4) of a summed interval series (NaN where any meter of the target lacks an interval):
 * its energy when all four intervals are there, NaN otherwise.
 */
export function wholeHourKwh(kwh: ArrayLike<number>, i: number): number {
  let sum = 0;
  for (let k = i; k < i + INTERVALS_PER_HOUR; k += 1) {
    const value = kwh[k];
    if (value === undefined || Number.isNaN(value)) return NaN;
    sum += value;
  }
  return sum;
}
