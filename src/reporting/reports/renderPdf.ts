// A report as PDF (pdfkit) worth forwarding: a cover with the period's key figures and their change against the
// previous period and the same period last year, data completeness, vector charts (energy per day, by area, the peak
// day's load curve) and every table, in the site's language, number and date formats and time zone. Byte-identical
// for the same content: the document date is the period's end, not the clock.
import type PDFKit from 'pdfkit';
import { SiteFormat } from '../../platform/i18n/format.ts';
import type { WeatherNormalisedChange } from '../../analysis/index.ts';
import { lastDay, type Cell, type Compared, type ReportContent, type Table } from './content.ts';
import type { LoadCurve } from '../../energy/index.ts';
import { drawLine, fontName, paragraph, textWidth, visiblePart } from './pdfText.ts';

const MARGIN = 50;
const INK = '#1f2933';
const MUTED = '#616e7c';
const ACCENT = '#2f6fb2';
const UP = '#b54708';
const DOWN = '#1f7a4d';
const RULE = '#cbd2d9';
const NO_DATA = '–';

type Doc = InstanceType<typeof PDFKit>;

export async function renderPdf(content: ReportContent): Promise<Buffer> {
  // pdfkit (fontkit, its fonts and tables) is loaded with the first PDF: ~6 MiB of resident memory and ~160 ms of
  // start-up an appliance spends only when a report plan runs.
  const { default: PDFDocument } = await import('pdfkit');
  const format = new SiteFormat(content);
  const doc = new PDFDocument({
    size: 'A4',
    margin: MARGIN,
    bufferPages: true,
    info: {
      Title: `${content.title}: ${content.site}`,
      Author: content.site,
      Creator: 'EMS',
      Subject: `${content.period.from} – ${lastDay(content.period.to)}`,
      // The same content gives the same bytes: the file ID is a hash of this info, so no clock reading goes in.
      CreationDate: new Date(`${content.period.to}T00:00:00Z`),
    },
  });
  const chunks: Buffer[] = [];
  doc.on('data', (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });
  cover(doc, content, format);
  doc.addPage();
  doc.y = MARGIN;
  if (content.energy) {
    const noData = content.coverage !== null && content.coverage.share === 0;
    heading(doc, format.t('report.chart.daily'));
    if (noData) note(doc, format.t('report.noDataSection'));
    else {
      const withData = new Set(content.coverage?.days ?? content.energy.days.map((d) => d.day));
      dailyChart(
        doc,
        format,
        content.energy.days.map((d) => ({ day: d.day, value: withData.has(d.day) ? d.kwh : null })),
      );
    }
    heading(doc, format.t('report.chart.areas'));
    if (noData || content.energy.areas.length === 0) note(doc, format.t('report.noDataSection'));
    else areaChart(doc, format, content.energy.areas);
    if (content.loadCurve) {
      heading(doc, format.t('report.chart.peakDay', { day: format.date(content.loadCurve.day) }), 200);
      loadCurveChart(doc, format, content.loadCurve);
    }
    if (content.commodities) commodityCharts(doc, format, content.commodities);
  }
  for (const table of content.tables) await drawTable(doc, table, content, format);
  footers(doc, content, format);
  doc.end();
  return done;
}

