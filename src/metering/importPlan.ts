// The plan of a history import: the uploaded file read line by line (importCsv.ts) into per-meter days of intervals, each row
// checked like a live reading (readingCheck.ts), bad rows collected with their line, not thrown. Nothing here reads or
// writes the store: the survey and the write (importWrite.ts) take the plans from here.
import { BadRequest } from '../platform/errors.ts';
import { addDays, dayIntervals, dayOf, INTERVAL_MS } from '../platform/time/calendar.ts';
import { BACKFILL_MS, counterStep, FUTURE_TOLERANCE_MS, MAX_PLAUSIBLE_KW } from './readingCheck.ts';
import { FLAG_ESTIMATED, FLAG_JITTER, FLAG_RESET } from './store.ts';
import { COLUMNS, fields, parseInstant, parseNumber, shownNames } from './importCsv.ts';

/** How far back an import may reach: the 10 years the CSV export and the summary answer for. */
export const IMPORT_MAX_AGE_DAYS = 3660;
/** Rows one file may hold (a year of 15-minute intervals of 140 meters): the parsed file is held in memory (~13 B a row). */
export const IMPORT_MAX_ROWS = 5_000_000;
/** Refused or bad rows listed in an answer; the count says how many there were in all. */
export const LISTED = 50;
/** The longest line taken (characters): a row is under 200; a file without the line ends we know is refused, not buffered. */
export const IMPORT_MAX_LINE = 64 * 1024;

export type ImportForm = 'intervals' | 'counter';
export type Problem = { line: number; message: string };

/** A meter-day of the file: the values it brings (NaN: none) and their flags. */
export type DayPlan = { day: string; start: number; kwh: Float64Array; flags: Uint8Array };

export type MeterPlan = {
  meterId: number;
  name: string;
  commodity: string;
  /** kWh, or m³ for a gas or water meter (the file's numbers are in the meter's unit). */
  unit: 'kWh' | 'm³';
  days: Map<string, DayPlan>;
  /** Counter form: the readings, sorted before they are turned into intervals. */
  readings: { at: number; value: number; line: number }[];
  refused: Problem[];
  refusedCount: number;
  jitter: number;
  resets: number;
  /** Counter form: spans between readings longer than the backfill span, left missing (never spread). */
  gaps: number;
  /** Intervals form: empty kwh cells (missing intervals, nothing written). */
  empty: number;
};

/** A meter's unit by its commodity: gas and water meters count m³. */
function unitOf(commodity: string): 'kWh' | 'm³' {
  return commodity === 'gas' || commodity === 'water' ? 'm³' : 'kWh';
}

/** Parses the file as it arrives (chunk by chunk, yielding), into per-meter plans; bad rows are collected, not thrown. */
export class CsvPlanner {
  form: ImportForm | null = null;
  rows = 0;
  readonly bad: Problem[] = [];
  badCount = 0;
  readonly plans = new Map<number, MeterPlan>();
  private separator = ',';
  private decimalComma = false;
  private columns: { meter: number; time: number; value: number; end: number } | null = null;
  private line = 0;
  private rest = '';
  private afterCr = false;
  private readonly meterOf: Map<string, { id: number; name: string; kind: string; commodity: string }>;
  /** The day an instant falls in, kept for the next row (rows come in order: one Intl call per day, not per row). */
  private lastDay = { start: 0, end: 0, day: '' };
  /** The bounds every row's time is checked against, fixed for the whole file. */
  private readonly today: number;
  private readonly oldest: number;

  constructor(
    meters: { id: number; name: string; code: string | null; kind: string; commodity?: string }[],
    private readonly timezone: string,
    private readonly now: number,
  ) {
    const today = dayOf(timezone, now);
    this.today = dayIntervals(timezone, today).start;
    this.oldest = dayIntervals(timezone, addDays(today, -IMPORT_MAX_AGE_DAYS)).start;
    this.meterOf = new Map();
    for (const meter of meters) {
      const entry = { id: meter.id, name: meter.name, kind: meter.kind, commodity: meter.commodity ?? 'electricity' };
      this.meterOf.set(String(meter.id), entry);
      if (meter.code) this.meterOf.set(meter.code, entry);
    }
  }

