// The energy screen's further charts (issue 53 item 2), in its chunk: consumption against the baseline's expectation with
// its band, the energy flow (grid import, PV, export, self-consumption), the demand profile of the billing month with the
// contracted and the month's peak, and each commodity in its own unit side by side (m³ is never added to kWh). Every figure
// is the API's: the charts only arrange what the series and figure routes answer (their totals are checked against them).
import { useEffect, useState } from 'preact/hooks';
import { api, errorText } from '../api/client';
import type { Meter } from '../api/types';
import { Chart, type ChartSeries } from '../components/charts/Chart';
import { addDays, addMonths, dayLabel, fmt, LABELS, PALETTE, type Point, type Resolution, siteToday, TICKS } from '../components/charts/energyTime';
import { Problem } from '../components/Field';
import { type Key, num, percent, t } from '../i18n';

/** Runs `load` for `key`, keeping its answer for that key only (a newer key never shows an older answer). */
function useLoad<T>(key: string, load: () => Promise<T>): { data: T | null; problem: string | null } {
  const [state, setState] = useState<{ key: string; data: T | null; problem: string | null } | null>(null);
  useEffect(() => {
    let live = true;
    load().then(
      (data) => live && setState({ key, data, problem: null }),
      (error) => live && setState({ key, data: null, problem: error instanceof Error ? error.message : String(error) }),
    );
    return () => {
      live = false;
    };
  }, [key]);
  return state && state.key === key ? state : { data: null, problem: null };
}

/** The answer's data, or an Error with the service's reason. */
async function read<T>(request: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await request;
  if (data === undefined) throw new Error(errorText(error, response.status));
  return data;
}

function Loading() {
  return (
    <p class="muted" aria-busy="true">
      {t('app.loading')}
    </p>
  );
}

const seconds = (points: Point[]) => points.map((p) => Date.parse(p.start) / 1000);
const stepHoursOf = (resolution: Resolution) => (resolution === '15min' ? 0.25 : resolution === 'hour' ? 1 : 24);

// --- Against the baseline --------------------------------------------------------------------------------------------

/** Days of history the expectation is fitted on: the four weeks before the period (its hours are listed, so ȳ is known). */
export const BASELINE_DAYS = 28;
/** The hourly baseline's own minimum (GET /api/analysis/baseline/hourly: at least 14 days of hours with data). */
const MIN_BASELINE_DAYS = 14;

/**
 * The site's consumption in [from, to) against the hourly baseline fitted on the 28 days before `from` (GET
 * /api/analysis/baseline/hourly): per hour up to 31 days, else per day; today up to its last whole hour (the route reads
 * today's outdoor temperature so far from the gateway; the running hour is not compared). The band is ± the fit's RMSE (CV(RMSE) × the
 * baseline's mean hour); a day's band is ± RMSE × √hours (hours taken as independent).
 */
