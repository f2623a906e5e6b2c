// One alert list across the sites the person may see: open alerts (or all) newest first, 50 a page, each naming its site
// (a link to the site's page); the fleet's own "site clock" alarms are in the same list. An admin of a site acknowledges
// its active alerts here: the acknowledgement goes to the site's box with its next sync (docs/fleet.md), and the alert
// says so until the box has acknowledged it.
import { useState } from 'preact/hooks';
import { errorText } from '../api/client';
import { Problem } from '../components/Field';
import { useApi } from '../components/useApi';
import { dateTime, num, t } from '../i18n';
import { browserZone, DownloadXlsx, Pager } from './parts';
import { fleetGet, fleetSend, fleetUser } from './session';
import type { AlertPage, FleetAlert } from './types';

const PAGE_SIZE = 50;
const LEVELS = new Set(['critical', 'warning', 'info']);

export default function FleetAlerts() {
  const [all, setAll] = useState(false);
  const [page, setPage] = useState(1);
  const query = `page=${page}&pageSize=${PAGE_SIZE}${all ? '&status=all' : ''}`;
  const { data, problem, reload } = useApi(() => fleetGet<AlertPage>(`/api/fleet/alerts?${query}`), [query]);
  const [ackProblem, setAckProblem] = useState<string | null>(null);
  const [asking, setAsking] = useState<string | null>(null);
  const user = fleetUser.value;
  const mayAcknowledge = (alert: FleetAlert) =>
    alert.source === 'site' && alert.status === 'active' && user?.role === 'admin' && (user.sites === null || user.sites.includes(alert.siteId));
  async function acknowledge(alert: FleetAlert) {
    setAsking(`${alert.siteId}/${alert.id}`);
    const answer = await fleetSend('POST', `/api/fleet/sites/${alert.siteId}/alerts/${alert.id}/acknowledge`);
    setAsking(null);
    setAckProblem(answer.response.ok ? null : t('fleet.ackFailed', { reason: errorText(answer.error, answer.response.status) }));
    reload();
  }
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
      <Problem text={ackProblem} />
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
                  {alert.ackRequest ? (
                    <p class="muted ack-pending">{t('fleet.ackOnItsWay', { name: alert.ackRequest.by })}</p>
                  ) : (
                    mayAcknowledge(alert) && (
                      <button
                        type="button"
                        class="ack"
                        disabled={asking === `${alert.siteId}/${alert.id}`}
                        aria-label={t('fleet.acknowledgeLabel', { title: alert.title, site: alert.siteName })}
                        onClick={() => acknowledge(alert)}
                      >
                        {t('fleet.acknowledge')}
                      </button>
                    )
                  )}
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
