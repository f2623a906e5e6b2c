// A tenant's statement as PDF (pdfkit, Noto Sans) and XLSX (exceljs): the same lines the API answers, amounts in the
// site's currency, the rules of the shared charges stated, each meter with its share and its readings.
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Statement } from './types.ts';

const require = createRequire(import.meta.url);
const FONT_DIR = path.join(path.dirname(require.resolve('@embedpdf/fonts-latin')), '..', 'fonts');
const REGULAR = path.join(FONT_DIR, 'NotoSans-Regular.ttf');
const BOLD = path.join(FONT_DIR, 'NotoSans-Bold.ttf');

// Money with thousands separators (1,234.56 EUR): a statement is read by people, and 12345.67 is misread.
const money = (cents: number, currency: string) =>
  `${(cents / 100).toLocaleString('en-GB', { minimumFractionDigits: 2, maximumFractionDigits: 2 })} ${currency}`;
const number = (value: number, places = 3) => value.toLocaleString('en-GB', { maximumFractionDigits: places, minimumFractionDigits: 0 });
const lastDay = (to: string) => {
  const date = new Date(`${to}T00:00:00Z`);
  date.setUTCDate(date.getUTCDate() - 1);
  return date.toISOString().slice(0, 10);
};

/** The XLSX media type: the statement download and the mailed attachment. */
export const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

export function statementTitle(statement: Statement): string {
  const what = statement.kind === 'restatement' ? 'Correcting statement' : 'Energy statement';
  return `${what} ${statement.id}: ${statement.tenant.name}, ${statement.period.from} to ${lastDay(statement.period.to)}`;
}

export function statementFileName(statement: Statement, extension: 'pdf' | 'xlsx'): string {
  const safe = statement.tenant.name.replace(/[^\p{L}\p{N}._-]+/gu, '-').slice(0, 60);
  return `statement-${statement.id}-${safe}-${statement.period.from}.${extension}`;
}

/** A cell: text, or a figure with its text (the PDF prints the text; the spreadsheet keeps the number). */
type Cell = string | { text: string; value: number };
type Row = { cells: Cell[]; bold?: boolean };
const text = (cell: Cell) => (typeof cell === 'string' ? cell : cell.text);
const amount = (cents: number, currency: string): Cell => ({ text: money(cents, currency), value: cents / 100 });
const figure = (value: number, places = 3, suffix = ''): Cell => ({ text: `${number(value, places)}${suffix}`, value });

/** The statement as table sections, shared by both formats. */
type Section = { title: string; head: string[]; rows: Row[]; widths: number[]; right: number[] };