function cover(doc: Doc, content: ReportContent, format: SiteFormat): void {
  const { t } = format;
  const width = doc.page.width - 2 * MARGIN;
  doc.rect(0, 0, doc.page.width, 8).fill(ACCENT);
  drawLine(doc, content.site, MARGIN, 110, { size: 13, color: MUTED, width });
  // A long title is set smaller (down to 16 pt) before it is cut: "Energy manager check monthly-ene…" had room (issue 41).
  let titleSize = 26;
  while (titleSize > 16 && textWidth(doc, visiblePart(content.title, width, titleSize), titleSize, 'bold') > width) titleSize -= 1;
  drawLine(doc, content.title, MARGIN, 132 + (26 - titleSize) / 2, { size: titleSize, weight: 'bold', width });
  paragraph(doc, t('report.period', { from: format.date(content.period.from), to: format.date(lastDay(content.period.to)) }), MARGIN, 178, { size: 13, width });
  paragraph(doc, t('report.timezone', { timezone: content.timezone }), MARGIN, 198, { size: 10, color: MUTED, width });
  const energy = content.energy;
  if (!energy) return;
  // Six figures with a demand charge: a little closer together so the cover stays one page.
  let y = content.demandCharge ? 232 : 250;
  paragraph(doc, t('report.keyFigures'), MARGIN, y, { size: 14, weight: 'bold', width });
  y += 30;
  const gap = content.demandCharge ? 10 : 20;
  const noData = content.coverage !== null && content.coverage.share === 0;
  const comparison = content.comparison;
  // Changes are computed between the comparison's own figures (the comparisons API's current and reference periods).
  const base = comparison?.current;
  // A metered site's energy, cost and carbon lines are grid electricity: labelled so, with the all-utilities line beside.
  const grid = content.allUtilities !== null;
  const figures: CoverFigure[] = [
    {
      label: t(grid ? 'report.energyGrid' : 'report.energy'),
      value: format.kwh(energy.totalKwh),
      current: base?.totalKwh ?? energy.totalKwh,
      pick: (c) => c.totalKwh,
      normalised: comparison?.weatherNormalised ?? undefined,
    },
    { label: t(grid ? 'report.costGrid' : 'report.cost'), value: format.money(energy.cost), current: base?.cost ?? energy.cost, pick: (c) => c.cost },
    ...demandChargeFigures(content, format),
    {
      label: t(grid ? 'report.carbonGrid' : 'report.carbon'),
      value: format.carbon(energy.carbonKg),
      current: base?.carbonKg ?? energy.carbonKg,
      pick: (c) => c.carbonKg,
    },
    ...allUtilitiesFigures(content, format),
    {
      label: t('report.peak'),
      value: energy.peak ? t('report.peakAt', { kw: format.kw(energy.peak.kw), at: format.dateTime(energy.peak.at) }) : null,
      current: energy.peak?.kw ?? null,
      pick: (c) => c.peakKw,
    },
  ];
  for (const figure of figures) {
    rule(doc, MARGIN, MARGIN + width, y - 8, 0.4, RULE);
    paragraph(doc, figure.label, MARGIN, y, { size: 11, color: MUTED, width: 120 });
    const shown = noData || figure.value === null ? t('report.noData') : figure.value;
    paragraph(doc, shown, MARGIN + 125, y - 4, { size: 17, weight: 'bold', width: width - 125, color: noData || figure.value === null ? MUTED : INK });
    let line = y + 20;
    if (figure.detail && !noData) {
      paragraph(doc, figure.detail, MARGIN + 125, line, { size: 9.5, color: MUTED, width: width - 125 });
      line = doc.y + 2;
    }
    if (comparison && !noData && figure.current !== null) {
      for (const [key, compared] of [
        ['report.vsPrevious', comparison.previous],
        ['report.vsLastYear', comparison.lastYear],
      ] as const) {
        let next = line + 14;
        const before = compared.hasData ? figure.pick(compared) : null;
        const label = t(key, { period: periodLabel(format, compared) }) + comparisonMarks(format, compared);
        if (before === null || before === 0) {
          // A reference with data whose figure was 0 (no demand price then) is not "no data": it says it was 0.
          const why = before === 0 ? t('report.zeroReference') : t('report.noComparison');
          paragraph(doc, `${why} ${label}`, MARGIN + 125, line, { size: 9.5, color: MUTED, width: width - 125 });
          next = Math.max(next, doc.y + 2);
        } else {
          const change = (figure.current - before) / Math.abs(before);
          const changeText = format.change(change);
          const changeWidth = textWidth(doc, changeText, 9.5, 'bold');
          drawLine(doc, changeText, MARGIN + 125, line, { size: 9.5, weight: 'bold', color: change > 0 ? UP : change < 0 ? DOWN : MUTED });
          paragraph(doc, label, MARGIN + 125 + changeWidth + 5, line, { size: 9.5, color: MUTED, width: width - 130 - changeWidth });
          next = Math.max(next, doc.y + 2);
        }
        // A label with marks may wrap: the next line starts below it.
        line = next;
        // Right under the raw change against the previous month: the same change normalised for weather.
        if (key === 'report.vsPrevious' && figure.normalised) line = normalisedLine(doc, format, figure.normalised, comparison.previous, line, width);
      }
    }
    y = line + gap;
  }
  if (content.coverage) {
    const key = content.coverage.unit === 'intervals' ? 'report.completeness' : 'report.completenessDays';
    paragraph(doc, t(key, { percent: format.percent(content.coverage.share) }), MARGIN, y, {
      size: 10.5,
      width,
      color: content.coverage.share < 0.99 ? UP : INK,
    });
    y += 18;
    // Metered: the intervals split by their flags into measured, estimated (spread over a gap) and missing.
    const split = energy.completeness;
    if (split && split.intervals > 0) {
      const text = t('report.completenessSplit', {
        measured: format.percent(split.measured),
        estimated: format.percent(split.estimated),
        missing: format.percent(split.missing),
      });
      paragraph(doc, text, MARGIN, y, { size: 10.5, width, color: split.measured < 0.99 ? UP : INK });
      y = doc.y + 6;
    }
  }
  if (comparison && !noData && !comparison.current.complete && comparison.current.missingDays.length) {
    const days = comparison.current.missingDays.map((day) => format.date(day)).join(', ');
    paragraph(doc, t('report.missingDays', { days }), MARGIN, y, { size: 10.5, width, color: UP });
    y = doc.y + 6;
  }
  if (noData) paragraph(doc, t('report.noDataPeriod'), MARGIN, y, { size: 10.5, width, color: UP });
}

