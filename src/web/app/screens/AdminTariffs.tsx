// Admin → tariffs: the dated versions per commodity (GET /api/energy/tariffs), each with its price outside the bands,
// its time-of-use bands, standing charge, carbon factor and demand charge; a new version (POST, with up to one band
// entered here; more through the API), and a version not yet in effect removed (DELETE; one in effect answers 409,
// shown). A back-dated version restates stored costs: the form says so before it is sent.
import { useState } from 'preact/hooks';
import { api, errorText } from '../api/client';
import type { Answer } from '../api/types';
import { Done, Field, Problem } from '../components/Field';
import { useApi } from '../components/useApi';
import { label, num, siteCurrency, t } from '../i18n';
import { AdminLinks } from '../components/adminLinks';
import { siteDay } from '../components/analysisParts';

const COMMODITIES = ['electricity', 'gas', 'water', 'heat'] as const;
const DAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun', 'holiday'] as const;
type Day = (typeof DAYS)[number];
const decimal = (text: string) => Number(text.trim().replace(',', '.'));

type Version = Answer<'/api/energy/tariffs'>['items'][number];
const newTariff = () => ({
  commodity: 'electricity' as (typeof COMMODITIES)[number],
  validFrom: siteDay(1),
  price: '',
  standing: '0',
  carbon: '0',
  note: '',
  band: false,
  bandName: 'peak',
  bandDays: ['mon', 'tue', 'wed', 'thu', 'fri'] as Day[],
  bandFrom: '08:00',
  bandTo: '20:00',
  bandPrice: '',
});
type TariffDraft = ReturnType<typeof newTariff>;
type FormProps = { form: TariffDraft; setForm: (form: TariffDraft) => void };

export default function AdminTariffs() {
  const list = useApi(() => api.GET('/api/energy/tariffs', { params: { query: { pageSize: 200 } } }));
  const [problem, setProblem] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const today = siteDay();
  const [form, setForm] = useState(newTariff);

  async function add(event: Event) {
    event.preventDefault();
    const numbers = [form.price, form.standing, form.carbon, ...(form.band ? [form.bandPrice] : [])].map(decimal);
    if (numbers.some((n) => !Number.isFinite(n) || n < 0) || !form.price.trim()) return setProblem(t('tariffs.badNumber'));
    if (form.band && form.bandDays.length === 0) return setProblem(t('tariffs.noDays'));
    const { data, error, response } = await api.POST('/api/energy/tariffs', {
      body: {
        commodity: form.commodity,
        validFrom: form.validFrom,
        price: decimal(form.price),
        standingChargePerDay: decimal(form.standing),
        carbonFactor: decimal(form.carbon),
        note: form.note,
        bands: form.band ? [{ name: form.bandName.trim(), days: form.bandDays, from: form.bandFrom, to: form.bandTo, price: decimal(form.bandPrice) }] : [],
      },
    });
    if (!data) {
      setDone(null);
      return setProblem(errorText(error, response.status));
    }
    setProblem(null);
    setDone(t('tariffs.added', { day: data.validFrom }));
    list.reload();
  }

  async function remove(id: number, validFrom: string) {
    const { error, response } = await api.DELETE('/api/energy/tariffs/{id}', { params: { path: { id } } });
    if (!response.ok) {
      setDone(null);
      return setProblem(errorText(error, response.status));
    }
    setProblem(null);
    setDone(t('tariffs.removed', { day: validFrom }));
    list.reload();
  }

  const versions = [...(list.data?.items ?? [])].sort((a, b) => a.commodity.localeCompare(b.commodity) || b.validFrom.localeCompare(a.validFrom));
  return (
    <section>
      <h1>{t('tariffs.title')}</h1>
      <AdminLinks here="/admin/tariffs" />
      <Problem text={problem ?? list.problem} />
      <Done text={done} />
      <div class="columns">
        <section class="card" aria-labelledby="versions-heading">
          <h2 id="versions-heading">{t('tariffs.versions')}</h2>
          {versions.length === 0 && <p class="muted">{t('tariffs.none')}</p>}
          <ul class="worklist">
            {versions.map((v) => (
              <TariffVersion key={v.id} v={v} today={today} onRemove={() => remove(v.id, v.validFrom)} />
            ))}
          </ul>
        </section>
        <TariffForm form={form} setForm={setForm} today={today} onSubmit={add} />
      </div>
      <Calorific today={today} />
    </section>
  );
}

