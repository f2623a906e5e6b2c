// Interval data of many meters in one file: a list of meters, an area or the whole site over a period, at 15 minutes,
// hours or days, wide (a column per meter) or long (a row per meter and interval), as CSV in the reader's separators
// or as XLSX. Read a day at a time from the interval store and written as it is read, so a year of 100 meters never
// sits in memory.
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { BadRequest, NotFound } from '../errors.ts';
import { addDays, dayIntervals, daysBetween, INTERVAL_MS, zoneOffsetMs } from '../energy/calendar.ts';
import type { Meter, MeterDirectory } from '../energy/meters.ts';
import type { IntervalStore } from '../energy/store.ts';
import { supportedLocale } from '../i18n/format.ts';

export type ExportResolution = '15min' | 'hour' | 'day';
export type ExportLayout = 'wide' | 'long';

export type ExportRequest = {
  from: string;
  to: string;
  meterIds?: number[];
  area?: string;
  resolution: ExportResolution;
  layout: ExportLayout;
};

export type ExportPlan = ExportRequest & { meters: Pick<Meter, 'id' | 'name' | 'area'>[]; timezone: string };

/** Longest range per resolution, and the most meters one call exports. */
export const MAX_EXPORT_DAYS: Record<ExportResolution, number> = { '15min': 366, hour: 366 * 2, day: 366 * 10 };
export const MAX_EXPORT_METERS = 1000;
/** The last row an XLSX sheet can hold (Excel's limit; LibreOffice's too). */
const XLSX_MAX_ROWS = 1_048_576;

/** CSV separators the reader's spreadsheet expects: where the decimal mark is a comma, fields are split by semicolons. */
export function csvDialect(locale: string): { decimal: string; separator: string } {
  const decimal = new Intl.NumberFormat(supportedLocale(locale)).formatToParts(1.5).find((part) => part.type === 'decimal')?.value ?? '.';
  return decimal === ',' ? { decimal, separator: ';' } : { decimal: '.', separator: ',' };
}

