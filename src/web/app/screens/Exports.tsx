// Exports: meters (every meter, an area's, or those ticked) over a period of site days to CSV or XLSX through
// GET /api/exports/energy, downloaded under the name the service gives (Content-Disposition). The period is entered
// as first and last day (both included); the request's `to` is the day after. The service's 400/404 text is shown.
import { useState } from 'preact/hooks';
import { api, errorText } from '../api/client';
import type { Meter } from '../api/types';
import { Done, Field, Problem } from '../components/Field';
import { saveBlob } from '../components/saveFile';
import { useApi } from '../components/useApi';
import { label, siteTimeZone, t } from '../i18n';

const RESOLUTIONS = ['15min', 'hour', 'day'] as const;
const LAYOUTS = ['wide', 'long'] as const;
const FORMATS = ['xlsx', 'csv'] as const;
type Which = 'all' | 'area' | 'meters';

/** A date as YYYY-MM-DD in the site's time zone. */
function siteDay(at: number): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone: siteTimeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(at);
}
function nextDay(day: string): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
}

const newExport = (yesterday: string) => ({
  which: 'all' as Which,
  area: '',
  meterIds: [] as number[],
  first: siteDay(Date.now() - 7 * 86_400_000),
  last: yesterday,
  resolution: 'hour' as (typeof RESOLUTIONS)[number],
  layout: 'wide' as (typeof LAYOUTS)[number],
  format: 'xlsx' as (typeof FORMATS)[number],
  bom: true,
});
type ExportForm = ReturnType<typeof newExport>;
type FormProps = { form: ExportForm; setForm: (form: ExportForm) => void };

export default function Exports() {
  const meters = useApi(() => api.GET('/api/meters', { params: { query: { pageSize: 200 } } }));
  const areas = useApi(() => api.GET('/api/energy/areas'));
  const yesterday = siteDay(Date.now() - 86_400_000);
  const [form, setForm] = useState(() => newExport(yesterday));
  const [problem, setProblem] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const areaNames = areas.data?.areas.map((a) => a.name) ?? [];

  function toggle(id: number, on: boolean) {
    setForm({ ...form, meterIds: on ? [...form.meterIds, id] : form.meterIds.filter((m) => m !== id) });
  }

  async function run(event: Event) {
    event.preventDefault();
    setDone(null);
    if (!/^\d{4}-\d{2}-\d{2}$/.test(form.first) || !/^\d{4}-\d{2}-\d{2}$/.test(form.last) || form.last < form.first) return setProblem(t('exports.badPeriod'));
    if (form.which === 'meters' && form.meterIds.length === 0) return setProblem(t('exports.noMeters'));
    if (form.which === 'area' && !form.area) return setProblem(t('exports.noArea'));
    setBusy(true);
    const { data, error, response } = await api.GET('/api/exports/energy', {
      params: {
        query: {
          from: form.first,
          to: nextDay(form.last),
          resolution: form.resolution,
          layout: form.layout,
          format: form.format,
          ...(form.format === 'csv' ? { bom: form.bom } : {}),
          ...(form.which === 'area' ? { area: form.area } : {}),
          ...(form.which === 'meters' ? { meterIds: [...form.meterIds].sort((a, b) => a - b).join(',') } : {}),
        },
      },
      parseAs: 'blob',
    });
    setBusy(false);
    if (!data) return setProblem(errorText(error, response.status));
    setProblem(null);
    const name = /filename="?([^";]+)"?/.exec(response.headers.get('content-disposition') ?? '')?.[1] ?? `energy.${form.format}`;
    saveBlob(data, name);
    setDone(t('exports.done', { name }));
  }

  return (
    <section>
      <h1>{t('exports.title')}</h1>
      <form class="card stack exports" onSubmit={run} noValidate>
        <Problem text={problem ?? meters.problem ?? areas.problem} />
        <MeterChoice form={form} setForm={setForm} areaNames={areaNames} meters={meters.data?.items ?? []} onToggle={toggle} />
        <OutputFields form={form} setForm={setForm} yesterday={yesterday} />
        <Done text={done} />
        <div class="actions">
          <button type="submit" class="primary" disabled={busy} aria-busy={busy ? 'true' : undefined}>
            {t('exports.download')}
          </button>
        </div>
      </form>
    </section>
  );
}

