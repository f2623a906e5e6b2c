// The desk → budgets: annual budgets per utility for the site, an area or a cost centre (an admin sets one: POST
// /api/billing/budgets), and a chosen budget month by month (GET …/:id/status): the phased budget, the actual and
// the forecast as a uPlot chart and as a table (the chart's words for screen readers). A month's forecast is the actual
// of its days so far plus its share of the service's forecast for the rest of the year (monthForecasts), so the months'
// forecasts sum to the year-end figure.
import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { api, errorText } from '../api/client';
import { Done, Field, Problem } from '../components/Field';
import { useApi } from '../components/useApi';
import { DeskLinks, decimal, type Got } from '../components/deskLinks';
import { siteDay } from '../components/analysisParts';
import { label, locale, money, num, percent, siteCurrency, t } from '../i18n';
import { can } from '../state/session';

type Status = Got<'/api/billing/budgets/{id}/status'>;
const UTILITIES = ['electricity', 'gas', 'water', 'heat'] as const;
const UNITS: Record<(typeof UTILITIES)[number], string> = { electricity: 'kWh', gas: 'm³', water: 'm³', heat: 'kWh' };
const daysIn = (month: string) => new Date(Date.UTC(Number(month.slice(0, 4)), Number(month.slice(5, 7)), 0)).getUTCDate();

/**
 * Each month's forecast: the actual of its days so far plus its share of the rest of the year. The service forecasts
 * the rest as a whole (the weather-normalised baseline, last year scaled to this year's run rate, the run rate, or last
 * year: forecast.method, stated under the figures); it is
 * spread over the months by last year's profile (the phased budget where last year has none), so the months add up to
 * the service's year-end figure whatever its method.
 */
export function monthForecasts(status: Status): number[] {
  const year = status.budget.year;
  const end = status.at < `${year}-01-01` ? `${year}-01-01` : status.at > `${year + 1}-01-01` ? `${year + 1}-01-01` : status.at;
  const actual = status.months.map((m) => m.actualQuantity ?? 0);
  const restShares = status.months.map((m) => {
    const days = daysIn(m.month);
    const from = `${m.month}-01`;
    const to = new Date(Date.UTC(Number(m.month.slice(0, 4)), Number(m.month.slice(5, 7)), 1)).toISOString().slice(0, 10);
    const past = from >= end ? 0 : to <= end ? days : Number(end.slice(8, 10)) - 1;
    const expected = m.lastYearQuantity > 0 ? m.lastYearQuantity : m.budgetQuantity;
    return (expected * (days - past)) / days;
  });
  const restShareTotal = restShares.reduce((a, b) => a + b, 0);
  const rest = status.forecast.available ? status.forecast.quantity - actual.reduce((a, b) => a + b, 0) : 0;
  return actual.map((value, i) => value + (restShareTotal > 0 ? (restShares[i] * rest) / restShareTotal : 0));
}

