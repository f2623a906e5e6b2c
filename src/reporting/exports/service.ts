// Interval data of many meters in one file: a list of meters, an area or the whole site over a period, at 15 minutes,
// hours or days, wide (a column per meter) or long (a row per meter and interval), as CSV in the reader's separators
// or as XLSX. Each meter column says its commodity and unit (kWh; m³ for gas and water). Read a day of every meter in
// one query and written as it is read, in small chunks that wait for the reader, so a year of 100 meters never sits in
// memory (RSS growth measured by `npm run bench:exports`).
import { COMMODITY_UNITS } from '../../energy/index.ts';
import type { Meter, MeterDirectory, StoredDays } from '../../metering/index.ts';
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { BadRequest, NotFound } from '../../platform/errors.ts';
import { addDays, dayIntervals, daysBetween, INTERVAL_MS, zoneOffsetMs } from '../../platform/time/calendar.ts';
import { supportedLocale } from '../../platform/i18n/format.ts';
import { round } from '../../platform/numbers.ts';

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

export type ExportPlan = ExportRequest & { meters: (Pick<Meter, 'id' | 'name' | 'area' | 'commodity'> & { unit: string })[]; timezone: string };

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
 * exceljs's streaming writer hands each 64 KiB of row XML to the zip's compressor without waiting (its StreamBuf
 * ignores the return value of write), so rows made faster than zlib deflates them pile up in the compressor's input.
 * The export waits after each row while that input (or the response) is above its high-water mark: backpressure a
 * row at a time. That input is a PassThrough of the npm readable-stream package, which lacks Node's
 * `writableNeedDrain`: its `_writableState.needDrain` is read (the earlier `writableNeedDrain` check never waited). This reads exceljs internals (the worksheet's `stream`, its `pipes` and queued `buffers`); without
 * them it waits on the output stream only.
 */
function zipBacklog(sheet: unknown, out: Writable, waits: { beforePipe: number }): Promise<unknown> | null {
  const stream = (sheet as { stream?: { pipes?: Writable[]; buffers?: unknown[] } }).stream;
  // Before the zip has started on the sheet, its StreamBuf keeps what is written: let the zip pick it up (2 s at most).
  if (stream && !stream.pipes?.length && (stream.buffers?.length ?? 0) > 4 && waits.beforePipe < 400) {
    waits.beforePipe += 1;
    return new Promise((resolve) => setTimeout(resolve, 5));
  }
  // The zip's input is a readable-stream (npm) PassThrough without Node's writableNeedDrain getter: read its state.
  for (const pipe of stream?.pipes ?? [])
    if (pipe.writableNeedDrain ?? (pipe as { _writableState?: { needDrain?: boolean } })._writableState?.needDrain) return once(pipe, 'drain');
  if (out.writableNeedDrain) return once(out, 'drain');
  return null;
}

/**
 * exceljs packs a sheet's XML into fresh 64 KiB buffers for the compressor. Waiting for the compressor (above) keeps
 * each alive long enough to reach V8's old generation, where only a full GC frees it: at 100 meters × 180 days the
 * XML left 51 MiB of array buffers behind (in-process probe), 18 MiB with 8 KiB buffers (1 KiB: no better, 2.3× slower).
 * Reads an exceljs internal (StreamBuf's `bufSize`); without it nothing changes.
 */
const XLSX_BUFFER_BYTES = 8 * 1024;
function smallBuffers(sheet: unknown): void {
  const stream = (sheet as { stream?: { bufSize?: number } }).stream;
  if (stream && typeof stream.bufSize === 'number') stream.bufSize = XLSX_BUFFER_BYTES;
}

/** A CSV chunk is handed on at this size: short strings die young (a day of a long export is ~1 MiB otherwise). */
const CSV_CHUNK_CHARS = 16 * 1024;

/** One row of values: its start instant and each meter's quantity (NaN: no data); `values` is valid until the next slot. */
type Slot = { start: number; end: number; values: Float64Array };

/** What one export reads days into: a decoded day per meter (the longest day has 100 intervals), reused day after day. */
type DayReader = { records: Float64Array[]; present: Uint8Array; index: Map<number, number>; values: Float64Array; idsJson: string };

function dayReader(plan: ExportPlan): DayReader {
  return {
    records: plan.meters.map(() => new Float64Array(100)),
    present: new Uint8Array(plan.meters.length),
    index: new Map(plan.meters.map((meter, m) => [meter.id, m])),
    values: new Float64Array(plan.meters.length),
    idsJson: JSON.stringify(plan.meters.map((meter) => meter.id)),
  };
}

export class EnergyExport {
  constructor(
    /** A day of every meter of the export in one read (the (meter_id, day) key; was one load per meter), decoded by metering. */
    private readonly days: StoredDays,
    private readonly meters: MeterDirectory,
    private readonly timezone: () => string,
  ) {}

  /** Checks the request and resolves its meters; every problem is a 400 naming the field, an unknown meter 404. */
  plan(request: ExportRequest): ExportPlan {
    const details: { path: string; message: string }[] = [];
    if (request.to <= request.from) details.push({ path: 'query.to', message: 'must be after from' });
    else if (request.to > addDays(request.from, MAX_EXPORT_DAYS[request.resolution]))
      details.push({ path: 'query.to', message: `at most ${MAX_EXPORT_DAYS[request.resolution]} days after from at ${request.resolution}` });
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
    if (chosen.length > MAX_EXPORT_METERS)
      throw new BadRequest('Invalid query', [{ path: 'query.meterIds', message: `at most ${MAX_EXPORT_METERS} meters per export` }]);
    return {
      ...request,
      meters: chosen.map(({ id, name, area, commodity }) => ({ id, name, area, commodity, unit: COMMODITY_UNITS[commodity] })),
      timezone: this.timezone(),
    };
  }

  /** The rows an XLSX of the plan would have (header included); 400 past the sheet limit. */
  checkXlsx(plan: ExportPlan): void {
    const perDay = plan.resolution === '15min' ? 100 : plan.resolution === 'hour' ? 25 : 1;
    const rows = daysBetween(plan.from, plan.to).length * perDay * (plan.layout === 'long' ? plan.meters.length : 1) + 1;
    if (rows > XLSX_MAX_ROWS) {
      throw new BadRequest('Invalid query', [
        {
          path: 'query.layout',
          message: `the long layout needs up to ${rows} rows, more than a sheet holds (${XLSX_MAX_ROWS}): use layout=wide, a coarser resolution or CSV`,
        },
      ]);
    }
  }

  /**
   * The slots of one site day at the plan's resolution (a DST day has 23 or 25 hours, 92 or 100 quarter hours). The
   * stored days are decoded into the reader's arrays, one per meter for the whole export (issue 27: a fresh array per
   * stored day was ~28 MiB of garbage over a year of 100 meters, outside the heap and freed late), and read row by row.
   */
  private *daySlots(plan: ExportPlan, day: string, reader: DayReader): Generator<Slot> {
    const { start, count } = dayIntervals(plan.timezone, day);
    const { records, present, index, values } = reader;
    present.fill(0);
    this.days.decodeKwhInto(day, reader.idsJson, (meterId) => {
      const m = index.get(meterId);
      if (m === undefined) return undefined;
      present[m] = 1;
      return records[m];
    });
    for (let m = 0; m < records.length; m += 1) if (!present[m]) records[m].fill(NaN, 0, count);
    const step = plan.resolution === '15min' ? 1 : plan.resolution === 'hour' ? 4 : count;
    // One values array per export, refilled for each slot: a slot is used up before the next is asked for (both writers).
    for (let i = 0; i < count; i += step) {
      const width = Math.min(step, count - i);
      for (let m = 0; m < records.length; m += 1) {
        const kwh = records[m];
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
      }
      yield { start: start + i * INTERVAL_MS, end: start + (i + width) * INTERVAL_MS, values };
    }
  }

  private header(plan: ExportPlan): string[] {
    // Wide: "<name> (<id>) <commodity> <unit>" per meter column; long: the commodity and unit on every row.
    return plan.layout === 'wide'
      ? ['start', 'end', ...plan.meters.map((meter) => `${meter.name} (${meter.id}) ${meter.commodity} ${meter.unit}`)]
      : ['start', 'end', 'meter_id', 'meter', 'area', 'commodity', 'unit', 'quantity'];
  }

  /**
   * The CSV as UTF-8 buffers of ~16 KiB. Every 1 MiB the event loop gets a turn: in a synchronous run V8 frees the
   * garbage of the reads (blob and decoded day buffers, outside the heap) late, and the service's RSS grew by 58–78 MiB
   * over a year of 100 meters (bench:exports).
   */
  async *csvBytes(plan: ExportPlan, options: { locale: string; bom: boolean }): AsyncGenerator<Buffer> {
    let since = 0;
    for (const chunk of this.csv(plan, options)) {
      const bytes = Buffer.from(chunk, 'utf8');
      yield bytes;
      since += bytes.length;
      if (since >= 1024 * 1024) {
        since = 0;
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
  }

  /** The CSV a day at a time. */
  *csv(plan: ExportPlan, options: { locale: string; bom: boolean }): Generator<string> {
    const { decimal, separator } = csvDialect(options.locale);
    const field = (text: string): string => {
      // A text starting with = + - @ would run as a formula in a spreadsheet (CSV injection): prefix an apostrophe.
      const safe = /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
      return safe.includes(separator) || /["\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
    };
    const number = (value: number) => (Number.isNaN(value) ? '' : decimal === '.' ? String(round(value, 4)) : String(round(value, 4)).replace('.', decimal));
    yield `${options.bom ? '\uFEFF' : ''}${this.header(plan).map(field).join(separator)}\r\n`;
    const names = plan.meters.map((meter) => [String(meter.id), field(meter.name), field(meter.area ?? ''), meter.commodity, meter.unit].join(separator));
    let chunk = '';
    const reader = dayReader(plan);
    for (const day of daysBetween(plan.from, plan.to)) {
      for (const slot of this.daySlots(plan, day, reader)) {
        const times = `${localTimestamp(plan.timezone, slot.start)}${separator}${localTimestamp(plan.timezone, slot.end)}`;
        if (plan.layout === 'wide') chunk += `${times}${separator}${Array.from(slot.values, number).join(separator)}\r\n`;
        else
          for (let m = 0; m < slot.values.length; m += 1) {
            chunk += `${times}${separator}${names[m]}${separator}${number(slot.values[m])}\r\n`;
            if (chunk.length >= CSV_CHUNK_CHARS) {
              yield chunk;
              chunk = '';
            }
          }
        if (chunk.length >= CSV_CHUNK_CHARS) {
          yield chunk;
          chunk = '';
        }
      }
    }
    if (chunk) yield chunk;
  }

  /**
   * The XLSX through exceljs's streaming writer: each row is committed as it is made and the export waits whenever the
   * compressor's input or `out` is full, so memory holds a few rows' XML whatever the period.
   */
  async xlsx(plan: ExportPlan, out: Writable, aborted: () => boolean): Promise<void> {
    const { default: ExcelJS } = await import('exceljs');
    const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: out, useStyles: true, useSharedStrings: false });
    const sheet = workbook.addWorksheet('Intervals', { views: [{ state: 'frozen', xSplit: 2, ySplit: 1 }] });
    smallBuffers(sheet);
    const header = this.header(plan);
    sheet.columns = header.map((name, index) => ({
      header: name,
      key: String(index),
      width: index < 2 ? 26 : Math.min(40, Math.max(12, name.length + 2)),
      style: index >= 2 && (plan.layout === 'wide' || name === 'quantity') ? { numFmt: '0.000' } : {},
    }));
    sheet.getRow(1).font = { bold: true };
    sheet.getRow(1).commit();
    const value = (kwh: number) => (Number.isNaN(kwh) ? null : round(kwh, 4));
    const waits = { beforePipe: 0 };
    const commit = async (row: { commit(): void }) => {
      row.commit();
      const backlog = zipBacklog(sheet, out, waits);
      if (backlog) await backlog;
    };
    const reader = dayReader(plan);
    for (const day of daysBetween(plan.from, plan.to)) {
      if (aborted()) break;
      for (const slot of this.daySlots(plan, day, reader)) {
        const times = [localTimestamp(plan.timezone, slot.start), localTimestamp(plan.timezone, slot.end)];
        if (plan.layout === 'wide') await commit(sheet.addRow([...times, ...Array.from(slot.values, value)]));
        else
          for (const [m, meter] of plan.meters.entries())
            await commit(sheet.addRow([...times, meter.id, meter.name, meter.area ?? '', meter.commodity, meter.unit, value(slot.values[m])]));
      }
    }
    sheet.commit();
    await workbook.commit();
  }
}