type CoverFigure = {
  label: string;
  value: string | null;
  detail?: string;
  current: number | null;
  pick: (c: Compared) => number | null;
  /** The energy line of a monthly report: its change against the previous month normalised for weather. */
  normalised?: WeatherNormalisedChange;
};

/** The first reason is cut to this on the cover, two lines at most (the comparisons API gives them all, whole). */
const REASON_CHARS = 100;

/**
 * Under the raw change against the previous month: the weather-normalised one (IPMVP routine adjustment with the
 * site's degree-day model), or why there is none. Answers the y of the next line.
 */
function normalisedLine(doc: Doc, format: SiteFormat, normalised: WeatherNormalisedChange, previous: Compared, line: number, width: number): number {
  const { t } = format;
  const period = periodLabel(format, previous);
  if (normalised.percent === null || normalised.current === null) {
    // The first reason (its sentence), the others left to the API.
    const reason = (normalised.withheld ?? '').split(/(?<=[.:]) (?=[A-Z0-9])/)[0];
    const short = reason.length > REASON_CHARS ? `${reason.slice(0, REASON_CHARS - 1).trimEnd()}…` : reason;
    paragraph(doc, t('report.normalisedWithheld', { period, reason: short }), MARGIN + 125, line, { size: 9.5, color: MUTED, width: width - 125 });
    return Math.max(line + 14, doc.y + 2);
  }
  const change = normalised.percent / 100;
  const changeText = format.change(change);
  const changeWidth = textWidth(doc, changeText, 9.5, 'bold');
  drawLine(doc, changeText, MARGIN + 125, line, { size: 9.5, weight: 'bold', color: change > 0 ? UP : change < 0 ? DOWN : MUTED });
  paragraph(doc, t('report.normalised', { period, days: String(normalised.current.days) }), MARGIN + 125 + changeWidth + 5, line, {
    size: 9.5,
    color: MUTED,
    width: width - 130 - changeWidth,
  });
  return Math.max(line + 14, doc.y + 2);
}

/** The month's demand charge (billed kW × price per kW) and the total cost with it, when the tariff carries one. */
function demandChargeFigures(content: ReportContent, format: SiteFormat): CoverFigure[] {
  const charge = content.demandCharge?.current;
  const current = content.comparison?.current;
  if (!charge || !current) return [];
  const { t } = format;
  const detail = t('report.demandChargeDetail', {
    kw: format.kw(charge.billedKw),
    price: format.money(charge.version.demandChargePerKw),
    basis: t(`value.${charge.version.basis}`),
  });
  return [
    {
      label: t('report.demandCharge'),
      value: format.money(charge.demandCharge),
      detail,
      current: current.demandCharge ?? null,
      pick: (c) => c.demandCharge ?? null,
    },
    { label: t('report.totalCost'), value: format.money(charge.totalCost), current: current.totalCost ?? null, pick: (c) => c.totalCost ?? null },
  ];
}

