// The desk → measures: the register of energy conservation measures (GET /api/billing/measures), an admin registers
// one on a meter, an area or the site with its baseline period (POST; a baseline outside ASHRAE Guideline 14 answers
// 400 naming each failed limit, shown); the site's savings report (GET …/measures/savings): each measure's avoided
// energy and cost ± its 90 % uncertainty and payback, or why it cannot be evaluated, and the total; a measure's own
// savings (GET …/:id/savings) with its baseline fit, expected, adjusted and measured energy.
import { useState } from 'preact/hooks';
import { api, errorText } from '../api/client';
import { Done, Field, Problem } from '../components/Field';
import { useApi } from '../components/useApi';
import { DeskLinks, decimal, type Got, lastDay, nextDay } from '../components/deskLinks';
import { money, num, siteCurrency, t } from '../i18n';
import { can } from '../state/session';

type Savings = Got<'/api/billing/measures/{id}/savings'>;
type Stats = { cvRmsePercent?: number; nmbePercent?: number; r2?: number; n?: number };

function MeasureSavings({ savings }: { savings: Savings }) {
  const r = savings.report;
  const stats = (savings.baseline.statistics ?? {}) as Stats;
  return (
    <dl class="facts" data-savings={savings.measure.id}>
      <dt>{t('desk.measure.baseline')}</dt>
      <dd>
        {savings.baseline.from} – {lastDay(savings.baseline.to)} · CV(RMSE) {num(stats.cvRmsePercent, 1)} % · NMBE {num(stats.nmbePercent, 2)} % · R²{' '}
        {num(stats.r2, 3)}
      </dd>
      <dt>{t('desk.measure.reporting')}</dt>
      <dd>
        {r.from} – {lastDay(r.to)} · {t('desk.measure.days', { n: r.days, missing: r.missingDays })}
      </dd>
      <dt>{t('desk.measure.expected')}</dt>
      <dd>{num(r.adjustedBaselineKwh)} kWh</dd>
      <dt>{t('desk.measure.actual')}</dt>
      <dd>{num(r.actualKwh)} kWh</dd>
      <dt>{t('desk.measure.avoided')}</dt>
      <dd data-field="avoided">
        {num(r.avoidedKwh)} ± {num(r.uncertaintyKwh)} kWh · {money(r.avoidedCost, siteCurrency)} ± {money(r.uncertaintyCost, siteCurrency)}
      </dd>
      <dt>{t('desk.measure.payback')}</dt>
      <dd>{r.paybackYears === null ? '–' : t('desk.measure.years', { n: num(r.paybackYears, 1) })}</dd>
      {r.daysOutsideBaselineConditions > 0 && (
        <>
          <dt>{t('desk.measure.outside')}</dt>
          <dd class="bad">{t('desk.measure.outsideDays', { n: r.daysOutsideBaselineConditions })}</dd>
        </>
      )}
    </dl>
  );
}

