// History import: a CSV of past 15-minute intervals (kWh) or counter readings per meter, as utilities' portals export
// them, checked like live readings, reported per meter (dry run), refused on overlap unless asked to replace, and
// written through the interval store in slices that give the event loop back every SLICE_MS.
import type { Actor, AuditLog } from '../platform/db/auditTrail.ts';
import type { MeterTerm } from '../platform/db/schema/index.ts';
import { BadRequest, HttpError } from '../platform/errors.ts';
import { addDays, dayIntervals, dayOf, INTERVAL_MS } from '../platform/time/calendar.ts';
import type { MeterDirectory } from './meters.ts';
import { BACKFILL_MS, counterStep, FUTURE_TOLERANCE_MS, MAX_PLAUSIBLE_KW } from './readingCheck.ts';
import { FLAG_ESTIMATED, FLAG_IMPORTED, FLAG_JITTER, FLAG_RESET, type DayRecord, type IntervalStore, type VirtualMeter } from './store.ts';

/** How far back an import may reach: the 10 years the CSV export and the summary answer for. */
export const IMPORT_MAX_AGE_DAYS = 3660;
/** Rows one file may hold (a year of 15-minute intervals of 140 meters): the parsed file is held in memory (~13 B a row). */
export const IMPORT_MAX_ROWS = 5_000_000;
/** Bytes one file may hold (~40 B a row at the row cap). */
export const IMPORT_MAX_BYTES = 256 * 1024 * 1024;
/** Refused or bad rows listed in an answer; the count says how many there were in all. */
const LISTED = 50;
/** The longest line taken (characters): a row is under 200; a file without the line ends we know is refused, not buffered. */
export const IMPORT_MAX_LINE = 64 * 1024;
/** A header that names no known columns is quoted back in at most this many names of at most NAME_SHOWN characters. */
const NAMES_SHOWN = 20;
const NAME_SHOWN = 40;
/** Work between two yields of the event loop (then a step may still finish, and the slice commits). */
const SLICE_MS = 15;

export type ImportForm = 'intervals' | 'counter';
type Problem = { line: number; message: string };

/** A meter-day of the file: the values it brings (NaN: none) and their flags. */
type DayPlan = { day: string; start: number; kwh: Float64Array; flags: Uint8Array };

type MeterPlan = {
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
};

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

/** A header's names for a message: the first NAMES_SHOWN, each cut to NAME_SHOWN characters, and how many more. */
function shownNames(names: string[]): string {
  const shown = names.slice(0, NAMES_SHOWN).map((name) => (name.length > NAME_SHOWN ? `${name.slice(0, NAME_SHOWN - 1)}…` : name));
  return names.length > NAMES_SHOWN ? `${shown.join(', ')} and ${names.length - NAMES_SHOWN} more` : shown.join(', ');
}

const yieldLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Header names accepted for each column (lower case, spaces and dashes read as underscores). */
const COLUMNS = {
  meter: ['meter', 'meter_id', 'meterid', 'meter_code', 'code'],
  time: ['start', 'time', 'timestamp', 'at', 'from'],
  kwh: ['kwh', 'energy_kwh', 'consumption_kwh'],
  reading: ['reading', 'reading_kwh', 'counter', 'counter_kwh', 'register_kwh'],
};

/**
 * An ISO 8601 instant with a zone (Z or ±hh:mm), to the minute or second: 2025-03-01T00:15:00Z, 2025-03-01 00:15+01:00.
 * Parsed by hand (3.5 M rows: Date.parse and a regular expression per row cost seconds); NaN when it is not one.
 */