  /** Records a bad row; false: the row is not taken. */
  private problem(line: number, message: string): false {
    this.badCount += 1;
    if (this.bad.length < LISTED) this.bad.push({ line, message });
    return false;
  }

  private refuse(plan: MeterPlan, line: number, message: string): false {
    plan.refusedCount += 1;
    if (plan.refused.length < LISTED) plan.refused.push({ line, message });
    return false;
  }

  /**
   * The whole lines of a chunk of the body (a line split across chunks is joined); feed each to takeLine. A line ends
   * at \n, \r\n or a lone \r ("CSV (Macintosh)"). Only the unfinished last line is carried to the next chunk, and it
   * may not grow past IMPORT_MAX_LINE, so the work is linear in the file.
   */
  lines(text: string): string[] {
    // The last chunk ended in \r (taken as a line end): a \n opening this one belongs to it.
    if (this.afterCr && text.startsWith('\n')) text = text.slice(1);
    this.afterCr = text.endsWith('\r');
    const lines = (this.rest + text).split(/\r\n|\r|\n/);
    this.rest = lines.pop() ?? '';
    for (let i = 0; i < lines.length; i += 1) if (lines[i].length > IMPORT_MAX_LINE) this.tooLong(this.line + i + 1);
    if (this.rest.length > IMPORT_MAX_LINE) this.tooLong(this.line + lines.length + 1);
    return lines;
  }

  private tooLong(line: number): never {
    throw new BadRequest(`Line ${line} is longer than ${IMPORT_MAX_LINE} characters: is this a CSV file with one row per line?`, [
      { path: `line ${line}`, message: `longer than ${IMPORT_MAX_LINE} characters` },
    ]);
  }

  end(): void {
    if (this.rest) this.takeLine(this.rest);
    this.rest = '';
    if (!this.columns) throw new BadRequest('The file is empty: send a header line (meter,start,kwh or meter,time,reading) and rows');
  }

  private header(text: string): false {
    this.separator = text.includes(';') && !text.includes(',') ? ';' : text.includes('\t') && !text.includes(',') ? '\t' : ',';
    this.decimalComma = this.separator !== ',';
    const names = fields(text, this.separator).map((name) =>
      name
        .replace(/^\uFEFF/, '')
        .trim()
        .toLowerCase()
        .replace(/[\s-]+/g, '_'),
    );
    const find = (list: string[]) => names.findIndex((name) => list.includes(name));
    const meter = find(COLUMNS.meter);
    const time = find(COLUMNS.time);
    const kwh = find(COLUMNS.kwh);
    const reading = find(COLUMNS.reading);
    const missing = [meter < 0 && 'meter', time < 0 && 'start (or time)', kwh < 0 && reading < 0 && 'kwh (intervals) or reading (counter)'].filter(Boolean);
    if (missing.length)
      throw new BadRequest('The header line does not name the columns', [
        { path: 'line 1', message: `missing: ${missing.join(', ')}; found: ${shownNames(names)}` },
      ]);
    if (kwh >= 0 && reading >= 0)
      throw new BadRequest('The header line names both kwh and reading', [
        { path: 'line 1', message: 'send intervals (kwh) or counter readings (reading), one form per file' },
      ]);
    this.form = kwh >= 0 ? 'intervals' : 'counter';
    this.columns = { meter, time, value: kwh >= 0 ? kwh : reading, end: names.indexOf('end') };
    return false;
  }

