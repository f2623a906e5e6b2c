// One alert list across the sites the person may see: open alerts (or all) newest first, 50 a page, each naming its site
// (a link to the site's page); the fleet's own "site clock" alarms are in the same list.
import { useState } from 'preact/hooks';
import { Problem } from '../components/Field';
import { useApi } from '../components/useApi';
import { dateTime, num, t } from '../i18n';
import { browserZone, DownloadXlsx, Pager } from './parts';
import { fleetGet } from './session';
import type { AlertPage } from './types';

const PAGE_SIZE = 50;
const LEVELS = new Set(['critical', 'warning', 'info']);

export default function FleetAlerts() {
  const [all, setAll] = useState(false);
  const [page, setPage] = useState(1);
  const query = `page=${page}&pageSize=${PAGE_SIZE}${all ? '&status=all' : ''}`;
  const { data, problem } = useApi(() => fleetGet<AlertPage>(`/api/fleet/alerts?${query}`), [query]);
  return (
    <section>
      <h1>{t('fleet.alerts')}</h1>
      <fieldset class="segmented">
        <legend class="sr-only">{t('fleet.alertsShown')}</legend>
        <button type="button" aria-pressed={!all} onClick={() => (setAll(false), setPage(1))}>
          {t('fleet.alertsOpen')}
        </button>
        <button type="button" aria-pressed={all} onClick={() => (setAll(true), setPage(1))}>
          {t('fleet.alertsAll')}
        </button>
      </fieldset>
      <DownloadXlsx path={`/api/fleet/alerts.xlsx${all ? '?status=all' : ''}`} />
      <Problem text={problem} />
      {!data && !problem && (
        <p class="muted" aria-busy="true">
          {t('app.loading')}
        </p>
      )}
      {data && (
        <>
          <p class="muted" role="status">
            {t('fleet.alertCount', { count: num(data.total, 0) })}
          </p>
          <ul class="worklist fleet-alerts">
            {data.items.map((alert) => {
              const level = LEVELS.has(alert.level) ? alert.level : 'info';
              return (
                <li key={`${alert.siteId}/${alert.id}`} class={`alert level-${level}`} data-site={alert.siteId} data-alert={alert.id}>
                  <div class="row">
                    <span class={`badge ${level}`}>{alert.level}</span>
                    <a href={`/sites/${alert.siteId}`} class="site">
                      {alert.siteName}
                    </a>
                    <span class="muted status">{alert.status}</span>
                    <span class="when muted">{dateTime(alert.occurredAt, browserZone)}</span>
                  </div>
                  <p class="message title">{alert.title}</p>
                </li>
              );
            })}
          </ul>
          {data.items.length === 0 && <p class="muted">{t('fleet.noAlerts')}</p>}
          <Pager page={page} pageSize={PAGE_SIZE} total={data.total} onPage={setPage} />
        </>
      )}
    </section>
  );
}
