// Admin → notification rules: who is mailed about which new alerts (levels, optionally one area) and who next when a
// critical alert stays unacknowledged (GET/POST/PUT/DELETE /api/notification-rules). Addresses are entered one per line
// or separated by commas; the service's 400 reason (e.g. an address it refuses) is shown.
import { useState } from 'preact/hooks';
import { api, errorText } from '../api/client';
import type { Answer } from '../api/types';
import { AdminLinks } from '../components/adminLinks';
import { Done, Field, Problem } from '../components/Field';
import { useApi } from '../components/useApi';
import { label, t } from '../i18n';

const LEVELS = ['critical', 'warning', 'info'] as const;
type Level = (typeof LEVELS)[number];
const addresses = (text: string) =>
  text
    .split(/[\s,;]+/)
    .map((a) => a.trim())
    .filter(Boolean);

const newRule = () => ({ name: '', levels: ['critical'] as Level[], area: '', recipients: '', escalateAfterMin: '', escalateTo: '' });
type RuleDraft = ReturnType<typeof newRule>;
type Rule = Answer<'/api/notification-rules'>['items'][number];

export default function AdminNotifications() {
  const rules = useApi(() => api.GET('/api/notification-rules', { params: { query: { pageSize: 200 } } }));
  const [problem, setProblem] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [form, setForm] = useState(newRule);

  async function add(event: Event) {
    event.preventDefault();
    if (form.levels.length === 0) return setProblem(t('rules.noLevel'));
    if (addresses(form.recipients).length === 0) return setProblem(t('rules.noRecipient'));
    const minutes = form.escalateAfterMin.trim();
    if (minutes && !/^\d+$/.test(minutes)) return setProblem(t('rules.badMinutes'));
    const { data, error, response } = await api.POST('/api/notification-rules', {
      body: {
        name: form.name.trim(),
        levels: form.levels,
        recipients: addresses(form.recipients),
        ...(form.area.trim() ? { area: form.area.trim() } : {}),
        ...(minutes ? { escalateAfterMin: Number(minutes), escalateTo: addresses(form.escalateTo) } : {}),
      },
    });
    if (!data) {
      setDone(null);
      return setProblem(errorText(error, response.status));
    }
    setProblem(null);
    setDone(t('rules.added', { name: data.name }));
    setForm({ ...form, name: '', recipients: '', escalateAfterMin: '', escalateTo: '' });
    rules.reload();
  }

  async function setEnabled(id: number, name: string, enabled: boolean) {
    const { data, error, response } = await api.PUT('/api/notification-rules/{id}', { params: { path: { id } }, body: { enabled } });
    if (!data) return setProblem(errorText(error, response.status));
    setProblem(null);
    setDone(t(enabled ? 'rules.enabledNow' : 'rules.disabledNow', { name }));
    rules.reload();
  }

  async function remove(id: number, name: string) {
    const { error, response } = await api.DELETE('/api/notification-rules/{id}', { params: { path: { id } } });
    if (!response.ok) return setProblem(errorText(error, response.status));
    setProblem(null);
    setDone(t('rules.removed', { name }));
    rules.reload();
  }

  return (
    <section>
      <h1>{t('rules.title')}</h1>
      <AdminLinks here="/admin/notifications" />
      <Problem text={problem ?? rules.problem} />
      <Done text={done} />
      <div class="columns">
        <section class="card" aria-labelledby="rules-heading">
          <h2 id="rules-heading">{t('rules.list')}</h2>
          {rules.data && rules.data.items.length === 0 && <p class="muted">{t('rules.none')}</p>}
          <ul class="worklist">
            {(rules.data?.items ?? []).map((rule) => (
              <RuleItem
                key={`${rule.id}-${rule.updatedAt}`}
                rule={rule}
                onEnabled={(on) => setEnabled(rule.id, rule.name, on)}
                onRemove={() => remove(rule.id, rule.name)}
              />
            ))}
          </ul>
        </section>
        <RuleForm form={form} setForm={setForm} onSubmit={add} />
      </div>
    </section>
  );
}