/**
 * Every utility's cost and carbon by scope (src/energy/allUtilities.ts), without a change: the comparison periods are
 * grid electricity's. Names the utilities with data but no tariff, which the sums leave out.
 */
function allUtilitiesFigures(content: ReportContent, format: SiteFormat): CoverFigure[] {
  const all = content.allUtilities;
  // A site that meters electricity only: the grid lines above are the whole headline already.
  if (!all || (content.commodities?.view.commodities.length ?? 0) < 2 || (all.costTotal === null && all.carbonKg === null)) return [];
  const { t } = format;
  const kg = (value: number | null) => (value === null ? NO_DATA : `${format.number(value, 1)} kg`);
  let detail = t('report.allUtilitiesDetail', {
    carbon: all.carbonKg === null ? NO_DATA : format.carbon(all.carbonKg),
    scope1: kg(all.scope1Kg),
    scope2: kg(all.scope2Kg),
    kwh: format.kwh(all.energyKwh),
  });
  if (all.unpriced.length) detail += `; ${t('report.allUtilitiesUnpriced', { commodities: all.unpriced.map((c) => t(`value.${c}`)).join(', ') })}`;
  return [{ label: t('report.allUtilities'), value: all.costTotal === null ? null : format.money(all.costTotal), detail, current: null, pick: () => null }];
}

/** What the comparisons API marks about a reference period, appended to its label: partial, incomplete. */
function comparisonMarks(format: SiteFormat, compared: Compared): string {
  let marks = '';
  if (compared.partial) marks += ` · ${format.t('report.comparisonPartial')}`;
  if (!compared.complete && compared.hasData) marks += ` · ${format.t('report.comparisonIncomplete', { coverage: format.percent(compared.coverage) })}`;
  return marks;
}

/** "October 2026" for a whole month, else "1 Nov 2026 – 7 Nov 2026". */
function periodLabel(format: SiteFormat, period: { from: string; to: string }): string {
  const last = lastDay(period.to);
  if (period.from.endsWith('-01') && period.from.slice(0, 7) === last.slice(0, 7) && period.to.endsWith('-01')) return format.month(period.from.slice(0, 7));
  return `${format.date(period.from)} – ${format.date(last)}`;
}

function footers(doc: Doc, content: ReportContent, format: SiteFormat): void {
  const range = doc.bufferedPageRange();
  const width = doc.page.width - 2 * MARGIN;
  for (let index = range.start; index < range.start + range.count; index += 1) {
    doc.switchToPage(index);
    const y = doc.page.height - 40;
    rule(doc, MARGIN, doc.page.width - MARGIN, y - 8, 0.5, RULE);
    drawLine(doc, format.t('report.footer', { site: content.site }), MARGIN, y, { size: 8, color: MUTED, width: width - 90 });
    drawLine(doc, format.t('report.page', { page: index + 1, pages: range.count }), MARGIN, y, { size: 8, color: MUTED, width, align: 'right' });
  }
}

/** A section title; starts a new page when less than `room` points are left below it. */
function heading(doc: Doc, text: string, room = 110): void {
  if (doc.y > doc.page.height - MARGIN - room) {
    doc.addPage();
    doc.y = MARGIN;
  }
  doc.y += 10;
  paragraph(doc, text, MARGIN, doc.y, { size: 13, weight: 'bold' });
  doc.y += 4;
}

function note(doc: Doc, text: string): void {
  paragraph(doc, text, MARGIN + 3, doc.y + 2, { size: 9.5, color: MUTED });
  doc.y += 6;
}

/** A horizontal line from x0 to x1: cover and table rules, footer line, gridlines, a chart's base line. */
function rule(doc: Doc, x0: number, x1: number, y: number, width: number, color: string): void {
  doc.moveTo(x0, y).lineTo(x1, y).lineWidth(width).strokeColor(color).stroke();
}

type ChartBox = { left: number; top: number; width: number; height: number; bottom: number };

/**
 * A chart below the current position over a value axis (a nice step, gridlines, tick labels): `plot` draws into the box
 * scaled to the axis maximum, the base line goes over it, and the text goes on below.
 */