  /** True when the line brought a value. */
  takeLine(raw: string): boolean {
    this.line += 1;
    const text = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (text.trim() === '' || text.startsWith('#')) return false;
    if (!this.columns) return this.header(text);
    const line = this.line;
    this.rows += 1;
    if (this.rows > IMPORT_MAX_ROWS) {
      return this.rows === IMPORT_MAX_ROWS + 1 && this.problem(line, `more than ${IMPORT_MAX_ROWS} rows: split the file`);
    }
    const cells = fields(text, this.separator);
    const { meter: meterColumn, time: timeColumn, value: valueColumn, end: endColumn } = this.columns;
    if (cells.length <= Math.max(meterColumn, timeColumn, valueColumn)) return this.problem(line, `${cells.length} fields, fewer than the header's`);
    const key = cells[meterColumn].trim();
    const meter = this.meterOf.get(key);
    if (!meter) return this.problem(line, `unknown meter "${key.slice(0, 64)}" (give its id or code)`);
    if (meter.kind === 'virtual') return this.problem(line, `meter "${meter.name}" is virtual: import its terms instead`);
    const at = parseInstant(cells[timeColumn]);
    if (Number.isNaN(at)) return this.problem(line, `"${cells[timeColumn].trim().slice(0, 40)}" is not a time with a zone (2025-03-01T00:15:00Z or +01:00)`);
    if (at % INTERVAL_MS !== 0) return this.problem(line, `${cells[timeColumn].trim()} is not on a 15-minute boundary`);
    // An empty kwh cell is a missing interval (the CSV export's own form, docs/energy-data-quality.md): nothing is
    // written for it, as for a row left out (counted for the report). A counter's empty reading is still a bad row: a
    // counter has no gap form.
    const empty = this.form === 'intervals' && cells[valueColumn].trim() === '';
    const value = empty ? 0 : parseNumber(cells[valueColumn], this.decimalComma);
    if (!Number.isFinite(value)) return this.problem(line, `"${cells[valueColumn].trim().slice(0, 40)}" is not a number`);
    let plan = this.plans.get(meter.id);
    if (!plan)
      this.plans.set(
        meter.id,
        (plan = {
          meterId: meter.id,
          name: meter.name,
          commodity: meter.commodity,
          unit: unitOf(meter.commodity),
          days: new Map(),
          readings: [],
          refused: [],
          refusedCount: 0,
          jitter: 0,
          resets: 0,
          gaps: 0,
          empty: 0,
        }),
      );
    if (empty) {
      plan.empty += 1;
      return false;
    }

    if (this.form === 'counter') {
      const why = this.timeRefusal(at, at);
      if (why) return this.refuse(plan, line, why);
      if (value < 0) return this.refuse(plan, line, `a negative counter reading (${value})`);
      plan.readings.push({ at, value, line });
      return true;
    }
    let end = at + INTERVAL_MS;
    if (endColumn >= 0 && cells[endColumn]?.trim()) {
      end = parseInstant(cells[endColumn]);
      if (Number.isNaN(end) || end % INTERVAL_MS !== 0)
        return this.problem(line, `end "${cells[endColumn].trim().slice(0, 40)}" is not a time on a 15-minute boundary`);
      if (end <= at || end - at > 86_400_000) return this.problem(line, 'end must be after start, by at most a day');
    }
    const why = this.timeRefusal(at, end);
    if (why) return this.refuse(plan, line, why);
    if (value < 0) return this.refuse(plan, line, `negative energy (${value} kWh)`);
    if (value > (MAX_PLAUSIBLE_KW * (end - at)) / 3_600_000)
      return this.refuse(plan, line, `${value} kWh in ${(end - at) / 60_000} minutes is more than any real load`);
    const count = (end - at) / INTERVAL_MS;
    for (let t = at; t < end; t += INTERVAL_MS) {
      const { day, index } = this.slot(plan, t);
      if (!Number.isNaN(day.kwh[index])) return this.problem(line, `the interval at ${new Date(t).toISOString()} is already in the file for this meter`);
      day.kwh[index] = value / count;
      // A longer row spread evenly over its quarter-hours: its energy is measured, their shape is not.
      day.flags[index] = count > 1 ? FLAG_ESTIMATED : 0;
    }
    return true;
  }