export function BaselineChart({ from, to, name, title }: { from: string; to: string; name: string; title: string }) {
  const tomorrow = addDays(siteToday(), 1);
  const reportTo = to < tomorrow ? to : tomorrow;
  const query = { baselineFrom: addDays(from, -BASELINE_DAYS), baselineTo: from, reportFrom: from, reportTo };
  const { data, problem } = useLoad(`${from}/${reportTo}`, async () => {
    if (from >= tomorrow) return null;
    // The fit needs 14 days with data in its 28: said here, rather than asked for and refused.
    const history = await seriesOf(query.baselineFrom, from, 'day');
    const days = history.filter((p) => p.kwh != null).length;
    if (days < MIN_BASELINE_DAYS) throw new Error(t('energy.baselineShort', { days, needed: MIN_BASELINE_DAYS, of: BASELINE_DAYS }));
    return read(api.GET('/api/analysis/baseline/hourly', { params: { query } }));
  });
  if (problem)
    return (
      <section class="energy-chart" data-chart={name}>
        <h2>{title}</h2>
        <Problem text={t('energy.baselineProblem', { reason: problem })} />
      </section>
    );
  if (!data) return from >= tomorrow ? null : <Loading />;
  const report = data.report;
  const baselineHours = data.baselineHours;
  const meanHour = baselineHours.length ? baselineHours.reduce((sum, h) => sum + h.actualKwh, 0) / baselineHours.length : 0;
  const rmse = (data.statistics.cvRmsePercent / 100) * meanHour;
  if (!report) return null;
  // Only just after midnight (no whole hour yet), or with no energy or temperature for today's hours, is there nothing to draw.
  if (report.hours.length === 0 && report.days.length === 0)
    return (
      <section class="energy-chart" data-chart={name}>
        <h2>{title}</h2>
        <p data-field="no-data">{t('energy.baselineFinishedDays')}</p>
      </section>
    );
  const hourly = report.hoursListed;
  const rows = hourly
    ? report.hours.map((h) => ({ x: Date.parse(h.start) / 1000, actual: h.actualKwh, expected: h.expectedKwh, spread: rmse }))
    : report.days.map((d) => ({ x: Date.parse(`${d.day}T00:00:00Z`) / 1000, actual: d.actualKwh, expected: d.expectedKwh, spread: rmse * Math.sqrt(d.hours) }));
  const series: ChartSeries[] = [
    { label: t('energy.actual'), values: rows.map((r) => r.actual), color: PALETTE[0] },
    { label: t('energy.expected'), values: rows.map((r) => r.expected), color: PALETTE[1] },
    { label: t('energy.bandUpper'), values: rows.map((r) => r.expected + r.spread), color: PALETTE[1], band: 'upper' },
    { label: t('energy.bandLower'), values: rows.map((r) => Math.max(0, r.expected - r.spread)), color: PALETTE[1], band: 'lower' },
  ];
  return (
    <div>
      <Chart
        name={name}
        title={title}
        quantity="energy"
        kind={hourly ? 'line' : 'bars'}
        x={rows.map((r) => r.x)}
        stepHours={hourly ? 1 : 24}
        series={series}
        xLabel={hourly ? fmt(LABELS.hour) : (s) => dayLabel(new Date(s * 1000).toISOString().slice(0, 10))}
        xTick={hourly ? undefined : (s) => dayLabel(new Date(s * 1000).toISOString().slice(0, 10), TICKS.day)}
      />
      <p class="muted" data-field="baseline-fit">
        {t('energy.baselineFit', {
          days: BASELINE_DAYS,
          cv: num(data.statistics.cvRmsePercent, 1),
          band: num(rmse, 2),
          expected: num(report.expectedKwh, 2),
          actual: num(report.actualKwh, 2),
        })}
      </p>
    </div>
  );
}

// --- Meters by role and commodity ------------------------------------------------------------------------------------

type MeterInfo = Pick<Meter, 'id' | 'name' | 'commodity' | 'role'>;

async function allMeters(): Promise<MeterInfo[]> {
  const meters: MeterInfo[] = [];
  for (let page = 1; ; page += 1) {
    const data = await read(api.GET('/api/meters', { params: { query: { page, pageSize: 200 } } }));
    meters.push(...data.items.map((m) => ({ id: m.id, name: m.name, commodity: m.commodity ?? 'electricity', role: m.role ?? 'import' })));
    if (meters.length >= data.total || data.items.length === 0) return meters;
  }
}

async function seriesOf(from: string, to: string, resolution: Resolution, meterId?: number): Promise<Point[]> {
  const query = meterId === undefined ? { from, to, resolution } : { from, to, resolution, meterId };
  return (await read(api.GET('/api/energy/series', { params: { query } }))).points;
}

/** Σ of the meters' series point by point; null where none of them has the point. */
function sumSeries(all: Point[][], length: number): (number | null)[] {
  return Array.from({ length }, (_, i) => {
    const present = all.map((points) => points[i]?.kwh).filter((v): v is number => v != null);
    return present.length ? present.reduce((a, b) => a + b, 0) : null;
  });
}

// --- Energy flow -----------------------------------------------------------------------------------------------------

