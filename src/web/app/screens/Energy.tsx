// Energy as pictures (issue 53 item 2): today against yesterday and the same weekday last week in kW per 15 minutes
// (the running interval drawn dashed at its mean power so far, never as a drop to its partial energy), and the areas'
// energy as stacked bars for a day / week / month / year or any range, stepped with ◀ ▶. The period rides in the URL
// (?by=day|week|month|year|range&from=YYYY-MM-DD&to=YYYY-MM-DD, to exclusive), so a shared link opens the same view.
// Requests: 2 at once (site series for 8 days, the areas), then 1 series per area for the period. Below them (EnergyCharts.tsx):
// the period against the baseline (its finished days), the energy flow, the billing month's demand profile, and each commodity.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, errorText } from '../api/client';
import { Chart, type ChartSeries } from '../components/charts/Chart';
import { Problem } from '../components/Field';
import { BaselineChart, CommodityCharts, DemandChart, FlowChart } from './EnergyCharts';
import { useApi } from '../components/useApi';
import {
  addDays,
  addMonths,
  daysBetween,
  fmt,
  LABELS,
  PALETTE,
  type Point,
  type Resolution,
  siteDayOf,
  siteToday,
  TICKS,
} from '../components/charts/energyTime';
import { label, locale, t } from '../i18n';
import { navigate, queryOf, route } from '../state/router';

type By = 'day' | 'week' | 'month' | 'year' | 'range';
const BYS: Exclude<By, 'range'>[] = ['day', 'week', 'month', 'year'];
const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** The period of kind `by` that holds `day` (weeks from Monday), as [from, to). */
export function periodOf(by: Exclude<By, 'range'>, day: string): { from: string; to: string } {
  if (by === 'day') return { from: day, to: addDays(day, 1) };
  if (by === 'week') {
    const weekday = (new Date(`${day}T00:00:00Z`).getUTCDay() + 6) % 7;
    const from = addDays(day, -weekday);
    return { from, to: addDays(from, 7) };
  }
  if (by === 'month') {
    const from = `${day.slice(0, 7)}-01`;
    return { from, to: addMonths(from, 1) };
  }
  const from = `${day.slice(0, 4)}-01-01`;
  return { from, to: addMonths(from, 12) };
}

/** The view the URL asks for, or this week; a range backwards or past 366 days is refused with a reason. */
function viewOf(search: URLSearchParams): { by: By; from: string; to: string; problem: string | null } {
  const by = (search.get('by') ?? 'week') as By;
  const from = search.get('from') ?? '';
  const to = search.get('to') ?? '';
  if (!(BYS as By[]).includes(by) && by !== 'range') return { ...periodOf('week', siteToday()), by: 'week', problem: t('energy.badBy') };
  if (by === 'range') {
    if (!DAY.test(from) || !DAY.test(to) || to <= from) return { ...periodOf('week', siteToday()), by: 'week', problem: t('energy.badRange') };
    if (daysBetween(from, to) > 3660) return { ...periodOf('week', siteToday()), by: 'week', problem: t('energy.rangeTooLong') };
    return { by, from, to, problem: null };
  }
  return { by, ...periodOf(by, DAY.test(from) ? from : siteToday()), problem: null };
}

/** The bars' width: hours within two days, days within 92, else months. */
export function resolutionFor(by: By, from: string, to: string): Resolution {
  if (by === 'day') return 'hour';
  if (by === 'week' || by === 'month') return 'day';
  if (by === 'year') return 'month';
  const days = daysBetween(from, to);
  return days <= 2 ? 'hour' : days <= 92 ? 'day' : 'month';
}

// Today's chart reads the clock only (its points are today's).
const TODAY_LABEL: Intl.DateTimeFormatOptions = { hour: '2-digit', minute: '2-digit' };