  /** Why a time is refused (the live readings' rules, with the import's own bound on the past), or null. */
  timeRefusal(start: number, end: number): string | null {
    if (end > this.now + FUTURE_TOLERANCE_MS) return `${new Date(start).toISOString()} is in the future`;
    if (end > this.today) return `${new Date(start).toISOString()} is today: today's intervals are the collector's (import them from tomorrow on)`;
    if (start < this.oldest) return `${new Date(start).toISOString()} is more than ${IMPORT_MAX_AGE_DAYS} days ago`;
    return null;
  }

  /** The plan's day holding interval `t`, and its index. */
  slot(plan: MeterPlan, t: number): { day: DayPlan; index: number } {
    let last = this.lastDay;
    if (!(t >= last.start && t < last.end)) {
      const day = dayOf(this.timezone, t);
      const { start, count } = dayIntervals(this.timezone, day);
      last = this.lastDay = { start, end: start + count * INTERVAL_MS, day };
    }
    let day = plan.days.get(last.day);
    if (!day) {
      const count = (last.end - last.start) / INTERVAL_MS;
      plan.days.set(last.day, (day = { day: last.day, start: last.start, ...this.arrays(count) }));
    }
    return { day, index: (t - last.start) / INTERVAL_MS };
  }

  /**
   * A day's arrays, cut from slabs of 65,536 intervals: a year of 100 meters is 36,500 days, and as many small buffers
   * of their own made the garbage collector's pauses longer.
   */
  private slab = { kwh: new Float64Array(0), flags: new Uint8Array(0), used: 0 };
  private arrays(count: number): { kwh: Float64Array; flags: Uint8Array } {
    if (this.slab.used + count > this.slab.kwh.length) this.slab = { kwh: new Float64Array(65_536).fill(NaN), flags: new Uint8Array(65_536), used: 0 };
    const { kwh, flags, used } = this.slab;
    this.slab.used += count;
    return { kwh: kwh.subarray(used, used + count), flags: flags.subarray(used, used + count) };
  }

  /** Counter form: readings in time order, each step checked like a live one (jitter held, reset, rollover), spread. */
  counterIntervals(plan: MeterPlan): void {
    const readings = plan.readings.sort((a, b) => a.at - b.at || a.line - b.line);
    let last: { at: number; value: number } | null = null;
    for (const reading of readings) {
      if (last && reading.at === last.at) {
        this.problem(reading.line, `a second reading at ${new Date(reading.at).toISOString()} for this meter`);
        continue;
      }
      if (!last) {
        last = reading;
        continue;
      }
      const span = reading.at - last.at;
      if (span > BACKFILL_MS) {
        // Never spread over more than the live collector would: the span stays missing.
        plan.gaps += 1;
        last = reading;
        continue;
      }
      const step = counterStep(last.value, reading.value, span / 3_600_000);
      if (step.kind === 'implausible') {
        this.refuse(plan, reading.line, `${step.why}: not counted`);
        continue;
      }
      const count = span / INTERVAL_MS;
      const kwh = step.kind === 'jitter' ? 0 : step.kwh;
      let flags = count > 1 ? FLAG_ESTIMATED : 0;
      if (step.kind === 'jitter') {
        plan.jitter += 1;
        flags |= FLAG_JITTER;
      } else if (step.kind === 'reset' || step.kind === 'rollover') {
        plan.resets += 1;
        flags |= FLAG_RESET;
      }
      for (let t = last.at; t < reading.at; t += INTERVAL_MS) {
        const { day, index } = this.slot(plan, t);
        day.kwh[index] = kwh / count;
        day.flags[index] = flags;
      }
      // A jitter reading is held: the next step counts from the higher value kept, from this reading's time.
      last = step.kind === 'jitter' ? { at: reading.at, value: last.value } : reading;
    }
    plan.readings = [];
  }
}
