// The desk → tariffs and demand: every charge the engine prices, per utility, from the version in effect today and
// those to come (GET /api/energy/tariffs): the price outside the bands, each time-of-use band, the standing charge, the
// demand-charge rate with its basis and minimum, the contracted peak, the feed-in price and the carbon factor; this
// month's demand charge (GET /api/analysis/demand-charges) with why it is zero when it is (no rate in the version in
// effect on the month's first day) and whether peak warnings are on (a contracted peak set). An admin sets the demand
// rate and contracted peak from a day: a new electricity version with the current one's other charges (POST
// /api/energy/tariffs; from a past day it restates the stored costs, as the form says before it is sent). Below them,
// the tenants' and meters' own tariffs (DeskOwnTariffs).
import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import { api, errorText } from '../api/client';
import { Done, Field, Problem } from '../components/Field';
import { useApi } from '../components/useApi';
import { DeskLinks, decimal, cents, type Got } from '../components/deskLinks';
import { siteDay } from '../components/analysisParts';
import { dateTime, label, num, siteCurrency, t } from '../i18n';
import { can } from '../state/session';
import { OwnTariffs } from './DeskOwnTariffs';

type Version = Got<'/api/energy/tariffs'>['items'][number];
const COMMODITIES = ['electricity', 'gas', 'water', 'heat'] as const;

function Charges({ v }: { v: Version }) {
  return (
    <dl class="facts" data-version={v.id}>
      <dt>{t('desk.tariff.price')}</dt>
      <dd>
        {num(v.price, 4)} {siteCurrency}/kWh
      </dd>
      {v.bands.map((b) => (
        <Fragment key={b.name}>
          <dt>{t('desk.tariff.band', { name: b.name })}</dt>
          <dd>
            {num(b.price, 4)} {siteCurrency}/kWh · {b.days.map((d) => label('tariffs.day', d)).join(', ')} · {b.from}–{b.to}
          </dd>
        </Fragment>
      ))}
      <dt>{t('desk.tariff.standing')}</dt>
      <dd>{cents(v.standingChargePerDay, siteCurrency)}</dd>
      {v.commodity === 'electricity' && (
        <>
          <dt>{t('desk.tariff.demandRate')}</dt>
          <dd data-field="demand-rate" class={v.demandChargePerKw > 0 ? undefined : 'bad'}>
            {v.demandChargePerKw > 0
              ? t('desk.tariff.rateIs', {
                  rate: `${num(v.demandChargePerKw, 2)} ${siteCurrency}/kW`,
                  basis: label('desk.basis', v.demandChargeBasis),
                  min: num(v.demandChargeMinimumKw, 1),
                })
              : t('desk.tariff.noRate')}
          </dd>
          <dt>{t('desk.tariff.contractedPeak')}</dt>
          <dd data-field="contracted-peak">{v.contractedPeakKw === null ? t('desk.tariff.noPeak') : `${num(v.contractedPeakKw, 1)} kW`}</dd>
          <dt>{t('desk.tariff.feedIn')}</dt>
          <dd>
            {num(v.feedInPrice, 4)} {siteCurrency}/kWh
          </dd>
        </>
      )}
      <dt>{t('desk.tariff.carbon')}</dt>
      <dd>{num(v.carbonFactor, 3)} kg/kWh</dd>
    </dl>
  );
}

