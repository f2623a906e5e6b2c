// The desk → tariffs → own tariffs (issue 51): a tenant or a meter may have its own dated tariff (GET/POST/DELETE
// /api/billing/tariffs); the site's is the default. This section lists the versions with every charge they price
// (the price outside the bands, each time-of-use band, a tenant's own standing charge), shows which tariff prices each
// tenant's share of each of its meters today (its own, else the meter's, else the site's: the order the engine uses),
// and lets an admin add a version from a day — from a past day it restates: issued statements stay as issued, the next
// run of an issued period is a restatement priced by it, as the form says before it is sent. Viewers read.
import { useState } from 'preact/hooks';
import { api, errorText } from '../api/client';
import { Done, Field, Problem } from '../components/Field';
import { useApi } from '../components/useApi';
import { decimal, cents, type Got } from '../components/deskLinks';
import { siteDay } from '../components/analysisParts';
import { label, type Key, num, siteCurrency, t } from '../i18n';
import { can } from '../state/session';

type Own = Got<'/api/billing/tariffs'>['items'][number];
type Tenant = Got<'/api/billing/tenants'>['items'][number];
type Meter = Got<'/api/meters'>['items'][number];
const UTILITIES = ['electricity', 'gas', 'water', 'heat'] as const;
const DAY_SETS = { weekdays: ['mon', 'tue', 'wed', 'thu', 'fri'], weekend: ['sat', 'sun'], all: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] } as const;
type DaySet = keyof typeof DAY_SETS;
const unitOf = (commodity: string) => (commodity === 'water' ? 'm³' : 'kWh');

/** The version of a party in force on a day (the latest validFrom not after it). */
function inForce(versions: Own[], party: { tenantId: number } | { meterId: number }, commodity: string, day: string): Own | undefined {
  return versions
    .filter((v) => ('tenantId' in party ? v.tenantId === party.tenantId : v.meterId === party.meterId) && v.commodity === commodity && v.validFrom <= day)
    .sort((a, b) => b.validFrom.localeCompare(a.validFrom))[0];
}

function Charges({ v }: { v: Own }) {
  const unit = unitOf(v.commodity);
  return (
    <>
      {num(v.price, 4)} {siteCurrency}/{unit}
      {v.bands.map((b) => (
        <span key={b.name}>
          {' · '}
          {t('desk.tariff.band', { name: b.name })} {num(b.price, 4)} {siteCurrency}/{unit} ({b.days.map((d) => t(`tariffs.day.${d}` as Key)).join(', ')}{' '}
          {b.from}–{b.to})
        </span>
      ))}
      {v.standingChargePerDay > 0 && (
        <span>
          {' · '}
          {t('desk.own.standingIs', { money: cents(v.standingChargePerDay, siteCurrency) })}
        </span>
      )}
    </>
  );
}

type BandForm = { name: string; days: DaySet; from: string; to: string; price: string };

/** The time-of-use bands of an electricity tariff, each a named day set and hours with its price. */
function BandsFieldset({ bands, setBands }: { bands: BandForm[]; setBands: (bands: BandForm[]) => void }) {
  return (
    <fieldset class="stack">
      <legend>{t('desk.own.bands')}</legend>
      {bands.map((band, i) => {
        const edit = (change: Partial<BandForm>) => setBands(bands.map((b, j) => (j === i ? { ...b, ...change } : b)));
        return (
          <div class="line-row" key={i}>
            <input aria-label={t('desk.own.bandName', { n: i + 1 })} size={8} value={band.name} onInput={(e) => edit({ name: e.currentTarget.value })} />
            <select aria-label={t('desk.own.bandDays', { n: i + 1 })} value={band.days} onChange={(e) => edit({ days: e.currentTarget.value as DaySet })}>
              {(Object.keys(DAY_SETS) as DaySet[]).map((set) => (
                <option key={set} value={set}>
                  {label('desk.own.days', set)}
                </option>
              ))}
            </select>
            <input aria-label={t('desk.own.bandFrom', { n: i + 1 })} type="time" value={band.from} onInput={(e) => edit({ from: e.currentTarget.value })} />
            <input aria-label={t('desk.own.bandTo', { n: i + 1 })} type="time" value={band.to} onInput={(e) => edit({ to: e.currentTarget.value })} />
            <input
              aria-label={t('desk.own.bandPrice', { n: i + 1, currency: siteCurrency })}
              inputMode="decimal"
              size={7}
              value={band.price}
              onInput={(e) => edit({ price: e.currentTarget.value })}
            />
            <button type="button" class="ghost" onClick={() => setBands(bands.filter((_, j) => j !== i))}>
              {t('desk.own.removeBand', { n: i + 1 })}
            </button>
          </div>
        );
      })}
      <button type="button" class="ghost" onClick={() => setBands([...bands, { name: '', days: 'weekdays', from: '08:00', to: '20:00', price: '' }])}>
        {t('desk.own.addBand')}
      </button>
    </fieldset>
  );
}