/** Today, yesterday and the same weekday a week ago on today's clock: kW = kWh × 4; today's running interval apart. */
export function comparison(points: Point[], today: string, nowMs: number): { x: number[]; series: ChartSeries[] } {
  const byDay = new Map<string, Point[]>();
  for (const point of points) {
    const day = siteDayOf(new Date(point.start));
    if (!byDay.has(day)) byDay.set(day, []);
    byDay.get(day)!.push(point);
  }
  const todays = byDay.get(today) ?? [];
  const length = Math.max(todays.length, ...[...byDay.values()].map((p) => p.length), 0);
  const x = todays.length === length ? todays.map((p) => Date.parse(p.start) / 1000) : [];
  if (x.length === 0) {
    // No points for today yet: today's clock from the earlier days' (same count of intervals on a day without a DST change).
    const start = (byDay.get(addDays(today, -1)) ?? [])[0];
    const base = start ? Date.parse(start.start) / 1000 + 86_400 : 0;
    for (let i = 0; i < length; i += 1) x.push(base + i * 900);
  }
  const kw = (day: string) =>
    x.map((_, i) => {
      const point = (byDay.get(day) ?? [])[i];
      return point && point.kwh !== null ? point.kwh * 4 : null;
    });
  const todayKw = kw(today);
  const running: (number | null)[] = x.map(() => null);
  x.forEach((seconds, i) => {
    const startMs = seconds * 1000;
    if (startMs > nowMs)
      todayKw[i] = null; // still to come
    else if (nowMs < startMs + 900_000) {
      // The running interval: its energy so far over the time so far, drawn dashed from the last whole interval.
      const kwh = todays[i]?.kwh;
      const elapsedH = Math.max(nowMs - startMs, 60_000) / 3_600_000;
      running[i] = kwh == null ? null : kwh / elapsedH;
      if (i > 0) running[i - 1] = todayKw[i - 1];
      todayKw[i] = null;
    }
  });
  return {
    x,
    series: [
      { label: t('energy.today'), values: todayKw, color: PALETTE[0] },
      { label: t('energy.running'), values: running, color: PALETTE[0], dashed: true },
      { label: t('energy.yesterday'), values: kw(addDays(today, -1)), color: PALETTE[1] },
      { label: t('energy.lastWeek'), values: kw(addDays(today, -7)), color: PALETTE[4] },
    ],
  };
}

function TodayChart() {
  const today = siteToday();
  const series = useApi(
    () => api.GET('/api/energy/series', { params: { query: { from: addDays(today, -7), to: addDays(today, 1), resolution: '15min' } } }),
    [today],
  );
  const drawn = useMemo(() => (series.data ? comparison(series.data.points, today, Date.now()) : null), [series.data]);
  if (series.problem) return <Problem text={series.problem} />;
  if (!drawn)
    return (
      <p class="muted" aria-busy="true">
        {t('app.loading')}
      </p>
    );
  return (
    <Chart
      name="energy-today"
      title={t('energy.todayTitle')}
      quantity="power"
      kind="line"
      x={drawn.x}
      stepHours={0.25}
      series={drawn.series}
      xLabel={fmt(TODAY_LABEL)}
    />
  );
}

function AreaBars({ by, from, to }: { by: By; from: string; to: string }) {
  const resolution = resolutionFor(by, from, to);
  const [state, setState] = useState<{ key: string; x: number[]; series: ChartSeries[] } | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const key = `${from}/${to}/${resolution}`;
  useEffect(() => {
    let live = true;
    setProblem(null);
    (async () => {
      const areas = await api.GET('/api/energy/areas');
      if (!areas.data) throw new Error(errorText(areas.error, areas.response.status));
      const names = areas.data.areas.filter((a) => a.source === 'meters').map((a) => a.name);
      const answers = await Promise.all(names.map((area) => api.GET('/api/energy/series', { params: { query: { area, from, to, resolution } } })));
      const bad = answers.find((a) => !a.data);
      if (bad) throw new Error(errorText(bad.error, bad.response.status));
      const x = (answers[0]?.data?.points ?? []).map((p) => Date.parse(p.start) / 1000);
      const series = names.map((label, k) => ({ label, values: answers[k].data!.points.map((p) => p.kwh), color: PALETTE[k % PALETTE.length] }));
      if (live) setState({ key, x, series });
    })().catch((error) => live && setProblem(error instanceof Error ? error.message : String(error)));
    return () => {
      live = false;
    };
  }, [key]);
  if (problem) return <Problem text={problem} />;
  if (!state || state.key !== key)
    return (
      <p class="muted" aria-busy="true">
        {t('app.loading')}
      </p>
    );
  if (state.series.length === 0) return <p>{t('energy.noAreas')}</p>;
  return (
    <Chart
      name={`energy-areas-${from}-${to}`}
      title={t('energy.areasTitle', { period: periodText(by, from, to) })}
      quantity="energy"
      kind="bars"
      stacked
      x={state.x}
      stepHours={resolution === 'hour' ? 1 : 24}
      series={state.series}
      xLabel={fmt(LABELS[resolution])}
      xTick={fmt(TICKS[resolution])}
    />
  );
}

