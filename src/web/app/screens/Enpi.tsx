// Analysis → EnPIs: per month, kWh, kWh per m², per degree day and per unit of a driver (GET /api/analysis/enpi) for
// the site, an area or a meter. The drivers offered are the names stored under GET /api/analysis/drivers.
import { useState } from 'preact/hooks';
import { api, errorText } from '../api/client';
import { AnalysisTabs, siteDay, type Target, TargetSelect, targetQuery } from '../components/analysisParts';
import { Field, Problem } from '../components/Field';
import { useApi } from '../components/useApi';
import { num, t } from '../i18n';

type Answer = NonNullable<Awaited<ReturnType<typeof fetchEnpi>>['data']>;
type Form = { target: Target; first: string; last: string; driver: string };
const MONTH = /^\d{4}-(0[1-9]|1[0-2])$/;

function nextMonth(month: string): string {
  const [y, m] = month.split('-').map(Number);
  return m === 12 ? `${y + 1}-01` : `${y}-${String(m + 1).padStart(2, '0')}`;
}

function fetchEnpi(form: Form) {
  return api.GET('/api/analysis/enpi', {
    params: { query: { ...targetQuery(form.target), from: form.first, to: nextMonth(form.last), ...(form.driver ? { driver: form.driver } : {}) } },
  });
}

export default function Enpi() {
  const thisMonth = siteDay().slice(0, 7);
  const yearAgo = `${Number(thisMonth.slice(0, 4)) - 1}${thisMonth.slice(4)}`;
  const [form, setForm] = useState<Form>({ target: 'site', first: nextMonth(yearAgo), last: thisMonth, driver: '' });
  const drivers = useApi(() => api.GET('/api/analysis/drivers'));
  const names = [...new Set((drivers.data?.items ?? []).map((d) => d.name))].sort();
  const [answer, setAnswer] = useState<Answer | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function show(event: Event) {
    event.preventDefault();
    if (!MONTH.test(form.first) || !MONTH.test(form.last) || form.last < form.first) return setProblem(t('enpi.badMonths'));
    setBusy(true);
    const { data, error, response } = await fetchEnpi(form);
    setBusy(false);
    if (!data) {
      setAnswer(null);
      return setProblem(errorText(error, response.status));
    }
    setProblem(null);
    setAnswer(data);
  }

  return (
    <section class="analysis">
      <h1>{t('enpi.title')}</h1>
      <AnalysisTabs />
      <form class="card stack" onSubmit={show} noValidate aria-busy={busy ? 'true' : undefined}>
        <div class="filters">
          <TargetSelect value={form.target} onChange={(target) => setForm({ ...form, target })} />
          <Field label={t('enpi.first')}>
            {(id) => (
              <input id={id} type="month" placeholder="2026-01" value={form.first} onInput={(e) => setForm({ ...form, first: e.currentTarget.value })} />
            )}
          </Field>
          <Field label={t('enpi.last')}>
            {(id) => <input id={id} type="month" placeholder="2026-12" value={form.last} onInput={(e) => setForm({ ...form, last: e.currentTarget.value })} />}
          </Field>
          <Field label={t('enpi.driver')}>
            {(id) => (
              <select id={id} value={form.driver} onChange={(e) => setForm({ ...form, driver: e.currentTarget.value })}>
                <option value="">{t('enpi.noDriver')}</option>
                {names.map((name) => (
                  <option key={name} value={name}>
                    {name}
                  </option>
                ))}
              </select>
            )}
          </Field>
        </div>
        <Problem text={problem ?? drivers.problem} />
        <div class="actions">
          <button type="submit" class="primary" disabled={busy}>
            {t('enpi.show')}
          </button>
        </div>
      </form>
      {answer && <EnpiMonths answer={answer} />}
    </section>
  );
}

/** The EnPIs month by month, with the driver's columns when one was asked for. */
function EnpiMonths({ answer }: { answer: Answer }) {
  return (
    <section class="card" aria-labelledby="enpi-heading">
      <h2 id="enpi-heading">{t('enpi.months')}</h2>
      <p class="muted">{answer.floorAreaM2 === null ? t('enpi.noFloorArea') : t('enpi.floorArea', { m2: num(answer.floorAreaM2, 0) })}</p>
      <div class="table-scroll">
        <table data-table="enpi">
          <thead>
            <tr>
              <th scope="col">{t('enpi.month')}</th>
              <th scope="col" class="n">
                kWh
              </th>
              <th scope="col" class="n">
                kWh/m²
              </th>
              <th scope="col" class="n">
                HDD
              </th>
              <th scope="col" class="n">
                CDD
              </th>
              <th scope="col" class="n">
                {t('enpi.perDegreeDay')}
              </th>
              {answer.driver && (
                <>
                  <th scope="col" class="n wrap">
                    {answer.driver}
                  </th>
                  <th scope="col" class="n wrap">
                    {t('enpi.perDriver', { driver: answer.driver })}
                  </th>
                </>
              )}
            </tr>
          </thead>
          <tbody>
            {answer.months.map((m) => (
              <tr key={m.month} data-month={m.month}>
                <th scope="row">{m.month}</th>
                <td class="n" data-field="kwh">
                  {num(m.kwh)}
                </td>
                <td class="n">{num(m.kwhPerM2, 2)}</td>
                <td class="n">{num(m.hdd)}</td>
                <td class="n">{num(m.cdd)}</td>
                <td class="n">{num(m.kwhPerDegreeDay)}</td>
                {answer.driver && (
                  <>
                    <td class="n">
                      {num(m.driverValue)} {m.driverUnit ?? ''}
                    </td>
                    <td class="n" data-field="perDriver">
                      {num(m.kwhPerDriverUnit, 3)}
                    </td>
                  </>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