function BudgetChart({ status }: { status: Status }) {
  const box = useRef<HTMLDivElement>(null);
  const forecasts = monthForecasts(status);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const xs = status.months.map((_, i) => i + 1);
    const styles = getComputedStyle(document.documentElement);
    const ink = styles.getPropertyValue('--ink').trim() || '#222';
    const accent = styles.getPropertyValue('--accent').trim() || '#2563eb';
    const warn = styles.getPropertyValue('--warn').trim() || '#b45309';
    const grid = styles.getPropertyValue('--line').trim() || '#ddd';
    const muted = styles.getPropertyValue('--muted').trim() || '#666';
    const axis = { stroke: ink, grid: { stroke: grid }, ticks: { stroke: grid } };
    const monthName = (i: number) =>
      new Intl.DateTimeFormat(locale.value, { month: 'short', timeZone: 'UTC' }).format(new Date(Date.UTC(status.budget.year, i - 1, 1)));
    const unit = status.budget.unit;
    const height = () => Math.max(220, Math.min(380, Math.round(el.clientWidth * 0.4)));
    const plot = new uPlot(
      {
        width: el.clientWidth,
        height: height(),
        scales: { x: { time: false, range: [0.5, 12.5] } },
        series: [
          { label: t('desk.budget.month'), value: (_u, v) => (v == null ? '–' : monthName(v)) },
          { label: t('desk.budget.budget'), stroke: muted, width: 2, dash: [6, 4], value: (_u, v) => (v == null ? '–' : `${num(v)} ${unit}`) },
          {
            label: t('desk.budget.actual'),
            stroke: accent,
            fill: `${accent}33`,
            width: 2,
            paths: uPlot.paths.bars!({ size: [0.6, 60] }),
            value: (_u, v) => (v == null ? '–' : `${num(v)} ${unit}`),
          },
          { label: t('desk.budget.forecast'), stroke: warn, width: 2, value: (_u, v) => (v == null ? '–' : `${num(v)} ${unit}`) },
        ],
        axes: [
          {
            ...axis,
            values: (u, splits) => splits.map((v) => (Number.isInteger(v) && v >= 1 && v <= 12 && (u.width >= 560 || v % 2 === 1) ? monthName(v) : '')),
            splits: () => xs,
          },
          { ...axis, size: 70, values: (_u, values) => values.map((v) => num(v)) },
        ],
      },
      [xs, status.months.map((m) => m.budgetQuantity), status.months.map((m) => m.actualQuantity), forecasts],
      el,
    );
    const resize = () => plot.setSize({ width: el.clientWidth, height: height() });
    window.addEventListener('resize', resize);
    return () => {
      window.removeEventListener('resize', resize);
      plot.destroy();
    };
  }, [status, locale.value]);
  return <div class="chart" ref={box} role="img" aria-label={t('desk.budget.chartLabel', { year: status.budget.year })} />;
}