export function parseInstant(text: string): number {
  const s = text.trim();
  const n = (from: number, length: number) => {
    let value = 0;
    for (let i = from; i < from + length; i += 1) {
      const c = s.charCodeAt(i) - 48;
      if (c < 0 || c > 9) return NaN;
      value = value * 10 + c;
    }
    return value;
  };
  if (s.length < 17 || s[4] !== '-' || s[7] !== '-' || (s[10] !== 'T' && s[10] !== ' ') || s[13] !== ':') return NaN;
  const year = n(0, 4);
  const month = n(5, 2);
  const day = n(8, 2);
  const hour = n(11, 2);
  const minute = n(14, 2);
  let i = 16;
  let second = 0;
  if (s[i] === ':') {
    second = n(17, 2);
    i = 19;
    if (s[i] === '.') {
      i += 1;
      while (i < s.length && s.charCodeAt(i) >= 48 && s.charCodeAt(i) <= 57) {
        if (s[i] !== '0') return NaN; // a fraction of a second is never on an interval boundary
        i += 1;
      }
    }
  }
  let offset: number;
  const zone = s.slice(i);
  if (zone === 'Z' || zone === 'z') offset = 0;
  else if ((zone[0] === '+' || zone[0] === '-') && zone.length === 6 && zone[3] === ':')
    offset = (zone[0] === '-' ? -1 : 1) * (n(i + 1, 2) * 60 + n(i + 4, 2)) * 60_000;
  else if ((zone[0] === '+' || zone[0] === '-') && zone.length === 5) offset = (zone[0] === '-' ? -1 : 1) * (n(i + 1, 2) * 60 + n(i + 3, 2)) * 60_000;
  else return NaN;
  if (!(month >= 1 && month <= 12 && day >= 1 && day <= 31 && hour <= 23 && minute <= 59 && second <= 59)) return NaN;
  const at = Date.UTC(year, month - 1, day, hour, minute, second) - offset;
  // 31 February and the like roll over in Date.UTC: refused, not moved to March.
  return new Date(at + offset).getUTCDate() === day ? at : NaN;
}

/** A number as portals write it: a decimal point, or a decimal comma when fields are separated by semicolons. */
function parseNumber(text: string, decimalComma: boolean): number {
  const s = (decimalComma ? text.replace(',', '.') : text).trim();
  if (s === '' || !/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s)) return NaN;
  return Number(s);
}

/** Splits one CSV line (quotes allowed around a field, "" inside quotes). */
function fields(line: string, separator: string): string[] {
  if (!line.includes('"')) return line.split(separator);
  const out: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < line.length; i += 1) {
    const c = line[i];
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') {
        field += '"';
        i += 1;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === separator) {
      out.push(field);
      field = '';
    } else field += c;
  }
  out.push(field);
  return out;
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
    const value = parseNumber(cells[valueColumn], this.decimalComma);
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
        }),
      );

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

/** The running total of an import's write, for the audit and the answer. */
type Tally = { new: number; overlapping: number; estimated: number; kwh: number; days: number };

/** What the import needs of the collector: its turns (no collection in flight), and what it holds written first. */
export type CollectionTurns = { exclusive<T>(task: () => Promise<T>): Promise<T>; flush(): void };

export class HistoryImport {
  /**
   * Imports that write run one after the other: each sees the last one's intervals as stored (overlap, never a double
   * count). The collector's turns do not give that: they are taken a slice at a time, and two imports' slices would
   * interleave (both surveyed before either wrote: two 200s, each writing part of the file).
   */
  private queue: Promise<unknown> = Promise.resolve();
  private collection: CollectionTurns | null = null;

  constructor(
    private readonly deps: {
      store: IntervalStore;
      meters: MeterDirectory;
      audit: AuditLog;
      timezone: () => string;
      now?: () => number;
    },
  ) {}

  /**
   * Set once the collector exists (it is built after the energy pieces). Each write slice then takes a turn of the
   * collector: a collection counts into day rows it loaded before, so a slice written in the middle of one was written
   * over (or added to) when the collection saved them. A collection that starts meanwhile waits at most one slice.
   */
  takeTurnsWith(collection: CollectionTurns): void {
    this.collection = collection;
  }

