// Maintenance records: the list (newest first, filter by status) and a form with a date-and-time picker (the
// browser's own, in the browser's time zone) instead of RFC 3339 text; operators create and move records.
import { useState } from 'preact/hooks';
import { api, errorText } from '../api/client';
import { Field, Problem } from '../components/Field';
import { useApi } from '../components/useApi';
import { useDraft } from '../components/useDraft';
import { WorkList } from '../components/WorkList';
import { dateTime, label, money, siteCurrency, t } from '../i18n';
import { DraftNotice } from '../components/DraftNotice';

const TYPES = ['preventive', 'corrective', 'inspection'] as const;
const STATUSES = ['planned', 'in_progress', 'done', 'cancelled'] as const;
type Status = (typeof STATUSES)[number];
const DRAFT = 'maintenance.new';

export default function Maintenance() {
  const [status, setStatus] = useState<'' | Status>('');
  const [done, setDone] = useState<string | null>(null);
  const list = useApi(() => api.GET('/api/maintenance', { params: { query: { pageSize: 100, ...(status ? { status: [status] } : {}) } } }), [status]);

  async function move(id: number, next: Status) {
    const { response } = await api.PUT('/api/maintenance/{id}', { params: { path: { id } }, body: { status: next } });
    if (response.ok) list.reload();
  }

  return (
    <section>
      <h1>{t('maintenance.title')}</h1>
      <WorkList
        kind="maintenance"
        statuses={STATUSES}
        statusLabel={(s) => label('maintenance.status', s)}
        status={status}
        onStatus={setStatus}
        addLabel={t('maintenance.add')}
        draft={DRAFT}
        form={(close) => (
          <MaintenanceForm
            onSaved={(equipment) => {
              close();
              setDone(t('maintenance.saved', { equipment }));
              list.reload();
            }}
          />
        )}
        done={done}
        problem={list.problem}
        items={list.data?.items}
        none={t('maintenance.none')}
        head={{ header: t('maintenance.equipment'), cell: (record) => record.equipment }}
        columns={[
          { header: t('maintenance.type'), cell: (record) => label('maintenance.type', record.type) },
          { header: t('maintenance.scheduledAt'), cell: (record) => dateTime(record.scheduledAt, Intl.DateTimeFormat().resolvedOptions().timeZone) },
          { header: t('maintenance.assignee'), cell: (record) => record.assignee ?? '–' },
          {
            header: t('maintenance.description'),
            class: 'wrap',
            cell: (record) => (
              <>
                {record.description}
                {record.cost !== null ? ` (${money(record.cost, siteCurrency)})` : ''}
              </>
            ),
          },
        ]}
        columnsBefore={1}
        nameOf={(record) => record.equipment}
        onMove={move}
      />
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
