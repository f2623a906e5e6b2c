// The desk → tenants and shares: tenants and cost centres (an admin adds one; GET/POST /api/billing/tenants) and each
// consumption meter's split between them (GET /api/billing/allocations, PUT/DELETE …/allocations/:meterId). The
// split being edited adds up as it is typed: each tenant's share, the common-area key (floor area or fixed key) as
// fractions, and the landlord's remainder live; the service's own check (a percent split must add up to 100) answers
// with its reason. Viewers read.
import { useState } from 'preact/hooks';
import { useDraft } from '../components/useDraft';
import { api, errorText } from '../api/client';
import type { Body } from '../api/types';
import { Done, Field, Problem } from '../components/Field';
import { useApi } from '../components/useApi';
import { DeskLinks, decimal, type Got } from '../components/deskLinks';
import { label, num, percent, t } from '../i18n';
import { can } from '../state/session';
import { DraftNotice } from '../components/DraftNotice';

type Tenant = Got<'/api/billing/tenants'>['items'][number];
type Allocation = Got<'/api/billing/allocations'>['items'][number];
type Meter = Got<'/api/meters'>['items'][number];
type Method = 'percent' | 'floor_area' | 'fixed_key';
const METHODS: Method[] = ['percent', 'floor_area', 'fixed_key'];

/** The fractions a split gives (as the service computes them), from the values being typed. */
export function splitFractions(
  method: Method,
  values: Map<number, number>,
  landlord: number,
  tenants: Tenant[],
): { tenants: Map<number, number>; landlord: number } {
  const weights = new Map<number, number>();
  for (const [id, value] of values) weights.set(id, method === 'floor_area' ? (tenants.find((x) => x.id === id)?.floorAreaM2 ?? 0) : value);
  const sum = [...weights.values()].reduce((a, b) => a + b, 0);
  if (method === 'percent') return { tenants: new Map([...weights].map(([id, v]) => [id, v / 100])), landlord: landlord / 100 };
  const whole = sum + landlord;
  if (whole <= 0) return { tenants: new Map([...weights].map(([id]) => [id, 0])), landlord: 1 };
  return { tenants: new Map([...weights].map(([id, v]) => [id, v / whole])), landlord: landlord / whole };
}

/** The new tenant's form as typed: the body's kind, the other fields as their text. */
type TenantDraft = { name: string; kind: NonNullable<Body<'/api/billing/tenants', 'post'>['kind']>; email: string; area: string };

function TenantForm({ onAdded }: { onAdded: () => void }) {
  // Kept for the tab as it is typed (components/useDraft.ts): a session that ends meanwhile loses nothing.
  const draft = useDraft<TenantDraft>('billing.tenant.new', { name: '', kind: 'tenant', email: '', area: '' });
  const form = draft.values;
  const setForm = (next: typeof form) => draft.set(next);
  const [problem, setProblem] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  async function add(event: Event) {
    event.preventDefault();
    const area = form.area.trim() === '' ? 0 : decimal(form.area);
    if (!form.name.trim()) return setProblem(t('desk.tenant.needName'));
    if (!Number.isFinite(area) || area < 0) return setProblem(t('desk.tenant.badArea'));
    const { data, error, response } = await api.POST('/api/billing/tenants', {
      body: { name: form.name.trim(), kind: form.kind, contactEmail: form.email.trim() || null, floorAreaM2: area },
    });
    if (!data) {
      setDone(null);
      return setProblem(errorText(error, response.status));
    }
    setProblem(null);
    setDone(t('desk.tenant.added', { name: data.name }));
    draft.discard();
    onAdded();
  }
  return (
    <form class="card stack" onSubmit={add} noValidate aria-labelledby="add-tenant-heading">
      <h2 id="add-tenant-heading">{t('desk.tenant.add')}</h2>
      <DraftNotice draft={draft} />
      <Problem text={problem} />
      <Done text={done} />
      <Field label={t('desk.tenant.name')}>
        {(id) => <input id={id} value={form.name} onInput={(e) => setForm({ ...form, name: e.currentTarget.value })} />}
      </Field>
      <Field label={t('billing.kind')}>
        {(id) => (
          <select id={id} value={form.kind} onChange={(e) => setForm({ ...form, kind: e.currentTarget.value as TenantDraft['kind'] })}>
            <option value="tenant">{t('billing.kind.tenant')}</option>
            <option value="cost_centre">{t('billing.kind.costCentre')}</option>
          </select>
        )}
      </Field>
      <Field label={t('desk.tenant.email')} hint={t('desk.tenant.emailHint')}>
        {(id, hint) => (
          <input id={id} type="email" aria-describedby={hint} value={form.email} onInput={(e) => setForm({ ...form, email: e.currentTarget.value })} />
        )}
      </Field>
      <Field label={t('desk.tenant.area')}>
        {(id) => <input id={id} inputMode="decimal" value={form.area} onInput={(e) => setForm({ ...form, area: e.currentTarget.value })} />}
      </Field>
      <button type="submit">{t('desk.tenant.addButton')}</button>
    </form>
  );
}