function valueChart(doc: Doc, format: SiteFormat, height: number, max: number, plot: (box: ChartBox, axisMax: number) => void): void {
  const left = MARGIN + 45;
  const top = doc.y + 8;
  const box = { left, top, width: doc.page.width - MARGIN - left, height, bottom: top + height };
  const step = niceStep(max / 4);
  const axisMax = Math.max(step, Math.ceil(max / step) * step);
  for (let tick = 0; tick <= axisMax + step / 2; tick += step) {
    const y = box.bottom - (tick / axisMax) * box.height;
    rule(doc, box.left, box.left + box.width, y, 0.4, RULE);
    drawLine(doc, format.number(tick, step < 1 ? 1 : 0), MARGIN - 10, y - 4, { size: 7.5, color: MUTED, width: box.left - MARGIN + 4, align: 'right' });
  }
  plot(box, axisMax);
  rule(doc, box.left, box.left + box.width, box.bottom, 0.8, INK);
  doc.y = box.bottom + 20;
}

/** One bar per day; a day without data has no bar and a dash under its slot (never a zero that looks like a reading). */
function dailyChart(doc: Doc, format: SiteFormat, days: { day: string; value: number | null }[]): void {
  valueChart(doc, format, 160, Math.max(0, ...days.map((d) => d.value ?? 0)), (box, axisMax) => {
    const slot = days.length ? box.width / days.length : box.width;
    const barWidth = Math.max(2, Math.min(36, slot * 0.7));
    const every = Math.ceil(days.length / 16);
    days.forEach((entry, index) => {
      const x = box.left + index * slot + (slot - barWidth) / 2;
      if (entry.value === null) drawLine(doc, NO_DATA, x, box.bottom - 10, { size: 8, color: UP, width: barWidth, align: 'center' });
      else {
        const height = axisMax > 0 ? (entry.value / axisMax) * box.height : 0;
        doc.rect(x, box.bottom - height, barWidth, height).fill(ACCENT);
      }
      if (index % every === 0)
        drawLine(doc, format.shortDate(entry.day), x - 12, box.bottom + 4, { size: 7, color: MUTED, width: barWidth + 24, align: 'center' });
    });
  });
}

/** A chart per utility in its own unit (a day without data: no bar), and the PV yield; "no data" for one without any. */
function commodityCharts(doc: Doc, format: SiteFormat, commodities: NonNullable<ReportContent['commodities']>): void {
  for (const entry of commodities.entries) {
    const name = format.t(`value.${entry.commodity.commodity}`);
    heading(doc, format.t('report.chart.commodity', { commodity: name, unit: entry.commodity.unit }), 230);
    if (!entry.hasData) note(doc, format.t('report.noDataSection'));
    else
      dailyChart(
        doc,
        format,
        entry.days.map((d) => ({ day: d.day, value: d.quantity })),
      );
  }
  if (commodities.solar) {
    heading(doc, format.t('report.chart.solar'), 230);
    if (!commodities.solar.hasData) note(doc, format.t('report.noDataSection'));
    else
      dailyChart(
        doc,
        format,
        commodities.solar.days.map((d) => ({ day: d.day, value: d.generationKwh })),
      );
  }
  note(doc, format.t('report.energyTotalNote'));
}

/** Horizontal bars, one per area, with its energy and share written beside it. */
function areaChart(doc: Doc, format: SiteFormat, areas: { area: string; kwh: number }[]): void {
  const labelWidth = 130;
  const valueWidth = 120;
  const left = MARGIN + labelWidth + 6;
  const width = doc.page.width - MARGIN - valueWidth - left;
  const max = Math.max(0, ...areas.map((a) => a.kwh));
  const total = areas.reduce((sum, a) => sum + a.kwh, 0);
  const rowHeight = 17;
  let y = doc.y + 6;
  for (const area of areas) {
    if (y + rowHeight > doc.page.height - MARGIN - 20) {
      doc.addPage();
      y = MARGIN;
    }
    drawLine(doc, area.area, MARGIN, y + 3, { size: 9, width: labelWidth });
    const length = max > 0 ? (area.kwh / max) * width : 0;
    doc.rect(left, y + 2, Math.max(0.5, length), rowHeight - 6).fill(ACCENT);
    const share = total > 0 ? ` (${format.percent(area.kwh / total)})` : '';
    drawLine(doc, `${format.number(area.kwh, 1)}${share}`, left + width + 6, y + 3, { size: 8.5, color: MUTED, width: valueWidth - 6 });
    y += rowHeight;
  }
  doc.y = y + 10;
}

