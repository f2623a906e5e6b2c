// One equipment (issue 54): its points with the gateway's latest values, its faults, and a fault's evidence chart (the
// rule's points on one time axis, the fault's span shaded; the chart is its own chunk, loaded when a fault is opened).
// `?episode=<id>` opens that fault's evidence.
import type { ComponentType } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api/client';
import { Problem } from '../components/Field';
import type { Evidence } from '../components/charts/EvidenceChart';
import { useApi } from '../components/useApi';
import { dateTime, money, num, t } from '../i18n';
import { navigate, queryOf, route } from '../state/router';

type ChartComponent = ComponentType<{ evidence: Evidence; title: string }>;

export default function FddEquipment({ params }: { params: string[] }) {
  const name = params[0] ?? '';
  const unit = useApi(() => api.GET('/api/fdd/equipment/{name}', { params: { path: { name } } }), [name]);
  const chosen = Number(queryOf(route.value).get('episode')) || null;
  const episodes = unit.data?.episodes ?? [];
  const episodeId = chosen ?? episodes[0]?.id ?? null;
  const episode = episodes.find((e) => e.id === episodeId) ?? null;
  const evidence = useApi(
    () =>
      episodeId === null
        ? Promise.resolve({ data: undefined, response: new Response(null, { status: 204 }) })
        : api.GET('/api/fdd/episodes/{id}/evidence', { params: { path: { id: episodeId } } }),
    [episodeId],
  );
  const [Chart, setChart] = useState<ChartComponent | null>(null);
  useEffect(() => {
    if (evidence.data && !Chart) import('../components/charts/EvidenceChart').then((m) => setChart(() => m.EvidenceChart));
  }, [evidence.data]);

  const open = (id: number) => navigate(`/faults/equipment/${encodeURIComponent(name)}?episode=${id}`, true);

  return (
    <section>
      <p class="crumbs">
        <a href="/faults/by-money">{t('fdd.title')}</a>
      </p>
      <h1>{t('fddEquipment.title', { name })}</h1>
      <Problem text={unit.problem} />
      {unit.data && (
        <>
          <p class="muted">
            {t('fddEquipment.type', { type: unit.data.type })}
            {unit.data.gateway === 'unreachable' && ` · ${t('fddEquipment.gatewayAway')}`}
          </p>
          <h2>{t('fddEquipment.points')}</h2>
          <div class="table-wrap">
            <table data-table="fdd-points">
              <caption>{t('fddEquipment.pointsCaption', { name })}</caption>
              <thead>
                <tr>
                  <th scope="col">{t('fddMapping.code')}</th>
                  <th scope="col">{t('fddMapping.brickClass')}</th>
                  <th scope="col">{t('fddEquipment.value')}</th>
                  <th scope="col">{t('fddEquipment.at')}</th>
                </tr>
              </thead>
              <tbody>
                {unit.data.points.map((p) => (
                  <tr key={p.code} data-point={p.code}>
                    <td>{p.code}</td>
                    <td>{p.brickClass}</td>
                    <td class="num" data-value={p.value ?? ''}>
                      {p.value === null ? '–' : `${num(p.value, 2)} ${p.unit}`}
                    </td>
                    <td>{p.at ? dateTime(p.at) : '–'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <h2>{t('fddEquipment.faults')}</h2>
          {episodes.length === 0 ? (
            <p class="notice">{t('fddEquipment.noFaults')}</p>
          ) : (
            <div class="table-wrap">
              <table data-table="fdd-equipment-episodes">
                <caption>{t('fddEquipment.faultsCaption', { name })}</caption>
                <thead>
                  <tr>
                    <th scope="col">{t('fdd.rule')}</th>
                    <th scope="col">{t('fdd.span')}</th>
                    <th scope="col">{t('fdd.moneyPerDay')}</th>
                    <th scope="col">{t('fddEquipment.evidence')}</th>
                  </tr>
                </thead>
                <tbody>
                  {episodes.map((e) => (
                    <tr key={e.id} data-episode={e.id}>
                      <td>
                        {e.title}
                        <br />
                        <span class="muted">
                          {e.ruleId} v{e.ruleVersion}
                        </span>
                      </td>
                      <td>
                        {dateTime(e.startedAt)} – {e.endedAt ? dateTime(e.endedAt) : t('fdd.ongoing', { lastSeen: dateTime(e.lastSeenAt) })}
                      </td>
                      <td class="num">{money(e.wasteMoneyPerDay, e.currency)}</td>
                      <td>
                        <button type="button" aria-pressed={e.id === episodeId} onClick={() => open(e.id)}>
                          {t('fddEquipment.show')}
                        </button>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          {episode && (
            <>
              <h2>{t('fddEquipment.evidenceOf', { title: episode.title })}</h2>
              <Problem text={evidence.problem} />
              {evidence.data && Chart && <Chart evidence={evidence.data} title={episode.title} />}
            </>
          )}
        </>
      )}
    </section>
  );
}
