// Site days in the platform time zone: where a day starts, how many 15-minute intervals it has (92, 96 or 100), which day an instant is in.
// Offsets come from the system's tz database (zoneinfo.ts); Intl answers only for a zone without a readable file.
import { zoneRules } from './zoneinfo.ts';

const dayFormats = new Map<string, Intl.DateTimeFormat>();

/** The calendar day at `at` in the zone. */
function formatDay(timezone: string, at: Date): string {
  if (zoneRules(timezone)) return new Date(wallClock(timezone, at.getTime())).toISOString().slice(0, 10);
  let format = dayFormats.get(timezone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-CA', { timeZone: timezone, year: 'numeric', month: '2-digit', day: '2-digit' });
    dayFormats.set(timezone, format);
  }
  return format.format(at);
}

/**
 * Per zone, the days last answered and the instants they span, the latest first: most instants asked fall in a day
 * asked just before. Four, not one: a backfill of the last 24 hours goes meter by meter across two days (yesterday's
 * readings, then today's, then the next meter's yesterday), and with one kept day every meter missed twice (issue 29).
 */
const lastDays = new Map<string, { day: string; from: number; to: number }[]>();
const KEPT_DAYS = 4;

/** The calendar day (YYYY-MM-DD) at `at` in the site's time zone: energy days start at the site's midnight, not UTC's. */
export function siteDay(timezone: string, at: Date = new Date()): string {
  const ms = at.getTime();
  let kept = lastDays.get(timezone);
  if (kept) for (const last of kept) if (ms >= last.from && ms < last.to) return last.day;
  const day = formatDay(timezone, at);
  const { start, count } = dayIntervals(timezone, day);
  const to = start + count * INTERVAL_MS;
  if (ms >= start && ms < to) {
    if (!kept) lastDays.set(timezone, (kept = []));
    kept.unshift({ day, from: start, to });
    if (kept.length > KEPT_DAYS) kept.pop();
  }
  return day;
}

/** `day` shifted by `offset` calendar days (no time zone involved: plain date arithmetic). */
export function addDays(day: string, offset: number): string {
  const [year, month, date] = day.split('-').map(Number);
  return new Date(Date.UTC(year, month - 1, date + offset)).toISOString().slice(0, 10);
}

export const INTERVAL_MS = 15 * 60_000;
const DAY_MS = 86_400_000;

const partFormats = new Map<string, Intl.DateTimeFormat>();

function partsFormat(timezone: string): Intl.DateTimeFormat {
  let format = partFormats.get(timezone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: timezone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    partFormats.set(timezone, format);
  }
  return format;
}

/** The wall-clock time at `at` in `timezone`, written as if it were a UTC instant (ms). */
export function wallClock(timezone: string, at: number): number {
  const rules = zoneRules(timezone);
  if (rules) {
    const seconds = Math.floor(at / 1000);
    return (seconds + rules.offsetSeconds(seconds)) * 1000;
  }
  const parts: Record<string, number> = {};
  for (const part of partsFormat(timezone).formatToParts(new Date(at))) {
    if (part.type !== 'literal') parts[part.type] = Number(part.value);
  }
  return Date.UTC(parts.year, parts.month - 1, parts.day, parts.hour, parts.minute, parts.second);
}

/** The zone's offset from UTC at `ms` (east positive); every zone's offset is a whole number of 15 minutes, so intervals align. */
export function zoneOffsetMs(timezone: string, ms: number): number {
  const whole = ms - (((ms % 1000) + 1000) % 1000);
  return wallClock(timezone, whole) - whole;
}

const starts = new Map<string, number>();

/** The instant the site day (YYYY-MM-DD) starts: local midnight, DST-aware. */
export function dayStart(timezone: string, day: string): number {
  const key = `${timezone}|${day}`;
  let start = starts.get(key);
  if (start === undefined) {
    const [y, m, d] = day.split('-').map(Number);
    const wall = Date.UTC(y, m - 1, d);
    start = wall - zoneOffsetMs(timezone, wall);
    const corrected = wall - zoneOffsetMs(timezone, start);
    if (corrected !== start && formatDay(timezone, new Date(corrected)) === day) start = corrected;
    if (starts.size > 20_000) starts.clear();
    starts.set(key, start);
  }
  return start;
}

/** The day's first instant and its number of 15-minute intervals. */
export function dayIntervals(timezone: string, day: string): { start: number; count: number } {
  const start = dayStart(timezone, day);
  return { start, count: Math.round((dayStart(timezone, addDays(day, 1)) - start) / INTERVAL_MS) };
}

/** The site day an instant falls in. */
export function dayOf(timezone: string, ms: number): string {
  return siteDay(timezone, new Date(ms));
}

/** Local weekday (0 = Monday … 6 = Sunday) and minutes since local midnight of an instant. */
export function localClock(timezone: string, ms: number): { weekday: number; minute: number } {
  const local = ms + zoneOffsetMs(timezone, ms);
  const weekday = (new Date(local).getUTCDay() + 6) % 7;
  return { weekday, minute: Math.floor((((local % DAY_MS) + DAY_MS) % DAY_MS) / 60_000) };
}

/** Days from `from` up to, not including, `to`. */
export function daysBetween(from: string, to: string): string[] {
  const days: string[] = [];
  for (let day = from; day < to; day = addDays(day, 1)) days.push(day);
  return days;
}

/** [from, to) cut into consecutive [start, end) ranges of at most `size` days, in order (for work read in slices). */
export function* daySlices(from: string, to: string, size: number): Generator<[string, string]> {
  for (let start = from; start < to; start = addDays(start, size)) {
    const end = addDays(start, size);
    yield [start, end < to ? end : to];
  }
}
