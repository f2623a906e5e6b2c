// The portfolio views as XLSX workbooks (health, EUI ranking, alerts): one sheet each, the same rows and figures the
// JSON routes answer, numbers as numbers (full precision, a display format only), times as dates in UTC.
// A portfolio sheet is small (one row per site, alerts capped at ALERT_EXPORT_LIMIT), so the workbook is built in memory,
// but in a worker thread (exportWorker.ts): 10,000 alerts take ~1.5 s of CPU, which on the request thread would stall
// every batch and page of the instance (test/bench/fleetExport.ts). At most EXPORT_WORKERS run at once; more wait.
import { runWorker } from '../platform/workerThread.ts';
import type { EuiRow, PortfolioAlert, SiteHealthRow } from './portfolio.ts';

/** Alerts in one workbook at most; the export says when there were more. */
export const ALERT_EXPORT_LIMIT = 10_000;
/** Export workers one instance runs at once (a 2-core box keeps a core for requests and PostgreSQL). */
export const EXPORT_WORKERS = 1;

export type ExportJob = { kind: 'health'; rows: SiteHealthRow[] } | { kind: 'eui'; rows: EuiRow[] } | { kind: 'alerts'; rows: PortfolioAlert[]; total: number };

export function buildWorkbook(job: ExportJob): Promise<Buffer> {
  if (job.kind === 'health') return healthWorkbook(job.rows);
  if (job.kind === 'eui') return euiWorkbook(job.rows);
  return alertsWorkbook(job.rows, job.total);
}

let running = 0;
const waiting: (() => void)[] = [];

/** The workbook built in a worker thread, one at a time per instance (the rest queue in arrival order). */
export async function workbookOffThread(job: ExportJob): Promise<Buffer> {
  if (running >= EXPORT_WORKERS) await new Promise<void>((resolve) => waiting.push(resolve));
  else running++;
  try {
    const bytes = await runWorker<Uint8Array>(import.meta.url, 'exportWorker', job, {
      what: 'the XLSX export worker',
      resourceLimits: { maxOldGenerationSizeMb: 256 },
    });
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  } finally {
    const next = waiting.shift();
    if (next) next();
    else running--;
  }
}

export const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

type Column = { header: string; key: string; width: number; numFmt?: string };

async function workbookOf(sheetName: string, columns: Column[], rows: Record<string, unknown>[], note?: string): Promise<Buffer> {
  const { default: ExcelJS } = await import('exceljs');
  const workbook = new ExcelJS.Workbook();
  workbook.creator = 'EMS fleet';
  workbook.created = new Date();
  const sheet = workbook.addWorksheet(sheetName, { views: [{ state: 'frozen', ySplit: 1 }] });
  sheet.columns = columns.map((c) => ({ header: c.header, key: c.key, width: c.width, style: c.numFmt ? { numFmt: c.numFmt } : {} }));
  sheet.getRow(1).font = { bold: true };
  for (const row of rows) sheet.addRow(row);
  if (note) sheet.addRow({ [columns[0]!.key]: note });
  return Buffer.from(await workbook.xlsx.writeBuffer());
}

const date = (iso: string | null) => (iso === null ? null : new Date(iso));
const DATE_FORMAT = 'yyyy-mm-dd hh:mm';

export function healthWorkbook(rows: SiteHealthRow[]): Promise<Buffer> {
  return workbookOf(
    'Health',
    [
      { header: 'Site', key: 'name', width: 28 },
      { header: 'Health', key: 'grade', width: 10 },
      { header: 'Reasons', key: 'reasons', width: 22 },
      { header: 'Status', key: 'status', width: 10 },
      { header: 'Last contact (UTC)', key: 'lastContactAt', width: 18, numFmt: DATE_FORMAT },
      { header: 'Sync lag (s)', key: 'syncLagSec', width: 12, numFmt: '0' },
      { header: 'Unsent rows', key: 'unsentRows', width: 12, numFmt: '0' },
      { header: 'Clock skew (s)', key: 'clockSkewSec', width: 13, numFmt: '0' },
      { header: 'Completeness yesterday', key: 'completeness', width: 14, numFmt: '0.0%' },
      { header: 'Version', key: 'version', width: 12 },
      { header: 'Last backup age (s)', key: 'lastBackupAgeSec', width: 16, numFmt: '0' },
      { header: 'Open alerts', key: 'openAlerts', width: 11, numFmt: '0' },
      { header: 'Last refusal', key: 'lastRefusal', width: 40 },
      { header: 'Site id', key: 'id', width: 38 },
    ],
    rows.map((r) => ({ ...r, reasons: r.reasons.join(', '), lastContactAt: date(r.lastContactAt) })),
  );
}

export function euiWorkbook(rows: EuiRow[]): Promise<Buffer> {
  const commodities = [...new Set(rows.flatMap((r) => Object.keys(r.byCommodity)))].sort();
  const perCommodity: Column[] = commodities.flatMap((c) => [
    { header: `${c} kWh/m²·a`, key: `${c}.eui`, width: 14, numFmt: '0.00' },
    { header: `${c} last year kWh/m²·a`, key: `${c}.euiLastYear`, width: 16, numFmt: '0.00' },
    { header: `${c} kWh`, key: `${c}.kwh`, width: 14, numFmt: '#,##0' },
    { header: `${c} last year kWh`, key: `${c}.kwhLastYear`, width: 16, numFmt: '#,##0' },
  ]);
  return workbookOf(
    'EUI ranking',
    [
      { header: 'Rank', key: 'rank', width: 6, numFmt: '0' },
      { header: 'Site', key: 'name', width: 28 },
      { header: 'Floor area (m²)', key: 'floorAreaM2', width: 14, numFmt: '#,##0' },
      { header: 'EUI all fuels kWh/m²·a', key: 'eui', width: 16, numFmt: '0.00' },
      { header: 'Last year kWh/m²·a', key: 'euiLastYear', width: 16, numFmt: '0.00' },
      { header: 'Change', key: 'change', width: 10, numFmt: '+0.0%;-0.0%;0.0%' },
      ...perCommodity,
      { header: 'Site id', key: 'id', width: 38 },
    ],
    rows.map((r) => {
      const out: Record<string, unknown> = {
        rank: r.rank,
        name: r.name,
        floorAreaM2: r.floorAreaM2,
        eui: r.eui,
        euiLastYear: r.euiLastYear,
        change: r.change,
        id: r.id,
      };
      for (const [c, v] of Object.entries(r.byCommodity)) {
        out[`${c}.eui`] = v.eui;
        out[`${c}.euiLastYear`] = v.euiLastYear;
        out[`${c}.kwh`] = v.kwh;
        out[`${c}.kwhLastYear`] = v.kwhLastYear;
      }
      return out;
    }),
  );
}

export function alertsWorkbook(items: PortfolioAlert[], total: number): Promise<Buffer> {
  return workbookOf(
    'Alerts',
    [
      { header: 'Occurred (UTC)', key: 'occurredAt', width: 18, numFmt: DATE_FORMAT },
      { header: 'Site', key: 'siteName', width: 28 },
      { header: 'Level', key: 'level', width: 10 },
      { header: 'Status', key: 'status', width: 13 },
      { header: 'Alert', key: 'title', width: 50 },
      { header: 'Source', key: 'source', width: 8 },
      { header: 'Alert id', key: 'id', width: 12 },
      { header: 'Site id', key: 'siteId', width: 38 },
    ],
    items.map((a) => ({ ...a, occurredAt: date(a.occurredAt) })),
    total > items.length ? `${total - items.length} more alerts not in this file (at most ${items.length})` : undefined,
  );
}
