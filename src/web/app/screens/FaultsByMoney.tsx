// Faults found by the rules (issue 54), ranked by the money they waste per day: each with its rule, equipment, span,
// evidence and the way its waste was estimated; an operator can mark one "not a fault" with a reason (kept and counted
// against the rule), or snooze it until a time (the rule finding it again meanwhile continues it, no new fault) and lift the snooze early. Each
// equipment links to its view (points, faults, the evidence chart). The records themselves are on the faults screen, where a maintenance record is one click away.
import { useState } from 'preact/hooks';
import { api, errorText } from '../api/client';
import { Done, Field, Problem } from '../components/Field';
import { useApi } from '../components/useApi';
import { dateTime, money, num, t } from '../i18n';
import { can } from '../state/session';

type EpisodeRow = NonNullable<ReturnType<typeof useEpisodes>['data']>[number];

function useEpisodes(openOnly: boolean) {
  return useApi(() => api.GET('/api/fdd/episodes', { params: { query: { limit: 100, ...(openOnly ? { open: true } : {}) } } }), [openOnly]);
}

export default function FaultsByMoney() {
  const [openOnly, setOpenOnly] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const list = useEpisodes(openOnly);
  const operator = can('operator');
  const settle = (outcome: { problem: string } | { done: string }) => {
    if ('problem' in outcome) return setProblem(outcome.problem);
    setProblem(null);
    setDone(outcome.done);
    list.reload();
  };

  const episodes = list.data ?? [];
  return (
    <section>
      <h1>{t('fdd.title')}</h1>
      <p class="muted">{t('fdd.intro')}</p>
      <p>
        <a href="/faults">{t('fdd.toFaults')}</a> · <a href="/faults/rules">{t('fddRules.title')}</a>
      </p>
      <div class="filters">
        <label>
          <input type="checkbox" checked={openOnly} onChange={(e) => setOpenOnly(e.currentTarget.checked)} /> {t('fdd.openOnly')}
        </label>
      </div>
      <Problem text={problem ?? list.problem} />
      <Done text={done} />
      {list.data && episodes.length === 0 && <p class="notice">{t('fdd.none')}</p>}
      {episodes.length > 0 && (
        <div class="table-wrap">
          <table data-table="fdd-episodes">
            <caption>{t('fdd.caption')}</caption>
            <thead>
              <tr>
                <th scope="col">{t('fdd.moneyPerDay')}</th>
                <th scope="col">{t('fdd.kwhPerDay')}</th>
                <th scope="col">{t('fdd.rule')}</th>
                <th scope="col">{t('fdd.equipment')}</th>
                <th scope="col">{t('fdd.span')}</th>
                <th scope="col">{t('fdd.evidence')}</th>
                {operator && <th scope="col">{t('fdd.action')}</th>}
              </tr>
            </thead>
            <tbody>
              {episodes.map((e) => (
                <tr key={e.id} data-episode={e.id}>
                  <td class="num">{money(e.wasteMoneyPerDay, e.currency)}</td>
                  <td class="num">{num(e.wasteKwhPerDay, 1)}</td>
                  <td>
                    <strong>{e.title}</strong>
                    <br />
                    <span class="muted">
                      {e.ruleId} v{e.ruleVersion} · {e.method}
                    </span>
                  </td>
                  <td>
                    <a href={`/faults/equipment/${encodeURIComponent(e.equipment)}?episode=${e.id}`}>{e.equipment}</a>
                  </td>
                  <td>
                    {dateTime(e.startedAt)} – {e.endedAt ? dateTime(e.endedAt) : t('fdd.ongoing', { lastSeen: dateTime(e.lastSeenAt) })}
                  </td>
                  <td class="muted">
                    {Object.entries(e.evidence)
                      .map(([name, value]) => `${name} ${num(value, 2)}`)
                      .join(', ')}
                  </td>
                  {operator && (
                    <td>
                      <EpisodeActions e={e} settle={settle} />
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

/** An operator's actions on one episode: "not a fault" with a reason, snooze until a time, lift a snooze. */
function EpisodeActions({ e, settle }: { e: EpisodeRow; settle: (outcome: { problem: string } | { done: string }) => void }) {
  const [form, setForm] = useState<'none' | 'dismiss' | 'snooze'>('none');
  const [reason, setReason] = useState('');
  const [until, setUntil] = useState('');
  const [snoozeReason, setSnoozeReason] = useState('');
  const answered = (outcome: { error?: unknown; response: Response }, done: string) => {
    if (!outcome.response.ok) return settle({ problem: errorText(outcome.error, outcome.response.status) });
    setForm('none');
    settle({ done });
  };

  async function notAFault(event: Event) {
    event.preventDefault();
    answered(await api.POST('/api/fdd/episodes/{id}/not-a-fault', { params: { path: { id: e.id } }, body: { reason } }), t('fdd.dismissed'));
  }

  async function snooze(event: Event) {
    event.preventDefault();
    // The field is the browser's local time; the API takes an instant.
    const at = new Date(until);
    if (Number.isNaN(at.getTime())) return settle({ problem: t('fdd.snoozeUntil') });
    const body = { until: at.toISOString(), ...(snoozeReason.trim() ? { reason: snoozeReason.trim() } : {}) };
    answered(await api.POST('/api/fdd/episodes/{id}/snooze', { params: { path: { id: e.id } }, body }), t('fdd.snoozed'));
  }

  async function unsnooze() {
    answered(await api.DELETE('/api/fdd/episodes/{id}/snooze', { params: { path: { id: e.id } } }), t('fdd.unsnoozed'));
  }

  if (e.notAFault) return <span class="muted">{t('fdd.notAFaultBecause', { reason: e.notAFault.reason })}</span>;
  return (
    <>
      {e.snoozed && Date.parse(e.snoozed.until) > Date.now() && (
        <p class="muted" data-snoozed={e.id}>
          {t('fdd.snoozedUntil', { until: dateTime(e.snoozed.until) })}{' '}
          <button type="button" onClick={unsnooze}>
            {t('fdd.unsnooze')}
          </button>
        </p>
      )}
      {form === 'snooze' ? (
        <form class="stack" onSubmit={snooze}>
          <Field label={t('fdd.snoozeUntil')}>
            {(id) => <input id={id} type="datetime-local" value={until} required onInput={(event) => setUntil(event.currentTarget.value)} />}
          </Field>
          <Field label={t('fdd.snoozeReason')}>
            {(id) => <input id={id} value={snoozeReason} maxLength={1000} onInput={(event) => setSnoozeReason(event.currentTarget.value)} />}
          </Field>
          <button type="submit" class="primary">
            {t('fdd.confirmSnooze')}
          </button>
        </form>
      ) : form === 'dismiss' ? (
        <form class="stack" onSubmit={notAFault}>
          <Field label={t('fdd.reason')}>
            {(id) => <input id={id} value={reason} minLength={3} required onInput={(event) => setReason(event.currentTarget.value)} />}
          </Field>
          <button type="submit" class="primary">
            {t('fdd.confirmNotAFault')}
          </button>
        </form>
      ) : (
        <span class="actions">
          <button type="button" onClick={() => setForm('dismiss')}>
            {t('fdd.notAFault')}
          </button>{' '}
          <button type="button" onClick={() => setForm('snooze')}>
            {t('fdd.snooze')}
          </button>
        </span>
      )}
    </>
  );
}
