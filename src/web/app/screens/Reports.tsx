// Reports: plans with their schedule in words, a new plan from a template list and a schedule built from words (the
// app writes the cron), recipients, "send now" with what became of the mail (sent, written to the log only, failed
// and why), and each plan's run history with its files to download.
import { useState } from 'preact/hooks';
import { api, errorText } from '../api/client';
import type { ReportRun } from '../api/types';
import { Done, Field, Problem } from '../components/Field';
import { useApi } from '../components/useApi';
import { dateTime, label, language, t } from '../i18n';
import { can } from '../state/session';
import { fromCron, type Schedule, toCron } from './scheduleWords';
import { type Template, templateDescription, templateForPeriod, templateName as nameOf } from './reportTemplates';

type Run = ReportRun;

function weekdayName(day: number): string {
  // 2023-01-01 was a Sunday (cron weekday 0).
  return new Intl.DateTimeFormat(language.value, { weekday: 'long', timeZone: 'UTC' }).format(new Date(Date.UTC(2023, 0, 1 + day)));
}

export function scheduleText(cron: string): string {
  const schedule = fromCron(cron);
  if (!schedule) return cron;
  if (schedule.every === 'month') return t('reports.everyMonth', { day: schedule.day, time: schedule.time });
  if (schedule.every === 'week') return t('reports.everyWeek', { weekday: weekdayName(schedule.weekday), time: schedule.time });
  return t('reports.everyDay', { time: schedule.time });
}

export function deliveryText(run: Run): string {
  if (run.status === 'running') return t('reports.running');
  if (run.delivery === 'sent') return t('reports.delivery.sent');
  if (run.delivery === 'logged') return t('reports.delivery.logged');
  return t('reports.delivery.failed', { error: run.error ?? '' });
}