/** The period's further charts (EnergyCharts.tsx); the demand profile is the billing month holding the period's first day. */
function PeriodCharts({ by, from, to }: { by: By; from: string; to: string }) {
  const resolution = resolutionFor(by, from, to);
  const period = periodText(by, from, to);
  return (
    <>
      <BaselineChart from={from} to={to} name={`energy-baseline-${from}-${to}`} title={t('energy.baselineTitle', { period })} />
      <FlowChart from={from} to={to} resolution={resolution} period={period} />
      <DemandChart day={from} />
      <CommodityCharts from={from} to={to} resolution={resolution} period={period} />
    </>
  );
}

function periodText(by: By, from: string, to: string): string {
  const format = (day: string, options: Intl.DateTimeFormatOptions) =>
    new Intl.DateTimeFormat(locale.value, { ...options, timeZone: 'UTC' }).format(new Date(`${day}T00:00:00Z`));
  if (by === 'day') return format(from, { dateStyle: 'full' });
  if (by === 'month') return format(from, { month: 'long', year: 'numeric' });
  if (by === 'year') return from.slice(0, 4);
  return `${format(from, { dateStyle: 'medium' })} – ${format(addDays(to, -1), { dateStyle: 'medium' })}`;
}

export default function Energy() {
  const search = queryOf(route.value);
  const view = viewOf(search);
  const [from, setFrom] = useState(view.from);
  const [last, setLast] = useState(addDays(view.to, -1));
  const [formProblem, setFormProblem] = useState<string | null>(null);
  useEffect(() => {
    setFrom(view.from);
    setLast(addDays(view.to, -1));
  }, [view.from, view.to]);
  // A link's period is kept as the view reads it (a week from its Monday, a month from its first day), so it is shared as shown.
  const canonical = `/energy?by=${view.by}&from=${view.from}&to=${view.to}`;
  useEffect(() => {
    if (!view.problem && route.value !== canonical) navigate(canonical, true);
  }, [canonical]);
  const go = (by: By, nextFrom: string, nextTo: string) => navigate(`/energy?by=${by}&from=${nextFrom}&to=${nextTo}`);
  const step = (direction: 1 | -1) => {
    if (view.by === 'range') {
      const days = daysBetween(view.from, view.to);
      return go('range', addDays(view.from, direction * days), addDays(view.to, direction * days));
    }
    const by = view.by as Exclude<By, 'range'>;
    const next =
      by === 'day'
        ? addDays(view.from, direction)
        : view.by === 'week'
          ? addDays(view.from, 7 * direction)
          : addMonths(view.from, direction * (view.by === 'month' ? 1 : 12));
    const period = periodOf(by, next);
    go(by, period.from, period.to);
  };
  const apply = (event: Event) => {
    event.preventDefault();
    if (!DAY.test(from) || !DAY.test(last)) return setFormProblem(t('energy.badRange'));
    if (last < from) return setFormProblem(t('energy.backwards'));
    setFormProblem(null);
    go('range', from, addDays(last, 1));
  };
  return (
    <section>
      <h1>{t('energy.title')}</h1>
      <TodayChart />
      <h2 class="sr-only">{t('energy.periodHeading')}</h2>
      <div class="energy-range">
        <fieldset class="segmented">
          <legend class="sr-only">{t('energy.by')}</legend>
          {BYS.map((by) => (
            <button
              type="button"
              key={by}
              aria-pressed={view.by === by}
              onClick={() => {
                const period = periodOf(by, view.by === 'range' ? siteToday() : view.from);
                go(by, period.from, period.to);
              }}
            >
              {label('energy.by', by)}
            </button>
          ))}
        </fieldset>
        <span class="stepper">
          <button type="button" onClick={() => step(-1)} aria-label={t('energy.previous')} data-action="previous">
            ◀
          </button>
          <button type="button" onClick={() => step(1)} aria-label={t('energy.next')} data-action="next">
            ▶
          </button>
        </span>
        <form class="energy-range" onSubmit={apply}>
          <label>
            {t('energy.from')}
            <input type="date" name="from" value={from} onInput={(e) => setFrom((e.target as HTMLInputElement).value)} />
          </label>
          <label>
            {t('energy.last')}
            <input type="date" name="last" value={last} onInput={(e) => setLast((e.target as HTMLInputElement).value)} />
          </label>
          <button type="submit">{t('energy.show')}</button>
        </form>
      </div>
      <Problem text={formProblem ?? view.problem} />
      <AreaBars by={view.by} from={view.from} to={view.to} />
      <PeriodCharts by={view.by} from={view.from} to={view.to} />
    </section>
  );
}