/** Grid import, PV generation, export and self-consumption (generation − export) per point; the balance of the period. */
export function FlowChart({ from, to, resolution, period }: { from: string; to: string; resolution: Resolution; period: string }) {
  const { data, problem } = useLoad(`${from}/${to}/${resolution}`, async () => {
    const meters = await allMeters();
    const exports = meters.filter((m) => m.commodity === 'electricity' && m.role === 'export');
    const generation = meters.filter((m) => m.commodity === 'electricity' && m.role === 'generation');
    if (!exports.length && !generation.length) return { metered: false as const };
    const [site, balance, exportSeries, generationSeries] = await Promise.all([
      seriesOf(from, to, resolution),
      read(api.GET('/api/energy/commodities', { params: { query: { from, to } } })),
      Promise.all(exports.map((m) => seriesOf(from, to, resolution, m.id))),
      Promise.all(generation.map((m) => seriesOf(from, to, resolution, m.id))),
    ]);
    return { metered: true as const, site, balance: balance.electricity, exportSeries, generationSeries, exports, generation };
  });
  const title = t('energy.flowTitle', { period });
  if (problem) return <Problem text={problem} />;
  if (!data) return <Loading />;
  if (!data.metered)
    return (
      <section class="energy-chart" data-chart={`energy-flow-${from}-${to}`}>
        <h2>{title}</h2>
        <p data-field="no-flow">{t('energy.noFlow')}</p>
      </section>
    );
  const length = data.site.length;
  const exported = data.exports.length ? sumSeries(data.exportSeries, length) : data.site.map(() => null);
  const generated = data.generation.length ? sumSeries(data.generationSeries, length) : data.site.map(() => null);
  const self = generated.map((g, i) => (g == null ? null : g - (exported[i] ?? 0)));
  const series: ChartSeries[] = [
    { label: t('energy.fromGrid'), values: data.site.map((p) => p.kwh), color: PALETTE[0] },
    { label: t('energy.selfConsumed'), values: self, color: PALETTE[6] },
    { label: t('energy.generated'), values: generated, color: PALETTE[1], overlay: true },
    { label: t('energy.exported'), values: exported, color: PALETTE[3], overlay: true },
  ];
  const b = data.balance;
  const figure = (key: Key, value: number | null) => (
    <div>
      <dt>{t(key)}</dt>
      <dd data-field={key}>{value == null ? '–' : `${num(value, 2)} kWh`}</dd>
    </div>
  );
  return (
    <div>
      <Chart
        name={`energy-flow-${from}-${to}`}
        title={title}
        quantity="energy"
        kind="bars"
        stacked
        x={seconds(data.site)}
        stepHours={stepHoursOf(resolution)}
        series={series}
        xLabel={fmt(LABELS[resolution])}
        xTick={fmt(TICKS[resolution])}
      />
      <dl class="flow-figures" data-field="flow-balance">
        {figure('energy.fromGrid', b.importKwh)}
        {figure('energy.generated', b.generationKwh)}
        {figure('energy.selfConsumed', b.selfConsumptionKwh)}
        {figure('energy.exported', b.exportKwh)}
        {figure('energy.consumption', b.consumptionKwh)}
        <div>
          <dt>{t('energy.selfSufficiency')}</dt>
          <dd data-field="energy.selfSufficiency">{percent(b.selfSufficiency)}</dd>
        </div>
      </dl>
    </div>
  );
}

// --- Demand profile --------------------------------------------------------------------------------------------------

/**
 * The billing month's (the calendar month holding `day`) site demand in kW per 15 minutes (kWh × 4; an interval not yet
 * over is left out, never drawn as a drop), the contracted peak of the electricity tariff in force on its first day, and
 * the month's peak as GET /api/energy/peaks has it.
 */