/** One version: its price outside the bands, charges, note and bands; removable while not yet in effect. */
function TariffVersion({ v, today, onRemove }: { v: Version; today: string; onRemove: () => void }) {
  return (
    <li class="alert" data-tariff={v.id}>
      <div class="row">
        <strong>{label('meters.commodity', v.commodity)}</strong>
        <span>{t('tariffs.from', { day: v.validFrom })}</span>
        <span class={`badge ${v.validFrom > today ? 'info' : 'warning'}`}>{v.validFrom > today ? t('tariffs.future') : t('tariffs.inEffect')}</span>
        {v.validFrom > today && (
          <button type="button" class="link when" onClick={onRemove}>
            {t('tariffs.remove', { day: v.validFrom })}
          </button>
        )}
      </div>
      <dl class="facts">
        <dt>{t('tariffs.price')}</dt>
        <dd data-field="price">
          {num(v.price, 4)} {siteCurrency}
        </dd>
        <dt>{t('tariffs.standing')}</dt>
        <dd>
          {num(v.standingChargePerDay, 2)} {siteCurrency}
        </dd>
        <dt>{t('tariffs.carbon')}</dt>
        <dd>{num(v.carbonFactor, 3)} kg</dd>
        {v.demandChargePerKw > 0 && (
          <>
            <dt>{t('tariffs.demand')}</dt>
            <dd>
              {num(v.demandChargePerKw, 2)} {siteCurrency}/kW ({v.demandChargeBasis})
            </dd>
          </>
        )}
        {v.contractedPeakKw !== null && (
          <>
            <dt>{t('tariffs.contractedPeak')}</dt>
            <dd>{num(v.contractedPeakKw)} kW</dd>
          </>
        )}
        {v.note && (
          <>
            <dt>{t('tariffs.note')}</dt>
            <dd class="message">{v.note}</dd>
          </>
        )}
      </dl>
      {v.bands.length > 0 && (
        <table data-bands={v.id}>
          <caption class="sr-only">{t('tariffs.bandsOf', { day: v.validFrom })}</caption>
          <thead>
            <tr>
              <th scope="col">{t('tariffs.band')}</th>
              <th scope="col">{t('tariffs.days')}</th>
              <th scope="col">{t('tariffs.hours')}</th>
              <th scope="col" class="n">
                {t('tariffs.priceCol')}
              </th>
            </tr>
          </thead>
          <tbody>
            {v.bands.map((band) => (
              <tr key={band.name}>
                <th scope="row" class="wrap">
                  {band.name}
                </th>
                <td>{band.days.map((d) => label('tariffs.day', d)).join(', ')}</td>
                <td>
                  {band.from}–{band.to}
                </td>
                <td class="n">{num(band.price, 4)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </li>
  );
}

/** A new version: the utility, the day it applies from (restating when back-dated), its prices and one band. */
function TariffForm({ form, setForm, today, onSubmit }: FormProps & { today: string; onSubmit: (event: Event) => void }) {
  return (
    <form class="card stack" onSubmit={onSubmit} noValidate aria-labelledby="add-tariff-heading">
      <h2 id="add-tariff-heading">{t('tariffs.add')}</h2>
      <Field label={t('meters.commodity')}>
        {(id) => (
          <select id={id} value={form.commodity} onChange={(e) => setForm({ ...form, commodity: e.currentTarget.value as never, band: false })}>
            {COMMODITIES.map((c) => (
              <option key={c} value={c}>
                {label('meters.commodity', c)}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label={t('tariffs.validFrom')} hint={form.validFrom <= today ? t('tariffs.restates') : undefined}>
        {(id, hint) => (
          <input id={id} type="date" aria-describedby={hint} value={form.validFrom} onInput={(e) => setForm({ ...form, validFrom: e.currentTarget.value })} />
        )}
      </Field>
      <Field label={t('tariffs.priceIn', { currency: siteCurrency })}>
        {(id) => <input id={id} inputMode="decimal" value={form.price} onInput={(e) => setForm({ ...form, price: e.currentTarget.value })} />}
      </Field>
      <Field label={t('tariffs.standingIn', { currency: siteCurrency })}>
        {(id) => <input id={id} inputMode="decimal" value={form.standing} onInput={(e) => setForm({ ...form, standing: e.currentTarget.value })} />}
      </Field>
      <Field label={t('tariffs.carbon')}>
        {(id) => <input id={id} inputMode="decimal" value={form.carbon} onInput={(e) => setForm({ ...form, carbon: e.currentTarget.value })} />}
      </Field>
      <Field label={t('tariffs.note')}>{(id) => <input id={id} value={form.note} onInput={(e) => setForm({ ...form, note: e.currentTarget.value })} />}</Field>
      {form.commodity === 'electricity' && (
        <label class="check">
          <input type="checkbox" checked={form.band} onChange={(e) => setForm({ ...form, band: e.currentTarget.checked })} />
          {t('tariffs.withBand')}
        </label>
      )}
      {form.band && <BandFields form={form} setForm={setForm} />}
      <div class="actions">
        <button type="submit" class="primary">
          {t('tariffs.add')}
        </button>
      </div>
    </form>
  );
}

/** The one time-of-use band the form can enter (more through the API). */
function BandFields({ form, setForm }: FormProps) {
  return (
    <fieldset class="choice">
      <legend>{t('tariffs.band')}</legend>
      <Field label={t('tariffs.bandName')}>
        {(id) => <input id={id} value={form.bandName} onInput={(e) => setForm({ ...form, bandName: e.currentTarget.value })} />}
      </Field>
      <fieldset class="choice">
        <legend>{t('tariffs.days')}</legend>
        {DAYS.map((d) => (
          <label class="check" key={d}>
            <input
              type="checkbox"
              checked={form.bandDays.includes(d)}
              onChange={(e) => setForm({ ...form, bandDays: e.currentTarget.checked ? [...form.bandDays, d] : form.bandDays.filter((x) => x !== d) })}
            />
            {label('tariffs.day', d)}
          </label>
        ))}
      </fieldset>
      <Field label={t('tariffs.bandFrom')}>
        {(id) => <input id={id} type="time" value={form.bandFrom} onInput={(e) => setForm({ ...form, bandFrom: e.currentTarget.value })} />}
      </Field>
      <Field label={t('tariffs.bandTo')}>
        {(id) => <input id={id} type="time" value={form.bandTo} onInput={(e) => setForm({ ...form, bandTo: e.currentTarget.value })} />}
      </Field>
      <Field label={t('tariffs.bandPrice', { currency: siteCurrency })}>
        {(id) => <input id={id} inputMode="decimal" value={form.bandPrice} onInput={(e) => setForm({ ...form, bandPrice: e.currentTarget.value })} />}
      </Field>
    </fieldset>
  );
}

/** Gas calorific value versions (GET/POST/DELETE /api/energy/calorific-values): m³ × kWh/m³ × correction = kWh. */
function Calorific({ today }: { today: string }) {
  const list = useApi(() => api.GET('/api/energy/calorific-values', { params: { query: { pageSize: 200 } } }));
  const [problem, setProblem] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [form, setForm] = useState({ validFrom: siteDay(1), kwhPerM3: '', correctionFactor: '1', note: '' });

  async function add(event: Event) {
    event.preventDefault();
    const kwh = decimal(form.kwhPerM3);
    const factor = decimal(form.correctionFactor);
    if (!(kwh > 0) || !(factor > 0)) return setProblem(t('calorific.badNumber'));
    const { data, error, response } = await api.POST('/api/energy/calorific-values', {
      body: { validFrom: form.validFrom, kwhPerM3: kwh, correctionFactor: factor, ...(form.note.trim() ? { note: form.note.trim() } : {}) },
    });
    if (!data) {
      setDone(null);
      return setProblem(errorText(error, response.status));
    }
    setProblem(null);
    setDone(t('calorific.added', { day: data.validFrom }));
    list.reload();
  }

  async function remove(id: number, validFrom: string) {
    const { error, response } = await api.DELETE('/api/energy/calorific-values/{id}', { params: { path: { id } } });
    if (!response.ok) return setProblem(errorText(error, response.status));
    setProblem(null);
    setDone(t('calorific.removed', { day: validFrom }));
    list.reload();
  }

  const versions = [...(list.data?.items ?? [])].sort((a, b) => b.validFrom.localeCompare(a.validFrom));
  return (
    <section class="card calorific" aria-labelledby="calorific-heading">
      <h2 id="calorific-heading">{t('calorific.title')}</h2>
      <p class="muted">{t('calorific.intro')}</p>
      <Problem text={problem ?? list.problem} />
      <Done text={done} />
      <div class="columns">
        <div class="table-scroll">
          <table data-table="calorific">
            <thead>
              <tr>
                <th scope="col">{t('tariffs.validFrom')}</th>
                <th scope="col" class="n">
                  kWh/m³
                </th>
                <th scope="col" class="n">
                  {t('calorific.correction')}
                </th>
                <th scope="col">{t('tariffs.note')}</th>
                <th scope="col">
                  <span class="sr-only">{t('shedding.actions')}</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {versions.map((v) => (
                <tr key={v.id} data-calorific={v.id}>
                  <th scope="row">{v.validFrom}</th>
                  <td class="n" data-field="kwhPerM3">
                    {num(v.kwhPerM3, 3)}
                  </td>
                  <td class="n">{num(v.correctionFactor, 5)}</td>
                  <td class="wrap">{v.note}</td>
                  <td>
                    {v.validFrom > today && (
                      <button type="button" class="link" onClick={() => remove(v.id, v.validFrom)}>
                        {t('tariffs.remove', { day: v.validFrom })}
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {versions.length === 0 && list.data && <p class="muted">{t('calorific.none')}</p>}
        </div>
        <form class="stack" onSubmit={add} noValidate aria-labelledby="add-calorific-heading">
          <h3 id="add-calorific-heading">{t('calorific.add')}</h3>
          <Field label={t('calorific.validFrom')} hint={form.validFrom <= today ? t('calorific.restates') : undefined}>
            {(id, hint) => (
              <input
                id={id}
                type="date"
                aria-describedby={hint}
                value={form.validFrom}
                onInput={(e) => setForm({ ...form, validFrom: e.currentTarget.value })}
              />
            )}
          </Field>
          <Field label={t('calorific.kwhPerM3')}>
            {(id) => <input id={id} inputMode="decimal" value={form.kwhPerM3} onInput={(e) => setForm({ ...form, kwhPerM3: e.currentTarget.value })} />}
          </Field>
          <Field label={t('calorific.correction')}>
            {(id) => (
              <input id={id} inputMode="decimal" value={form.correctionFactor} onInput={(e) => setForm({ ...form, correctionFactor: e.currentTarget.value })} />
            )}
          </Field>
          <Field label={t('calorific.note')}>
            {(id) => <input id={id} value={form.note} onInput={(e) => setForm({ ...form, note: e.currentTarget.value })} />}
          </Field>
          <div class="actions">
            <button type="submit" class="primary">
              {t('calorific.add')}
            </button>
          </div>
        </form>
      </div>
    </section>
  );
}