  /**
   * Reads the CSV body (an async iterable of chunks), checks it, and writes it unless `dryRun`. Bad rows: 400 naming
   * their lines; refused rows: 400 (a dry run reports them); overlaps with stored intervals: 409 unless `replace`.
   */
  async run(body: AsyncIterable<Buffer | string>, options: { dryRun: boolean; replace: boolean }, actor: Actor | null): Promise<ImportReport> {
    const timezone = this.deps.timezone();
    const planner = new CsvPlanner(this.deps.meters.all(), timezone, this.deps.now?.() ?? Date.now());
    const decoder = new TextDecoder('utf-8');
    let busy = 0;
    let bytes = 0;
    lastRead = { longestMs: 0 };
    const chunks = body[Symbol.asyncIterator]();
    for (;;) {
      let step: IteratorResult<Buffer | string>;
      try {
        step = await chunks.next();
      } catch {
        // The client went away (or the connection broke) before the whole file arrived: nothing is written.
        throw new BadRequest('The upload was aborted before the file was complete: nothing was imported');
      }
      if (step.done) break;
      const chunk = step.value;
      bytes += chunk.length;
      if (bytes > IMPORT_MAX_BYTES) throw new HttpError(413, `The file is larger than ${IMPORT_MAX_BYTES} bytes: split it`);
      // Chunks already received arrive without a turn of the event loop, and one may hold thousands of lines: the loop
      // is given back every SLICE_MS, inside a chunk too.
      // Only the work here counts (waiting for the next chunk of a slow upload gives the loop back by itself).
      let from = performance.now();
      const lines = planner.lines(typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true }));
      for (let i = 0; i < lines.length; i += 1) {
        planner.takeLine(lines[i]);
        if ((i & 255) === 255 || i === lines.length - 1) {
          const now = performance.now();
          busy += now - from;
          from = now;
          if (busy > SLICE_MS) {
            lastRead.longestMs = Math.max(lastRead.longestMs, busy);
            await yieldLoop();
            busy = 0;
            from = performance.now();
          }
        }
      }
    }
    for (const line of planner.lines(decoder.decode())) planner.takeLine(line);
    planner.end();
    if (planner.form === 'counter') {
      for (const plan of planner.plans.values()) {
        planner.counterIntervals(plan);
        await yieldLoop();
      }
    }
    if (planner.badCount) {
      throw new BadRequest(
        `${planner.badCount} bad row${planner.badCount === 1 ? '' : 's'}: nothing was imported`,
        planner.bad.map(({ line, message }) => ({ path: `line ${line}`, message })),
      );
    }
    const plans = [...planner.plans.values()].sort((a, b) => a.meterId - b.meterId);
    const header = { dryRun: options.dryRun, replace: options.replace, form: planner.form!, rows: planner.rows };
    if (options.dryRun) {
      const meters = await this.survey(plans, options.replace);
      return { ...header, accepted: acceptable(meters, options.replace), written: false, meters };
    }
    const run = this.queue.then(() => this.write(plans, header, timezone, actor));
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Per meter: what the file would change against the store as it is now (read in slices). */
  private async survey(plans: MeterPlan[], replace: boolean): Promise<MeterReport[]> {
    const reports: MeterReport[] = [];
    let sliceStart = performance.now();
    for (const plan of plans) {
      const tally: Tally = { new: 0, overlapping: 0, estimated: 0, kwh: 0, days: 0 };
      for (const day of plan.days.values()) {
        const stored = this.deps.store.load(plan.meterId, day.day);
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

  private async write(
    plans: MeterPlan[],
    header: Omit<ImportReport, 'accepted' | 'written' | 'meters'>,
    timezone: string,
    actor: Actor | null,
  ): Promise<ImportReport> {
    const surveyed = await this.survey(plans, header.replace);
    const refused = surveyed.flatMap((meter) =>
      meter.refused.map((problem) => ({ path: `line ${problem.line}`, message: `meter ${meter.meterId}: ${problem.message}` })),
    );
    if (refused.length)
      throw new BadRequest(`${surveyed.reduce((sum, meter) => sum + meter.intervals.refused, 0)} rows refused: nothing was imported`, refused.slice(0, LISTED));
    const overlapping = surveyed.filter((meter) => meter.intervals.overlapping > 0);
    if (overlapping.length && !header.replace) {
      throw new HttpError(
        409,
        'The file overlaps intervals already stored: nothing was imported (send replace=true to overwrite them)',
        overlapping.map((meter) => ({
          path: `meter ${meter.meterId}`,
          message: `${meter.intervals.overlapping} intervals between ${meter.from} and ${meter.to} are stored`,
        })),
      );
    }
    const { store } = this.deps;
    const virtuals = this.deps.meters
      .all()
      .filter((meter) => meter.kind === 'virtual')
      .map((meter) => ({ id: meter.id, terms: (meter.terms ?? []) as MeterTerm[] }));
    store.transaction(() =>
      this.deps.audit.record({
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
    // The work as a flat list of steps, run a slice (one transaction) at a time: day by day, every meter of the day,
    // then the virtual meters built on them (derived once a day, not once a meter), then the month peaks and the audit.
    const entries: { plan: MeterPlan; day: DayPlan }[] = [];
    for (const plan of plans) for (const day of plan.days.values()) entries.push({ plan, day });
    entries.sort((a, b) => (a.day.day < b.day.day ? -1 : a.day.day > b.day.day ? 1 : a.plan.meterId - b.plan.meterId));
    const tallies = new Map(plans.map((plan) => [plan.meterId, { new: 0, overlapping: 0, estimated: 0, kwh: 0, days: 0 } as Tally]));
    const months = new Set<string>();
    const steps: (() => void)[] = [];
    let next = 0;
    const importedIds = new Set(plans.map((plan) => plan.meterId));
    const affected = virtuals.filter((meter: VirtualMeter) => meter.terms.some((term) => importedIds.has(term.meterId)));
    entries.forEach(({ plan, day }, i) => {
      steps.push(() => {
        const record = store.load(plan.meterId, day.day);
        count(day, record, tallies.get(plan.meterId)!, header.replace);
        for (let k = 0; k < day.kwh.length; k += 1) {
          if (Number.isNaN(day.kwh[k])) continue;
          // Stored since the survey (the collector's backfill of a new meter) and not to be replaced: kept.
          if (!header.replace && !Number.isNaN(record.kwh[k])) continue;
          record.kwh[k] = day.kwh[k];
          record.flags[k] = day.flags[k] | FLAG_IMPORTED;
          if (record.maxKw) record.maxKw[k] = NaN;
        }
        store.save([record]);
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
    steps.push(() => {
      const meters = plans.map((plan) => report(plan, tallies.get(plan.meterId)!));
      this.deps.audit.record({
        actor,
        action: 'import',
        resource: 'energy_history',
        after: { ...header, meters: meters.map(({ meterId, from, to, kwh, intervals, days }) => ({ meterId, from, to, kwh, intervals, days })) },
      });
    });
    const durations: number[] = [];
    const commits: number[] = [];
    const slice = async () => {
      // The file's days are the zone's it was read in: a time-zone move (which takes the collector's turns too) between
      // two slices re-keyed the days written so far, and the rest would land on the wrong days.
      if (this.deps.timezone() !== timezone)
        throw new HttpError(
          409,
          `The site time zone changed during the import: the days written before the change were moved with it, the rest not written (send the file again with replace=true)`,
        );
      // What the collector counted and holds in memory (the open interval) is written first: held, it would be saved
      // over this slice's rows later.
      this.collection?.flush();
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
      await (this.collection ? this.collection.exclusive(slice) : slice());
      await yieldLoop();
    }
    lastWrite = { slices: durations.length, longestMs: Math.max(0, ...durations), durations, commits };
    const meters = plans.map((plan) => report(plan, tallies.get(plan.meterId)!));
    return { ...header, accepted: true, written: true, meters };
  }
}

/** The last file's reading and checking (for the benchmark): the longest stretch between two yields, in ms. */
export let lastRead = { longestMs: 0 };

/** The last import's slices (for the benchmark): how many, and the longest in ms. */
export let lastWrite: { slices: number; longestMs: number; durations: number[]; commits: number[] } = { slices: 0, longestMs: 0, durations: [], commits: [] };

function count(day: DayPlan, stored: DayRecord, tally: Tally, replace: boolean): void {
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

/** A meter's unit by its commodity: gas and water meters count m³. */
function unitOf(commodity: string): 'kWh' | 'm³' {
  return commodity === 'gas' || commodity === 'water' ? 'm³' : 'kWh';
}

function report(plan: MeterPlan, tally: Tally): MeterReport {
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

function acceptable(meters: MeterReport[], replace: boolean): boolean {
  return meters.every((meter) => meter.intervals.refused === 0 && (replace || meter.intervals.overlapping === 0));
}
