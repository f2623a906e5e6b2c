// One chart of the energy screen on uPlot (its own chunk with the screen): a line of kW or stacked bars of kWh, the
// unit scaled to the figures (W/kW/MW, kWh/MWh), a reset-zoom button, legend statistics (min / max / mean / total per
// series), a table view of every point for screen readers, and CSV and PNG downloads of what is drawn.
import type { RefObject } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { locale, num, siteTimeZone, t } from '../../i18n';
import './charts.css';
import { saveBlob } from '../saveFile';

export type Quantity = 'power' | 'energy';
export type ChartSeries = {
  label: string;
  /** In kW (power) or kWh (energy); null: no data. */
  values: (number | null)[];
  color: string;
  /** Drawn dashed and left out of the statistics (a running interval, an estimate, a contract line). */
  dashed?: boolean;
  /** One edge of a shaded band (the chart fills between its 'upper' and 'lower'); no line, left out of the statistics. */
  band?: 'upper' | 'lower';
  /** Drawn as dots only (a marked point such as the month's peak; null elsewhere). */
  marker?: boolean;
  /** In a stacked chart: drawn as a line over the stack, not part of it (export beside the consumption it is not). */
  overlay?: boolean;
};
export type ChartProps = {
  /** Names the downloads and the table's ids. */
  name: string;
  title: string;
  quantity: Quantity;
  kind: 'line' | 'bars';
  /** Unix seconds of each point's start. */
  x: number[];
  /** Hours each point spans (a kW series' total is its energy). */
  stepHours: number;
  series: ChartSeries[];
  /** The first column of the table and the CSV: a point's time as people read it. */
  xLabel: (seconds: number) => string;
  /** A bar's short label on the axis (else xLabel). */
  xTick?: (seconds: number) => string;
  /** Bars stacked (the total of a bar is its height). */
  stacked?: boolean;
  /** A fixed unit for a quantity that is not scaled (m³ of gas or water): values are in it, totals their sum. */
  unit?: string;
};

type Unit = { label: string; factor: number };
/** The unit the largest figure reads best in: W below 1 kW, MW from 1000 kW; kWh, MWh from 1000 kWh. */
export function unitFor(quantity: Quantity, largest: number): Unit {
  if (quantity === 'power') {
    if (largest >= 1000) return { label: 'MW', factor: 1 / 1000 };
    if (largest > 0 && largest < 1) return { label: 'W', factor: 1000 };
    return { label: 'kW', factor: 1 };
  }
  if (largest >= 1000) return { label: 'MWh', factor: 1 / 1000 };
  return { label: 'kWh', factor: 1 };
}

export type Stats = { min: number; max: number; mean: number; total: number; count: number } | null;
/** min / max / mean of the points with data; total: their sum, in energy (a power point times its hours). */
export function statsOf(values: (number | null)[], quantity: Quantity, stepHours: number): Stats {
  const present = values.filter((v): v is number => v !== null && Number.isFinite(v));
  if (present.length === 0) return null;
  const sum = present.reduce((a, b) => a + b, 0);
  return {
    min: Math.min(...present),
    max: Math.max(...present),
    mean: sum / present.length,
    total: quantity === 'power' ? sum * stepHours : sum,
    count: present.length,
  };
}

function cssVar(name: string, fallback: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || fallback;
}

function tickLabel(seconds: number, step: number): string {
  const options: Intl.DateTimeFormatOptions =
    step < 86_400
      ? { hour: '2-digit', minute: '2-digit', timeZone: siteTimeZone }
      : step < 28 * 86_400
        ? { day: 'numeric', month: 'short', timeZone: siteTimeZone }
        : { month: 'short', year: '2-digit', timeZone: siteTimeZone };
  return new Intl.DateTimeFormat(locale.value, options).format(new Date(seconds * 1000));
}