function DemandForm({ current, onSaved }: { current: Version | undefined; onSaved: (text: string) => void }) {
  const today = siteDay();
  const [form, setForm] = useState({
    from: `${today.slice(0, 7)}-01`,
    rate: current && current.demandChargePerKw > 0 ? String(current.demandChargePerKw) : '',
    basis: (current?.demandChargeBasis ?? 'monthly_peak') as 'monthly_peak' | 'rolling_12_month_average',
    minimum: String(current?.demandChargeMinimumKw ?? 0),
    peak: current?.contractedPeakKw == null ? '' : String(current.contractedPeakKw),
  });
  const [problem, setProblem] = useState<string | null>(null);
  async function save(event: Event) {
    event.preventDefault();
    if (!current) return setProblem(t('desk.tariff.noVersion'));
    const rate = decimal(form.rate);
    const minimum = form.minimum.trim() === '' ? 0 : decimal(form.minimum);
    const peak = form.peak.trim() === '' ? null : decimal(form.peak);
    if (!Number.isFinite(rate) || rate < 0) return setProblem(t('desk.tariff.badRate'));
    if (!Number.isFinite(minimum) || minimum < 0) return setProblem(t('desk.tariff.badMinimum'));
    if (peak !== null && (!Number.isFinite(peak) || peak <= 0)) return setProblem(t('desk.tariff.badPeak'));
    const { data, error, response } = await api.POST('/api/energy/tariffs', {
      body: {
        commodity: 'electricity',
        validFrom: form.from,
        price: current.price,
        bands: current.bands,
        holidays: current.holidays,
        standingChargePerDay: current.standingChargePerDay,
        carbonFactor: current.carbonFactor,
        feedInPrice: current.feedInPrice,
        note: t('desk.tariff.note'),
        demandChargePerKw: rate,
        demandChargeBasis: form.basis,
        demandChargeMinimumKw: minimum,
        contractedPeakKw: peak,
      },
    });
    if (!data) return setProblem(errorText(error, response.status));
    setProblem(null);
    onSaved(t('desk.tariff.saved', { day: data.validFrom }));
  }
  return (
    <form class="card stack" onSubmit={save} noValidate aria-labelledby="demand-form-heading">
      <h2 id="demand-form-heading">{t('desk.tariff.setDemand')}</h2>
      <p class="muted">{t('desk.tariff.setDemandIntro')}</p>
      <Problem text={problem} />
      <Field label={t('desk.tariff.from')} hint={form.from <= today ? t('tariffs.restates') : undefined}>
        {(id, hint) => (
          <input id={id} type="date" aria-describedby={hint} value={form.from} onInput={(e) => setForm({ ...form, from: e.currentTarget.value })} />
        )}
      </Field>
      <Field label={t('desk.tariff.rateIn', { currency: siteCurrency })}>
        {(id) => <input id={id} inputMode="decimal" value={form.rate} onInput={(e) => setForm({ ...form, rate: e.currentTarget.value })} />}
      </Field>
      <Field label={t('desk.tariff.basis')}>
        {(id) => (
          <select id={id} value={form.basis} onChange={(e) => setForm({ ...form, basis: e.currentTarget.value as never })}>
            <option value="monthly_peak">{t('desk.basis.monthly_peak')}</option>
            <option value="rolling_12_month_average">{t('desk.basis.rolling_12_month_average')}</option>
          </select>
        )}
      </Field>
      <Field label={t('desk.tariff.minimum')}>
        {(id) => <input id={id} inputMode="decimal" value={form.minimum} onInput={(e) => setForm({ ...form, minimum: e.currentTarget.value })} />}
      </Field>
      <Field label={t('desk.tariff.peakIn')} hint={t('desk.tariff.peakHint')}>
        {(id, hint) => (
          <input id={id} inputMode="decimal" aria-describedby={hint} value={form.peak} onInput={(e) => setForm({ ...form, peak: e.currentTarget.value })} />
        )}
      </Field>
      <button type="submit">{t('desk.tariff.save')}</button>
    </form>
  );
}

