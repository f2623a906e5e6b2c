// One site: its health (the row of the health list) and its meters with commodity, unit, area, whether they count to the
// site total, and the last 30 days' energy and cost as the site computed them.
import { Problem } from '../components/Field';
import { useApi } from '../components/useApi';
import { dateTime, num, percent, t } from '../i18n';
import { browserZone, duration, Grade } from './parts';
import { commodityName } from './Ranking';
import { fleetGet, fleetUser } from './session';
import { SiteAdmin } from './SiteAdmin';
import type { HealthPage, MeterPage } from './types';

export default function Site({ params }: { params: string[] }) {
  const id = params[0]!;
  // This site's row of the health list (`site`: the list limited to it; an id the person may not see answers no row).
  const health = useApi(() => fleetGet<HealthPage>(`/api/fleet/sites?site=${encodeURIComponent(id)}`), [id]);
  const meters = useApi(() => fleetGet<MeterPage>(`/api/fleet/sites/${id}/meters`), [id]);
  const site = health.data?.items.find((s) => s.id === id);
  const loading = (!health.data && !health.problem) || (!meters.data && !meters.problem);
  return (
    <section>
      <p class="crumbs">
        <a href="/">{t('fleet.health')}</a> › {site?.name ?? '…'}
      </p>
      <h1 class="wrap">{site?.name ?? t('fleet.site')}</h1>
      <Problem text={health.problem ?? meters.problem} />
      {loading && (
        <p class="muted" aria-busy="true">
          {t('app.loading')}
        </p>
      )}
      {site && (
        <div class="card">
          <dl class="facts site-facts">
            <dt>{t('fleet.gradeCol')}</dt>
            <dd>
              <Grade grade={site.grade} reasons={site.reasons} />
            </dd>
            <dt>{t('fleet.lastContact')}</dt>
            <dd>{dateTime(site.lastContactAt, browserZone)}</dd>
            <dt>{t('fleet.syncLag')}</dt>
            <dd>{duration(site.syncLagSec)}</dd>
            <dt>{t('fleet.unsent')}</dt>
            <dd>{num(site.unsentRows, 0)}</dd>
            <dt>{t('fleet.skew')}</dt>
            <dd>{duration(site.clockSkewSec)}</dd>
            <dt>{t('fleet.completeness')}</dt>
            <dd>{percent(site.completeness)}</dd>
            <dt>{t('fleet.version')}</dt>
            <dd>{site.version ?? '–'}</dd>
            <dt>{t('fleet.backupAge')}</dt>
            <dd>{duration(site.lastBackupAgeSec)}</dd>
            {site.lastRefusal && (
              <>
                <dt>{t('fleet.lastRefusal')}</dt>
                <dd class="bad">{site.lastRefusal}</dd>
              </>
            )}
          </dl>
          <p>
            <a href={`/alerts`}>{t('fleet.openAlertsLink', { count: site.openAlerts })}</a>
          </p>
        </div>
      )}
      {meters.data && (
        <div class="card table-scroll spaced-top">
          <h2>{t('fleet.meters')}</h2>
          <table class="fleet-meters">
            <thead>
              <tr>
                <th scope="col">{t('fleet.meterName')}</th>
                <th scope="col">{t('fleet.commodity')}</th>
                <th scope="col">{t('fleet.area')}</th>
                <th scope="col">{t('fleet.siteTotal')}</th>
                <th scope="col" class="n">
                  {t('fleet.last30')}
                </th>
                <th scope="col" class="n">
                  {t('fleet.cost30')}
                </th>
              </tr>
            </thead>
            <tbody>
              {meters.data.items.map((m) => (
                <tr key={m.key} data-meter={m.key}>
                  <th scope="row" class="wrap">
                    {m.name}
                  </th>
                  <td>{commodityName(m.commodity)}</td>
                  <td class="wrap">{m.area ?? '–'}</td>
                  <td>{m.siteTotal ? t('fleet.yes') : t('fleet.no')}</td>
                  <td class="n energy">{m.last30Days === null ? '–' : `${num(m.last30Days)} ${m.unit}`}</td>
                  <td class="n cost">{num(m.last30DaysCost, 2)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {meters.data.items.length === 0 && <p class="muted">{t('fleet.noMeters')}</p>}
        </div>
      )}
      {site && fleetUser.value?.role === 'admin' && <SiteAdmin id={id} />}
    </section>
  );
}
