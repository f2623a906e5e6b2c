// Maintenance records: the list (newest first, filter by status) and a form with a date-and-time picker (the
// browser's own, in the browser's time zone) instead of RFC 3339 text; operators create and move records.
import { useState } from 'preact/hooks';
import { api, errorText } from '../api/client';
import { Done, Field, Problem } from '../components/Field';
import { useApi } from '../components/useApi';
import { hasDraft, useDraft } from '../components/useDraft';
import { dateTime, label, money, siteCurrency, t } from '../i18n';
import { can } from '../state/session';
import { DraftNotice } from '../components/DraftNotice';

const TYPES = ['preventive', 'corrective', 'inspection'] as const;
const STATUSES = ['planned', 'in_progress', 'done', 'cancelled'] as const;
type Status = (typeof STATUSES)[number];
const DRAFT = 'maintenance.new';

export default function Maintenance() {
  const [status, setStatus] = useState<'' | Status>('');
  // A kept draft (the session ended while it was typed, a reload, an outage) opens the form with it.
  const [adding, setAdding] = useState(() => hasDraft(DRAFT));
  const [done, setDone] = useState<string | null>(null);
  const list = useApi(() => api.GET('/api/maintenance', { params: { query: { pageSize: 100, ...(status ? { status: [status] } : {}) } } }), [status]);
  const operator = can('operator');

  async function move(id: number, next: Status) {
    const { response } = await api.PUT('/api/maintenance/{id}', { params: { path: { id } }, body: { status: next } });
    if (response.ok) list.reload();
  }

  return (
    <section>
      <h1>{t('maintenance.title')}</h1>
      <div class="filters">
        <Field label={t('maintenance.status')}>
          {(id) => (
            <select id={id} value={status} onChange={(e) => setStatus(e.currentTarget.value as typeof status)}>
              <option value="">{t('maintenance.anyStatus')}</option>
              {STATUSES.map((s) => (
                <option key={s} value={s}>
                  {label('maintenance.status', s)}
                </option>
              ))}
            </select>
          )}
        </Field>
        {operator && (
          <button type="button" class="primary" aria-expanded={adding} onClick={() => setAdding(!adding)}>
            {t('maintenance.add')}
          </button>
        )}
      </div>
      {adding && (
        <MaintenanceForm
          onSaved={(equipment) => {
            setAdding(false);
            setDone(t('maintenance.saved', { equipment }));
            list.reload();
          }}
        />
      )}
      <Done text={done} />
      <Problem text={list.problem} />
      {list.data && list.data.items.length === 0 && <p class="muted">{t('maintenance.none')}</p>}
      {list.data && list.data.items.length > 0 && (
        <div class="table-scroll">
          <table>
            <thead>
              <tr>
                <th scope="col">{t('maintenance.equipment')}</th>
                <th scope="col">{t('maintenance.type')}</th>
                <th scope="col">{t('maintenance.status')}</th>
                <th scope="col">{t('maintenance.scheduledAt')}</th>
                <th scope="col">{t('maintenance.assignee')}</th>
                <th scope="col">{t('maintenance.description')}</th>
              </tr>
            </thead>
            <tbody>
              {list.data.items.map((record) => (
                <tr key={record.id} data-maintenance-id={record.id}>
                  <th scope="row">{record.equipment}</th>
                  <td>{label('maintenance.type', record.type)}</td>
                  <td>
                    {operator ? (
                      <select
                        aria-label={t('maintenance.statusOf', { equipment: record.equipment })}
                        value={record.status}
                        onChange={(e) => move(record.id, e.currentTarget.value as Status)}
                      >
                        {STATUSES.map((s) => (
                          <option key={s} value={s}>
                            {label('maintenance.status', s)}
                          </option>
                        ))}
                      </select>
                    ) : (
                      label('maintenance.status', record.status)
                    )}
                  </td>
                  <td>{dateTime(record.scheduledAt, Intl.DateTimeFormat().resolvedOptions().timeZone)}</td>
                  <td>{record.assignee ?? '–'}</td>
                  <td class="wrap">
                    {record.description}
                    {record.cost !== null ? ` (${money(record.cost, siteCurrency)})` : ''}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function MaintenanceForm({ onSaved }: { onSaved: (equipment: string) => void }) {
  const draft = useDraft(DRAFT, { equipment: '', type: 'preventive', when: '', assignee: '', description: '' });
  const { equipment, when, assignee, description } = draft.values;
  const type = draft.values.type as (typeof TYPES)[number];
  const [problem, setProblem] = useState<string | null>(null);

  async function save(event: Event) {
    event.preventDefault();
    if (!equipment.trim()) return setProblem(t('maintenance.needEquipment'));
    const scheduledAt = when ? new Date(when).toISOString() : null;
    const { data, error, response } = await api.POST('/api/maintenance', {
      body: { equipment: equipment.trim(), type, scheduledAt, assignee: assignee.trim() || null, description },
    });
    if (!data) return setProblem(errorText(error, response.status));
    draft.saved();
    onSaved(data.equipment);
  }

  return (
    <form class="card stack" onSubmit={save} noValidate aria-label={t('maintenance.add')}>
      <DraftNotice draft={draft} />
      <Field label={t('maintenance.equipment')}>
        {(id) => <input id={id} required maxLength={200} value={equipment} onInput={(e) => draft.set({ equipment: e.currentTarget.value })} />}
      </Field>
      <Field label={t('maintenance.type')}>
        {(id) => (
          <select id={id} value={type} onChange={(e) => draft.set({ type: e.currentTarget.value })}>
            {TYPES.map((name) => (
              <option key={name} value={name}>
                {label('maintenance.type', name)}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label={t('maintenance.scheduledAt')}>
        {(id) => <input id={id} type="datetime-local" value={when} onInput={(e) => draft.set({ when: e.currentTarget.value })} />}
      </Field>
      <Field label={t('maintenance.assignee')}>
        {(id) => <input id={id} maxLength={200} value={assignee} onInput={(e) => draft.set({ assignee: e.currentTarget.value })} />}
      </Field>
      <Field label={t('maintenance.description')}>
        {(id) => <textarea id={id} rows={3} maxLength={4000} value={description} onInput={(e) => draft.set({ description: e.currentTarget.value })} />}
      </Field>
      <Problem text={problem} />
      <button type="submit" class="primary">
        {t('maintenance.save')}
      </button>
    </form>
  );
}