/** A tenant changed in place (PATCH /api/billing/tenants/:id): name, contact e-mail, floor area. */
function TenantEdit({ tenant, onDone }: { tenant: Tenant; onDone: (text: string | null) => void }) {
  const [form, setForm] = useState({ name: tenant.name, email: tenant.contactEmail ?? '', area: String(tenant.floorAreaM2) });
  const [problem, setProblem] = useState<string | null>(null);
  async function save(event: Event) {
    event.preventDefault();
    const area = form.area.trim() === '' ? 0 : decimal(form.area);
    if (!form.name.trim()) return setProblem(t('desk.tenant.needName'));
    if (!Number.isFinite(area) || area < 0) return setProblem(t('desk.tenant.badArea'));
    const { data, error, response } = await api.PATCH('/api/billing/tenants/{id}', {
      params: { path: { id: tenant.id } },
      body: { name: form.name.trim(), contactEmail: form.email.trim() || null, floorAreaM2: area },
    });
    if (!data) return setProblem(errorText(error, response.status));
    onDone(t('desk.tenant.changed', { name: data.name }));
  }
  return (
    <form class="stack" onSubmit={save} noValidate aria-label={t('desk.tenant.change', { name: tenant.name })} data-tenant-form={tenant.id}>
      <Problem text={problem} />
      <Field label={t('desk.tenant.name')}>
        {(id) => <input id={id} value={form.name} onInput={(e) => setForm({ ...form, name: e.currentTarget.value })} />}
      </Field>
      <Field label={t('desk.tenant.email')}>
        {(id) => <input id={id} type="email" value={form.email} onInput={(e) => setForm({ ...form, email: e.currentTarget.value })} />}
      </Field>
      <Field label={t('desk.tenant.area')}>
        {(id) => <input id={id} inputMode="decimal" value={form.area} onInput={(e) => setForm({ ...form, area: e.currentTarget.value })} />}
      </Field>
      <span class="actions">
        <button type="submit">{t('desk.tenant.save')}</button>
        <button type="button" class="ghost" onClick={() => onDone(null)}>
          {t('desk.split.cancel')}
        </button>
      </span>
    </form>
  );
}