/** Whose tariff: a tenant or a meter. */
function PartySelect(props: { party: string; onParty: (party: string) => void; tenants: Tenant[]; meters: Meter[] }) {
  const { party, onParty, tenants, meters } = props;
  return (
    <Field label={t('desk.own.for')}>
      {(id) => (
        <select id={id} value={party} onChange={(e) => onParty(e.currentTarget.value)}>
          <optgroup label={t('desk.own.tenants')}>
            {tenants.map((x) => (
              <option key={x.id} value={`t${x.id}`}>
                {x.name}
              </option>
            ))}
          </optgroup>
          <optgroup label={t('desk.own.meters')}>
            {meters.map((m) => (
              <option key={m.id} value={`m${m.id}`}>
                {m.name}
              </option>
            ))}
          </optgroup>
        </select>
      )}
    </Field>
  );
}

function OwnForm({ tenants, meters, onSaved }: { tenants: Tenant[]; meters: Meter[]; onSaved: (text: string) => void }) {
  const today = siteDay();
  const [form, setForm] = useState({
    party: tenants[0] ? `t${tenants[0].id}` : meters[0] ? `m${meters[0].id}` : '',
    commodity: 'electricity',
    from: today,
    price: '',
    standing: '',
    note: '',
  });
  const [bands, setBands] = useState<BandForm[]>([]);
  const [problem, setProblem] = useState<string | null>(null);
  const isTenant = form.party.startsWith('t');
  const meter = isTenant ? undefined : meters.find((m) => `m${m.id}` === form.party);
  const commodity = meter ? meter.commodity : form.commodity;
  async function save(event: Event) {
    event.preventDefault();
    if (!form.party) return setProblem(t('desk.own.needParty'));
    if (!form.from) return setProblem(t('desk.own.needDay'));
    const price = decimal(form.price);
    if (!Number.isFinite(price) || price < 0) return setProblem(t('desk.own.badPrice'));
    const standing = form.standing.trim() === '' ? 0 : decimal(form.standing);
    if (!Number.isFinite(standing) || standing < 0) return setProblem(t('desk.own.badStanding'));
    const priced = bands.map((b) => ({ name: b.name.trim(), days: [...DAY_SETS[b.days]], from: b.from, to: b.to, price: decimal(b.price) }));
    if (priced.some((b) => !b.name || !b.from || !b.to || !Number.isFinite(b.price) || b.price < 0)) return setProblem(t('desk.own.badBand'));
    const id = Number(form.party.slice(1));
    const { data, error, response } = await api.POST('/api/billing/tariffs', {
      body: {
        ...(isTenant ? { tenantId: id } : { meterId: id }),
        commodity: commodity as (typeof UTILITIES)[number],
        validFrom: form.from,
        price,
        ...(priced.length ? { bands: priced } : {}),
        ...(isTenant && standing > 0 ? { standingChargePerDay: standing } : {}),
        ...(form.note.trim() ? { note: form.note.trim() } : {}),
      },
    });
    if (!data) return setProblem(errorText(error, response.status));
    setProblem(null);
    setBands([]);
    setForm({ ...form, price: '', standing: '', note: '' });
    onSaved(t(data.validFrom <= today ? 'desk.own.savedRestates' : 'desk.own.saved', { day: data.validFrom }));
  }
  return (
    <form class="card stack" onSubmit={save} noValidate aria-labelledby="own-form-heading">
      <h2 id="own-form-heading">{t('desk.own.add')}</h2>
      <Problem text={problem} />
      <PartySelect party={form.party} onParty={(party) => setForm({ ...form, party })} tenants={tenants} meters={meters} />
      {isTenant ? (
        <Field label={t('desk.own.utility')}>
          {(id) => (
            <select id={id} value={form.commodity} onChange={(e) => setForm({ ...form, commodity: e.currentTarget.value })}>
              {UTILITIES.map((c) => (
                <option key={c} value={c}>
                  {label('meters.commodity', c)}
                </option>
              ))}
            </select>
          )}
        </Field>
      ) : (
        <p class="muted">{t('desk.own.meterUtility', { utility: t(`meters.commodity.${commodity}` as Key) })}</p>
      )}
      <Field label={t('desk.own.from')} hint={form.from && form.from <= today ? t('desk.own.restates') : undefined}>
        {(id, hint) => (
          <input id={id} type="date" aria-describedby={hint} value={form.from} onInput={(e) => setForm({ ...form, from: e.currentTarget.value })} />
        )}
      </Field>
      <Field label={t('desk.own.priceIn', { currency: siteCurrency, unit: unitOf(commodity) })}>
        {(id) => <input id={id} inputMode="decimal" value={form.price} onInput={(e) => setForm({ ...form, price: e.currentTarget.value })} />}
      </Field>
      {commodity === 'electricity' && <BandsFieldset bands={bands} setBands={setBands} />}
      {isTenant && (
        <Field label={t('desk.own.standingIn', { currency: siteCurrency })} hint={t('desk.own.standingHint')}>
          {(id, hint) => (
            <input
              id={id}
              inputMode="decimal"
              aria-describedby={hint}
              value={form.standing}
              onInput={(e) => setForm({ ...form, standing: e.currentTarget.value })}
            />
          )}
        </Field>
      )}
      <Field label={t('desk.own.note')}>{(id) => <input id={id} value={form.note} onInput={(e) => setForm({ ...form, note: e.currentTarget.value })} />}</Field>
      <button type="submit">{t('desk.own.save')}</button>
    </form>
  );
}