async function download(runId: number, name: string) {
  const { data } = await api.GET('/api/reports/runs/{id}/files/{name}', { params: { path: { id: runId, name } }, parseAs: 'blob' });
  if (!data) return;
  const url = URL.createObjectURL(data);
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  link.click();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

export default function Reports() {
  const plans = useApi(() => api.GET('/api/reports/plans', { params: { query: { pageSize: 100 } } }));
  const templates = useApi(() => api.GET('/api/reports/templates'));
  const [adding, setAdding] = useState(false);
  const [done, setDone] = useState<string | null>(null);
  const operator = can('operator');
  const templateName = (id: number) => {
    const template = templates.data?.items.find((candidate) => candidate.id === id);
    return template ? nameOf(template) : String(id);
  };
  return (
    <section>
      <h1>{t('reports.title')}</h1>
      {operator && (
        <p>
          <button type="button" class="primary" aria-expanded={adding} onClick={() => setAdding(!adding)}>
            {t('reports.add')}
          </button>
        </p>
      )}
      {adding && templates.data && (
        <PlanForm
          templates={templates.data.items}
          onSaved={(name) => {
            setAdding(false);
            setDone(t('reports.saved', { name }));
            plans.reload();
          }}
        />
      )}
      <Done text={done} />
      <Problem text={plans.problem} />
      {plans.data && plans.data.items.length === 0 && <p class="muted">{t('reports.none')}</p>}
      <div class="plans">
        {(plans.data?.items ?? []).map((plan) => (
          <article class="card plan" key={plan.id} data-plan-id={plan.id}>
            <h2>{plan.name}</h2>
            <dl class="facts">
              <dt>{t('reports.template')}</dt>
              <dd>{templateName(plan.templateId)}</dd>
              <dt>{t('reports.schedule')}</dt>
              <dd data-field="schedule">{scheduleText(plan.cron)}</dd>
              <dt>{t('reports.recipients')}</dt>
              <dd>{plan.recipients.join(', ') || '–'}</dd>
              <dt>{t('reports.format')}</dt>
              <dd>{plan.format.toUpperCase()}</dd>
            </dl>
            <Runs planId={plan.id} operator={operator} />
          </article>
        ))}
      </div>
    </section>
  );
}

function Runs({ planId, operator }: { planId: number; operator: boolean }) {
  const runs = useApi(() => api.GET('/api/reports/plans/{id}/runs', { params: { path: { id: planId }, query: { pageSize: 5 } } }), [planId]);
  const [outcome, setOutcome] = useState<Run | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function sendNow() {
    setBusy(true);
    setProblem(null);
    setOutcome(null);
    const started = await api.POST('/api/reports/plans/{id}/run', { params: { path: { id: planId } } });
    if (!started.data) {
      setBusy(false);
      return setProblem(errorText(started.error, started.response.status));
    }
    let run: Run = started.data;
    for (let i = 0; i < 120 && run.status === 'running'; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      const read = await api.GET('/api/reports/runs/{id}', { params: { path: { id: run.id } } });
      if (read.data) run = read.data;
    }
    setBusy(false);
    setOutcome(run);
    runs.reload();
  }

  return (
    <div>
      {operator && (
        <p class="actions">
          <button type="button" onClick={sendNow} disabled={busy}>
            {busy ? t('reports.sending') : t('reports.sendNow')}
          </button>
        </p>
      )}
      <Problem text={problem} />
      {outcome && (
        <p role="status" class={`outcome ${outcome.delivery ?? 'failed'}`} data-delivery={outcome.delivery ?? ''}>
          {deliveryText(outcome)}
        </p>
      )}
      <h3>{t('reports.history')}</h3>
      {runs.data && runs.data.items.length === 0 && <p class="muted">{t('reports.noRuns')}</p>}
      {runs.data && runs.data.items.length > 0 && (
        <div class="table-scroll">
          <table>
            <thead>
              <tr>
                <th scope="col">{t('reports.started')}</th>
                <th scope="col">{t('reports.outcome')}</th>
                <th scope="col">{t('reports.files')}</th>
              </tr>
            </thead>
            <tbody>
              {runs.data.items.map((run) => (
                <tr key={run.id} data-run-id={run.id}>
                  <td>{dateTime(run.startedAt)}</td>
                  <td class="wrap">{deliveryText(run)}</td>
                  <td>
                    {run.files.map((file) => (
                      <button type="button" class="link" key={file.name} onClick={() => download(run.id, file.name)}>
                        {file.name}
                      </button>
                    ))}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}

function PlanForm({ templates, onSaved }: { templates: Template[]; onSaved: (name: string) => void }) {
  const [templateId, setTemplateId] = useState(String(templateForPeriod(templates, 'month')?.id ?? ''));
  const [name, setName] = useState('');
  const [every, setEvery] = useState<Schedule['every']>('month');
  const [day, setDay] = useState('1');
  const [weekday, setWeekday] = useState('1');
  const [time, setTime] = useState('07:00');
  const [recipients, setRecipients] = useState('');
  const [format, setFormat] = useState<'pdf' | 'csv' | 'json'>('pdf');
  const [problem, setProblem] = useState<string | null>(null);
  const schedule: Schedule =
    every === 'month' ? { every, day: Number(day), time } : every === 'week' ? { every, weekday: Number(weekday), time } : { every, time };
  const template = templates.find((candidate) => String(candidate.id) === templateId);

  async function save(event: Event) {
    event.preventDefault();
    const list = recipients
      .split(/[\s,;]+/)
      .map((address) => address.trim())
      .filter(Boolean);
    const { data, error, response } = await api.POST('/api/reports/plans', {
      body: { name: name.trim() || (template && nameOf(template)) || '', templateId: Number(templateId), cron: toCron(schedule), recipients: list, format },
    });
    if (!data) return setProblem(errorText(error, response.status));
    onSaved(data.name);
  }

  return (
    <form class="card stack" onSubmit={save} noValidate aria-label={t('reports.add')}>
      <Field label={t('reports.template')} hint={template && templateDescription(template)}>
        {(id, hint) => (
          <select id={id} aria-describedby={hint} value={templateId} onChange={(e) => setTemplateId(e.currentTarget.value)}>
            {templates.map((candidate) => (
              <option key={candidate.id} value={candidate.id}>
                {nameOf(candidate)}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label={t('reports.name')}>
        {(id) => <input id={id} maxLength={200} placeholder={template && nameOf(template)} value={name} onInput={(e) => setName(e.currentTarget.value)} />}
      </Field>
      <div class="actions">
        <Field label={t('reports.every')}>
          {(id) => (
            <select
              id={id}
              value={every}
              onChange={(e) => {
                const next = e.currentTarget.value as Schedule['every'];
                if (next === every) return;
                setEvery(next);
                // The template follows the period ("every week" is the weekly report), unless it is about something else.
                setTemplateId(String(templateForPeriod(templates, next, template)?.id ?? templateId));
              }}
            >
              <option value="month">{t('reports.every.month')}</option>
              <option value="week">{t('reports.every.week')}</option>
              <option value="day">{t('reports.every.day')}</option>
            </select>
          )}
        </Field>
        {every === 'month' && (
          <Field label={t('reports.dayOfMonth')}>
            {(id) => (
              <select id={id} value={day} onChange={(e) => setDay(e.currentTarget.value)}>
                {Array.from({ length: 28 }, (_, i) => (
                  <option key={i} value={i + 1}>
                    {i + 1}
                  </option>
                ))}
              </select>
            )}
          </Field>
        )}
        {every === 'week' && (
          <Field label={t('reports.weekday')}>
            {(id) => (
              <select id={id} value={weekday} onChange={(e) => setWeekday(e.currentTarget.value)}>
                {[1, 2, 3, 4, 5, 6, 0].map((n) => (
                  <option key={n} value={n}>
                    {weekdayName(n)}
                  </option>
                ))}
              </select>
            )}
          </Field>
        )}
        <Field label={t('reports.at')}>
          {(id) => <input id={id} type="time" required value={time} onInput={(e) => setTime(e.currentTarget.value || '07:00')} />}
        </Field>
      </div>
      <p class="muted" data-field="schedulePreview">
        {scheduleText(toCron(schedule))}
      </p>
      <Field label={t('reports.recipients')} hint={t('reports.recipientsHint')}>
        {(id, hint) => <textarea id={id} rows={2} aria-describedby={hint} value={recipients} onInput={(e) => setRecipients(e.currentTarget.value)} />}
      </Field>
      <Field label={t('reports.format')}>
        {(id) => (
          <select id={id} value={format} onChange={(e) => setFormat(e.currentTarget.value as typeof format)}>
            {(['pdf', 'csv', 'json'] as const).map((f) => (
              <option key={f} value={f}>
                {label('reports.format', f)}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Problem text={problem} />
      <button type="submit" class="primary">
        {t('reports.save')}
      </button>
    </form>
  );
}