/** The CSV of a chart: a header row, then one row per point; numbers with a dot, in the chart's base unit (kW, kWh). */
export function chartCsv(props: Pick<ChartProps, 'x' | 'series' | 'xLabel' | 'quantity' | 'unit'>): string {
  const unit = props.unit ?? (props.quantity === 'power' ? 'kW' : 'kWh');
  const quote = (text: string) => (/[",\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text);
  const rows = [['start (UTC)', 'time', ...props.series.map((s) => `${s.label} (${unit})`)].map(quote).join(',')];
  props.x.forEach((seconds, i) => {
    rows.push(
      [
        new Date(seconds * 1000).toISOString(),
        quote(props.xLabel(seconds)),
        ...props.series.map((s) => (s.values[i] == null ? '' : String(+s.values[i]!.toFixed(4)))),
      ].join(','),
    );
  });
  return `${rows.join('\n')}\n`;
}

type Scaled = { unit: Unit; stacking: boolean[] };

/** The unit the chart reads in and which series stack (overlays do not). */
function scaleOf(props: ChartProps): Scaled {
  const largest = Math.max(0, ...props.series.flatMap((s) => s.values.map((v) => (v == null ? 0 : Math.abs(v)))));
  const stacking = props.series.map((s) => !!props.stacked && !s.overlay);
  const stackTotals = props.stacked ? props.x.map((_, i) => props.series.reduce((sum, s, k) => sum + (stacking[k] ? (s.values[i] ?? 0) : 0), 0)) : [];
  const unit = props.unit ? { label: props.unit, factor: 1 } : unitFor(props.quantity, Math.max(largest, ...stackTotals));
  return { unit, stacking };
}

const unstated = (s: ChartSeries) => !!s.dashed || !!s.band;

export function Chart(props: ChartProps) {
  const box = useRef<HTMLDivElement>(null);
  const [zoomed, setZoomed] = useState(false);
  const { unit, stacking } = scaleOf(props);
  const plot = usePlot(box, props, { unit, stacking }, setZoomed);

  const resetZoom = () => {
    const instance = plot.current;
    if (!instance) return;
    if (props.kind === 'bars') instance.setScale('x', { min: -0.5, max: props.x.length - 0.5 });
    else instance.setScale('x', { min: props.x[0], max: props.x[props.x.length - 1] });
    setZoomed(false);
  };
  const savePng = () => {
    const canvas = box.current?.querySelector('canvas');
    if (!canvas) return;
    const copy = document.createElement('canvas');
    copy.width = canvas.width;
    copy.height = canvas.height;
    const context = copy.getContext('2d')!;
    context.fillStyle = cssVar('--card', '#fff');
    context.fillRect(0, 0, copy.width, copy.height);
    context.drawImage(canvas, 0, 0);
    copy.toBlob((blob) => blob && saveBlob(blob, `${props.name}.png`), 'image/png');
  };
  const saveCsv = () => saveBlob(new Blob([chartCsv(props)], { type: 'text/csv;charset=utf-8' }), `${props.name}.csv`);
  const stats = props.series.map((s) => (unstated(s) ? null : statsOf(s.values, props.unit ? 'energy' : props.quantity, props.stepHours)));

  return (
    <figure class="energy-chart" data-chart={props.name}>
      <figcaption>
        <h2 id={`${props.name}-title`}>{props.title}</h2>
        <span class="chart-tools">
          <button type="button" class="ghost" onClick={resetZoom} disabled={!zoomed} data-action="reset-zoom">
            {t('energy.resetZoom')}
          </button>
          <button type="button" class="ghost" onClick={saveCsv} data-action="csv">
            {t('energy.csv')}
          </button>
          <button type="button" class="ghost" onClick={savePng} data-action="png">
            {t('energy.png')}
          </button>
        </span>
      </figcaption>
      {stats.every((s) => s === null) && <p data-field="no-data">{t('energy.noData')}</p>}
      <div class="chart" ref={box} role="img" aria-labelledby={`${props.name}-title`} aria-describedby={`${props.name}-stats`} data-unit={unit.label} />
      <p class="muted">{t('energy.zoomHint')}</p>
      <StatsTable props={props} unit={unit} stats={stats} />
      <PointsTable props={props} unit={unit} />
    </figure>
  );
}

/** The uPlot drawing in the box, made again when the points, series or language change; destroyed with the chart. */
function usePlot(box: RefObject<HTMLDivElement | null>, props: ChartProps, scaled: Scaled, setZoomed: (zoomed: boolean) => void) {
  const plot = useRef<uPlot | null>(null);
  useEffect(() => {
    const element = box.current;
    if (!element || props.x.length === 0) return;
    const height = () => Math.max(220, Math.min(400, Math.round(element.clientWidth * 0.4)));
    const { options, data } = plotOptions(props, scaled, setZoomed);
    const instance = new uPlot({ ...options, width: element.clientWidth, height: height() }, data, element);
    plot.current = instance;
    const resize = () => instance.setSize({ width: element.clientWidth, height: height() });
    window.addEventListener('resize', resize);
    return () => {
      window.removeEventListener('resize', resize);
      instance.destroy();
      plot.current = null;
    };
  }, [props.x, props.series, locale.value]);
  return plot;
}

/** What uPlot draws (without its size): the series in drawing order, stacked or not, the axes, scales and band. */
function plotOptions(
  props: ChartProps,
  { unit, stacking }: Scaled,
  setZoomed: (zoomed: boolean) => void,
): { options: Omit<uPlot.Options, 'width' | 'height'>; data: uPlot.AlignedData } {
  const ink = cssVar('--ink', '#222');
  const grid = cssVar('--line', '#ddd');
  const axis = { stroke: ink, grid: { stroke: grid }, ticks: { stroke: grid } };
  const scaled = props.series.map((s) => s.values.map((v) => (v == null ? null : v * unit.factor)));
  // Stacked: each series is drawn to the running sum, the highest first so the lower ones lie on top of it.
  let drawn = scaled;
  if (props.stacked) {
    // Overlays keep their own values; each stacked series its running sum over the stacked ones before it.
    let below: number[] = props.x.map(() => 0);
    const sums = scaled.map((values, k) => {
      if (!stacking[k]) return values;
      below = values.map((v, i) => below[i] + (v ?? 0));
      return below;
    });
    drawn = sums.slice().reverse();
  }
  // Lines: the first series drawn last, on top (today over yesterday where they meet).
  if (!props.stacked) drawn = scaled.slice().reverse();
  // uPlot's index of a series (0 is x; the series are handed over last first).
  const indexOf = (k: number) => props.series.length - k;
  const upper = props.series.findIndex((s) => s.band === 'upper');
  const lower = props.series.findIndex((s) => s.band === 'lower');
  // Bars stand on their index (one slot each, labelled with their period); lines on time.
  const isBars = props.kind === 'bars';
  const xs = isBars ? props.x.map((_, i) => i) : props.x;
  return {
    options: {
      tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), siteTimeZone),
      series: plotSeries(props, unit, scaled.slice().reverse()),
      axes: [
        isBars
          ? {
              ...axis,
              space: 70,
              incrs: [1, 2, 3, 4, 6, 7, 12, 24, 31, 48],
              values: (_u, splits) => splits.map((v) => (Number.isInteger(v) && props.x[v] != null ? (props.xTick ?? props.xLabel)(props.x[v]) : '')),
            }
          : { ...axis, space: 80, values: (_u, splits) => splits.map((v, i) => tickLabel(v, i > 0 ? v - splits[i - 1] : (splits[1] ?? v + 86_400) - v)) },
        { ...axis, label: unit.label, values: (_u, values) => values.map((v) => num(v)) },
      ],
      scales: {
        x: isBars
          ? { time: false, range: (_u, min, max) => (min <= 0 && max >= props.x.length - 1 ? [-0.5, props.x.length - 0.5] : [min, max]) }
          : { time: true, range: (_u, min, max) => (min === max ? [min - 3_600, max + 3_600] : [min, max]) },
        y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.05 : 1] },
      },
      bands: upper >= 0 && lower >= 0 ? [{ series: [indexOf(upper), indexOf(lower)], fill: `${props.series[upper].color}33` }] : undefined,
      cursor: { drag: { x: true, y: false } },
      hooks: {
        setScale: [
          (u, key) => {
            if (key !== 'x') return;
            const min = u.scales.x.min ?? 0;
            const max = u.scales.x.max ?? 0;
            setZoomed(isBars ? min > -0.4 || max < props.x.length - 0.6 : min > props.x[0] + 1 || max < props.x[props.x.length - 1] - 1);
          },
        ],
      },
    },
    data: [xs, ...drawn],
  };
}