export default function DeskTariffs() {
  const tariffs = useApi(() => api.GET('/api/energy/tariffs', { params: { query: { pageSize: 200 } } }));
  const [month, setMonth] = useState(siteDay().slice(0, 7));
  const demand = useApi(() => api.GET('/api/analysis/demand-charges', { params: { query: /^\d{4}-\d{2}$/.test(month) ? { month } : {} } }), [month]);
  const warnings = useApi(() => api.GET('/api/analysis/peak-warnings'));
  const [done, setDone] = useState<string | null>(null);
  const today = siteDay();
  const versions = tariffs.data?.items ?? [];
  const inEffect = (c: string) => versions.filter((v) => v.commodity === c && v.validFrom <= today).sort((a, b) => b.validFrom.localeCompare(a.validFrom))[0];
  const upcoming = versions.filter((v) => v.validFrom > today).sort((a, b) => a.validFrom.localeCompare(b.validFrom));
  const d = demand.data;
  const electricity = inEffect('electricity');
  return (
    <section class="analysis desk">
      <h1>{t('desk.tariffs.title')}</h1>
      <DeskLinks here="/billing/tariffs" />
      <Problem text={tariffs.problem ?? demand.problem ?? warnings.problem} />
      <Done text={done} />
      {d && (
        <section class="card" aria-labelledby="demand-heading" data-demand={d.month}>
          <h2 id="demand-heading">{t('desk.tariff.demandOf', { month: d.month })}</h2>
          <div class="filters">
            <Field label={t('desk.tariff.month')}>
              {(id) => <input id={id} type="month" value={month} onChange={(e) => setMonth(e.currentTarget.value)} />}
            </Field>
          </div>
          <dl class="facts">
            <dt>{t('desk.tariff.peak')}</dt>
            <dd data-field="peak">{d.peak ? `${num(d.peak.kw, 1)} kW` : t('desk.tariff.noPeakData')}</dd>
            <dt>{t('desk.tariff.billedKw')}</dt>
            <dd data-field="billed-kw">{num(d.billedKw, 1)} kW</dd>
            <dt>{t('desk.tariff.demandCharge')}</dt>
            <dd data-field="demand-charge">{cents(d.demandCharge, d.currency)}</dd>
          </dl>
          {d.version.demandChargePerKw === 0 ? (
            <p class="bad" data-field="why">
              {t('desk.tariff.whyZero', { day: d.version.validFrom })}
            </p>
          ) : (
            <p class="muted" data-field="why">
              {t('desk.tariff.how', { rate: `${num(d.version.demandChargePerKw, 2)} ${d.currency}/kW`, day: d.version.validFrom })}
            </p>
          )}
          {electricity && electricity.contractedPeakKw === null && <p class="muted">{t('desk.tariff.noWarnings')}</p>}
          {d.peak && electricity && electricity.contractedPeakKw !== null && d.peak.kw > electricity.contractedPeakKw && (
            <p class="bad" data-field="over-peak">
              {t('desk.tariff.overPeak', { month: d.month, peak: num(d.peak.kw, 1), limit: num(electricity.contractedPeakKw, 1) })}
            </p>
          )}
          {warnings.data && (
            <>
              <h3>{t('desk.tariff.warnings')}</h3>
              {warnings.data.items.length === 0 ? (
                <p class="muted" data-field="warnings">
                  {t('desk.tariff.noWarningsYet')}
                </p>
              ) : (
                <ul data-field="warnings">
                  {warnings.data.items.slice(0, 5).map((w) => (
                    <li key={w.windowStart}>
                      {t('desk.tariff.warning', {
                        at: dateTime(w.warnedAt),
                        projected: num(w.projectedKw, 1),
                        limit: num(w.limitKw, 1),
                        outcome: w.outcome,
                      })}
                    </li>
                  ))}
                </ul>
              )}
            </>
          )}
        </section>
      )}
      <div class="columns spaced">
        <section class="card" aria-labelledby="charges-heading">
          <h2 id="charges-heading">{t('desk.tariff.inEffect')}</h2>
          {tariffs.data && versions.length === 0 && <p class="muted">{t('tariffs.none')}</p>}
          {COMMODITIES.map((c) => {
            const v = inEffect(c);
            return v ? (
              <article key={c} data-commodity={c}>
                <h3>
                  {label('meters.commodity', c)} · {t('tariffs.from', { day: v.validFrom })}
                </h3>
                <Charges v={v} />
              </article>
            ) : null;
          })}
          {upcoming.length > 0 && <h3>{t('desk.tariff.upcoming')}</h3>}
          {upcoming.map((v) => (
            <article key={v.id}>
              <h4>
                {label('meters.commodity', v.commodity)} · {t('tariffs.from', { day: v.validFrom })}
              </h4>
              <Charges v={v} />
            </article>
          ))}
          <p class="muted">{t('desk.tariff.editElsewhere')}</p>
        </section>
        {can('admin') ? (
          tariffs.data && (
            <DemandForm
              current={electricity}
              onSaved={(text) => {
                setDone(text);
                tariffs.reload();
                demand.reload();
              }}
            />
          )
        ) : (
          <p class="muted">{t('desk.adminSetsUp')}</p>
        )}
      </div>
      <OwnTariffs />
    </section>
  );
}