/** The peak day's 96 (92, 100) quarter hours as a line; gaps where an interval has no data. */
function loadCurveChart(doc: Doc, format: SiteFormat, curve: LoadCurve): void {
  valueChart(doc, format, 140, Math.max(0, ...curve.points.map((p) => p.kw ?? 0)), (box, axisMax) => {
    const step = curve.points.length > 1 ? box.width / (curve.points.length - 1) : box.width;
    let drawing = false;
    curve.points.forEach((point, index) => {
      const x = box.left + index * step;
      if (point.kw === null) {
        drawing = false;
        return;
      }
      const y = box.bottom - (point.kw / axisMax) * box.height;
      if (drawing) doc.lineTo(x, y);
      else doc.moveTo(x, y);
      drawing = true;
    });
    doc.lineWidth(1.4).strokeColor(ACCENT).stroke();
    // Hour labels every three hours, in the site's clock.
    curve.points.forEach((point, index) => {
      const label = format.dateTime(point.at).slice(-5);
      if (index % 12 === 0) drawLine(doc, label, box.left + index * step - 15, box.bottom + 4, { size: 7, color: MUTED, width: 30, align: 'center' });
    });
  });
}

function niceStep(raw: number): number {
  if (!(raw > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(raw));
  const scaled = raw / power;
  return (scaled <= 1 ? 1 : scaled <= 2 ? 2 : scaled <= 5 ? 5 : 10) * power;
}

const TIME_COLUMNS = new Set(['occurred_at', 'scheduled_at', 'at', 'started_at', 'ended_at']);
const ONE_DECIMAL = new Set([
  'kwh',
  'waste_kwh',
  'waste_kwh_per_day',
  'carbon_kg',
  'kw',
  'mttr_hours',
  'peak_kw',
  'billed_kw',
  'quantity',
  'import_kwh',
  'export_kwh',
  'generation_kwh',
  'consumption_kwh',
  'self_consumption_kwh',
  'net_import_kwh',
]);
const MONEY = new Set(['cost', 'demand_charge_per_kw', 'demand_charge', 'energy_cost', 'total_cost', 'import_cost', 'feed_in_revenue', 'waste_money_per_day']);
const SHARE = new Set(['self_consumption_rate', 'self_sufficiency', 'measured', 'estimated', 'missing']);
const TRANSLATED = new Set(['level', 'status', 'severity', 'type', 'overdue', 'basis', 'commodity']);

/** A cell as the site reads it: grouped numbers, local dates and times, translated states. */
export function pdfCell(format: SiteFormat, column: string, cell: Cell): string {
  if (cell === null) return NO_DATA;
  if (typeof cell === 'number') {
    if (MONEY.has(column)) return format.number(cell, 2);
    if (SHARE.has(column)) return format.percent(cell);
    return format.number(cell, ONE_DECIMAL.has(column) ? 1 : 0);
  }
  if (column === 'day' && /^\d{4}-\d{2}-\d{2}$/.test(cell)) return format.date(cell);
  if (column === 'month' && /^\d{4}-\d{2}$/.test(cell)) return format.month(cell);
  if (TIME_COLUMNS.has(column) && !Number.isNaN(Date.parse(cell))) return format.dateTime(cell);
  if (TRANSLATED.has(column)) {
    const key = `value.${cell}`;
    const text = format.t(key);
    return text === key ? cell : text;
  }
  return cell;
}

/** A one-row table of many columns (the demand charge) reads better turned on its side: one line per column. */
function sideways(table: Table, format: SiteFormat, content: ReportContent): Table {
  const row = table.rows[0];
  return {
    ...table,
    columns: ['item', 'value'],
    rows: table.columns.map((column, i) => [format.t(`column.${column}`, { currency: content.currency }), pdfCell(format, column, row[i])]),
  };
}

async function drawTable(doc: Doc, original: Table, content: ReportContent, format: SiteFormat): Promise<void> {
  const table = original.rows.length === 1 && original.columns.length > 5 ? sideways(original, format, content) : original;
  heading(doc, format.t(`table.${table.key}`));
  if (table.rows.length === 0 && table.columns.length > 5) {
    note(doc, format.t('report.noDataSection'));
    return;
  }
  const width = doc.page.width - 2 * MARGIN;
  const size = 8.5;
  // The daily table says "no data" for a day nothing was recorded on, instead of its zeros.
  const missingDays =
    table.key === 'daily' && content.coverage
      ? new Set(table.rows.map((row) => row[0] as string).filter((day) => !content.coverage!.days.includes(day)))
      : new Set<string>();
  const noDataText = format.t('report.chart.noDataDay');
  // A commodity without data reads "no data" where its quantity would be, not 0.
  const noDataRow = (row: Cell[]) => table.key === 'commodities' && row[2] === null;
  const cells = (row: Cell[]): string[] =>
    noDataRow(row)
      ? [pdfCell(format, 'commodity', row[0]), pdfCell(format, 'unit', row[1]), noDataText, ...row.slice(3).map(() => NO_DATA)]
      : missingDays.has(row[0] as string)
        ? [pdfCell(format, 'day', row[0]), ...row.slice(1).map((_, i) => (i === 0 ? noDataText : NO_DATA))]
        : row.map((cell, i) => pdfCell(format, table.columns[i], cell));
  const textColumns = new Set(table.columns.map((_, index) => index).filter((index) => table.rows.some((row) => typeof row[index] === 'string')));
  const headers = table.columns.map((column) => format.t(`column.${column}`, { currency: content.currency }));
  const sample = table.rows.slice(0, 200).map(cells);
  const natural = table.columns.map(
    (_, index) =>
      Math.max(textWidth(doc, headers[index], size, 'bold'), ...sample.map((row) => textWidth(doc, visiblePart(row[index], width, size), size))) + 12,
  );
  const widths = fitColumns(natural, width);
  const xs: number[] = [];
  widths.reduce((x, w) => (xs.push(x), x + w), MARGIN);
  const rowHeight = 16;
  const drawRow = (texts: string[], bold: boolean, muted = false): void => {
    if (doc.y + rowHeight > doc.page.height - MARGIN - 20) {
      doc.addPage();
      doc.y = MARGIN;
      // A table that goes on over a page break repeats its header row.
      if (!bold) drawRow(headers, true);
    }
    const y = doc.y;
    texts.forEach((text, index) => {
      const align = textColumns.has(index) ? 'left' : 'right';
      drawLine(doc, text, xs[index] + 3, y + 4, { size, weight: bold ? 'bold' : 'regular', color: muted ? MUTED : INK, width: widths[index] - 6, align });
    });
    rule(doc, MARGIN, MARGIN + width, y + rowHeight, bold ? 0.8 : 0.3, bold ? INK : RULE);
    doc.y = y + rowHeight;
  };
  drawRow(headers, true);
  const energyTable = ['daily', 'areas', 'totals', 'peak', 'electricity-balance'].includes(table.key);
  if (table.rows.length === 0 || (energyTable && content.coverage?.share === 0)) {
    note(doc, format.t(energyTable ? 'report.noDataSection' : 'report.noneInPeriod'));
    return;
  }
  for (const [index, row] of table.rows.entries()) {
    drawRow(cells(row), false, missingDays.has(row[0] as string));
    // pdfkit draws synchronously: a long table lets requests in every 50 rows instead of holding the event loop throughout.
    if (index % 50 === 49) await new Promise((resolve) => setImmediate(resolve));
  }
  doc.font(fontName(doc, 'latin', 'regular'));
}

/**
 * Column widths filling `width`: proportional to the natural widths when they fit; when they do not, the narrow columns
 * keep their natural width and only the columns wider than an equal share of what is left are narrowed, to that share
 * (so a 200-character equipment name does not squeeze a date column to "…").
 */
export function fitColumns(natural: number[], width: number): number[] {
  const total = natural.reduce((sum, w) => sum + w, 0);
  if (total <= width) return natural.map((w) => (w * width) / total);
  // Each round keeps at least one more column whole, or stops: at most one round per column.
  let cap = width / natural.length;
  for (let round = 0; round < natural.length; round += 1) {
    const kept = natural.filter((w) => w <= cap);
    if (kept.length === natural.length) break;
    const next = (width - kept.reduce((sum, w) => sum + w, 0)) / (natural.length - kept.length);
    if (next <= cap) break;
    cap = next;
  }
  return natural.map((w) => Math.min(w, cap));
}