/** uPlot's series, last first (`raw`: each one's scaled values in that order, for the legend). */
function plotSeries(props: ChartProps, unit: Unit, raw: (number | null)[][]): uPlot.Series[] {
  const isBars = props.kind === 'bars';
  const bars = uPlot.paths.bars!({ size: [0.8, 80], align: 0 });
  const order = props.series.slice().reverse();
  return [
    { label: t('energy.time'), value: (_u, v) => (v == null ? '–' : props.xLabel(isBars ? props.x[Math.round(v)] : v)) },
    ...order.map((s, k) => ({
      label: s.label,
      stroke: s.color,
      fill: props.kind === 'bars' && !s.overlay && !s.marker ? s.color : undefined,
      width: s.band ? 0 : s.dashed || s.overlay ? 2 : props.kind === 'bars' ? 0 : 2,
      dash: s.dashed ? [6, 4] : undefined,
      spanGaps: false,
      points: s.marker ? { show: true, size: 11, width: 2, fill: s.color } : { show: !!s.dashed || !!s.overlay, size: 7 },
      paths: s.marker ? () => null : props.kind === 'bars' && !s.overlay && !s.band ? bars : undefined,
      value: (_u: uPlot, _v: number | null, _s: number, i: number | null) => (i == null || raw[k][i] == null ? '–' : `${num(raw[k][i], 2)} ${unit.label}`),
    })),
  ];
}