function SplitEditor({
  meter,
  current,
  tenants,
  onSaved,
  onCancel,
}: {
  meter: Meter;
  current: Allocation | undefined;
  tenants: Tenant[];
  onSaved: (text: string) => void;
  onCancel: () => void;
}) {
  const [method, setMethod] = useState<Method>((current?.method as Method) ?? 'percent');
  const [values, setValues] = useState<Record<number, string>>(() => Object.fromEntries((current?.shares ?? []).map((s) => [s.tenantId, String(s.value)])));
  const [landlord, setLandlord] = useState(current ? String(current.landlordValue) : '0');
  const [problem, setProblem] = useState<string | null>(null);
  const typed = new Map<number, number>();
  for (const [id, text] of Object.entries(values)) if (text.trim() !== '') typed.set(Number(id), decimal(text));
  const landlordValue = landlord.trim() === '' ? 0 : decimal(landlord);
  const bad = [...typed.values(), landlordValue].some((v) => !Number.isFinite(v) || v < 0);
  const fractions = bad ? null : splitFractions(method, typed, landlordValue, tenants);
  const percentSum = [...typed.values()].reduce((a, b) => a + b, 0) + landlordValue;
  const tenantSum = fractions ? [...fractions.tenants.values()].reduce((a, b) => a + b, 0) : 0;

  async function save(event: Event) {
    event.preventDefault();
    if (bad) return setProblem(t('desk.split.badNumber'));
    if (typed.size === 0) return setProblem(t('desk.split.noShares'));
    const { data, error, response } = await api.PUT('/api/billing/allocations/{meterId}', {
      params: { path: { meterId: meter.id } },
      body: { method, shares: [...typed].map(([tenantId, value]) => ({ tenantId, value: method === 'floor_area' ? 0 : value })), landlordValue },
    });
    if (!data) return setProblem(errorText(error, response.status));
    setProblem(null);
    onSaved(t('desk.split.saved', { meter: meter.name }));
  }
  async function stop() {
    const { error, response } = await api.DELETE('/api/billing/allocations/{meterId}', { params: { path: { meterId: meter.id } } });
    if (!response.ok) return setProblem(errorText(error, response.status));
    setProblem(null);
    onSaved(t('desk.split.stopped', { meter: meter.name }));
  }
  return (
    <form class="stack" onSubmit={save} noValidate aria-label={t('desk.split.of', { meter: meter.name })} data-split-form={meter.id}>
      <Problem text={problem} />
      <Field label={t('desk.split.method')}>
        {(id) => (
          <select id={id} value={method} onChange={(e) => setMethod(e.currentTarget.value as Method)}>
            {METHODS.map((m) => (
              <option key={m} value={m}>
                {label('desk.method', m)}
              </option>
            ))}
          </select>
        )}
      </Field>
      <table>
        <caption class="sr-only">{t('desk.split.of', { meter: meter.name })}</caption>
        <thead>
          <tr>
            <th scope="col">{t('billing.tenant')}</th>
            <th scope="col">{t(method === 'percent' ? 'desk.split.percent' : method === 'floor_area' ? 'desk.split.takes' : 'desk.split.weight')}</th>
            <th scope="col" class="n">
              {t('desk.split.fraction')}
            </th>
          </tr>
        </thead>
        <tbody>
          {tenants.map((tenant) => (
            <ShareRow
              key={tenant.id}
              tenant={tenant}
              method={method}
              value={values[tenant.id]}
              onValue={(value) => setValues({ ...values, [tenant.id]: value })}
              fraction={fractions?.tenants.has(tenant.id) ? percent(fractions.tenants.get(tenant.id) ?? 0) : '–'}
            />
          ))}
          <LandlordRow method={method} landlord={landlord} setLandlord={setLandlord} fraction={fractions ? percent(fractions.landlord) : '–'} />
        </tbody>
      </table>
      <p role="status" data-field="sum">
        {bad ? t('desk.split.badNumber') : sumText(method, percentSum, tenantSum, fractions?.landlord ?? 0)}
      </p>
      <span class="actions">
        <button type="submit">{t('desk.split.save', { meter: meter.name })}</button>
        <button type="button" class="ghost" onClick={onCancel}>
          {t('desk.split.cancel')}
        </button>
        {current && (
          <button type="button" class="ghost" onClick={stop}>
            {t('desk.split.stop', { meter: meter.name })}
          </button>
        )}
      </span>
    </form>
  );
}

