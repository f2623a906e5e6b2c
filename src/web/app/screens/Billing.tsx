// Billing, read-only (viewer): the tenants and cost centres, the billing periods, and for a chosen period its runs
// (draft or issued, initial or restatement) with each statement's total and its PDF and XLSX to download
// (GET /api/billing/tenants, /periods, /periods/:id/runs, /statements/:id/pdf|xlsx). This screen changes nothing: runs
// are computed, reviewed and issued on the desk's other tabs (components/deskLinks.tsx).
import { useState } from 'preact/hooks';
import { api } from '../api/client';
import type { Answer } from '../api/types';
import { Field, Problem } from '../components/Field';
import { saveBlob } from '../components/saveFile';
import { useApi } from '../components/useApi';
import { cents, DeskLinks } from '../components/deskLinks';
import { dateTime, num, t } from '../i18n';

/** The last day of a period whose `to` is exclusive. */
const lastDay = (to: string) => new Date(Date.parse(`${to}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);

async function download(id: number, kind: 'pdf' | 'xlsx', setProblem: (text: string) => void) {
  const answer =
    kind === 'pdf'
      ? await api.GET('/api/billing/statements/{id}/pdf', { params: { path: { id } }, parseAs: 'blob' })
      : await api.GET('/api/billing/statements/{id}/xlsx', { params: { path: { id } }, parseAs: 'blob' });
  if (!answer.data) return setProblem(`HTTP ${answer.response.status}`);
  const name = /filename="?([^";]+)"?/.exec(answer.response.headers.get('content-disposition') ?? '')?.[1] ?? `statement-${id}.${kind}`;
  saveBlob(answer.data, name);
}

type Run = Answer<'/api/billing/periods/{id}/runs'>['items'][number];
type Tenant = Answer<'/api/billing/tenants'>['items'][number];

export default function Billing() {
  const tenants = useApi(() => api.GET('/api/billing/tenants'));
  const periods = useApi(() => api.GET('/api/billing/periods'));
  const [periodId, setPeriodId] = useState<number | null>(null);
  const chosen = periodId ?? periods.data?.items.at(-1)?.id ?? null;
  const runs = useApi(
    () =>
      chosen === null
        ? Promise.resolve({ data: { items: [] }, response: new Response() })
        : api.GET('/api/billing/periods/{id}/runs', { params: { path: { id: chosen } } }),
    [chosen],
  );
  const [problem, setProblem] = useState<string | null>(null);

  return (
    <section>
      <h1>{t('billing.title')}</h1>
      <DeskLinks here="/billing" />
      <Problem text={problem ?? tenants.problem ?? periods.problem ?? runs.problem} />
      <div class="columns">
        <section class="card" aria-labelledby="runs-heading">
          <h2 id="runs-heading">{t('billing.runs')}</h2>
          {periods.data && periods.data.items.length === 0 ? (
            <p class="muted">{t('billing.noPeriods')}</p>
          ) : (
            <div class="filters">
              <Field label={t('billing.period')}>
                {(id) => (
                  <select id={id} value={chosen ?? ''} onChange={(e) => setPeriodId(Number(e.currentTarget.value))}>
                    {(periods.data?.items ?? []).map((p) => (
                      <option key={p.id} value={p.id}>
                        {p.name} ({p.from} – {lastDay(p.to)})
                      </option>
                    ))}
                  </select>
                )}
              </Field>
            </div>
          )}
          {runs.data && chosen !== null && runs.data.items.length === 0 && <p class="muted">{t('billing.noRuns')}</p>}
          {(runs.data?.items ?? []).map((run) => (
            <RunStatements key={run.id} run={run} setProblem={setProblem} />
          ))}
        </section>
        <TenantsCard tenants={tenants.data?.items} />
      </div>
    </section>
  );
}

/** A run (draft or issued, initial or restatement) with each statement's total and its files. */
function RunStatements({ run, setProblem }: { run: Run; setProblem: (text: string) => void }) {
  return (
    <article class="alert" data-run={run.id}>
      <div class="row">
        <strong>{t('billing.run', { id: run.id })}</strong>
        <span class={`badge ${run.status === 'issued' ? 'warning' : 'info'}`}>{t(run.status === 'issued' ? 'billing.issued' : 'billing.draft')}</span>
        {run.kind === 'restatement' && <span class="badge info">{t('billing.restatement')}</span>}
        <span class="when muted">
          {run.issuedAt ? t('billing.issuedAt', { at: dateTime(run.issuedAt) }) : t('billing.computedAt', { at: dateTime(run.computedAt) })}
        </span>
      </div>
      <table data-statements={run.id}>
        <caption class="sr-only">{t('billing.statementsOf', { id: run.id })}</caption>
        <thead>
          <tr>
            <th scope="col">{t('billing.tenant')}</th>
            <th scope="col" class="n">
              {t('billing.total')}
            </th>
            <th scope="col">{t('billing.files')}</th>
          </tr>
        </thead>
        <tbody>
          {run.statements.map((s) => (
            <tr key={s.id} data-statement={s.id}>
              <th scope="row" class="wrap">
                {s.tenantName}
              </th>
              <td class="n" data-field="total">
                {cents(s.totalCents / 100, run.summary.currency)}
              </td>
              <td>
                <span class="actions">
                  <button type="button" class="link" onClick={() => download(s.id, 'pdf', setProblem)}>
                    {t('billing.pdfOf', { name: s.tenantName })}
                  </button>
                  <button type="button" class="link" onClick={() => download(s.id, 'xlsx', setProblem)}>
                    {t('billing.xlsxOf', { name: s.tenantName })}
                  </button>
                </span>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </article>
  );
}

/** The tenants and cost centres (undefined until they are read). */
function TenantsCard({ tenants }: { tenants: Tenant[] | undefined }) {
  return (
    <section class="card" aria-labelledby="tenants-heading">
      <h2 id="tenants-heading">{t('billing.tenants')}</h2>
      {tenants && tenants.length === 0 && <p class="muted">{t('billing.noTenants')}</p>}
      <table>
        <thead>
          <tr>
            <th scope="col">{t('billing.tenant')}</th>
            <th scope="col">{t('billing.kind')}</th>
            <th scope="col" class="n">
              m²
            </th>
          </tr>
        </thead>
        <tbody>
          {(tenants ?? []).map((tenant) => (
            <tr key={tenant.id} data-tenant={tenant.id}>
              <th scope="row" class="wrap">
                {tenant.name}
                {tenant.contactEmail && (
                  <>
                    <br />
                    <span class="muted">{tenant.contactEmail}</span>
                  </>
                )}
              </th>
              <td>{t(tenant.kind === 'tenant' ? 'billing.kind.tenant' : 'billing.kind.costCentre')}</td>
              <td class="n">{num(tenant.floorAreaM2, 0)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