/** The legend's statistics per stated series (dashed and band series have none), in the chart's unit. */
function StatsTable({ props, unit, stats }: { props: ChartProps; unit: Unit; stats: Stats[] }) {
  const totalLabel = props.quantity === 'power' && !props.unit ? unitFor('energy', 0).label : unit.label;
  const totalFactor = props.quantity === 'power' && !props.unit ? 1 : unit.factor;
  return (
    <table class="stats" id={`${props.name}-stats`}>
      <caption class="sr-only">{t('energy.statsCaption', { title: props.title })}</caption>
      <thead>
        <tr>
          <th scope="col">{t('energy.series')}</th>
          <th scope="col" class="r">
            {t('energy.min')} ({unit.label})
          </th>
          <th scope="col" class="r">
            {t('energy.max')} ({unit.label})
          </th>
          <th scope="col" class="r">
            {t('energy.mean')} ({unit.label})
          </th>
          <th scope="col" class="r">
            {t('energy.total')} ({totalLabel})
          </th>
        </tr>
      </thead>
      <tbody>
        {props.series.map((s, k) =>
          unstated(s) ? null : (
            <tr key={s.label} data-series={s.label}>
              <th scope="row">
                <span
                  class="swatch"
                  ref={(el) => {
                    if (el) el.style.background = s.color;
                  }}
                  aria-hidden="true"
                />
                {s.label}
              </th>
              <td class="n" data-field="min">
                {num(stats[k] ? stats[k]!.min * unit.factor : null, 2)}
              </td>
              <td class="n" data-field="max">
                {num(stats[k] ? stats[k]!.max * unit.factor : null, 2)}
              </td>
              <td class="n" data-field="mean">
                {num(stats[k] ? stats[k]!.mean * unit.factor : null, 2)}
              </td>
              <td class="n" data-field="total">
                {num(stats[k] ? stats[k]!.total * totalFactor : null, 2)}
              </td>
            </tr>
          ),
        )}
      </tbody>
    </table>
  );
}

/** Every point as a table for screen readers. The rows are made when the table is opened: a month of 15-minute points
 * is 3,000 rows nobody asked for. */
function PointsTable({ props, unit }: { props: ChartProps; unit: Unit }) {
  const [tableOpen, setTableOpen] = useState(false);
  return (
    <details class="chart-table" onToggle={(event) => setTableOpen((event.currentTarget as HTMLDetailsElement).open)}>
      <summary>{t('energy.tableView')}</summary>
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling table must be reachable by keyboard (axe scrollable-region-focusable) */}
      <section class="scroll" tabIndex={0} aria-label={t('energy.tableOf', { title: props.title })}>
        <table data-table={props.name}>
          <caption class="sr-only">{props.title}</caption>
          <thead>
            <tr>
              <th scope="col">{t('energy.time')}</th>
              {props.series.map((s) => (
                <th scope="col" class="r" key={s.label}>
                  {s.label} ({unit.label})
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {(tableOpen ? props.x : []).map((seconds, i) => (
              <tr key={seconds}>
                <th scope="row">{props.xLabel(seconds)}</th>
                {props.series.map((s) => (
                  <td class="n" key={s.label}>
                    {s.values[i] == null ? '–' : num(s.values[i]! * unit.factor, 2)}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </section>
    </details>
  );
}
