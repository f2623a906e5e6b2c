// Fleet health per site: stale sites first, then warnings, then healthy ones (ranked by the fleet, 100 a page), each with
// what set its grade; last contact, sync lag, unsent rows, clock skew, yesterday's completeness, version, last backup age
// and open alerts. The counts are the whole fleet's.
import { useState } from 'preact/hooks';
import { Problem } from '../components/Field';
import { useApi } from '../components/useApi';
import { dateTime, num, percent, t } from '../i18n';
import { browserZone, DownloadXlsx, duration, Grade, GRADE_KEYS, Pager } from './parts';
import { fleetGet } from './session';
import type { HealthPage } from './types';

const PAGE_SIZE = 100;

export default function Health() {
  const [page, setPage] = useState(1);
  const { data, problem } = useApi(() => fleetGet<HealthPage>(`/api/fleet/sites?page=${page}&pageSize=${PAGE_SIZE}`), [page]);
  const sites = data?.items ?? [];
  return (
    <section>
      <h1>{t('fleet.health')}</h1>
      <Problem text={problem} />
      {!data && !problem && (
        <p class="muted" aria-busy="true">
          {t('app.loading')}
        </p>
      )}
      {data && (
        <>
          <div class="kpis fleet-counts">
            {(['stale', 'warning', 'healthy'] as const).map((grade) => (
              <div class="card kpi" key={grade}>
                <h2>{t(GRADE_KEYS[grade])}</h2>
                <p class={`big grade-count-${grade}`}>{num(data.counts[grade], 0)}</p>
              </div>
            ))}
          </div>
          <p class="muted">{t('fleet.healthRules')}</p>
          <DownloadXlsx path="/api/fleet/sites.xlsx" />
          <div class="table-scroll card">
            <table class="fleet-health">
              <caption class="sr-only">{t('fleet.health')}</caption>
              <thead>
                <tr>
                  <th scope="col">{t('fleet.siteCol')}</th>
                  <th scope="col">{t('fleet.gradeCol')}</th>
                  <th scope="col">{t('fleet.lastContact')}</th>
                  <th scope="col" class="n">
                    {t('fleet.syncLag')}
                  </th>
                  <th scope="col" class="n">
                    {t('fleet.unsent')}
                  </th>
                  <th scope="col" class="n">
                    {t('fleet.skew')}
                  </th>
                  <th scope="col" class="n">
                    {t('fleet.completeness')}
                  </th>
                  <th scope="col">{t('fleet.version')}</th>
                  <th scope="col" class="n">
                    {t('fleet.backupAge')}
                  </th>
                  <th scope="col" class="n">
                    {t('fleet.openAlerts')}
                  </th>
                </tr>
              </thead>
              <tbody>
                {sites.map((site) => (
                  <tr key={site.id} data-site={site.id}>
                    <th scope="row" class="fleet-name">
                      <a href={`/sites/${site.id}`}>{site.name}</a>
                      {site.boxName && site.boxName !== site.name && <small class="muted box-name">{site.boxName}</small>}
                    </th>
                    <td class="grade-cell">
                      <Grade grade={site.grade} reasons={site.reasons} />
                      {site.lastRefusal && <small class="bad wrap refusal">{site.lastRefusal}</small>}
                    </td>
                    <td class="last-contact">{dateTime(site.lastContactAt, browserZone)}</td>
                    <td class="n lag">{duration(site.syncLagSec)}</td>
                    <td class="n unsent">{num(site.unsentRows, 0)}</td>
                    <td class="n skew">{duration(site.clockSkewSec)}</td>
                    <td class="n completeness">{percent(site.completeness)}</td>
                    <td class="version">{site.version ?? '–'}</td>
                    <td class="n backup">{duration(site.lastBackupAgeSec)}</td>
                    <td class="n alerts">{num(site.openAlerts, 0)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            {sites.length === 0 && <p class="muted">{t('fleet.noSites')}</p>}
          </div>
          <Pager page={page} pageSize={PAGE_SIZE} total={data.total} onPage={setPage} />
        </>
      )}
    </section>
  );
}
