// Analysis (a first part): the site's day, week, month or year against the previous period and the same period a year
// earlier, like for like, with how complete each is (GET /api/analysis/compare), and this month's demand charge
// (GET /api/analysis/demand-charges). Baselines, EnPIs and anomalies are the screens its tabs link to.
import { useState } from 'preact/hooks';
import { api } from '../api/client';
import { AnalysisTabs } from '../components/analysisParts';
import { Problem } from '../components/Field';
import { useApi } from '../components/useApi';
import { dateOnly, label, money, num, percent, t } from '../i18n';

const PERIODS = ['day', 'week', 'month', 'year'] as const;
type Period = (typeof PERIODS)[number];

const loadCompare = (period: Period) => api.GET('/api/analysis/compare', { params: { query: { period } } });
type Comparison = NonNullable<Awaited<ReturnType<typeof loadCompare>>['data']>;

// The month against the previous one with the weather taken out (IPMVP routine adjustment, docs/energy-management.md), or
// why the service gives no such figure (its model fails the guard rails, a day lacks data).
function WeatherNormalised({ figure }: { figure: NonNullable<Comparison['weatherNormalised']> }) {
  if (figure.percent === null || figure.kwh === null || figure.adjustedPreviousKwh === null)
    return (
      <p class="muted" data-field="weatherNormalised">
        {t('analysis.weatherWithheld', { reason: figure.withheld ?? '' })}
      </p>
    );
  return (
    <p data-field="weatherNormalised">
      {t('analysis.weather', { change: percent(figure.percent / 100, true), kwh: num(figure.kwh), adjusted: num(figure.adjustedPreviousKwh) })}
    </p>
  );
}

export default function Analysis() {
  const [period, setPeriod] = useState<Period>('month');
  const compare = useApi(() => loadCompare(period), [period]);
  const demand = useApi(() => api.GET('/api/analysis/demand-charges'));
  const c = compare.data;
  const rows = c
    ? ([
        ['analysis.current', c.current, null],
        ['analysis.previous', c.previous, c.change.previous],
        ['analysis.lastYear', c.lastYear, c.change.lastYear],
      ] as const)
    : [];
  return (
    <section class="analysis">
      <h1>{t('analysis.title')}</h1>
      <AnalysisTabs />
      <fieldset class="segmented">
        <legend class="sr-only">{t('meter.range')}</legend>
        {PERIODS.map((key) => (
          <button type="button" key={key} aria-pressed={period === key} onClick={() => setPeriod(key)}>
            {label('analysis.period', key)}
          </button>
        ))}
      </fieldset>
      <Problem text={compare.problem} />
      {c && (
        <section class="card" aria-labelledby="compare-heading">
          <h2 id="compare-heading">{t('analysis.compare')}</h2>
          {c.current.partial && <p class="muted">{t('analysis.partial')}</p>}
          <div class="table-scroll">
            <table>
              <thead>
                <tr>
                  <th scope="col">{t('analysis.periodCol')}</th>
                  <th scope="col" class="n">
                    kWh
                  </th>
                  <th scope="col" class="n">
                    {t('overview.cost')}
                  </th>
                  <th scope="col" class="n">
                    {t('analysis.change')}
                  </th>
                  <th scope="col" class="n">
                    {t('analysis.coverage')}
                  </th>
                </tr>
              </thead>
              <tbody>
                {rows.map(([label, figures, change]) => (
                  <tr key={label} data-row={label}>
                    <th scope="row">
                      {t(label)}
                      <br />
                      <span class="muted">
                        {dateOnly(`${figures.from}T00:00:00Z`, 'UTC')} – {dateOnly(Date.parse(`${figures.to}T00:00:00Z`) - 86_400_000, 'UTC')}
                      </span>
                    </th>
                    <td class="n" data-field="kwh">
                      {num(figures.kwh)}
                    </td>
                    <td class="n">{money(figures.cost, c.currency)}</td>
                    <td class="n">{change ? percent(change.percent === null ? null : change.percent / 100, true) : ''}</td>
                    <td class="n">{percent(figures.coverage)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {c.weatherNormalised && <WeatherNormalised figure={c.weatherNormalised} />}
        </section>
      )}
      <Problem text={demand.problem} />
      {demand.data && (
        <section class="card" aria-labelledby="demand-heading">
          <h2 id="demand-heading">{t('analysis.demand', { month: demand.data.month })}</h2>
          <dl class="facts">
            <dt>{t('analysis.peak')}</dt>
            <dd>{demand.data.peak ? `${num(demand.data.peak.kw)} kW` : '–'}</dd>
            <dt>{t('analysis.billedKw')}</dt>
            <dd>{num(demand.data.billedKw)} kW</dd>
            <dt>{t('analysis.demandCharge')}</dt>
            <dd>{money(demand.data.demandCharge, demand.data.currency)}</dd>
            <dt>{t('analysis.totalCost')}</dt>
            <dd>{money(demand.data.totalCost, demand.data.currency)}</dd>
          </dl>
        </section>
      )}
    </section>
  );
}
