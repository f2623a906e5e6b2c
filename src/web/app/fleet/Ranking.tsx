// The EUI ranking: kWh per m² and year over the last 12 complete months, all fuels and per commodity, against the 12
// months before; the most intensive site first (ranked by the fleet over every site, 100 a page; the bars scale to the
// fleet's highest); sites without a floor area or data listed last, unranked.
import { useState } from 'preact/hooks';
import { Problem } from '../components/Field';
import { useApi } from '../components/useApi';
import { num, percent, t } from '../i18n';
import { DownloadXlsx, Pager } from './parts';
import { fleetGet } from './session';
import type { EuiPage } from './types';

const PAGE_SIZE = 100;

export default function Ranking() {
  const [page, setPage] = useState(1);
  const { data, problem } = useApi(() => fleetGet<EuiPage>(`/api/fleet/eui?page=${page}&pageSize=${PAGE_SIZE}`), [page]);
  const rows = data?.items ?? [];
  const commodities = [...new Set(rows.flatMap((r) => Object.keys(r.byCommodity)))].sort();
  const top = data?.maxEui ?? 0;
  return (
    <section>
      <h1>{t('fleet.ranking')}</h1>
      <p class="muted">{t('fleet.rankingIntro')}</p>
      <Problem text={problem} />
      {!data && !problem && (
        <p class="muted" aria-busy="true">
          {t('app.loading')}
        </p>
      )}
      {data && (
        <>
          <DownloadXlsx path="/api/fleet/eui.xlsx" />
          <div class="table-scroll card">
            <table class="fleet-eui">
              <caption class="sr-only">{t('fleet.ranking')}</caption>
              <thead>
                <tr>
                  <th scope="col" class="n">
                    {t('fleet.rank')}
                  </th>
                  <th scope="col">{t('fleet.siteCol')}</th>
                  <th scope="col" class="n">
                    {t('fleet.euiAll')}
                  </th>
                  <th scope="col" class="n">
                    {t('fleet.lastYear')}
                  </th>
                  <th scope="col" class="n">
                    {t('fleet.change')}
                  </th>
                  <th scope="col" class="n">
                    {t('fleet.floorArea')}
                  </th>
                  {commodities.map((c) => (
                    <th scope="col" class="n" key={c}>
                      {t('fleet.euiOf', { commodity: commodityName(c) })}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {rows.map((row) => (
                  <tr key={row.id} data-site={row.id}>
                    <td class="n rank">{row.rank ?? '–'}</td>
                    <th scope="row" class="fleet-name">
                      <a href={`/sites/${row.id}`}>{row.name}</a>
                    </th>
                    <td class="n eui">
                      {num(row.eui)}
                      {row.eui !== null && top > 0 && (
                        <span class="bar" aria-hidden="true">
                          <span
                            ref={(el) => {
                              if (el) el.style.width = `${(100 * row.eui!) / top}%`;
                            }}
                          />
                        </span>
                      )}
                    </td>
                    <td class="n eui-last">{num(row.euiLastYear)}</td>
                    <td class={`n change ${row.change === null ? '' : row.change > 0 ? 'up' : 'down'}`}>{percent(row.change, true)}</td>
                    <td class="n area">{num(row.floorAreaM2, 0)}</td>
                    {commodities.map((c) => (
                      <td class={`n commodity-${c}`} key={c}>
                        {num(row.byCommodity[c]?.eui)}
                        <small class="muted block">{t('fleet.lastYearShort', { value: num(row.byCommodity[c]?.euiLastYear) })}</small>
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
            {rows.length === 0 && <p class="muted">{t('fleet.noSites')}</p>}
          </div>
          <Pager page={page} pageSize={PAGE_SIZE} total={data.total} onPage={setPage} />
        </>
      )}
    </section>
  );
}

const COMMODITY_KEYS: Record<string, 'fleet.electricity' | 'fleet.gas' | 'fleet.heat' | 'fleet.water'> = {
  electricity: 'fleet.electricity',
  gas: 'fleet.gas',
  heat: 'fleet.heat',
  water: 'fleet.water',
};

export function commodityName(commodity: string): string {
  const key = COMMODITY_KEYS[commodity];
  return key ? t(key) : commodity;
}
