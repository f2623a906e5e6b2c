// Suspect runs (issue 52): one value repeated (a flat zero) on a meter whose history reads more, listed from
// GET /api/energy/suspect-runs, each open run with "confirm as real" for an operator or admin (POST …/{id}/confirm: its
// intervals then count as measured); read-only for a viewer. Used by the suspect-runs screen and the meter screen.
import { useState } from 'preact/hooks';
import { api, errorText } from '../api/client';
import { Done, Problem } from './Field';
import { useApi } from './useApi';
import { dateTime, num, t } from '../i18n';
import { can } from '../state/session';

type State = 'open' | 'confirmed' | 'all';

export function SuspectRunList({ meterId, heading }: { meterId?: number; heading: string }) {
  const [state, setState] = useState<State>('open');
  const runs = useApi(
    () => api.GET('/api/energy/suspect-runs', { params: { query: { ...(meterId ? { meterId } : {}), ...(state === 'all' ? {} : { state }) } } }),
    [meterId, state],
  );
  const [problem, setProblem] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const operator = can('operator');

  async function confirm(id: number, meterName: string) {
    const { data, error, response } = await api.POST('/api/energy/suspect-runs/{id}/confirm', { params: { path: { id } } });
    if (!data) {
      setDone(null);
      return setProblem(errorText(error, response.status));
    }
    setProblem(null);
    setDone(t('suspects.confirmed', { meter: meterName, from: dateTime(data.startAt) }));
    runs.reload();
  }

  const items = runs.data?.items ?? [];
  const headingId = `suspects-heading${meterId ? `-${meterId}` : ''}`;
  return (
    <section class="card stack" aria-labelledby={headingId} data-section="suspect-runs">
      <h2 id={headingId}>{heading}</h2>
      <p class="muted">{t('suspects.intro')}</p>
      <div class="field">
        <label for={`${headingId}-state`}>{t('suspects.show')}</label>
        <select id={`${headingId}-state`} value={state} onChange={(e) => setState(e.currentTarget.value as State)}>
          <option value="open">{t('suspects.state.open')}</option>
          <option value="confirmed">{t('suspects.state.confirmed')}</option>
          <option value="all">{t('suspects.state.all')}</option>
        </select>
      </div>
      <Problem text={problem ?? runs.problem} />
      <Done text={done} />
      {runs.data && items.length === 0 && <p class="muted">{t(state === 'open' ? 'suspects.noneOpen' : 'suspects.none')}</p>}
      {items.length > 0 && (
        <table>
          <caption class="sr-only">{heading}</caption>
          <thead>
            <tr>
              {!meterId && <th scope="col">{t('import.meter')}</th>}
              <th scope="col">{t('suspects.from')}</th>
              <th scope="col" class="n">
                {t('suspects.hours')}
              </th>
              <th scope="col" class="n">
                {t('suspects.value')}
              </th>
              <th scope="col">{t('suspects.source')}</th>
              <th scope="col">{t('suspects.stateCol')}</th>
            </tr>
          </thead>
          <tbody>
            {items.map((run) => (
              <tr key={run.id} data-run={run.id}>
                {!meterId && (
                  <th scope="row" class="wrap">
                    <a href={`/meters/${run.meterId}`}>{run.meterName}</a>
                  </th>
                )}
                <td>
                  {dateTime(run.startAt)} – {dateTime(run.endAt)}
                </td>
                <td class="n">{num(run.hours, 1)}</td>
                <td class="n">{num(run.value, 3)}</td>
                <td>{t(run.source === 'import' ? 'suspects.byImport' : 'suspects.byCollector')}</td>
                <td data-field="state">
                  {run.confirmedAt ? (
                    t('suspects.confirmedAt', { at: dateTime(run.confirmedAt) })
                  ) : operator ? (
                    <button
                      type="button"
                      class="secondary"
                      aria-label={t('suspects.confirmLabel', { meter: run.meterName, from: dateTime(run.startAt) })}
                      onClick={() => confirm(run.id, run.meterName)}
                    >
                      {t('suspects.confirm')}
                    </button>
                  ) : (
                    t('suspects.open')
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
