// The desk → runs and review: billing periods (an admin adds one), a period's runs, a draft computed (POST
// /api/billing/periods/:id/runs) and reviewed before it is issued: the site's bill, the statements' sum and the
// landlord's remainder (the difference to the site's bill), the intervals missing or estimated against the site's
// limits (GET /api/billing/settings), and each statement's lines (energy per band, standing, demand, each meter with
// its share, intervals, missing and estimated). Issue (admin) answers with the service's reason when refused. A
// restatement shows each correcting statement beside the original it corrects, with the difference line by line.
import { useState } from 'preact/hooks';
import { api, errorText } from '../api/client';
import { Done, Field, Problem } from '../components/Field';
import { useApi } from '../components/useApi';
import { DeskLinks, cents, decimal, type Got, lastDay, nextDay } from '../components/deskLinks';
import { dateTime, label, num, percent, t } from '../i18n';
import { can } from '../state/session';

type Run = Got<'/api/billing/runs/{id}'>;
type Statement = Got<'/api/billing/statements/{id}'>;

function StatementLines({ statement, currency }: { statement: Statement; currency: string }) {
  const c = statement.content;
  return (
    <table data-lines={statement.id}>
      <caption class="sr-only">{t('desk.review.linesOf', { name: statement.tenant.name })}</caption>
      <thead>
        <tr>
          <th scope="col">{t('desk.review.line')}</th>
          <th scope="col" class="n">
            {t('desk.review.quantity')}
          </th>
          <th scope="col" class="n">
            {t('desk.review.amount')}
          </th>
        </tr>
      </thead>
      <tbody>
        {c.energy.map((line) => (
          <tr key={`${line.utility}-${line.band}`} data-line={`energy ${line.band}`}>
            <th scope="row">{t('desk.review.energy', { utility: label('meters.commodity', line.utility), band: line.band })}</th>
            <td class="n">
              {num(line.quantity, 1)} {line.unit}
            </td>
            <td class="n">{cents(line.amountCents / 100, currency)}</td>
          </tr>
        ))}
        {c.standing.map((line) => (
          <tr key={`s-${line.utility}`} data-line="standing">
            <th scope="row">
              {t('desk.review.standing', { utility: label('meters.commodity', line.utility) })}
              <small class="rule muted">{line.rule}</small>
            </th>
            <td />
            <td class="n">{cents(line.amountCents / 100, currency)}</td>
          </tr>
        ))}
        {c.demand.map((line) => (
          <tr key={`d-${line.month}`} data-line="demand">
            <th scope="row">
              {t('desk.review.demand', { month: line.month })}
              <small class="rule muted">{line.rule}</small>
            </th>
            <td class="n">{num(line.shareKw, 1)} kW</td>
            <td class="n">{cents(line.amountCents / 100, currency)}</td>
          </tr>
        ))}
        <tr>
          <th scope="row">{t('billing.total')}</th>
          <td />
          <td class="n" data-field="statement-total">
            <strong>{cents(statement.totalCents / 100, currency)}</strong>
          </td>
        </tr>
      </tbody>
    </table>
  );
}

