// One area: its meters (each a link to its interval chart). GET /api/meters lists them all; the area's are picked here.
import { api } from '../api/client';
import { Problem } from '../components/Field';
import { useApi } from '../components/useApi';
import { t } from '../i18n';

export default function Area({ params }: { params: string[] }) {
  const name = params[0];
  const { data, problem } = useApi(() => api.GET('/api/meters', { params: { query: { pageSize: 200 } } }), [name]);
  const meters = (data?.items ?? []).filter((meter) => meter.area === name);
  return (
    <section>
      <p class="crumbs">
        <a href="/">{t('nav.overview')}</a> › <span>{name}</span>
      </p>
      <h1>{t('area.title', { area: name })}</h1>
      <Problem text={problem} />
      {data && meters.length === 0 && <p class="muted">{t('area.noMeters')}</p>}
      {meters.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">{t('area.meter')}</th>
              <th scope="col">{t('area.kind')}</th>
              <th scope="col">{t('area.code')}</th>
            </tr>
          </thead>
          <tbody>
            {meters.map((meter) => (
              <tr key={meter.id}>
                <th scope="row">
                  <a href={`/meters/${meter.id}`}>{meter.name}</a>
                </th>
                <td>{meter.kind}</td>
                <td>
                  <code>{meter.code ?? '–'}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
