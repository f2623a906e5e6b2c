// A report as PDF (pdfkit): a cover with site, period and key figures, the daily-energy chart drawn as vectors, then every table.
import type PDFKit from 'pdfkit';
import { lastDay, type Cell, type ReportContent, type Table } from './content.ts';
import { formatCell } from './renderCsv.ts';

const MARGIN = 50;
const INK = '#1f2933';
const MUTED = '#616e7c';
const ACCENT = '#2f6fb2';
const RULE = '#cbd2d9';

type Doc = InstanceType<typeof PDFKit>;

export async function renderPdf(content: ReportContent): Promise<Buffer> {
  // pdfkit (fontkit, its fonts and tables) is loaded with the first PDF: ~6 MiB of resident memory and ~160 ms of
  // start-up an appliance spends only when a report plan runs.
  const { default: PDFDocument } = await import('pdfkit');
  const doc = new PDFDocument({
    size: 'A4',
    margin: MARGIN,
    info: { Title: `${content.title}: ${content.site}`, Author: 'EMS', Subject: `${content.period.from} to ${content.period.to}` },
  });
  const chunks: Buffer[] = [];
  doc.on('data', (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });
  cover(doc, content);
  doc.addPage();
  if (content.energy) {
    heading(doc, 'Energy per day (kWh)');
    dailyChart(
      doc,
      content.energy.days.map((d) => ({ label: d.day.slice(5), value: d.kwh })),
    );
  }
  for (const table of content.tables) await drawTable(doc, table, content.currency);
  doc.end();
  return done;
}

function cover(doc: Doc, content: ReportContent): void {
  const width = doc.page.width - 2 * MARGIN;
  doc.rect(0, 0, doc.page.width, 8).fill(ACCENT);
  doc.fillColor(MUTED).font('Helvetica').fontSize(12).text(content.site, MARGIN, 140, { width });
  doc.fillColor(INK).font('Helvetica-Bold').fontSize(28).text(content.title, { width });
  doc.moveDown(0.5);
  doc.font('Helvetica').fontSize(14).fillColor(INK).text(`Period: ${content.period.from} to ${lastDay(content.period.to)}`, { width });
  doc.fontSize(11).fillColor(MUTED).text(`Days in the site time zone ${content.timezone}; generated ${content.generatedAt}`, { width });
  if (content.energy) {
    const e = content.energy;
    const figures: [string, string][] = [
      ['Energy', `${formatCell(e.totalKwh)} kWh`],
      ['Cost', `${formatCell(e.cost)} ${content.currency}`],
      ['Carbon', `${formatCell(e.carbonKg)} kg CO2e`],
      ['Peak demand', e.peak ? `${formatCell(e.peak.kw)} kW at ${e.peak.at}` : 'no reading'],
    ];
    let y = 330;
    for (const [label, value] of figures) {
      doc.fillColor(MUTED).font('Helvetica').fontSize(11).text(label, MARGIN, y);
      doc.fillColor(INK).font('Helvetica-Bold').fontSize(18).text(value, MARGIN + 130, y - 4, { width: width - 130 });
      y += 40;
    }
  }
  doc.moveTo(MARGIN, doc.page.height - 90).lineTo(doc.page.width - MARGIN, doc.page.height - 90).lineWidth(0.5).strokeColor(RULE).stroke();
  doc.fillColor(MUTED).font('Helvetica').fontSize(9).text('EMS scheduled report. The CSV beside this file carries the same figures.', MARGIN, doc.page.height - 80, { width });
}

function heading(doc: Doc, text: string): void {
  if (doc.y > doc.page.height - MARGIN - 80) doc.addPage();
  doc.moveDown(0.6);
  doc.fillColor(INK).font('Helvetica-Bold').fontSize(13).text(text, MARGIN, doc.y);
  doc.moveDown(0.3);
}

