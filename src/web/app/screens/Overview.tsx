// Overview: today and this month (energy, cost, carbon, the comparisons, how complete the data is), utilities,
// areas largest first (each a link to its meters), alert and maintenance counts, and today's peak warnings.
// Three requests at once: GET /api/dashboard (every figure), GET /api/energy/areas (the energy no area accounts for)
// and GET /api/analysis/peak-warnings.
import { api } from '../api/client';
import type { Answer } from '../api/types';
import { Problem } from '../components/Field';
import { useApi } from '../components/useApi';
import { dateOnly, money, num, percent, t } from '../i18n';
import { liveAlerts, livePower, useLive } from '../state/live';

type Dashboard = Answer<'/api/dashboard'>;
type Figures = Dashboard['overview'];
type Day = Dashboard['weeklyEnergy']['days'][number];
type Unallocated = Answer<'/api/energy/areas'>['unallocated'];

function Change({ value, label }: { value: number | null | undefined; label: string }) {
  if (value === null || value === undefined) return null;
  const direction = value > 0 ? 'up' : value < 0 ? 'down' : 'flat';
  return (
    <span class={`change ${direction}`}>
      {percent(value / 100, true)} {label}
    </span>
  );
}

export default function Overview() {
  const { data, problem, reload } = useApi(() => api.GET('/api/dashboard'));
  const warnings = useApi(() => api.GET('/api/analysis/peak-warnings'));
  const cards = useApi(() => api.GET('/api/energy/areas'));
  // Live: power and the alert counts straight from the stream; new intervals bring the rest again (no timer).
  useLive('interval', () => {
    reload();
    warnings.reload();
    cards.reload();
  });
  const unallocated = cards.data?.unallocated;
  if (!data)
    return problem ? (
      <Problem text={problem} />
    ) : (
      <p class="muted" aria-busy="true">
        {t('app.loading')}
      </p>
    );
  const o = data.overview;
  const today = data.weeklyEnergy.days.at(-1);
  const areas = [...data.areas].sort((a, b) => b.todayKwh - a.todayKwh || b.monthKwh - a.monthKwh);
  const running = (warnings.data?.items ?? []).filter((w) => w.outcome !== 'stayed below');
  return (
    <section class="overview">
      <h1>{t('overview.title')}</h1>
      <div class="kpis">
        <TodayCard o={o} today={today} />
        <MonthCard o={o} />
        <PowerCard o={o} gateway={data.gateway.state} />
      </div>
      {running.length > 0 && (
        <div class="notice warn" role="status">
          <h2>{t('overview.peakWarnings')}</h2>
          <ul>
            {running.map((w) => (
              <li key={w.warnedAt}>{t('overview.peakWarning', { projected: num(w.projectedKw), limit: num(w.limitKw) })}</li>
            ))}
          </ul>
        </div>
      )}
      <div class="columns">
        <AreasCard areas={areas} unallocated={unallocated} />
        <UtilitiesCard o={o} days={data.weeklyEnergy.days} />
      </div>
    </section>
  );
}

/** Today's energy drawn from the grid, its cost and carbon, the comparisons and how complete the day's data is. */
function TodayCard({ o, today }: { o: Figures; today: Day | undefined }) {
  const currency = o.currency;
  return (
    <article class="card kpi" data-figure="today">
      <h2>{t('overview.today')}</h2>
      <p class="muted">{t('overview.gridNote')}</p>
      <p class="big">
        <span class="num" data-value={o.energyTodayKwh}>
          {num(o.energyTodayKwh)}
        </span>{' '}
        <small>kWh</small>
      </p>
      <p>
        <span data-field="costToday">{money(o.costToday, currency)}</span> · <span>{num(o.carbonTodayKg)} kg CO₂</span>
      </p>
      <p class="changes">
        <Change value={o.comparison?.todayVsYesterdayPercent} label={t('overview.vsYesterday')} />
        <Change value={o.comparison?.todayVsLastYearPercent} label={t('overview.vsLastYear')} />
      </p>
      {today && <p class="muted coverage">{t('overview.coverage', { measured: percent(today.measured), missing: percent(today.missing) })}</p>}
    </article>
  );
}

/** This month's energy, cost and carbon, the comparisons and the demand charge. */
function MonthCard({ o }: { o: Figures }) {
  const currency = o.currency;
  return (
    <article class="card kpi" data-figure="month">
      <h2>{t('overview.month')}</h2>
      <p class="muted">{t('overview.gridNote')}</p>
      <p class="big">
        <span class="num" data-value={o.energyMonthKwh}>
          {num(o.energyMonthKwh)}
        </span>{' '}
        <small>kWh</small>
      </p>
      <p>
        <span data-field="costMonth">{money(o.costMonth, currency)}</span> · <span>{num(o.carbonMonthKg)} kg CO₂</span>
      </p>
      <p class="changes">
        <Change value={o.comparison?.monthVsPreviousPercent} label={t('overview.vsPreviousMonth')} />
        <Change value={o.comparison?.monthVsPreviousWeatherNormalisedPercent} label={t('overview.vsPreviousMonthWeather')} />
      </p>
      {o.demandChargeMonth !== undefined && <p class="muted">{t('overview.demandCharge', { amount: money(o.demandChargeMonth, currency) })}</p>}
    </article>
  );
}