/** An instant in the site's wall-clock time with its UTC offset: "2026-10-25T02:00:00+01:00". */
export function localTimestamp(timezone: string, ms: number): string {
  const offset = zoneOffsetMs(timezone, ms);
  const local = new Date(ms + offset).toISOString().slice(0, 19);
  const minutes = Math.abs(offset) / 60_000;
  return `${local}${offset < 0 ? '-' : '+'}${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;
}

/**
 * exceljs's streaming writer hands each row's XML to the zip without waiting for the compressor (its StreamBuf writes to
 * its pipes and ignores their backpressure), so a year of rows produced faster than zlib deflates them piles up in the
 * zip's input. Between days the export waits until that input has drained. This reads exceljs internals (the
 * worksheet's `stream` and its `pipes`); without them it only waits on the output stream.
 */
async function zipCaughtUp(sheet: unknown): Promise<void> {
  const stream = (sheet as { stream?: { pipes?: Writable[]; buffers?: { length?: number }[] } }).stream;
  for (let waited = 0; stream && !stream.pipes?.length && (stream.buffers?.length ?? 0) > 16 && waited < 2000; waited += 1) await new Promise((resolve) => setTimeout(resolve, 5));
  for (const pipe of stream?.pipes ?? []) if (pipe.writableNeedDrain) await once(pipe, 'drain');
}

const round = (value: number) => Math.round(value * 10_000) / 10_000;

/** One row of values: its start instant and each meter's kWh (NaN: no data). */
type Slot = { start: number; end: number; values: Float64Array };

export class EnergyExport {
  constructor(
    private readonly meters: MeterDirectory,
    private readonly store: IntervalStore,
    private readonly timezone: () => string,
  ) {}

  /** Checks the request and resolves its meters; every problem is a 400 naming the field, an unknown meter 404. */
  plan(request: ExportRequest): ExportPlan {
    const details: { path: string; message: string }[] = [];
    if (request.to <= request.from) details.push({ path: 'query.to', message: 'must be after from' });
    else if (request.to > addDays(request.from, MAX_EXPORT_DAYS[request.resolution])) details.push({ path: 'query.to', message: `at most ${MAX_EXPORT_DAYS[request.resolution]} days after from at ${request.resolution}` });
    if (request.meterIds && request.area !== undefined) details.push({ path: 'query.area', message: 'give meterIds or area, not both' });
    if (details.length) throw new BadRequest('Invalid query', details);
    const all = this.meters.all();
    let chosen: Meter[];
    if (request.meterIds) {
      const byId = new Map(all.map((meter) => [meter.id, meter]));
      const unknown = request.meterIds.filter((id) => !byId.has(id));
      if (unknown.length) throw new NotFound(`No meter with id ${unknown.join(', ')}`);
      chosen = [...new Set(request.meterIds)].map((id) => byId.get(id)!);
    } else if (request.area !== undefined) {
      chosen = all.filter((meter) => meter.area === request.area);
      if (!chosen.length) throw new NotFound(`No meter in area "${request.area}"`);
    } else chosen = all;
    if (chosen.length > MAX_EXPORT_METERS) throw new BadRequest('Invalid query', [{ path: 'query.meterIds', message: `at most ${MAX_EXPORT_METERS} meters per export` }]);
    return { ...request, meters: chosen.map(({ id, name, area }) => ({ id, name, area })), timezone: this.timezone() };
  }

  /** The rows an XLSX of the plan would have (header included); 400 past the sheet limit. */
  checkXlsx(plan: ExportPlan): void {
    const perDay = plan.resolution === '15min' ? 100 : plan.resolution === 'hour' ? 25 : 1;
    const rows = daysBetween(plan.from, plan.to).length * perDay * (plan.layout === 'long' ? plan.meters.length : 1) + 1;
    if (rows > XLSX_MAX_ROWS) {
      throw new BadRequest('Invalid query', [{ path: 'query.layout', message: `the long layout needs up to ${rows} rows, more than a sheet holds (${XLSX_MAX_ROWS}): use layout=wide, a coarser resolution or CSV` }]);
    }
  }

  /** The slots of one site day at the plan's resolution (a DST day has 23 or 25 hours, 92 or 100 quarter hours). */
  private *daySlots(plan: ExportPlan, day: string): Generator<Slot> {
    const { start, count } = dayIntervals(plan.timezone, day);
    const records = plan.meters.map((meter) => this.store.load(meter.id, day).kwh);
    const step = plan.resolution === '15min' ? 1 : plan.resolution === 'hour' ? 4 : count;
    for (let i = 0; i < count; i += step) {
      const values = new Float64Array(records.length);
      const width = Math.min(step, count - i);
      records.forEach((kwh, m) => {
        let sum = 0;
        for (let j = i; j < i + width; j += 1) {
          // A slot with any interval missing has no value: a partial sum would read as a low reading.
          if (Number.isNaN(kwh[j])) {
            sum = NaN;
            break;
          }
          sum += kwh[j];
        }
        values[m] = sum;
      });
      yield { start: start + i * INTERVAL_MS, end: start + (i + width) * INTERVAL_MS, values };
    }
  }

  private header(plan: ExportPlan): string[] {
    return plan.layout === 'wide' ? ['start', 'end', ...plan.meters.map((meter) => `${meter.name} (${meter.id}) kWh`)] : ['start', 'end', 'meter_id', 'meter', 'area', 'kwh'];
  }

  /** The CSV a day at a time, as UTF-8 buffers. */
  *csvBytes(plan: ExportPlan, options: { locale: string; bom: boolean }): Generator<Buffer> {
    for (const chunk of this.csv(plan, options)) yield Buffer.from(chunk, 'utf8');
  }

  /** The CSV a day at a time. */
  *csv(plan: ExportPlan, options: { locale: string; bom: boolean }): Generator<string> {
    const { decimal, separator } = csvDialect(options.locale);
    const field = (text: string): string => {
      // A text starting with = + - @ would run as a formula in a spreadsheet (CSV injection): prefix an apostrophe.
      const safe = /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
      return safe.includes(separator) || /["\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
    };
    const number = (value: number) => (Number.isNaN(value) ? '' : decimal === '.' ? String(round(value)) : String(round(value)).replace('.', decimal));
    yield `${options.bom ? '\uFEFF' : ''}${this.header(plan).map(field).join(separator)}\r\n`;
    const names = plan.meters.map((meter) => [String(meter.id), field(meter.name), field(meter.area ?? '')].join(separator));
    for (const day of daysBetween(plan.from, plan.to)) {
      let chunk = '';
      for (const slot of this.daySlots(plan, day)) {
        const times = `${localTimestamp(plan.timezone, slot.start)}${separator}${localTimestamp(plan.timezone, slot.end)}`;
        if (plan.layout === 'wide') chunk += `${times}${separator}${Array.from(slot.values, number).join(separator)}\r\n`;
        else slot.values.forEach((value, m) => (chunk += `${times}${separator}${names[m]}${separator}${number(value)}\r\n`));
      }
      yield chunk;
    }
  }

  /**
   * The XLSX through exceljs's streaming writer: rows are committed as they are made and the zip is written to `out`
   * as it fills; a day's rows wait while `out` is full, so memory holds about a day of rows whatever the period.
   */
  async xlsx(plan: ExportPlan, out: Writable, aborted: () => boolean): Promise<void> {
    const { default: ExcelJS } = await import('exceljs');
    const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: out, useStyles: true, useSharedStrings: false });
    const sheet = workbook.addWorksheet('kWh', { views: [{ state: 'frozen', xSplit: 2, ySplit: 1 }] });
    const header = this.header(plan);
    sheet.columns = header.map((name, index) => ({ header: name, key: String(index), width: index < 2 ? 26 : Math.min(40, Math.max(12, name.length + 2)), style: index >= 2 && (plan.layout === 'wide' || name === 'kwh') ? { numFmt: '0.000' } : {} }));
    sheet.getRow(1).font = { bold: true };
    sheet.getRow(1).commit();
    const value = (kwh: number) => (Number.isNaN(kwh) ? null : round(kwh));
    for (const day of daysBetween(plan.from, plan.to)) {
      if (aborted()) break;
      for (const slot of this.daySlots(plan, day)) {
        const times = [localTimestamp(plan.timezone, slot.start), localTimestamp(plan.timezone, slot.end)];
        if (plan.layout === 'wide') sheet.addRow([...times, ...Array.from(slot.values, value)]).commit();
        else plan.meters.forEach((meter, m) => sheet.addRow([...times, meter.id, meter.name, meter.area ?? '', value(slot.values[m])]).commit());
      }
      await zipCaughtUp(sheet);
      if (out.writableNeedDrain) await once(out, 'drain');
    }
    sheet.commit();
    await workbook.commit();
  }
}