function MeterLines({ statement }: { statement: Statement }) {
  return (
    <table data-meters={statement.id}>
      <caption class="sr-only">{t('desk.review.metersOf', { name: statement.tenant.name })}</caption>
      <thead>
        <tr>
          <th scope="col">{t('desk.review.meter')}</th>
          <th scope="col" class="n">
            {t('desk.review.share')}
          </th>
          <th scope="col" class="n">
            {t('desk.review.billed')}
          </th>
          <th scope="col" class="n">
            {t('desk.review.missing')}
          </th>
          <th scope="col" class="n">
            {t('desk.review.estimated')}
          </th>
        </tr>
      </thead>
      <tbody>
        {statement.content.meters.map((m) => (
          <tr key={m.meterId} data-meter-line={m.meterId}>
            <th scope="row" class="wrap">
              {m.name}
            </th>
            <td class="n">{percent(m.share)}</td>
            <td class="n">
              {num(m.billedQuantity, 1)} {m.unit}
            </td>
            <td class={`n ${m.missing > 0 ? 'bad' : ''}`} data-field="missing">
              {t('desk.review.ofIntervals', { n: num(m.missing, 0), of: num(m.intervals, 0) })}
            </td>
            <td class={`n ${m.estimated > 0 ? 'bad' : ''}`} data-field="estimated">
              {t('desk.review.ofIntervals', { n: num(m.estimated, 0), of: num(m.intervals, 0) })}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** One statement of the run under review; a correcting one beside the original it corrects. */
function StatementReview({ id, currency }: { id: number; currency: string }) {
  const statement = useApi(() => api.GET('/api/billing/statements/{id}', { params: { path: { id } } }), [id]);
  const originalId = statement.data?.difference?.correctsStatementId ?? null;
  const original = useApi(
    () =>
      originalId === null
        ? Promise.resolve({ data: undefined, response: new Response() })
        : api.GET('/api/billing/statements/{id}', { params: { path: { id: originalId } } }),
    [originalId],
  );
  const s = statement.data;
  if (!s) return <Problem text={statement.problem} />;
  const diff = s.difference;
  return (
    <article class="alert statement" data-review-statement={s.id} aria-labelledby={`st-${s.id}`}>
      <h4 id={`st-${s.id}`}>{s.tenant.name}</h4>
      {diff ? (
        <div class="beside" data-restatement={s.id}>
          <section aria-labelledby={`orig-${s.id}`}>
            <h5 id={`orig-${s.id}`}>{t('desk.review.original', { id: diff.correctsStatementId ?? '–' })}</h5>
            {original.data ? <StatementLines statement={original.data} currency={currency} /> : <p class="muted">{t('desk.review.noOriginal')}</p>}
          </section>
          <section aria-labelledby={`corr-${s.id}`}>
            <h5 id={`corr-${s.id}`}>{t('desk.review.correcting', { id: s.id })}</h5>
            <StatementLines statement={s} currency={currency} />
            <p data-field="difference">
              <strong>{t('desk.review.difference', { amount: cents(diff.totalCents / 100, currency) })}</strong>
              {diff.energy.map((e) => (
                <span key={`${e.utility}-${e.band}`} class="muted">
                  {' '}
                  · {e.band} {num(e.quantity, 1)} kWh ({cents(e.amountCents / 100, currency)})
                </span>
              ))}
            </p>
          </section>
        </div>
      ) : (
        <StatementLines statement={s} currency={currency} />
      )}
      <MeterLines statement={s} />
    </article>
  );
}

function RunReview({ run, limits, onIssued }: { run: Run; limits?: Got<'/api/billing/settings'>; onIssued: (text: string) => void }) {
  const [problem, setProblem] = useState<string | null>(null);
  const { summary } = run;
  const q = summary.quality;
  const currency = summary.currency;
  const tooMissing = limits !== undefined && q.missingPercent > limits.maxMissingPercent;
  const tooEstimated = limits !== undefined && q.estimatedPercent > limits.maxEstimatedPercent;
  async function issue() {
    const { data, error, response } = await api.POST('/api/billing/runs/{id}/issue', { params: { path: { id: run.id } } });
    if (!data) return setProblem(errorText(error, response.status));
    setProblem(null);
    onIssued(t('desk.review.issuedDone', { id: run.id }));
  }
  return (
    <section class="card" aria-labelledby="review-heading" data-review={run.id}>
      <h2 id="review-heading">{t('desk.review.title', { id: run.id })}</h2>
      <Problem text={problem} />
      <dl class="facts">
        <dt>{t('desk.review.siteBill')}</dt>
        <dd data-field="site">{cents(summary.reconciliation.siteTotalCents / 100, currency)}</dd>
        <dt>{t('desk.review.statements')}</dt>
        <dd data-field="statements">{cents(summary.reconciliation.statementsCents / 100, currency)}</dd>
        <dt>{t('desk.review.landlord')}</dt>
        <dd data-field="landlord" class={summary.reconciliation.landlordCents < 0 ? 'bad' : undefined}>
          {cents(summary.reconciliation.landlordCents / 100, currency)}
        </dd>
        <dt>{t('desk.review.missingData')}</dt>
        <dd data-field="quality-missing" class={tooMissing ? 'bad' : q.missing > 0 ? undefined : 'good'}>
          {t('desk.review.quality', { n: num(q.missing, 0), of: num(q.intervals, 0), pct: num(q.missingPercent, 2) })}
          {limits && ` · ${t('desk.review.limit', { pct: num(limits.maxMissingPercent, 2) })}`}
        </dd>
        <dt>{t('desk.review.estimatedData')}</dt>
        <dd data-field="quality-estimated" class={tooEstimated ? 'bad' : undefined}>
          {t('desk.review.quality', { n: num(q.estimated, 0), of: num(q.intervals, 0), pct: num(q.estimatedPercent, 2) })}
          {limits && ` · ${t('desk.review.limit', { pct: num(limits.maxEstimatedPercent, 2) })}`}
        </dd>
      </dl>
      {summary.reconciliation.landlordCents < 0 && <p class="bad">{t('desk.review.negativeLandlord')}</p>}
      {q.missing > 0 && <p class="muted">{t('desk.review.missingAsZero')}</p>}
      {run.status === 'draft' && can('admin') && (
        <p>
          <button type="button" onClick={issue}>
            {t('desk.review.issue', { id: run.id })}
          </button>
          {(tooMissing || tooEstimated) && <span class="muted"> {t('desk.review.overLimit')}</span>}
        </p>
      )}
      <h3>{t('desk.review.statementLines')}</h3>
      {run.statements.map((s) => (
        <StatementReview key={s.id} id={s.id} currency={currency} />
      ))}
    </section>
  );
}

/** The site's rules for issuing (admin): how much data may be missing or estimated, and the supplier bill tolerance. */
function IssueRules({ limits, onSaved }: { limits: Got<'/api/billing/settings'>; onSaved: (text: string) => void }) {
  const [form, setForm] = useState({
    missing: String(limits.maxMissingPercent),
    estimated: String(limits.maxEstimatedPercent),
    tolerance: String(limits.supplierBillTolerancePercent),
  });
  const [problem, setProblem] = useState<string | null>(null);
  async function save(event: Event) {
    event.preventDefault();
    const [missing, estimated, tolerance] = [form.missing, form.estimated, form.tolerance].map(decimal);
    if ([missing, estimated, tolerance].some((v) => !Number.isFinite(v) || v < 0 || v > 100)) return setProblem(t('desk.rules.badNumber'));
    const { data, error, response } = await api.PUT('/api/billing/settings', {
      body: { maxMissingPercent: missing, maxEstimatedPercent: estimated, supplierBillTolerancePercent: tolerance },
    });
    if (!data) return setProblem(errorText(error, response.status));
    setProblem(null);
    onSaved(t('desk.rules.saved'));
  }
  return (
    <form class="card stack" onSubmit={save} noValidate aria-labelledby="rules-heading">
      <h2 id="rules-heading">{t('desk.rules.title')}</h2>
      <p class="muted">{t('desk.rules.intro')}</p>
      <Problem text={problem} />
      <Field label={t('desk.rules.missing')}>
        {(id) => <input id={id} inputMode="decimal" value={form.missing} onInput={(e) => setForm({ ...form, missing: e.currentTarget.value })} />}
      </Field>
      <Field label={t('desk.rules.estimated')}>
        {(id) => <input id={id} inputMode="decimal" value={form.estimated} onInput={(e) => setForm({ ...form, estimated: e.currentTarget.value })} />}
      </Field>
      <Field label={t('desk.rules.tolerance')}>
        {(id) => <input id={id} inputMode="decimal" value={form.tolerance} onInput={(e) => setForm({ ...form, tolerance: e.currentTarget.value })} />}
      </Field>
      <button type="submit">{t('desk.rules.save')}</button>
    </form>
  );
}

type PeriodDraft = { name: string; from: string; last: string };

/** A run of the period: issued or draft, a restatement or not, its statements' sum; reviewed from here. */
function RunItem({ run, reviewed, onReview }: { run: Run; reviewed: boolean; onReview: () => void }) {
  return (
    <li class="alert" data-run={run.id}>
      <div class="row">
        <strong>{t('billing.run', { id: run.id })}</strong>
        <span class={`badge ${run.status === 'issued' ? 'warning' : 'info'}`}>{t(run.status === 'issued' ? 'billing.issued' : 'billing.draft')}</span>
        {run.kind === 'restatement' && <span class="badge info">{t('billing.restatement')}</span>}
        <span class="muted">
          {run.issuedAt ? t('billing.issuedAt', { at: dateTime(run.issuedAt) }) : t('billing.computedAt', { at: dateTime(run.computedAt) })}
        </span>
        <span class="n">{cents(run.summary.reconciliation.statementsCents / 100, run.summary.currency)}</span>
        <button type="button" class="link when" aria-pressed={reviewed} onClick={onReview}>
          {t('desk.run.review', { id: run.id })}
        </button>
      </div>
    </li>
  );
}

/** A billing period added (admin): its name and first and last day. */
function PeriodForm({ form, setForm, onSubmit }: { form: PeriodDraft; setForm: (form: PeriodDraft) => void; onSubmit: (event: Event) => void }) {
  return (
    <form class="card stack" onSubmit={onSubmit} noValidate aria-labelledby="add-period-heading">
      <h2 id="add-period-heading">{t('desk.period.add')}</h2>
      <Field label={t('desk.period.name')}>
        {(id) => <input id={id} value={form.name} onInput={(e) => setForm({ ...form, name: e.currentTarget.value })} />}
      </Field>
      <Field label={t('desk.period.from')}>
        {(id) => <input id={id} type="date" value={form.from} onInput={(e) => setForm({ ...form, from: e.currentTarget.value })} />}
      </Field>
      <Field label={t('desk.period.last')}>
        {(id) => <input id={id} type="date" value={form.last} onInput={(e) => setForm({ ...form, last: e.currentTarget.value })} />}
      </Field>
      <button type="submit">{t('desk.period.addButton')}</button>
    </form>
  );
}

/** The billing period chosen, and the run computed for it (admin: a draft, or a restatement once one is issued). */
function PeriodChoice(props: {
  periods: Got<'/api/billing/periods'>['items'];
  chosen: number | null;
  onChoose: (id: number) => void;
  compute: string | null;
  onCompute: () => void;
}) {
  const { periods, chosen, onChoose, compute, onCompute } = props;
  return (
    <div class="filters">
      <Field label={t('billing.period')}>
        {(id) => (
          <select id={id} value={chosen ?? ''} onChange={(e) => onChoose(Number(e.currentTarget.value))}>
            {periods.map((p) => (
              <option key={p.id} value={p.id}>
                {p.name} ({p.from} – {lastDay(p.to)})
              </option>
            ))}
          </select>
        )}
      </Field>
      {compute !== null && (
        <button type="button" onClick={onCompute}>
          {compute}
        </button>
      )}
    </div>
  );
}

export default function DeskRuns() {
  const periods = useApi(() => api.GET('/api/billing/periods'));
  const limits = useApi(() => api.GET('/api/billing/settings'));
  const [periodId, setPeriodId] = useState<number | null>(null);
  const chosen = periodId ?? periods.data?.items.at(-1)?.id ?? null;
  const runs = useApi(
    () =>
      chosen === null
        ? Promise.resolve({ data: { items: [] as Run[] }, response: new Response() })
        : api.GET('/api/billing/periods/{id}/runs', { params: { path: { id: chosen } } }),
    [chosen],
  );
  const [reviewId, setReviewId] = useState<number | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [form, setForm] = useState<PeriodDraft>({ name: '', from: '', last: '' });
  const admin = can('admin');
  const items = runs.data?.items ?? [];
  const review = items.find((r) => r.id === reviewId) ?? items.find((r) => r.status === 'draft') ?? items.at(-1);

  async function addPeriod(event: Event) {
    event.preventDefault();
    if (!form.from || !form.last) return setProblem(t('desk.period.needDays'));
    const { data, error, response } = await api.POST('/api/billing/periods', {
      body: { ...(form.name.trim() ? { name: form.name.trim() } : {}), from: form.from, to: nextDay(form.last) },
    });
    if (!data) {
      setDone(null);
      return setProblem(errorText(error, response.status));
    }
    setProblem(null);
    setDone(t('desk.period.added', { name: data.name }));
    setPeriodId(data.id);
    periods.reload();
  }
  async function compute() {
    if (chosen === null) return;
    setDone(null);
    const { data, error, response } = await api.POST('/api/billing/periods/{id}/runs', { params: { path: { id: chosen } } });
    if (!data) return setProblem(errorText(error, response.status));
    setProblem(null);
    setDone(t('desk.run.computed', { id: data.id }));
    setReviewId(data.id);
    runs.reload();
  }

  return (
    <section class="analysis desk">
      <h1>{t('desk.runs.title')}</h1>
      <DeskLinks here="/billing/runs" />
      <Problem text={problem ?? periods.problem ?? runs.problem ?? limits.problem} />
      <Done text={done} />
      <div class="columns">
        <section class="card" aria-labelledby="period-runs-heading">
          <h2 id="period-runs-heading">{t('billing.runs')}</h2>
          {periods.data && periods.data.items.length === 0 ? (
            <p class="muted">{t('billing.noPeriods')}</p>
          ) : (
            <PeriodChoice
              periods={periods.data?.items ?? []}
              chosen={chosen}
              onChoose={setPeriodId}
              compute={admin && chosen !== null ? t(items.some((r) => r.status === 'issued') ? 'desk.run.restate' : 'desk.run.compute') : null}
              onCompute={compute}
            />
          )}
          {runs.data && chosen !== null && items.length === 0 && <p class="muted">{t('billing.noRuns')}</p>}
          <ul class="worklist">
            {items.map((run) => (
              <RunItem key={run.id} run={run} reviewed={review?.id === run.id} onReview={() => setReviewId(run.id)} />
            ))}
          </ul>
        </section>
        {admin ? <PeriodForm form={form} setForm={setForm} onSubmit={addPeriod} /> : <p class="muted">{t('desk.adminSetsUp')}</p>}
      </div>
      {review && (
        <RunReview
          key={`${review.id}-${review.status}-${review.computedAt}`}
          run={review}
          limits={limits.data}
          onIssued={(text) => {
            setDone(text);
            runs.reload();
          }}
        />
      )}
      {admin && limits.data && (
        <div class="columns spaced">
          <IssueRules
            key={JSON.stringify(limits.data)}
            limits={limits.data}
            onSaved={(text) => {
              setDone(text);
              limits.reload();
            }}
          />
        </div>
      )}
    </section>
  );
}