/** Power now (live from the stream, else the dashboard's), the alert and maintenance counts, the gateway. */
function PowerCard({ o, gateway }: { o: Figures; gateway: Dashboard['gateway']['state'] }) {
  const power = livePower.value;
  const counts = liveAlerts.value;
  return (
    <article class="card kpi" data-figure="power">
      <h2>{t('overview.powerNow')}</h2>
      <p class="big">
        <span class="num" data-value={power?.powerKw ?? o.powerKw}>
          {num(power?.powerKw ?? o.powerKw)}
        </span>{' '}
        <small>kW</small>
      </p>
      <p>
        <a href="/alerts" data-field="activeAlerts" data-active={counts?.active ?? o.activeAlerts} data-critical={counts?.critical ?? o.criticalAlerts}>
          {t('overview.activeAlerts', { n: counts?.active ?? o.activeAlerts, critical: counts?.critical ?? o.criticalAlerts })}
        </a>
      </p>
      {counts && counts.cleared > 0 && (
        <p class="muted" data-field="clearedAlerts">
          {t('overview.clearedAlerts', { n: counts.cleared })}
        </p>
      )}
      <p>
        <a href="/maintenance">{t('overview.maintenance', { due: o.maintenanceDue, overdue: o.maintenanceOverdue })}</a>
      </p>
      <p class="muted">{t('overview.gateway', { state: t(`gateway.${gateway}`) })}</p>
    </article>
  );
}

/** Areas largest today first (else this month), each with a bar, and the energy no area accounts for. */
function AreasCard({ areas, unallocated }: { areas: Dashboard['areas']; unallocated: Unallocated | undefined }) {
  const largest = areas[0]?.todayKwh || areas[0]?.monthKwh || 1;
  const barOf = (area: (typeof areas)[number]) => (areas[0]?.todayKwh ? area.todayKwh : area.monthKwh) / largest;
  return (
    <section class="card" aria-labelledby="areas-heading">
      <h2 id="areas-heading">{t('overview.areas')}</h2>
      {areas.length === 0 ? (
        <p class="muted">{t('overview.noAreas')}</p>
      ) : (
        <table class="bars">
          <thead>
            <tr>
              <th scope="col">{t('overview.area')}</th>
              <th scope="col" class="n">
                {t('overview.todayKwh')}
              </th>
              <th scope="col" class="n">
                {t('overview.monthKwh')}
              </th>
              <th scope="col" class="n">
                kW
              </th>
            </tr>
          </thead>
          <tbody>
            {areas.map((area) => (
              <tr key={area.name} data-area={area.name}>
                <th scope="row">
                  <a href={`/areas/${encodeURIComponent(area.name)}`}>{area.name}</a>
                  <span class="bar" aria-hidden="true">
                    <span style={{ width: `${Math.max(0, barOf(area) * 100)}%` }} />
                  </span>
                </th>
                <td class="n">{num(area.todayKwh)}</td>
                <td class="n">{num(area.monthKwh)}</td>
                <td class="n">{num(area.powerKw)}</td>
              </tr>
            ))}
            {unallocated && (
              <tr data-area="">
                <th scope="row" class="muted" title={t('overview.unallocatedHint')}>
                  {t('overview.unallocated')}
                </th>
                <td class="n">{num(unallocated.todayKwh)}</td>
                <td class="n">{num(unallocated.monthKwh)}</td>
                <td class="n" />
              </tr>
            )}
          </tbody>
        </table>
      )}
      {unallocated && unallocated.monthKwh < 0 && <p class="muted">{t('overview.unallocatedNegative')}</p>}
    </section>
  );
}

/** The utilities this month and the last seven days. */
function UtilitiesCard({ o, days }: { o: Figures; days: Day[] }) {
  const currency = o.currency;
  return (
    <section class="card" aria-labelledby="utilities-heading">
      <h2 id="utilities-heading">{t('overview.utilities')}</h2>
      {(o.commodities ?? []).length === 0 ? (
        <p class="muted">{t('overview.noUtilities')}</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th scope="col">{t('overview.utility')}</th>
              <th scope="col" class="n">
                {t('overview.quantity')}
              </th>
              <th scope="col" class="n">
                {t('overview.cost')}
              </th>
            </tr>
          </thead>
          <tbody>
            {(o.commodities ?? []).map((c) => (
              <tr key={c.commodity}>
                <th scope="row">
                  {t(`commodity.${c.commodity}` as never) === `commodity.${c.commodity}` ? c.commodity : t(`commodity.${c.commodity}` as never)}
                </th>
                <td class="n">
                  {num(c.quantity)} {c.unit}
                </td>
                <td class="n">{money(c.cost, currency)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {(o.commodities ?? []).some((c) => c.commodity === 'electricity') && <p class="muted">{t('overview.utilitiesNote')}</p>}
      <h2>{t('overview.lastSevenDays')}</h2>
      <ul class="days">
        {days.map((day) => (
          <li key={day.day}>
            <span>{dateOnly(day.day, 'UTC')}</span> <span class="n">{num(day.kwh)} kWh</span>
          </li>
        ))}
      </ul>
    </section>
  );
}