function MeasureForm({ onAdded }: { onAdded: (name: string) => void }) {
  const meters = useApi(() => api.GET('/api/meters', { params: { query: { pageSize: 200 } } }));
  const [form, setForm] = useState({ name: '', target: 'site', installedOn: '', cost: '', baseFrom: '', baseLast: '' });
  const [problem, setProblem] = useState<string | null>(null);
  async function add(event: Event) {
    event.preventDefault();
    if (!form.name.trim()) return setProblem(t('desk.measure.needName'));
    if (!form.installedOn || !form.baseFrom || !form.baseLast) return setProblem(t('desk.measure.needDays'));
    const cost = form.cost.trim() === '' ? 0 : decimal(form.cost);
    if (!Number.isFinite(cost) || cost < 0) return setProblem(t('desk.measure.badCost'));
    const [kind, value] = form.target.split(':');
    const { data, error, response } = await api.POST('/api/billing/measures', {
      body: {
        name: form.name.trim(),
        ...(kind === 'meter' ? { meterId: Number(value) } : kind === 'area' ? { area: value } : {}),
        installedOn: form.installedOn,
        cost,
        baselineFrom: form.baseFrom,
        baselineTo: nextDay(form.baseLast),
      },
    });
    if (!data) return setProblem(errorText(error, response.status));
    setProblem(null);
    setForm({ ...form, name: '' });
    onAdded(data.name);
  }
  const list = (meters.data?.items ?? []).filter((m) => m.role === 'import');
  const areas = [...new Set(list.map((m) => m.area).filter((a): a is string => !!a))].sort();
  return (
    <form class="card stack" onSubmit={add} noValidate aria-labelledby="add-measure-heading">
      <h2 id="add-measure-heading">{t('desk.measure.add')}</h2>
      <Problem text={problem ?? meters.problem} />
      <Field label={t('desk.measure.name')}>
        {(id) => <input id={id} value={form.name} onInput={(e) => setForm({ ...form, name: e.currentTarget.value })} />}
      </Field>
      <Field label={t('desk.measure.on')} hint={t('desk.measure.onHint')}>
        {(id, hint) => (
          <select id={id} aria-describedby={hint} value={form.target} onChange={(e) => setForm({ ...form, target: e.currentTarget.value })}>
            <option value="site">{t('desk.scope.site')}</option>
            {areas.map((a) => (
              <option key={`a-${a}`} value={`area:${a}`}>
                {t('desk.scope.area')} {a}
              </option>
            ))}
            {list.map((m) => (
              <option key={m.id} value={`meter:${m.id}`}>
                {m.name}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label={t('desk.measure.installedOn')}>
        {(id) => <input id={id} type="date" value={form.installedOn} onInput={(e) => setForm({ ...form, installedOn: e.currentTarget.value })} />}
      </Field>
      <Field label={t('desk.measure.costIn', { currency: siteCurrency })}>
        {(id) => <input id={id} inputMode="decimal" value={form.cost} onInput={(e) => setForm({ ...form, cost: e.currentTarget.value })} />}
      </Field>
      <Field label={t('desk.measure.baseFrom')}>
        {(id) => <input id={id} type="date" value={form.baseFrom} onInput={(e) => setForm({ ...form, baseFrom: e.currentTarget.value })} />}
      </Field>
      <Field label={t('desk.measure.baseLast')} hint={t('desk.measure.baseHint')}>
        {(id, hint) => (
          <input id={id} type="date" aria-describedby={hint} value={form.baseLast} onInput={(e) => setForm({ ...form, baseLast: e.currentTarget.value })} />
        )}
      </Field>
      <button type="submit">{t('desk.measure.addButton')}</button>
    </form>
  );
}

/** A non-routine adjustment (admin): energy the baseline does not know about, added over a period with the reason. */
function AdjustmentForm({ measureId, name, onAdded }: { measureId: number; name: string; onAdded: () => void }) {
  const [form, setForm] = useState({ from: '', last: '', kwh: '', reason: '' });
  const [problem, setProblem] = useState<string | null>(null);
  async function add(event: Event) {
    event.preventDefault();
    const kwh = decimal(form.kwh);
    if (!form.from || !form.last) return setProblem(t('desk.period.needDays'));
    if (!Number.isFinite(kwh)) return setProblem(t('desk.adjust.badKwh'));
    const { data, error, response } = await api.POST('/api/billing/measures/{id}/adjustments', {
      params: { path: { id: measureId } },
      body: { from: form.from, to: nextDay(form.last), kwh, reason: form.reason.trim() },
    });
    if (!data) return setProblem(errorText(error, response.status));
    setProblem(null);
    setForm({ from: '', last: '', kwh: '', reason: '' });
    onAdded();
  }
  return (
    <form class="stack" onSubmit={add} noValidate aria-label={t('desk.adjust.of', { name })} data-adjust={measureId}>
      <h3>{t('desk.adjust.title')}</h3>
      <Problem text={problem} />
      <Field label={t('desk.period.from')}>
        {(id) => <input id={id} type="date" value={form.from} onInput={(e) => setForm({ ...form, from: e.currentTarget.value })} />}
      </Field>
      <Field label={t('desk.period.last')}>
        {(id) => <input id={id} type="date" value={form.last} onInput={(e) => setForm({ ...form, last: e.currentTarget.value })} />}
      </Field>
      <Field label={t('desk.adjust.kwh')} hint={t('desk.adjust.kwhHint')}>
        {(id, hint) => (
          <input id={id} inputMode="decimal" aria-describedby={hint} value={form.kwh} onInput={(e) => setForm({ ...form, kwh: e.currentTarget.value })} />
        )}
      </Field>
      <Field label={t('desk.adjust.reason')}>
        {(id) => <input id={id} value={form.reason} onInput={(e) => setForm({ ...form, reason: e.currentTarget.value })} />}
      </Field>
      <button type="submit">{t('desk.adjust.add')}</button>
    </form>
  );
}

function MeasureRow({ item, currency, onChanged }: { item: Got<'/api/billing/measures/savings'>['items'][number]; currency: string; onChanged: () => void }) {
  const [savings, setSavings] = useState<Savings | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  async function open() {
    const { data, error, response } = await api.GET('/api/billing/measures/{id}/savings', { params: { path: { id: item.id }, query: {} } });
    if (!data) return setProblem(errorText(error, response.status));
    setSavings(data);
  }
  return (
    <li class="alert" data-measure={item.id}>
      <div class="row">
        <strong>{item.name}</strong>
        <span class="badge info">{t('desk.measure.option', { option: item.option })}</span>
        {item.error ? (
          <span class="bad" data-field="error">
            {t('desk.measure.notEvaluated', { reason: item.error })}
          </span>
        ) : (
          <span data-field="avoided">
            {t('desk.measure.avoidedShort', {
              kwh: num(item.avoidedKwh),
              u: num(item.uncertaintyKwh),
              cost: money(item.avoidedCost, currency),
            })}
          </span>
        )}
        {!savings && !item.error && (
          <button type="button" class="link when" onClick={open}>
            {t('desk.measure.showSavings', { name: item.name })}
          </button>
        )}
      </div>
      <Problem text={problem} />
      {savings && <MeasureSavings savings={savings} />}
      {savings && savings.measure.adjustments.length > 0 && (
        <ul data-field="adjustments">
          {savings.measure.adjustments.map((a) => (
            <li key={`${a.from}-${a.to}-${a.reason}`}>{t('desk.adjust.line', { from: a.from, last: lastDay(a.to), kwh: num(a.kwh), reason: a.reason })}</li>
          ))}
        </ul>
      )}
      {savings && can('admin') && (
        <AdjustmentForm
          measureId={item.id}
          name={item.name}
          onAdded={() => {
            open();
            onChanged();
          }}
        />
      )}
    </li>
  );
}

export default function DeskMeasures() {
  const savings = useApi(() => api.GET('/api/billing/measures/savings', { params: { query: {} } }));
  const [done, setDone] = useState<string | null>(null);
  const total = savings.data?.total;
  return (
    <section class="analysis desk">
      <h1>{t('desk.measures.title')}</h1>
      <DeskLinks here="/billing/measures" />
      <Problem text={savings.problem} />
      <Done text={done} />
      <div class="columns">
        <section class="card" aria-labelledby="measures-heading">
          <h2 id="measures-heading">{t('desk.measures.register')}</h2>
          {!savings.data && !savings.problem && (
            <p class="muted" aria-busy="true">
              {t('app.loading')}
            </p>
          )}
          {savings.data && savings.data.items.length === 0 && <p class="muted">{t('desk.measures.none')}</p>}
          <ul class="worklist">
            {(savings.data?.items ?? []).map((item) => (
              <MeasureRow key={item.id} item={item} currency={siteCurrency} onChanged={savings.reload} />
            ))}
          </ul>
          {total && total.measures > 0 && (
            <p data-field="total">
              <strong>
                {t('desk.measures.total', {
                  n: total.measures,
                  kwh: num(total.avoidedKwh),
                  u: num(total.uncertaintyKwh),
                  cost: money(total.avoidedCost, siteCurrency),
                })}
              </strong>
            </p>
          )}
        </section>
        {can('admin') ? (
          <MeasureForm
            onAdded={(name) => {
              setDone(t('desk.measure.added', { name }));
              savings.reload();
            }}
          />
        ) : (
          <p class="muted">{t('desk.adminSetsUp')}</p>
        )}
      </div>
    </section>
  );
}