/** One rule: its levels, area, addresses and escalation; paused or removed from here. */
function RuleItem({ rule, onEnabled, onRemove }: { rule: Rule; onEnabled: (on: boolean) => void; onRemove: () => void }) {
  return (
    <li class={`alert level-${rule.levels[0]}`} data-rule={rule.id}>
      <div class="row">
        <strong class="wrap">{rule.name}</strong>
        {rule.levels.map((level) => (
          <span key={level} class={`badge ${level}`}>
            {label('level', level)}
          </span>
        ))}
        <label class="check when">
          <input type="checkbox" defaultChecked={rule.enabled} onChange={(e) => onEnabled(e.currentTarget.checked)} />
          {t('rules.enabled')}
        </label>
      </div>
      <dl class="facts">
        <dt>{t('rules.area')}</dt>
        <dd class="wrap">{rule.area ?? t('rules.everyArea')}</dd>
        <dt>{t('rules.recipients')}</dt>
        <dd class="wrap" data-field="recipients">
          {rule.recipients.join(', ')}
        </dd>
        {rule.escalateAfterMin !== null && (
          <>
            <dt>{t('rules.escalation')}</dt>
            <dd class="wrap">{t('rules.escalateText', { minutes: rule.escalateAfterMin, to: rule.escalateTo.join(', ') })}</dd>
          </>
        )}
      </dl>
      <button type="button" class="link" onClick={onRemove}>
        {t('rules.remove', { name: rule.name })}
      </button>
    </li>
  );
}

/** A new rule: its name, levels, area, addresses and escalation. */
function RuleForm({ form, setForm, onSubmit }: { form: RuleDraft; setForm: (form: RuleDraft) => void; onSubmit: (event: Event) => void }) {
  return (
    <form class="card stack" onSubmit={onSubmit} noValidate aria-labelledby="add-rule-heading">
      <h2 id="add-rule-heading">{t('rules.add')}</h2>
      <Field label={t('rules.name')}>{(id) => <input id={id} value={form.name} onInput={(e) => setForm({ ...form, name: e.currentTarget.value })} />}</Field>
      <fieldset class="choice">
        <legend>{t('rules.levels')}</legend>
        {LEVELS.map((level) => (
          <label class="check" key={level}>
            <input
              type="checkbox"
              checked={form.levels.includes(level)}
              onChange={(e) => setForm({ ...form, levels: e.currentTarget.checked ? [...form.levels, level] : form.levels.filter((l) => l !== level) })}
            />
            {label('level', level)}
          </label>
        ))}
      </fieldset>
      <Field label={t('rules.area')} hint={t('rules.areaHint')}>
        {(id, hint) => <input id={id} aria-describedby={hint} value={form.area} onInput={(e) => setForm({ ...form, area: e.currentTarget.value })} />}
      </Field>
      <Field label={t('rules.recipients')} hint={t('rules.addressesHint')}>
        {(id, hint) => (
          <textarea id={id} rows={3} aria-describedby={hint} value={form.recipients} onInput={(e) => setForm({ ...form, recipients: e.currentTarget.value })} />
        )}
      </Field>
      <Field label={t('rules.escalateAfter')} hint={t('rules.escalateHint')}>
        {(id, hint) => (
          <input
            id={id}
            inputMode="numeric"
            aria-describedby={hint}
            value={form.escalateAfterMin}
            onInput={(e) => setForm({ ...form, escalateAfterMin: e.currentTarget.value })}
          />
        )}
      </Field>
      <Field label={t('rules.escalateTo')}>
        {(id) => <textarea id={id} rows={2} value={form.escalateTo} onInput={(e) => setForm({ ...form, escalateTo: e.currentTarget.value })} />}
      </Field>
      <div class="actions">
        <button type="submit" class="primary">
          {t('rules.add')}
        </button>
      </div>
    </form>
  );
}
