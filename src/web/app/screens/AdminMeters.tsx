// Admin → meters and areas: every meter with its point, kind, commodity and role; its name, area, whether it is a site
// meter and whether the collector reads it changed in place (PUT /api/meters/:id, one field at a time); a meter added
// by hand (POST /api/meters); the areas the meters make up (GET /api/energy/areas). Virtual meters are listed but built
// through the API (their terms). The service's 400/409 reasons are shown.
import { useState } from 'preact/hooks';
import { api, errorText } from '../api/client';
import type { Answer, Body, Meter } from '../api/types';
import { Done, Field, Problem } from '../components/Field';
import { useApi } from '../components/useApi';
import { AdminLinks } from '../components/adminLinks';
import { label, num, t } from '../i18n';

const KINDS = ['energy', 'power'] as const;
const COMMODITIES = ['electricity', 'gas', 'water', 'heat'] as const;
const ROLES = ['import', 'export', 'generation'] as const;
type Change = Body<'/api/meters/{id}', 'put'>;
type Area = Answer<'/api/energy/areas'>['areas'][number];
const newMeter = () => ({
  name: '',
  code: '',
  kind: 'energy' as (typeof KINDS)[number],
  commodity: 'electricity' as (typeof COMMODITIES)[number],
  role: 'import' as (typeof ROLES)[number],
  area: '',
  site: false,
});
type MeterDraft = ReturnType<typeof newMeter>;

export default function AdminMeters() {
  const meters = useApi(() => api.GET('/api/meters', { params: { query: { pageSize: 200 } } }));
  const areas = useApi(() => api.GET('/api/energy/areas'));
  const [problem, setProblem] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [form, setForm] = useState(newMeter);

  async function change(id: number, name: string, body: Change) {
    const { data, error, response } = await api.PUT('/api/meters/{id}', { params: { path: { id } }, body });
    if (!data) {
      setDone(null);
      setProblem(errorText(error, response.status));
      meters.reload();
      return;
    }
    setProblem(null);
    setDone(t('meters.saved', { name: data.name || name }));
    meters.reload();
    areas.reload();
  }

  async function add(event: Event) {
    event.preventDefault();
    const { data, error, response } = await api.POST('/api/meters', {
      body: {
        name: form.name.trim(),
        code: form.code.trim(),
        kind: form.kind,
        commodity: form.commodity,
        role: form.role,
        site: form.site,
        ...(form.area.trim() ? { area: form.area.trim() } : {}),
      },
    });
    if (!data) {
      setDone(null);
      return setProblem(errorText(error, response.status));
    }
    setProblem(null);
    setDone(t('meters.added', { name: data.name }));
    setForm({ ...form, name: '', code: '', area: '', site: false });
    meters.reload();
    areas.reload();
  }

  const areaNames = (areas.data?.areas ?? []).map((a) => a.name);
  return (
    <section>
      <h1>{t('meters.title')}</h1>
      <AdminLinks here="/admin/meters" />
      <Problem text={problem ?? meters.problem ?? areas.problem} />
      <Done text={done} />
      <section class="card" aria-labelledby="meters-heading">
        <h2 id="meters-heading">{t('meters.list')}</h2>
        <datalist id="area-names">
          {areaNames.map((name) => (
            <option key={name} value={name} />
          ))}
        </datalist>
        <div class="table-scroll">
          <table>
            <thead>
              <tr>
                <th scope="col">{t('meters.name')}</th>
                <th scope="col">{t('meters.code')}</th>
                <th scope="col">{t('meters.kind')}</th>
                <th scope="col">{t('meters.area')}</th>
                <th scope="col">{t('meters.site')}</th>
                <th scope="col">{t('meters.enabled')}</th>
              </tr>
            </thead>
            <tbody>
              {(meters.data?.items ?? []).map((meter) => (
                <MeterRow key={`${meter.id}-${meter.updatedAt}`} meter={meter} onChange={(body) => change(meter.id, meter.name, body)} />
              ))}
            </tbody>
          </table>
        </div>
      </section>
      <div class="columns spaced">
        <MeterForm form={form} setForm={setForm} onSubmit={add} />
        <AreasCard areas={areas.data?.areas ?? []} />
      </div>
    </section>
  );
}