/** Which meters: every one, an area's (chosen from the areas) or those ticked. */
function MeterChoice(props: FormProps & { areaNames: string[]; meters: Meter[]; onToggle: (id: number, on: boolean) => void }) {
  const { form, setForm, areaNames, meters, onToggle } = props;
  return (
    <>
      <fieldset class="choice">
        <legend>{t('exports.which')}</legend>
        {(['all', 'area', 'meters'] as const).map((which) => (
          <label class="check" key={which}>
            <input type="radio" name="which" value={which} checked={form.which === which} onChange={() => setForm({ ...form, which })} />
            {label('exports.which', which)}
          </label>
        ))}
      </fieldset>
      {form.which === 'area' && (
        <Field label={t('exports.area')}>
          {(id) => (
            <select id={id} value={form.area} onChange={(e) => setForm({ ...form, area: e.currentTarget.value })}>
              <option value="">{t('exports.chooseArea')}</option>
              {areaNames.map((name) => (
                <option key={name} value={name}>
                  {name}
                </option>
              ))}
            </select>
          )}
        </Field>
      )}
      {form.which === 'meters' && (
        <fieldset class="choice meters">
          <legend>{t('exports.meters')}</legend>
          {meters.map((meter) => (
            <label class="check wrap" key={meter.id}>
              <input type="checkbox" checked={form.meterIds.includes(meter.id)} onChange={(e) => onToggle(meter.id, e.currentTarget.checked)} />
              {meter.name}
              {meter.area ? <span class="muted"> · {meter.area}</span> : null}
            </label>
          ))}
        </fieldset>
      )}
    </>
  );
}

/** The period, resolution, layout and file type, and the byte order mark of a CSV. */
function OutputFields({ form, setForm, yesterday }: FormProps & { yesterday: string }) {
  return (
    <>
      <div class="filters">
        <Field label={t('exports.first')}>
          {(id) => <input id={id} type="date" value={form.first} max={yesterday} onInput={(e) => setForm({ ...form, first: e.currentTarget.value })} />}
        </Field>
        <Field label={t('exports.last')}>
          {(id) => <input id={id} type="date" value={form.last} onInput={(e) => setForm({ ...form, last: e.currentTarget.value })} />}
        </Field>
        <Field label={t('exports.resolution')} hint={t('exports.resolutionHint')}>
          {(id, hint) => (
            <select id={id} aria-describedby={hint} value={form.resolution} onChange={(e) => setForm({ ...form, resolution: e.currentTarget.value as never })}>
              {RESOLUTIONS.map((r) => (
                <option key={r} value={r}>
                  {label('exports.resolution', r)}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label={t('exports.layout')}>
          {(id) => (
            <select id={id} value={form.layout} onChange={(e) => setForm({ ...form, layout: e.currentTarget.value as never })}>
              {LAYOUTS.map((l) => (
                <option key={l} value={l}>
                  {label('exports.layout', l)}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label={t('exports.format')}>
          {(id) => (
            <select id={id} value={form.format} onChange={(e) => setForm({ ...form, format: e.currentTarget.value as never })}>
              {FORMATS.map((f) => (
                <option key={f} value={f}>
                  {f.toUpperCase()}
                </option>
              ))}
            </select>
          )}
        </Field>
      </div>
      {form.format === 'csv' && (
        <label class="check">
          <input type="checkbox" checked={form.bom} onChange={(e) => setForm({ ...form, bom: e.currentTarget.checked })} />
          {t('exports.bom')}
        </label>
      )}
    </>
  );
}
