// Faults: the list (status and severity filters), a form to report one with a date-and-time picker for when it was
// noticed (default now), status moves, and a maintenance record opened from a fault. Operators act; viewers read.
import { useState } from 'preact/hooks';
import { api, errorText } from '../api/client';
import { Field, Problem } from '../components/Field';
import { useApi } from '../components/useApi';
import { useDraft } from '../components/useDraft';
import { WorkList } from '../components/WorkList';
import { dateTime, label, t } from '../i18n';
import { DraftNotice } from '../components/DraftNotice';

const SEVERITIES = ['low', 'medium', 'high', 'critical'] as const;
const STATUSES = ['open', 'in_progress', 'resolved', 'closed'] as const;
type Status = (typeof STATUSES)[number];
const DRAFT = 'faults.new';

export default function Faults() {
  const [status, setStatus] = useState<'' | Status>('');
  const [done, setDone] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const list = useApi(() => api.GET('/api/faults', { params: { query: { pageSize: 100, ...(status ? { status: [status] } : {}) } } }), [status]);

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
      <WorkList
        kind="fault"
        statuses={STATUSES}
        statusLabel={(s) => label('faults.status', s)}
        status={status}
        onStatus={setStatus}
        addLabel={t('faults.add')}
        draft={DRAFT}
        form={(close) => (
          <FaultForm
            onSaved={(device) => {
              close();
              setDone(t('faults.saved', { device }));
              list.reload();
            }}
          />
        )}
        done={done}
        problem={problem ?? list.problem}
        items={list.data?.items}
        none={t('faults.none')}
        head={{
          header: t('faults.device'),
          class: 'wrap',
          cell: (fault) => (
            <>
              {fault.device}
              {fault.area ? <span class="muted"> · {fault.area}</span> : null}
            </>
          ),
        }}
        columns={[
          { header: t('faults.severity'), cell: (fault) => label('faults.severity', fault.severity) },
          { header: t('faults.reportedAt'), cell: (fault) => dateTime(fault.reportedAt) },
          { header: t('maintenance.description'), class: 'wrap', cell: (fault) => fault.description },
          {
            header: t('faults.actions'),
            operator: true,
            cell: (fault) => (
              <button type="button" onClick={() => maintenance(fault.id, fault.device)}>
                {t('alerts.createMaintenance')}
              </button>
            ),
          },
        ]}
        columnsBefore={1}
        nameOf={(fault) => fault.device}
        onMove={move}
      />
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
