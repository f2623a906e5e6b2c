// Faults: the list (status and severity filters), a form to report one with a date-and-time picker for when it was
// noticed (default now), status moves, and a maintenance record opened from a fault. Operators act; viewers read.
import { useState } from 'preact/hooks';
import { api, errorText } from '../api/client';
import { Done, Field, Problem } from '../components/Field';
import { useApi } from '../components/useApi';
import { hasDraft, useDraft } from '../components/useDraft';
import { dateTime, label, t } from '../i18n';
import { can } from '../state/session';
import { DraftNotice } from '../components/DraftNotice';

const SEVERITIES = ['low', 'medium', 'high', 'critical'] as const;
const STATUSES = ['open', 'in_progress', 'resolved', 'closed'] as const;
type Status = (typeof STATUSES)[number];
const DRAFT = 'faults.new';

export default function Faults() {
  const [status, setStatus] = useState<'' | Status>('');
  // A kept draft (the session ended while it was typed, a reload, an outage) opens the form with it.
  const [adding, setAdding] = useState(() => hasDraft(DRAFT));
  const [done, setDone] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const list = useApi(() => api.GET('/api/faults', { params: { query: { pageSize: 100, ...(status ? { status: [status] } : {}) } } }), [status]);
  const operator = can('operator');

  async function move(id: number, next: Status) {
    const { error, response } = await api.PUT('/api/faults/{id}', { params: { path: { id } }, body: { status: next } });
    if (!response.ok) return setProblem(errorText(error, response.status));
    list.reload();
  }

  async function maintenance(id: number, device: string) {
    const { error, response } = await api.POST('/api/faults/{id}/maintenance', { params: { path: { id } }, body: {} });
    if (!response.ok) return setProblem(errorText(error, response.status));
    setDone(t('faults.maintenanceOpened', { device }));
  }

  return (
    <section>
      <h1>{t('faults.title')}</h1>
      <p>
        <a href="/faults/by-money">{t('fdd.toByMoney')}</a>
      </p>
      <div class="filters">
        <Field label={t('maintenance.status')}>
          {(id) => (
            <select id={id} value={status} onChange={(e) => setStatus(e.currentTarget.value as typeof status)}>
              <option value="">{t('maintenance.anyStatus')}</option>
              {STATUSES.map((s) => (
                <option key={s} value={s}>
                  {label('faults.status', s)}
                </option>
              ))}
            </select>
          )}
        </Field>
        {operator && (
          <button type="button" class="primary" aria-expanded={adding} onClick={() => setAdding(!adding)}>
            {t('faults.add')}
          </button>
        )}
      </div>
      {adding && (
        <FaultForm
          onSaved={(device) => {
            setAdding(false);
            setDone(t('faults.saved', { device }));
            list.reload();
          }}
        />
      )}
      <Done text={done} />
      <Problem text={problem ?? list.problem} />
      {list.data && list.data.items.length === 0 && <p class="muted">{t('faults.none')}</p>}
      {list.data && list.data.items.length > 0 && (
        <div class="table-scroll">
          <table>
            <thead>
              <tr>
                <th scope="col">{t('faults.device')}</th>
                <th scope="col">{t('faults.severity')}</th>
                <th scope="col">{t('maintenance.status')}</th>
                <th scope="col">{t('faults.reportedAt')}</th>
                <th scope="col">{t('maintenance.description')}</th>
                {operator && <th scope="col">{t('faults.actions')}</th>}
              </tr>
            </thead>
            <tbody>
              {list.data.items.map((fault) => (
                <tr key={fault.id} data-fault-id={fault.id}>
                  <th scope="row" class="wrap">
                    {fault.device}
                    {fault.area ? <span class="muted"> · {fault.area}</span> : null}
                  </th>
                  <td>{label('faults.severity', fault.severity)}</td>
                  <td>
                    {operator ? (
                      <select
                        aria-label={t('maintenance.statusOf', { equipment: fault.device })}
                        value={fault.status}
                        onChange={(e) => move(fault.id, e.currentTarget.value as Status)}
                      >
                        {STATUSES.map((s) => (
                          <option key={s} value={s}>
                            {label('faults.status', s)}
                          </option>
                        ))}
                      </select>
                    ) : (
                      label('faults.status', fault.status)
                    )}
                  </td>
                  <td>{dateTime(fault.reportedAt)}</td>
                  <td class="wrap">{fault.description}</td>
                  {operator && (
                    <td>
                      <button type="button" onClick={() => maintenance(fault.id, fault.device)}>
                        {t('alerts.createMaintenance')}
                      </button>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function localNow(): string {
  const now = new Date();
  return new Date(now.getTime() - now.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}

function FaultForm({ onSaved }: { onSaved: (device: string) => void }) {
  // Kept for the tab as it is typed (components/useDraft.ts); "when" left alone means when the form opened.
  const draft = useDraft(DRAFT, { device: '', severity: 'medium', area: '', when: '', description: '' });
  const { device, area, description } = draft.values;
  const severity = draft.values.severity as (typeof SEVERITIES)[number];
  const [openedAt] = useState(localNow);
  const when = draft.values.when || openedAt;
  const [problem, setProblem] = useState<string | null>(null);

  async function save(event: Event) {
    event.preventDefault();
    if (!device.trim()) return setProblem(t('faults.needDevice'));
    const { data, error, response } = await api.POST('/api/faults', {
      body: { device: device.trim(), severity, area: area.trim() || null, description, reportedAt: new Date(when).toISOString() },
    });
    if (!data) return setProblem(errorText(error, response.status));
    draft.saved();
    onSaved(data.device);
  }

  return (
    <form class="card stack" onSubmit={save} noValidate aria-label={t('faults.add')}>
      <DraftNotice draft={draft} />
      <Field label={t('faults.device')}>
        {(id) => <input id={id} maxLength={200} value={device} onInput={(e) => draft.set({ device: e.currentTarget.value })} />}
      </Field>
      <Field label={t('faults.severity')}>
        {(id) => (
          <select id={id} value={severity} onChange={(e) => draft.set({ severity: e.currentTarget.value })}>
            {SEVERITIES.map((s) => (
              <option key={s} value={s}>
                {label('faults.severity', s)}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label={t('overview.area')}>
        {(id) => <input id={id} maxLength={200} value={area} onInput={(e) => draft.set({ area: e.currentTarget.value })} />}
      </Field>
      <Field label={t('faults.reportedAt')}>
        {(id) => <input id={id} type="datetime-local" value={when} onInput={(e) => draft.set({ when: e.currentTarget.value })} />}
      </Field>
      <Field label={t('maintenance.description')}>
        {(id) => <textarea id={id} rows={3} maxLength={4000} value={description} onInput={(e) => draft.set({ description: e.currentTarget.value })} />}
      </Field>
      <Problem text={problem} />
      <button type="submit" class="primary">
        {t('faults.save')}
      </button>
    </form>
  );
}