function sections(statement: Statement): Section[] {
  const { content, currency } = statement;
  const out: Section[] = [];
  out.push({
    title: 'Energy',
    head: ['Utility', 'Band', 'Quantity', 'Amount'],
    widths: [110, 150, 120, 115],
    right: [2, 3],
    rows: content.energy.map((line) => ({ cells: [line.utility, line.band, figure(line.quantity, 3, ` ${line.unit}`), amount(line.amountCents, currency)] })),
  });
  if (content.standing.length)
    out.push({
      title: 'Standing charges',
      head: ['Utility', 'Rule', 'Amount'],
      widths: [110, 270, 115],
      right: [2],
      rows: content.standing.map((line) => ({ cells: [line.utility, 'share of the site quantity', amount(line.amountCents, currency)] })),
    });
  if (content.demand.length)
    out.push({
      title: 'Demand charges',
      // Each figure its own column, so the spreadsheet holds numbers (not "26.088 of 183.336" as text).
      head: ['Month', 'Site billed kW', 'Site kW at its peak', 'Your kW then', 'Share', 'Amount'],
      widths: [60, 80, 95, 85, 65, 110],
      right: [1, 2, 3, 4, 5],
      rows: content.demand.map((line) => ({
        cells: [
          line.month,
          figure(line.billedKw),
          figure(line.siteKwAtPeak),
          figure(line.shareKw),
          { text: `${number(line.share * 100, 2)} %`, value: line.share },
          amount(line.amountCents, currency),
        ],
      })),
    });
  out.push({
    title: 'Meters',
    head: ['Meter', 'Split', 'Share', 'Start reading', 'End reading', 'Billed'],
    widths: [115, 65, 55, 85, 85, 90],
    right: [2, 3, 4, 5],
    rows: content.meters.map((meter) => ({
      cells: [
        meter.name,
        meter.method.replace('_', ' '),
        { text: `${number(meter.share * 100, 2)} %`, value: meter.share },
        meter.startReading === null ? '–' : figure(meter.startReading),
        meter.endReading === null ? '–' : figure(meter.endReading),
        figure(meter.billedQuantity, 3, ` ${meter.unit}`),
      ],
    })),
  });
  // Missing sub-meter data is never silent: each meter with a gap, and what of the bill rests on the estimate.
  const gaps = content.meters.filter((meter) => meter.missing > 0);
  if (gaps.length)
    out.push({
      title: 'Missing data (estimated where the rule below could)',
      head: ['Meter', 'Intervals', 'Missing', 'Estimated', 'Estimated qty', 'Estimated amount'],
      widths: [115, 65, 60, 65, 90, 100],
      right: [1, 2, 3, 4, 5],
      rows: [
        ...gaps.map((meter) => ({
          cells: [
            meter.name,
            figure(meter.intervals, 0),
            figure(meter.missing, 0),
            figure(meter.billingEstimated ?? 0, 0),
            figure((meter.estimatedQuantity ?? 0) * meter.share, 3, ` ${meter.unit}`),
            '',
          ],
        })),
        { cells: ['Of this statement', '', '', '', '', amount(content.estimatedAmountCents ?? 0, currency)], bold: true },
      ],
    });
  if (statement.difference)
    out.push({
      title: 'Difference to the statement issued before',
      head: ['Utility', 'Band', 'Quantity', 'Amount'],
      widths: [110, 150, 120, 115],
      right: [2, 3],
      rows: [
        ...statement.difference.energy.map((line) => ({ cells: [line.utility, line.band, figure(line.quantity), amount(line.amountCents, currency)] })),
        { cells: ['Standing charges', '', '', amount(statement.difference.standingCents, currency)] },
        { cells: ['Demand charges', '', '', amount(statement.difference.demandCents, currency)] },
        { cells: ['Total', '', '', amount(statement.difference.totalCents, currency)], bold: true },
      ],
    });
  return out;
}

