// Analysis → baseline: a weather- and day-type-normalised baseline of daily energy for the site, an area or a meter
// (GET /api/analysis/baseline), its ASHRAE Guideline 14 statistics against their limits, the coefficients, and for a
// reporting period expected vs actual with the savings, or why the guard rails withhold them, and their uncertainty.
import { useState } from 'preact/hooks';
import { Fragment } from 'preact';
import { api, errorText } from '../api/client';
import { AnalysisTabs, addDays, siteDay, type Target, TargetSelect, targetQuery } from '../components/analysisParts';
import { Field, Problem } from '../components/Field';
import { label, num, percent, t } from '../i18n';

type Answer = NonNullable<Awaited<ReturnType<typeof fetchBaseline>>['data']>;
type Form = { target: Target; baseFirst: string; baseLast: string; reportFirst: string; reportLast: string; heatingBaseC: string; coolingBaseC: string };

function fetchBaseline(form: Form) {
  return api.GET('/api/analysis/baseline', {
    params: {
      query: {
        ...targetQuery(form.target),
        baselineFrom: form.baseFirst,
        baselineTo: addDays(form.baseLast, 1),
        ...(form.reportFirst ? { reportFrom: form.reportFirst } : {}),
        ...(form.reportFirst && form.reportLast ? { reportTo: addDays(form.reportLast, 1) } : {}),
        heatingBaseC: Number(form.heatingBaseC.replace(',', '.')),
        coolingBaseC: Number(form.coolingBaseC.replace(',', '.')),
      },
    },
  });
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

export default function Baseline() {
  const [form, setForm] = useState<Form>({
    target: 'site',
    baseFirst: siteDay(-365 - 31),
    baseLast: siteDay(-32),
    reportFirst: siteDay(-31),
    reportLast: siteDay(-1),
    heatingBaseC: '15.5',
    coolingBaseC: '21',
  });
  const [answer, setAnswer] = useState<Answer | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const set = (key: keyof Form) => (e: { currentTarget: HTMLInputElement }) => setForm({ ...form, [key]: e.currentTarget.value });

  async function fit(event: Event) {
    event.preventDefault();
    if (!DAY.test(form.baseFirst) || !DAY.test(form.baseLast) || form.baseLast < form.baseFirst) return setProblem(t('baseline.badBaseline'));
    if (form.reportFirst && (!DAY.test(form.reportFirst) || (form.reportLast && form.reportLast < form.reportFirst)))
      return setProblem(t('baseline.badReport'));
    if (!Number.isFinite(Number(form.heatingBaseC.replace(',', '.'))) || !Number.isFinite(Number(form.coolingBaseC.replace(',', '.'))))
      return setProblem(t('baseline.badBase'));
    setBusy(true);
    const { data, error, response } = await fetchBaseline(form);
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
      <h1>{t('baseline.title')}</h1>
      <AnalysisTabs />
      <form class="card stack" onSubmit={fit} noValidate aria-busy={busy ? 'true' : undefined}>
        <div class="filters">
          <TargetSelect value={form.target} onChange={(target) => setForm({ ...form, target })} />
          <Field label={t('baseline.baseFirst')}>{(id) => <input id={id} type="date" value={form.baseFirst} onInput={set('baseFirst')} />}</Field>
          <Field label={t('baseline.baseLast')}>{(id) => <input id={id} type="date" value={form.baseLast} onInput={set('baseLast')} />}</Field>
          <Field label={t('baseline.reportFirst')}>{(id) => <input id={id} type="date" value={form.reportFirst} onInput={set('reportFirst')} />}</Field>
          <Field label={t('baseline.reportLast')}>{(id) => <input id={id} type="date" value={form.reportLast} onInput={set('reportLast')} />}</Field>
          <Field label={t('baseline.heatingBase')}>
            {(id) => <input id={id} inputMode="decimal" value={form.heatingBaseC} onInput={set('heatingBaseC')} />}
          </Field>
          <Field label={t('baseline.coolingBase')}>
            {(id) => <input id={id} inputMode="decimal" value={form.coolingBaseC} onInput={set('coolingBaseC')} />}
          </Field>
        </div>
        <Problem text={problem} />
        <div class="actions">
          <button type="submit" class="primary" disabled={busy}>
            {t('baseline.fit')}
          </button>
        </div>
      </form>
      {answer && <Result answer={answer} />}
    </section>
  );
}

function Pass({ pass }: { pass: boolean }) {
  return <span class={pass ? 'good' : 'bad'}>{pass ? t('baseline.pass') : t('baseline.fail')}</span>;
}

function Result({ answer }: { answer: Answer }) {
  const s = answer.statistics;
  const g = answer.guardRails;
  const r = answer.report;
  const c = answer.model.coefficients;
  return (
    <>
      <div class="columns">
        <section class="card" aria-labelledby="fit-heading">
          <h2 id="fit-heading">{t('baseline.statistics')}</h2>
          <div class="table-scroll">
            <table data-table="statistics">
              <thead>
                <tr>
                  <th scope="col">{t('baseline.measure')}</th>
                  <th scope="col" class="n">
                    {t('baseline.value')}
                  </th>
                  <th scope="col" class="n">
                    {t('baseline.limit')}
                  </th>
                  <th scope="col">{t('baseline.verdict')}</th>
                </tr>
              </thead>
              <tbody>
                <tr data-stat="cvRmse">
                  <th scope="row">CV(RMSE)</th>
                  <td class="n">{num(s.cvRmsePercent, 1)} %</td>
                  <td class="n">≤ {num(s.limits.cvRmsePercent, 0)} %</td>
                  <td>
                    <Pass pass={s.pass.cvRmse} />
                  </td>
                </tr>
                <tr data-stat="nmbe">
                  <th scope="row">NMBE</th>
                  <td class="n">{num(s.nmbePercent, 3)} %</td>
                  <td class="n">± {num(s.limits.nmbePercent, 3)} %</td>
                  <td>
                    <Pass pass={s.pass.nmbe} />
                  </td>
                </tr>
                <tr data-stat="r2">
                  <th scope="row">R²</th>
                  <td class="n">{num(s.r2, 3)}</td>
                  <td class="n">≥ {num(s.limits.r2, 2)}</td>
                  <td>
                    <Pass pass={s.pass.r2} />
                  </td>
                </tr>
              </tbody>
            </table>
          </div>
          <p class="muted">{t('baseline.np', { n: s.n, p: s.p, missing: answer.missingBaselineDays.length })}</p>
          <h3>{t('baseline.model')}</h3>
          <dl class="facts" data-field="coefficients">
            {(['intercept', 'perHdd', 'perCdd', 'weekend', 'holiday'] as const).map((term) => (
              <Fragment key={term}>
                <dt>{label('baseline.term', term)}</dt>
                <dd class={answer.model.fitted.includes(term) ? '' : 'muted'}>
                  {num(c[term], 2)} kWh{answer.model.fitted.includes(term) ? '' : ` (${t('baseline.notFitted')})`}
                </dd>
              </Fragment>
            ))}
          </dl>
        </section>
        <section class="card" aria-labelledby="rails-heading">
          <h2 id="rails-heading">{t('baseline.guardRails')}</h2>
          <p data-field="defensible" class={g.defensible ? 'good' : 'bad'}>
            {g.defensible ? t('baseline.defensible') : t('baseline.notDefensible')}
          </p>
          {g.reasons.length > 0 && (
            <ul class="reasons wrap" data-field="reasons">
              {g.reasons.map((reason) => (
                <li key={reason}>{reason}</li>
              ))}
            </ul>
          )}
          <dl class="facts">
            <dt>{t('baseline.check.length')}</dt>
            <dd>
              <Pass pass={g.checks.length.pass} />{' '}
              {t('baseline.days', { span: g.checks.length.spanDays, observed: num(g.checks.length.observedDays, 0), required: g.checks.length.requiredDays })}
            </dd>
            <dt>{t('baseline.check.coverage')}</dt>
            <dd>
              <Pass pass={g.checks.coverage.pass} /> {percent(g.checks.coverage.share)} / {percent(g.checks.coverage.required)}
            </dd>
            <dt>{t('baseline.check.fit')}</dt>
            <dd>
              <Pass pass={g.checks.fit.pass} />
            </dd>
            {g.checks.ranges && (
              <>
                <dt>{t('baseline.check.ranges')}</dt>
                <dd>
                  <Pass pass={g.checks.ranges.pass} /> {percent(g.checks.ranges.outsideShare)} / {percent(g.checks.ranges.allowedShare)}
                </dd>
              </>
            )}
            <dt>{t('baseline.check.terms')}</dt>
            <dd>
              <Pass pass={g.checks.droppedTerms.pass} /> {g.checks.droppedTerms.neededInReport.join(', ')}
            </dd>
          </dl>
        </section>
      </div>
      {r && <Report report={r} />}
    </>
  );
}

function Report({ report }: { report: NonNullable<Answer['report']> }) {
  const last = report.days.at(-1);
  return (
    <section class="card" aria-labelledby="report-heading">
      <h2 id="report-heading">{t('baseline.report', { from: report.from, to: addDays(report.to, -1) })}</h2>
      <dl class="facts">
        <dt>{t('baseline.expected')}</dt>
        <dd data-field="expected">{num(report.expectedKwh)} kWh</dd>
        <dt>{t('baseline.actual')}</dt>
        <dd data-field="actual">{num(report.actualKwh)} kWh</dd>
        <dt>{t('baseline.savings')}</dt>
        {report.savingsKwh === null ? (
          <dd data-field="withheld" class="bad">
            {t('baseline.withheld', { reason: report.savingsWithheld ?? '' })}
          </dd>
        ) : (
          <dd data-field="savings">
            {num(report.savingsKwh)} kWh ({percent(report.savingsPercent === null ? null : report.savingsPercent / 100, true)})
            {report.uncertainty && ` ± ${num(report.uncertainty.at68.kwh)} kWh (68 %), ± ${num(report.uncertainty.at90.kwh)} kWh (90 %)`}
            {report.significant === false && ` · ${t('baseline.notSignificant')}`}
          </dd>
        )}
        <dt>{t('baseline.cusum')}</dt>
        <dd data-field="cusum">{last ? `${num(last.cusumKwh)} kWh` : '–'}</dd>
        <dt>{t('analysis.coverage')}</dt>
        <dd>
          {percent(report.coverage)}
          {report.missingDays.length > 0 && ` · ${t('baseline.missingDays', { count: report.missingDays.length })}`}
        </dd>
      </dl>
    </section>
  );
}