function BudgetStatusCard({ id }: { id: number }) {
  const status = useApi(() => api.GET('/api/billing/budgets/{id}/status', { params: { path: { id } } }), [id]);
  const s = status.data;
  if (!s) return <Problem text={status.problem} />;
  const forecasts = monthForecasts(s);
  const unit = s.budget.unit;
  return (
    <section class="card" aria-labelledby="status-heading" data-budget-status={id}>
      <h2 id="status-heading">{t('desk.budget.statusOf', { year: s.budget.year, utility: label('meters.commodity', s.budget.utility) })}</h2>
      <dl class="facts">
        <dt>{t('desk.budget.budget')}</dt>
        <dd>
          {num(s.budget.quantity)} {unit} · {money(s.budget.amount, siteCurrency)}
        </dd>
        <dt>{t('desk.budget.ytd', { at: s.at })}</dt>
        <dd data-field="ytd">
          {num(s.ytd.quantity)} {unit} · {money(s.ytd.amount, siteCurrency)}
        </dd>
        <dt>{t('desk.budget.forecast')}</dt>
        <dd data-field="forecast" class={s.alert ? 'bad' : undefined}>
          {num(s.forecast.quantity)} {unit} ({percent(s.forecast.quantityPercentOfBudget / 100)}) · {money(s.forecast.amount, siteCurrency)} (
          {percent(s.forecast.amountPercentOfBudget / 100)})
        </dd>
        <dt>{t('desk.budget.phasing')}</dt>
        <dd>{label('desk.phasing', s.phasingUsed)}</dd>
      </dl>
      <p class={s.alert || !s.forecast.available ? 'bad' : 'muted'} data-field="message">
        {s.forecast.available
          ? t(s.alert ? 'desk.budget.over' : 'desk.budget.within', { margin: num(s.budget.marginPercent, 1) })
          : t('desk.budget.noForecast', { why: s.forecast.methodNote })}
      </p>
      <p class="muted" data-field="method" data-method={s.forecast.method}>
        {t('desk.budget.methodIs', { method: label('desk.forecastMethod', s.forecast.method) })} <small>{s.forecast.methodNote}</small>
      </p>
      <BudgetChart status={s} />
      <table data-months={id}>
        <caption>{t('desk.budget.byMonth')}</caption>
        <thead>
          <tr>
            <th scope="col">{t('desk.budget.month')}</th>
            <th scope="col" class="n">
              {t('desk.budget.budget')}
            </th>
            <th scope="col" class="n">
              {t('desk.budget.actual')}
            </th>
            <th scope="col" class="n">
              {t('desk.budget.forecast')}
            </th>
          </tr>
        </thead>
        <tbody>
          {s.months.map((m, i) => (
            <tr key={m.month} data-month={m.month}>
              <th scope="row">{m.month}</th>
              <td class="n">{num(m.budgetQuantity)}</td>
              <td class="n" data-field="actual">
                {m.actualQuantity === null ? t('desk.budget.noData') : num(m.actualQuantity)}
              </td>
              <td class="n" data-field="forecast" data-value={forecasts[i]}>
                {num(forecasts[i])}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

function BudgetForm({ onAdded }: { onAdded: (id: number) => void }) {
  const year = Number(siteDay().slice(0, 4));
  const meters = useApi(() => api.GET('/api/meters', { params: { query: { pageSize: 200 } } }));
  const tenants = useApi(() => api.GET('/api/billing/tenants'));
  const areas = [...new Set((meters.data?.items ?? []).map((m) => m.area).filter((a): a is string => !!a))].sort();
  const centres = (tenants.data?.items ?? []).filter((x) => x.kind === 'cost_centre');
  const [form, setForm] = useState({
    year: String(year),
    utility: 'electricity' as (typeof UTILITIES)[number],
    scope: 'site' as 'site' | 'area' | 'cost_centre',
    target: '',
    quantity: '',
    amount: '',
    phasing: 'last_year' as 'last_year' | 'even',
    margin: '5',
  });
  const [problem, setProblem] = useState<string | null>(null);
  async function add(event: Event) {
    event.preventDefault();
    const [quantity, amount, margin] = [form.quantity, form.amount, form.margin].map(decimal);
    if ([quantity, amount, margin].some((v) => !Number.isFinite(v) || v < 0)) return setProblem(t('desk.budget.badNumber'));
    const { data, error, response } = await api.POST('/api/billing/budgets', {
      body: {
        year: Number(form.year),
        utility: form.utility,
        scope: form.scope,
        ...(form.scope !== 'site' ? { target: form.target.trim() } : {}),
        unit: UNITS[form.utility],
        quantity,
        amount,
        phasing: form.phasing,
        marginPercent: margin,
      },
    });
    if (!data) return setProblem(errorText(error, response.status));
    setProblem(null);
    onAdded(data.id);
  }
  return (
    <form class="card stack" onSubmit={add} noValidate aria-labelledby="add-budget-heading">
      <h2 id="add-budget-heading">{t('desk.budget.add')}</h2>
      <Problem text={problem ?? meters.problem ?? tenants.problem} />
      <Field label={t('desk.budget.year')}>
        {(id) => <input id={id} inputMode="numeric" value={form.year} onInput={(e) => setForm({ ...form, year: e.currentTarget.value })} />}
      </Field>
      <Field label={t('meters.commodity')}>
        {(id) => (
          <select id={id} value={form.utility} onChange={(e) => setForm({ ...form, utility: e.currentTarget.value as never })}>
            {UTILITIES.map((u) => (
              <option key={u} value={u}>
                {label('meters.commodity', u)}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label={t('desk.budget.scope')}>
        {(id) => (
          <select id={id} value={form.scope} onChange={(e) => setForm({ ...form, scope: e.currentTarget.value as never, target: '' })}>
            <option value="site">{t('desk.scope.site')}</option>
            <option value="area">{t('desk.scope.area')}</option>
            <option value="cost_centre">{t('desk.scope.cost_centre')}</option>
          </select>
        )}
      </Field>
      {form.scope !== 'site' && (
        <Field label={t(form.scope === 'area' ? 'desk.budget.areaName' : 'desk.budget.costCentreId')}>
          {(id) => (
            <select id={id} value={form.target} onChange={(e) => setForm({ ...form, target: e.currentTarget.value })}>
              <option value="">–</option>
              {form.scope === 'area'
                ? areas.map((a) => (
                    <option key={a} value={a}>
                      {a}
                    </option>
                  ))
                : centres.map((c) => (
                    <option key={c.id} value={String(c.id)}>
                      {c.name}
                    </option>
                  ))}
            </select>
          )}
        </Field>
      )}
      <Field label={t('desk.budget.quantityIn', { unit: UNITS[form.utility] })}>
        {(id) => <input id={id} inputMode="decimal" value={form.quantity} onInput={(e) => setForm({ ...form, quantity: e.currentTarget.value })} />}
      </Field>
      <Field label={t('desk.budget.amountIn', { currency: siteCurrency })}>
        {(id) => <input id={id} inputMode="decimal" value={form.amount} onInput={(e) => setForm({ ...form, amount: e.currentTarget.value })} />}
      </Field>
      <Field label={t('desk.budget.phasing')}>
        {(id) => (
          <select id={id} value={form.phasing} onChange={(e) => setForm({ ...form, phasing: e.currentTarget.value as never })}>
            <option value="last_year">{t('desk.phasing.last_year')}</option>
            <option value="even">{t('desk.phasing.even')}</option>
          </select>
        )}
      </Field>
      <Field label={t('desk.budget.margin')}>
        {(id) => <input id={id} inputMode="decimal" value={form.margin} onInput={(e) => setForm({ ...form, margin: e.currentTarget.value })} />}
      </Field>
      <button type="submit">{t('desk.budget.addButton')}</button>
    </form>
  );
}

export default function DeskBudgets() {
  const budgets = useApi(() => api.GET('/api/billing/budgets'));
  const [chosen, setChosen] = useState<number | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const items = budgets.data?.items ?? [];
  const shown = chosen ?? items[0]?.id ?? null;
  return (
    <section class="analysis desk">
      <h1>{t('desk.budgets.title')}</h1>
      <DeskLinks here="/billing/budgets" />
      <Problem text={budgets.problem} />
      <Done text={done} />
      <div class="columns">
        <section class="card" aria-labelledby="budgets-heading">
          <h2 id="budgets-heading">{t('desk.budgets.list')}</h2>
          {budgets.data && items.length === 0 && <p class="muted">{t('desk.budgets.none')}</p>}
          <ul class="worklist">
            {items.map((b) => (
              <li key={b.id} class="alert" data-budget={b.id}>
                <div class="row">
                  <strong>
                    {b.year} · {label('meters.commodity', b.utility)}
                  </strong>
                  <span>{b.scope === 'site' ? t('desk.scope.site') : `${label('desk.scope', b.scope)} ${b.target}`}</span>
                  <span class="n">
                    {num(b.quantity)} {b.unit} · {money(b.amount, siteCurrency)}
                  </span>
                  <button type="button" class="link when" aria-pressed={shown === b.id} onClick={() => setChosen(b.id)}>
                    {t('desk.budget.show', {
                      year: b.year,
                      utility: label('meters.commodity', b.utility),
                      target: b.scope === 'site' ? t('desk.scope.site') : b.target,
                    })}
                  </button>
                </div>
              </li>
            ))}
          </ul>
        </section>
        {can('admin') ? (
          <BudgetForm
            onAdded={(id) => {
              setDone(t('desk.budget.added'));
              setChosen(id);
              budgets.reload();
            }}
          />
        ) : (
          <p class="muted">{t('desk.adminSetsUp')}</p>
        )}
      </div>
      {shown !== null && <BudgetStatusCard key={shown} id={shown} />}
    </section>
  );
}