export async function statementPdf(statement: Statement): Promise<Buffer> {
  const { default: PDFDocument } = await import('pdfkit');
  const doc = new PDFDocument({
    size: 'A4',
    margin: 50,
    info: { Title: statementTitle(statement), Creator: 'EMS', CreationDate: new Date(`${statement.period.to}T00:00:00Z`) },
  });
  doc.registerFont('regular', REGULAR);
  doc.registerFont('bold', BOLD);
  const chunks: Buffer[] = [];
  doc.on('data', (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });
  const left = 50;
  doc.font('bold').fontSize(16).fillColor('#1f2933').text(statementTitle(statement), left, 50, { width: 495 });
  doc.moveDown(0.3);
  doc
    .font('regular')
    .fontSize(9)
    .fillColor('#616e7c')
    .text(
      `${statement.tenant.kind === 'cost_centre' ? 'Cost centre' : 'Tenant'}: ${statement.tenant.name}` +
        `${statement.tenant.contactEmail ? ` (${statement.tenant.contactEmail})` : ''}    Period: ${statement.period.name}    ` +
        `Status: ${statement.status}${statement.status === 'draft' ? ' (not issued)' : ''}`,
      { width: 495 },
    );
  doc.moveDown(0.8);
  doc
    .font('bold')
    .fontSize(13)
    .fillColor('#2f6fb2')
    .text(`Total ${money(statement.totalCents, statement.currency)}`, left);
  doc
    .font('regular')
    .fontSize(9)
    .fillColor('#616e7c')
    .text(`Carbon ${number(statement.content.carbonKg, 1)} kg CO₂e`, left);
  doc.moveDown(0.6);
  for (const section of sections(statement)) {
    if (doc.y > 700) doc.addPage();
    doc
      .font('bold')
      .fontSize(11)
      .fillColor('#1f2933')
      .text(section.title, left, doc.y + 6);
    doc.moveDown(0.2);
    const line = (cells: Cell[], font: string, color: string) => {
      const y = doc.y;
      let x = left;
      let height = 0;
      cells.forEach((cell, i) => {
        const width = section.widths[i];
        doc
          .font(font)
          .fontSize(9)
          .fillColor(color)
          .text(text(cell), x, y, { width: width - 6, align: section.right.includes(i) ? 'right' : 'left' });
        height = Math.max(height, doc.y - y);
        x += width;
      });
      doc.y = y + height + 2;
      doc.x = left;
    };
    line(section.head, 'bold', '#616e7c');
    doc
      .moveTo(left, doc.y)
      .lineTo(left + section.widths.reduce((a, b) => a + b, 0), doc.y)
      .strokeColor('#cbd2d9')
      .stroke();
    doc.y += 2;
    for (const row of section.rows) {
      if (doc.y > 770) doc.addPage();
      line(row.cells, row.bold ? 'bold' : 'regular', '#1f2933');
    }
    if (!section.rows.length) line(['–'], 'regular', '#616e7c');
  }
  const rules = [
    ...statement.content.standing.map((l) => l.rule),
    ...statement.content.demand.map((l) => l.rule),
    ...(statement.content.estimateRule ? [`Estimated data: ${statement.content.estimateRule}`] : []),
  ];
  if (rules.length) {
    if (doc.y > 700) doc.addPage();
    doc.moveDown(0.8);
    doc.font('bold').fontSize(9).fillColor('#616e7c').text('How shared charges are split', left);
    for (const rule of new Set(rules)) doc.font('regular').fontSize(8).text(`• ${rule}`, left, doc.y, { width: 495 });
  }
  doc.end();
  return done;
}

export async function statementXlsx(statement: Statement): Promise<Buffer> {
  const { default: ExcelJS } = await import('exceljs');
  const workbook = new ExcelJS.Workbook();
  workbook.creator = 'EMS';
  workbook.created = new Date(`${statement.period.to}T00:00:00Z`);
  const sheet = workbook.addWorksheet('Statement');
  sheet.addRow([statementTitle(statement)]).font = { bold: true, size: 14 };
  sheet.addRow(['Status', statement.status]);
  sheet.addRow(['Period', statement.period.from, lastDay(statement.period.to)]);
  sheet.addRow(['Total', statement.totalCents / 100, statement.currency]).font = { bold: true };
  sheet.addRow(['Carbon (kg CO2e)', statement.content.carbonKg]);
  for (const section of sections(statement)) {
    sheet.addRow([]);
    sheet.addRow([section.title]).font = { bold: true };
    sheet.addRow(section.head).font = { bold: true };
    for (const row of section.rows) {
      const added = sheet.addRow(row.cells.map((cell) => (typeof cell === 'string' ? cell : cell.value)));
      if (row.bold) added.font = { bold: true };
      // Money as money, shares as percentages, quantities with three decimals.
      row.cells.forEach((cell, i) => {
        if (typeof cell === 'string') return;
        added.getCell(i + 1).numFmt = cell.text.endsWith(statement.currency) ? '#,##0.00' : cell.text.endsWith('%') ? '0.00%' : '#,##0.###';
      });
    }
  }
  sheet.columns.forEach((column, i) => {
    column.width = i === 0 ? 28 : 18;
  });
  return Buffer.from(await workbook.xlsx.writeBuffer());
}