export function OwnTariffs() {
  const own = useApi(() => api.GET('/api/billing/tariffs'));
  const tenants = useApi(() => api.GET('/api/billing/tenants'));
  const allocations = useApi(() => api.GET('/api/billing/allocations'));
  const meters = useApi(() => api.GET('/api/meters', { params: { query: { pageSize: 200 } } }));
  const [done, setDone] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const today = siteDay();
  const versions = own.data?.items ?? [];
  const tenantList = tenants.data?.items ?? [];
  const meterList = meters.data?.items ?? [];
  const meterOf = (id: number) => meterList.find((m) => m.id === id);
  const whose = (v: Own) =>
    v.tenantId !== null
      ? t('desk.own.ofTenant', { name: tenantList.find((x) => x.id === v.tenantId)?.name ?? `#${v.tenantId}` })
      : t('desk.own.ofMeter', { name: meterOf(v.meterId!)?.name ?? `#${v.meterId}` });
  async function remove(v: Own) {
    const { error, response } = await api.DELETE('/api/billing/tariffs/{id}', { params: { path: { id: v.id } } });
    if (!response.ok) return setProblem(errorText(error, response.status));
    setProblem(null);
    setDone(t('desk.own.removed', { whose: whose(v), day: v.validFrom }));
    own.reload();
  }
  /** Which tariff prices a tenant's share of a meter today: its own, else the meter's, else the site's. */
  const pricing = (tenantId: number, meter: Meter) => {
    const mine = inForce(versions, { tenantId }, meter.commodity, today);
    if (mine) return { source: 'own', version: mine } as const;
    const meters = inForce(versions, { meterId: meter.id }, meter.commodity, today);
    if (meters) return { source: 'meter', version: meters } as const;
    return { source: 'site', version: undefined } as const;
  };
  const shares = tenantList.map((tenant) => ({
    tenant,
    meters: (allocations.data?.items ?? [])
      .filter((a) => a.fractions.some((f) => f.tenantId === tenant.id && f.fraction > 0))
      .map((a) => meterOf(a.meterId))
      .filter((m): m is Meter => m !== undefined),
  }));
  const billable = meterList.filter((m) => (m.role ?? 'import') === 'import');
  return (
    <section class="card" aria-labelledby="own-heading" data-own-tariffs>
      <h2 id="own-heading">{t('desk.own.title')}</h2>
      <p class="muted">{t('desk.own.intro')}</p>
      <Problem text={own.problem ?? tenants.problem ?? allocations.problem ?? meters.problem ?? problem} />
      <Done text={done} />
      <h3>{t('desk.own.whoPrices')}</h3>
      {tenants.data && tenantList.length === 0 && <p class="muted">{t('desk.own.noTenants')}</p>}
      {tenantList.length > 0 && (
        <table>
          <caption class="sr-only">{t('desk.own.whoPrices')}</caption>
          <thead>
            <tr>
              <th scope="col">{t('desk.own.tenant')}</th>
              <th scope="col">{t('desk.own.meter')}</th>
              <th scope="col">{t('desk.own.pricedBy')}</th>
            </tr>
          </thead>
          <tbody>
            {shares.map(({ tenant, meters: theirs }) =>
              (theirs.length ? theirs : [undefined]).map((meter, i) => {
                const p = meter ? pricing(tenant.id, meter) : undefined;
                return (
                  <tr key={`${tenant.id}-${meter?.id ?? 0}`} data-priced={`${tenant.id}-${meter?.id ?? 0}`}>
                    {i === 0 ? <th scope="row">{tenant.name}</th> : <td />}
                    <td>{meter?.name ?? t('desk.own.noMeters')}</td>
                    <td data-field="source">
                      {p ? (p.version ? label('desk.own.source', p.source, { day: p.version.validFrom }) : t('desk.own.source.site')) : '–'}
                    </td>
                  </tr>
                );
              }),
            )}
          </tbody>
        </table>
      )}
      <h3>{t('desk.own.versions')}</h3>
      {own.data && versions.length === 0 && <p class="muted">{t('desk.own.none')}</p>}
      <ul class="worklist">
        {versions.map((v) => (
          <li key={v.id} data-own={v.id}>
            <strong>{whose(v)}</strong> · {label('meters.commodity', v.commodity)} · {t('tariffs.from', { day: v.validFrom })}
            {v.validFrom < v.createdAt.slice(0, 10) && ' '}
            {v.validFrom < v.createdAt.slice(0, 10) && (
              <span class="badge info" data-field="restates">
                {t('desk.own.backDated')}
              </span>
            )}
            <div data-field="charges">
              <Charges v={v} />
            </div>
            {v.note && <div class="muted">{v.note}</div>}
            {can('admin') && (
              <button type="button" class="link" onClick={() => remove(v)}>
                {t('desk.own.remove', { whose: whose(v), day: v.validFrom })}
              </button>
            )}
          </li>
        ))}
      </ul>
      <p class="muted">{t('desk.own.otherCharges')}</p>
      {can('admin') ? (
        tenants.data &&
        meters.data && (
          <OwnForm
            tenants={tenantList}
            meters={billable}
            onSaved={(text) => {
              setDone(text);
              own.reload();
            }}
          />
        )
      ) : (
        <p class="muted">{t('desk.adminSetsUp')}</p>
      )}
    </section>
  );
}