/** Bars with a value axis (rounded to a nice step), gridlines and a label under each bar: all vector paths. */
function dailyChart(doc: Doc, bars: { label: string; value: number }[]): void {
  const left = MARGIN + 40;
  const width = doc.page.width - MARGIN - left;
  const height = 180;
  const top = doc.y + 5;
  const bottom = top + height;
  const max = Math.max(0, ...bars.map((b) => b.value));
  const step = niceStep(max / 4);
  const axisMax = Math.max(step, Math.ceil(max / step) * step);
  doc.font('Helvetica').fontSize(8);
  for (let tick = 0; tick <= axisMax + step / 2; tick += step) {
    const y = bottom - (tick / axisMax) * height;
    doc.moveTo(left, y).lineTo(left + width, y).lineWidth(0.4).strokeColor(RULE).stroke();
    doc.fillColor(MUTED).text(formatCell(Number(tick.toPrecision(6))), MARGIN - 10, y - 4, { width: 45, align: 'right' });
  }
  const slot = bars.length ? width / bars.length : width;
  const barWidth = Math.max(2, Math.min(40, slot * 0.65));
  bars.forEach((bar, index) => {
    const x = left + index * slot + (slot - barWidth) / 2;
    const barHeight = axisMax > 0 ? (bar.value / axisMax) * height : 0;
    doc.rect(x, bottom - barHeight, barWidth, barHeight).fill(ACCENT);
    // Every label when they fit, otherwise every few (a month has ~31 bars).
    const every = Math.ceil(bars.length / 16);
    if (index % every === 0) doc.fillColor(MUTED).text(bar.label, x - 10, bottom + 4, { width: barWidth + 20, align: 'center' });
  });
  doc.moveTo(left, bottom).lineTo(left + width, bottom).lineWidth(0.8).strokeColor(INK).stroke();
  doc.x = MARGIN;
  doc.y = bottom + 22;
}

function niceStep(raw: number): number {
  if (!(raw > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(raw));
  const scaled = raw / power;
  return (scaled <= 1 ? 1 : scaled <= 2 ? 2 : scaled <= 5 ? 5 : 10) * power;
}

const LABELS: Record<string, (currency: string) => string> = {
  kwh: () => 'kWh',
  cost: (currency) => `Cost (${currency})`,
  carbon_kg: () => 'Carbon (kg)',
  kw: () => 'kW',
  mttr_hours: () => 'MTTR (hours)',
};

function columnLabel(column: string, currency: string): string {
  const known = LABELS[column];
  if (known) return known(currency);
  const words = column.replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** Times read as "2026-11-21 02:25 UTC" on paper (the CSV keeps the full ISO text). */
function pdfCell(cell: Cell): string {
  if (typeof cell === 'string' && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(cell)) return `${cell.slice(0, 10)} ${cell.slice(11, 16)} UTC`;
  return cell === null ? '–' : formatCell(cell);
}

async function drawTable(doc: Doc, table: Table, currency: string): Promise<void> {
  heading(doc, table.title);
  const width = doc.page.width - 2 * MARGIN;
  const textColumns = new Set(table.columns.map((_, index) => index).filter((index) => table.rows.some((row) => typeof row[index] === 'string')));
  // Each column as wide as its widest cell (header included), then scaled together to the page width.
  const headers = table.columns.map((column) => columnLabel(column, currency));
  doc.fontSize(9);
  const natural = table.columns.map((_, index) => {
    doc.font('Helvetica-Bold');
    let widest = doc.widthOfString(headers[index]);
    doc.font('Helvetica');
    for (const row of table.rows.slice(0, 200)) widest = Math.max(widest, doc.widthOfString(pdfCell(row[index])));
    return widest + 12;
  });
  const scale = width / natural.reduce((sum, w) => sum + w, 0);
  const widths = natural.map((w) => w * scale);
  const xs: number[] = [];
  widths.reduce((x, w) => (xs.push(x), x + w), MARGIN);
  const rowHeight = 16;
  const drawRow = (cells: Cell[], bold: boolean): void => {
    if (doc.y + rowHeight > doc.page.height - MARGIN) {
      doc.addPage();
      // A table that goes on over a page break repeats its header row.
      if (!bold) drawRow(headers, true);
    }
    const y = doc.y;
    doc.font(bold ? 'Helvetica-Bold' : 'Helvetica').fontSize(9).fillColor(INK);
    cells.forEach((cell, index) => {
      const align = textColumns.has(index) ? 'left' : 'right';
      doc.text(pdfCell(cell), xs[index] + 3, y + 4, { width: widths[index] - 6, height: rowHeight - 6, align, ellipsis: true });
    });
    doc.moveTo(MARGIN, y + rowHeight).lineTo(MARGIN + width, y + rowHeight).lineWidth(bold ? 0.8 : 0.3).strokeColor(bold ? INK : RULE).stroke();
    doc.x = MARGIN;
    doc.y = y + rowHeight;
  };
  drawRow(headers, true);
  if (table.rows.length === 0) {
    doc.font('Helvetica-Oblique').fontSize(9).fillColor(MUTED).text('None in this period.', MARGIN + 3, doc.y + 4);
    doc.y += 4;
  }
  for (const [index, row] of table.rows.entries()) {
    drawRow(row, false);
    // pdfkit draws synchronously: a long table lets requests in every 50 rows instead of holding the event loop throughout.
    if (index % 50 === 49) await new Promise((resolve) => setImmediate(resolve));
  }
}
