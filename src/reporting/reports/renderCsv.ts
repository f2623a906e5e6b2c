// A report as CSV: one block per table (its key, then a header row, then the rows), blocks separated by a blank line.
import type { Cell, ReportContent } from './content.ts';

/** Numbers exactly as the API's JSON writes them (no rounding, no grouping), so a report and the API can be compared. */
export function formatCell(cell: Cell): string {
  if (cell === null) return '';
  return typeof cell === 'number' ? String(cell) : cell;
}

function csvField(cell: Cell): string {
  let text = formatCell(cell);
  // A text cell starting with = + - @ would run as a formula in a spreadsheet (CSV injection): prefix an apostrophe.
  if (typeof cell === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function renderCsv(content: ReportContent): Buffer {
  const lines = [
    ['report', content.template],
    ['site', content.site],
    ['from', content.period.from],
    ['to_exclusive', content.period.to],
    ['timezone', content.timezone],
    ['currency', content.currency],
    ['generated_at', content.generatedAt],
  ].map((row) => row.map(csvField).join(','));
  for (const table of content.tables) {
    lines.push('', csvField(table.key), table.columns.map(csvField).join(','));
    for (const row of table.rows) lines.push(row.map(csvField).join(','));
  }
  return Buffer.from(lines.join('\r\n') + '\r\n', 'utf8');
}
