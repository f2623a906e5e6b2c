// A meter's intervals as a zoomable chart (uPlot: drag to zoom, double-click to reset) over a day (15 min), a week
// (hours), a month or a year (days), in the site's days; one GET /api/energy/series per range.
import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { api } from '../api/client';
import { Problem } from '../components/Field';
import { SuspectRunList } from '../components/suspectRuns';
import { useApi } from '../components/useApi';
import { useLive } from '../state/live';
import { dateTime, locale, num, siteTimeZone, t } from '../i18n';

const RANGES = {
  day: { days: 1, resolution: '15min' },
  week: { days: 7, resolution: 'hour' },
  month: { days: 31, resolution: 'day' },
  year: { days: 365, resolution: 'day' },
} as const;
type Range = keyof typeof RANGES;

/** The site's today as YYYY-MM-DD, and n days from a day. */
function siteToday(): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone: siteTimeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date());
}
function addDays(day: string, n: number): string {
  const date = new Date(`${day}T00:00:00Z`);
  date.setUTCDate(date.getUTCDate() + n);
  return date.toISOString().slice(0, 10);
}

function tickLabel(seconds: number, step: number): string {
  const options: Intl.DateTimeFormatOptions =
    step < 86_400 ? { hour: '2-digit', minute: '2-digit', timeZone: siteTimeZone } : { day: 'numeric', month: 'short', timeZone: siteTimeZone };
  return new Intl.DateTimeFormat(locale.value, options).format(new Date(seconds * 1000));
}

export default function Meter({ params }: { params: string[] }) {
  const id = Number(params[0]);
  const [range, setRange] = useState<Range>('day');
  const chart = useRef<HTMLDivElement>(null);
  const meter = useApi(() => api.GET('/api/meters/{id}', { params: { path: { id } } }), [id]);
  const to = addDays(siteToday(), 1);
  const from = addDays(to, -RANGES[range].days);
  const series = useApi(
    () => api.GET('/api/energy/series', { params: { query: { meterId: id, from, to, resolution: RANGES[range].resolution } } }),
    [id, range],
  );
  // New intervals stored (the live stream): the series again, no timer.
  useLive('interval', () => series.reload());
  const points = series.data?.points ?? [];
  const total = points.reduce((sum, p) => sum + (p.kwh ?? 0), 0);

  useEffect(() => {
    const box = chart.current;
    if (!box || !series.data) return;
    const xs = points.map((p) => Date.parse(p.start) / 1000);
    const ys = points.map((p) => p.kwh);
    const styles = getComputedStyle(document.documentElement);
    const ink = styles.getPropertyValue('--ink').trim() || '#222';
    const accent = styles.getPropertyValue('--accent').trim() || '#2563eb';
    const grid = styles.getPropertyValue('--line').trim() || '#ddd';
    const axis = { stroke: ink, grid: { stroke: grid }, ticks: { stroke: grid } };
    const plot = new uPlot(
      {
        width: box.clientWidth,
        height: Math.max(220, Math.min(420, Math.round(box.clientWidth * 0.45))),
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), siteTimeZone),
        fmtDate: (template) => uPlot.fmtDate(template, undefined),
        series: [
          { label: t('meter.time'), value: (_u, v) => (v == null ? '–' : dateTime(v * 1000)) },
          {
            label: 'kWh',
            stroke: accent,
            fill: `${accent}33`,
            width: 2,
            value: (_u, v) => (v == null ? '–' : num(v, 2)),
            paths: uPlot.paths.stepped!({ align: 1 }),
          },
        ],
        axes: [
          // Ticks in the locale's form and the site's time zone: hours within a day, else day and month.
          { ...axis, values: (_u, splits) => splits.map((v, i) => tickLabel(v, i > 0 ? v - splits[i - 1] : (splits[1] ?? v + 86_400) - v)) },
          { ...axis, values: (_u, values) => values.map((v) => num(v)) },
        ],
        cursor: { drag: { x: true, y: false } },
      },
      [xs, ys],
      box,
    );
    const resize = () => plot.setSize({ width: box.clientWidth, height: Math.max(220, Math.min(420, Math.round(box.clientWidth * 0.45))) });
    window.addEventListener('resize', resize);
    return () => {
      window.removeEventListener('resize', resize);
      plot.destroy();
    };
  }, [series.data, locale.value]);

  return (
    <section>
      <p class="crumbs">
        <a href="/">{t('nav.overview')}</a>
        {meter.data?.area && (
          <>
            {' › '}
            <a href={`/areas/${encodeURIComponent(meter.data.area)}`}>{meter.data.area}</a>
          </>
        )}
      </p>
      <h1>{meter.data?.name ?? t('meter.title')}</h1>
      <Problem text={meter.problem ?? series.problem} />
      <fieldset class="segmented">
        <legend class="sr-only">{t('meter.range')}</legend>
        {(Object.keys(RANGES) as Range[]).map((key) => (
          <button type="button" key={key} aria-pressed={range === key} onClick={() => setRange(key)}>
            {t(`meter.${key}`)}
          </button>
        ))}
      </fieldset>
      <p>{t('meter.total', { kwh: num(total), count: points.length })}</p>
      <div class="chart" ref={chart} role="img" aria-label={t('meter.chartLabel', { kwh: num(total) })} />
      <p class="muted">{t('meter.zoomHint')}</p>
      <SuspectRunList meterId={id} heading={t('suspects.ofMeter')} />
    </section>
  );
}