export function DemandChart({ day }: { day: string }) {
  const month = day.slice(0, 7);
  const from = `${month}-01`;
  const to = addMonths(from, 1);
  const { data, problem } = useLoad(month, async () => {
    const [points, peaks, tariffs] = await Promise.all([
      seriesOf(from, to, '15min'),
      read(api.GET('/api/energy/peaks', { params: { query: { month } } })),
      read(api.GET('/api/energy/tariffs', { params: { query: { page: 1, pageSize: 200 } } })),
    ]);
    const version = tariffs.items
      .filter((v) => (v.commodity ?? 'electricity') === 'electricity' && v.validFrom <= from)
      .sort((a, b) => (a.validFrom < b.validFrom ? -1 : 1))
      .at(-1);
    return { points, peak: peaks.site, contractKw: version?.contractedPeakKw ?? null };
  });
  const title = t('energy.demandTitle', { month: dayLabel(from, { month: 'long', year: 'numeric' }) });
  if (problem) return <Problem text={problem} />;
  if (!data) return <Loading />;
  const now = Date.now();
  const x = seconds(data.points);
  const kw = data.points.map((p, i) => (p.kwh == null || (x[i] + 900) * 1000 > now ? null : p.kwh * 4));
  const peakAt = data.peak ? Date.parse(data.peak.at) / 1000 : null;
  const series: ChartSeries[] = [
    { label: t('energy.demand'), values: kw, color: PALETTE[0] },
    { label: t('energy.monthPeak'), values: x.map((s) => (s === peakAt ? data.peak!.kw : null)), color: PALETTE[7], marker: true },
  ];
  if (data.contractKw !== null) series.push({ label: t('energy.contractPeak'), values: x.map(() => data.contractKw), color: PALETTE[8], dashed: true });
  return (
    <div>
      <Chart name={`energy-demand-${month}`} title={title} quantity="power" kind="line" x={x} stepHours={0.25} series={series} xLabel={fmt(LABELS['15min'])} />
      <p class="muted" data-field="demand-note">
        {data.peak ? t('energy.peakAt', { kw: num(data.peak.kw, 2), at: fmt(LABELS['15min'])(peakAt!) }) : t('energy.noPeak')}{' '}
        {data.contractKw === null ? t('energy.noContract') : t('energy.contractIs', { kw: num(data.contractKw, 2) })}
      </p>
    </div>
  );
}

// --- By commodity ----------------------------------------------------------------------------------------------------

const COMMODITY_COLOURS: Record<string, string> = { electricity: PALETTE[0], gas: PALETTE[1], water: PALETTE[5], heat: PALETTE[7] };

/**
 * Each commodity's use in its own unit, one chart each, side by side: electricity is the consumption (grid import −
 * export + generation, as GET /api/energy/commodities counts it), gas, water and heat the sum of the meters that
 * route sums for them.
 */
export function CommodityCharts({ from, to, resolution, period }: { from: string; to: string; resolution: Resolution; period: string }) {
  const { data, problem } = useLoad(`${from}/${to}/${resolution}`, async () => {
    const [figures, meters] = await Promise.all([read(api.GET('/api/energy/commodities', { params: { query: { from, to } } })), allMeters()]);
    const roleOf = new Map(meters.map((m) => [m.id, m.role]));
    const site = await seriesOf(from, to, resolution);
    const charts = await Promise.all(
      figures.commodities.map(async (commodity) => {
        if (commodity.commodity === 'electricity') {
          const others = commodity.meters.filter((m) => roleOf.get(m.id) === 'export' || roleOf.get(m.id) === 'generation');
          const parts = await Promise.all(others.map((m) => seriesOf(from, to, resolution, m.id)));
          const values = site.map((p, i) => {
            if (p.kwh == null) return null;
            return others.reduce((sum, m, k) => sum + (roleOf.get(m.id) === 'export' ? -1 : 1) * (parts[k][i]?.kwh ?? 0), p.kwh);
          });
          return { commodity: commodity.commodity, unit: commodity.unit, values };
        }
        const parts = await Promise.all(commodity.meters.map((m) => seriesOf(from, to, resolution, m.id)));
        return { commodity: commodity.commodity, unit: commodity.unit, values: sumSeries(parts, site.length) };
      }),
    );
    return { x: seconds(site), charts };
  });
  if (problem) return <Problem text={problem} />;
  if (!data) return <Loading />;
  return (
    <section class="commodities" aria-labelledby="energy-commodities-title">
      <h2 id="energy-commodities-title">{t('energy.commoditiesTitle', { period })}</h2>
      {data.charts.length === 0 && <p>{t('energy.noCommodities')}</p>}
      <div class="commodity-grid">
        {data.charts.map((chart) => (
          <Chart
            key={chart.commodity}
            name={`energy-commodity-${chart.commodity}-${from}-${to}`}
            title={`${t(`commodity.${chart.commodity}` as Key)} (${chart.unit})`}
            quantity="energy"
            unit={chart.unit === 'kWh' ? undefined : chart.unit}
            kind="bars"
            x={data.x}
            stepHours={stepHoursOf(resolution)}
            series={[{ label: t(`commodity.${chart.commodity}` as Key), values: chart.values, color: COMMODITY_COLOURS[chart.commodity] ?? PALETTE[4] }]}
            xLabel={fmt(LABELS[resolution])}
            xTick={fmt(TICKS[resolution])}
          />
        ))}
      </div>
    </section>
  );
}