/** What a split being typed adds up to: percentages against 100, a key as the tenants' and the landlord's fractions. */
function sumText(method: Method, percentSum: number, tenantSum: number, landlordFraction: number): string {
  return method === 'percent'
    ? Math.abs(percentSum - 100) < 1e-9
      ? t('desk.split.adds', { sum: num(percentSum, 2) })
      : t('desk.split.addsNot', { sum: num(percentSum, 2), rest: num(100 - percentSum, 2) })
    : t('desk.split.keyAdds', { tenants: percent(tenantSum), landlord: percent(landlordFraction) });
}

/** A tenant's share in a split: a percent or key typed, or (by floor area) whether it takes a share; its fraction. */
function ShareRow(props: { tenant: Tenant; method: Method; value: string | undefined; onValue: (value: string) => void; fraction: string }) {
  const { tenant, method, value, onValue, fraction } = props;
  return (
    <tr>
      <th scope="row" class="wrap">
        {tenant.name}
        {method === 'floor_area' && <span class="muted"> · {num(tenant.floorAreaM2, 0)} m²</span>}
      </th>
      <td>
        {method === 'floor_area' ? (
          <label class="check">
            <input type="checkbox" checked={value !== undefined && value !== ''} onChange={(e) => onValue(e.currentTarget.checked ? '0' : '')} />
            {t('desk.split.takesShare', { name: tenant.name })}
          </label>
        ) : (
          <input
            inputMode="decimal"
            size={8}
            aria-label={t('desk.split.valueOf', { name: tenant.name })}
            value={value ?? ''}
            onInput={(e) => onValue(e.currentTarget.value)}
          />
        )}
      </td>
      <td class="n" data-fraction={tenant.id}>
        {fraction}
      </td>
    </tr>
  );
}

/** The landlord's part of a split: a percent, a key, or (by floor area) the vacant m²; its fraction. */
function LandlordRow(props: { method: Method; landlord: string; setLandlord: (text: string) => void; fraction: string }) {
  const { method, landlord, setLandlord, fraction } = props;
  return (
    <tr>
      <th scope="row">{t('desk.split.landlord')}</th>
      <td>
        <input
          inputMode="decimal"
          size={8}
          aria-label={t(method === 'floor_area' ? 'desk.split.vacant' : method === 'percent' ? 'desk.split.landlordPercent' : 'desk.split.landlordWeight')}
          value={landlord}
          onInput={(e) => setLandlord(e.currentTarget.value)}
        />
      </td>
      <td class="n" data-fraction="landlord">
        {fraction}
      </td>
    </tr>
  );
}

/** A tenant or cost centre with the meters it shares in. */
function TenantRow(props: { tenant: Tenant; shares: Allocation[]; admin: boolean; changing: boolean; onChange: () => void }) {
  const { tenant, shares, admin, changing, onChange } = props;
  return (
    <tr data-tenant={tenant.id}>
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
      <td class="wrap">
        {shares.flatMap((a) => a.fractions.filter((f) => f.tenantId === tenant.id).map((f) => `${a.meterName} ${percent(f.fraction)}`)).join(', ') || '–'}
      </td>
      {admin && (
        <td>
          <button type="button" class="link" aria-pressed={changing} onClick={onChange}>
            {t('desk.tenant.change', { name: tenant.name })}
          </button>
        </td>
      )}
    </tr>
  );
}