/** One meter: its name, area, site flag and reading switch changed in place, one field at a time. */
function MeterRow({ meter, onChange }: { meter: Meter; onChange: (body: Change) => void }) {
  return (
    <tr data-meter={meter.id}>
      <th scope="row" class="wrap">
        <input
          aria-label={t('meters.nameOf', { name: meter.name })}
          defaultValue={meter.name}
          onChange={(e) => e.currentTarget.value.trim() !== meter.name && onChange({ name: e.currentTarget.value.trim() })}
        />
      </th>
      <td class="wrap">
        <code>{meter.code ?? '–'}</code>
      </td>
      <td>
        {label('meters.kind', meter.kind)}
        <br />
        <span class="muted">
          {label('meters.commodity', meter.commodity)}, {label('meters.role', meter.role)}
        </span>
      </td>
      <td>
        <input
          list="area-names"
          aria-label={t('meters.areaOf', { name: meter.name })}
          defaultValue={meter.area ?? ''}
          onChange={(e) => onChange({ area: e.currentTarget.value.trim() || null })}
        />
      </td>
      <td>
        <input
          type="checkbox"
          aria-label={t('meters.siteOf', { name: meter.name })}
          defaultChecked={meter.site}
          onChange={(e) => onChange({ site: e.currentTarget.checked })}
        />
      </td>
      <td>
        <input
          type="checkbox"
          aria-label={t('meters.enabledOf', { name: meter.name })}
          defaultChecked={meter.enabled}
          onChange={(e) => onChange({ enabled: e.currentTarget.checked })}
        />
      </td>
    </tr>
  );
}

/** A meter added by hand. */
function MeterForm({ form, setForm, onSubmit }: { form: MeterDraft; setForm: (form: MeterDraft) => void; onSubmit: (event: Event) => void }) {
  return (
    <form class="card stack" onSubmit={onSubmit} noValidate aria-labelledby="add-meter-heading">
      <h2 id="add-meter-heading">{t('meters.add')}</h2>
      <Field label={t('meters.name')}>{(id) => <input id={id} value={form.name} onInput={(e) => setForm({ ...form, name: e.currentTarget.value })} />}</Field>
      <Field label={t('meters.code')} hint={t('meters.codeHint')}>
        {(id, hint) => <input id={id} aria-describedby={hint} value={form.code} onInput={(e) => setForm({ ...form, code: e.currentTarget.value })} />}
      </Field>
      <div class="filters">
        <Field label={t('meters.kind')}>
          {(id) => (
            <select id={id} value={form.kind} onChange={(e) => setForm({ ...form, kind: e.currentTarget.value as never })}>
              {KINDS.map((k) => (
                <option key={k} value={k}>
                  {label('meters.kind', k)}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label={t('meters.commodity')}>
          {(id) => (
            <select id={id} value={form.commodity} onChange={(e) => setForm({ ...form, commodity: e.currentTarget.value as never })}>
              {COMMODITIES.map((c) => (
                <option key={c} value={c}>
                  {label('meters.commodity', c)}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label={t('meters.role')}>
          {(id) => (
            <select id={id} value={form.role} onChange={(e) => setForm({ ...form, role: e.currentTarget.value as never })}>
              {ROLES.map((r) => (
                <option key={r} value={r}>
                  {label('meters.role', r)}
                </option>
              ))}
            </select>
          )}
        </Field>
      </div>
      <Field label={t('meters.area')}>
        {(id) => <input id={id} list="area-names" value={form.area} onInput={(e) => setForm({ ...form, area: e.currentTarget.value })} />}
      </Field>
      <label class="check">
        <input type="checkbox" checked={form.site} onChange={(e) => setForm({ ...form, site: e.currentTarget.checked })} />
        {t('meters.siteMeter')}
      </label>
      <div class="actions">
        <button type="submit" class="primary">
          {t('meters.add')}
        </button>
      </div>
    </form>
  );
}

/** The areas the meters make up, with their figures. */
function AreasCard({ areas }: { areas: Area[] }) {
  return (
    <section class="card" aria-labelledby="areas-heading">
      <h2 id="areas-heading">{t('meters.areas')}</h2>
      <table>
        <thead>
          <tr>
            <th scope="col">{t('meters.area')}</th>
            <th scope="col" class="n">
              {t('meters.today')}
            </th>
            <th scope="col" class="n">
              {t('meters.month')}
            </th>
          </tr>
        </thead>
        <tbody>
          {areas.map((area) => (
            <tr key={area.name} data-area={area.name}>
              <th scope="row" class="wrap">
                <a href={`/areas/${encodeURIComponent(area.name)}`}>{area.name}</a>
              </th>
              <td class="n">{num(area.todayKwh)} kWh</td>
              <td class="n">{num(area.monthKwh)} kWh</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p class="muted">{t('meters.areasHint')}</p>
    </section>
  );
}