/** A consumption meter with its split in words, and the split's editor when it is being set. */
function MeterSplit(props: {
  meter: Meter;
  current: Allocation | undefined;
  tenants: Tenant[];
  admin: boolean;
  editing: boolean;
  onEdit: (on: boolean) => void;
  onSaved: (text: string) => void;
}) {
  const { meter, current, tenants, admin, editing, onEdit, onSaved } = props;
  const name = (id: number) => tenants.find((x) => x.id === id)?.name ?? `#${id}`;
  return (
    <li class="alert" data-meter={meter.id}>
      <div class="row">
        <strong>{meter.name}</strong>
        {meter.site && <span class="badge info">{t('desk.siteMeter')}</span>}
        {meter.area && <span class="muted">{meter.area}</span>}
        <span class="muted">
          {current
            ? `${label('desk.method', current.method)}: ${current.fractions.map((f) => `${name(f.tenantId)} ${percent(f.fraction)}`).join(', ')}; ${t('desk.split.landlord')} ${percent(current.landlordFraction)}`
            : t('desk.split.none')}
        </span>
        {admin && !editing && (
          <button type="button" class="link when" onClick={() => onEdit(true)}>
            {t('desk.split.edit', { meter: meter.name })}
          </button>
        )}
      </div>
      {admin && editing && <SplitEditor meter={meter} current={current} tenants={tenants} onCancel={() => onEdit(false)} onSaved={onSaved} />}
    </li>
  );
}

export default function DeskTenants() {
  const tenants = useApi(() => api.GET('/api/billing/tenants'));
  const allocations = useApi(() => api.GET('/api/billing/allocations'));
  const meters = useApi(() => api.GET('/api/meters', { params: { query: { pageSize: 200 } } }));
  const [editing, setEditing] = useState<number | null>(null);
  const [changing, setChanging] = useState<number | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const admin = can('admin');
  const list = tenants.data?.items ?? [];
  const consumption = (meters.data?.items ?? []).filter((m) => m.role === 'import');
  const byMeter = new Map((allocations.data?.items ?? []).map((a) => [a.meterId, a]));

  return (
    <section class="analysis desk">
      <h1>{t('desk.tenants.title')}</h1>
      <DeskLinks here="/billing/tenants" />
      <Problem text={tenants.problem ?? allocations.problem ?? meters.problem} />
      <Done text={done} />
      <div class="columns">
        <section class="card" aria-labelledby="parties-heading">
          <h2 id="parties-heading">{t('billing.tenants')}</h2>
          {tenants.data && list.length === 0 && <p class="muted">{t('billing.noTenants')}</p>}
          <table>
            <thead>
              <tr>
                <th scope="col">{t('billing.tenant')}</th>
                <th scope="col">{t('billing.kind')}</th>
                <th scope="col" class="n">
                  m²
                </th>
                <th scope="col">{t('desk.tenants.meters')}</th>
                {admin && <th scope="col">{t('desk.tenant.actions')}</th>}
              </tr>
            </thead>
            <tbody>
              {list.map((tenant) => (
                <TenantRow
                  key={tenant.id}
                  tenant={tenant}
                  shares={[...byMeter.values()]}
                  admin={admin}
                  changing={changing === tenant.id}
                  onChange={() => setChanging(tenant.id)}
                />
              ))}
            </tbody>
          </table>
          {admin && changing !== null && list.some((x) => x.id === changing) && (
            <TenantEdit
              key={changing}
              tenant={list.find((x) => x.id === changing)!}
              onDone={(text) => {
                setChanging(null);
                if (text) {
                  setDone(text);
                  tenants.reload();
                }
              }}
            />
          )}
        </section>
        {admin ? <TenantForm onAdded={tenants.reload} /> : <p class="muted">{t('desk.adminSetsUp')}</p>}
      </div>
      <section class="card" aria-labelledby="splits-heading">
        <h2 id="splits-heading">{t('desk.splits')}</h2>
        <p class="muted">{t('desk.splits.intro')}</p>
        <ul class="worklist">
          {consumption.map((meter) => (
            <MeterSplit
              key={meter.id}
              meter={meter}
              current={byMeter.get(meter.id)}
              tenants={list}
              admin={admin}
              editing={editing === meter.id}
              onEdit={(on) => setEditing(on ? meter.id : null)}
              onSaved={(text) => {
                setDone(text);
                setEditing(null);
                allocations.reload();
              }}
            />
          ))}
        </ul>
      </section>
    </section>
  );
}
