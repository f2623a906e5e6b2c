// The fault-detection rules (issue 54): each with its published source, what it runs on (or what it is missing), its
// hits and "not a fault" rate; and "try it on history": a rule run over past days of the gateway's history, its
// episodes and their waste, before it is trusted; an admin switches a rule on or off (on lifts a flood pause).
import { useState } from 'preact/hooks';
import { api, errorText } from '../api/client';
import type { Answer } from '../api/types';
import { Field, Problem } from '../components/Field';
import { useApi } from '../components/useApi';
import { dateTime, money, num, percent, t } from '../i18n';
import { can } from '../state/session';

/** A rule run over past days (POST /api/fdd/rules/{id}/replay): its episodes, their waste, what it could not run on. */
type Replay = Answer<'/api/fdd/rules/{id}/replay', 'post'>;

const dayBefore = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString().slice(0, 10);

export default function FaultRules() {
  const rules = useRules();
  const [ruleId, setRuleId] = useState('');
  const [from, setFrom] = useState(dayBefore(7));
  const [to, setTo] = useState(dayBefore(0));
  const [replay, setReplay] = useState<Replay | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [switchProblem, setSwitchProblem] = useState<string | null>(null);
  const operator = can('operator');

  async function run(event: Event) {
    event.preventDefault();
    const id = ruleId || rules.data?.[0]?.id;
    if (!id) return;
    if (!(from < to)) return setProblem(t('fddRules.badPeriod'));
    setBusy(true);
    const { data, error, response } = await api.POST('/api/fdd/rules/{id}/replay', {
      params: { path: { id } },
      body: { from: new Date(`${from}T00:00:00Z`).toISOString(), to: new Date(`${to}T00:00:00Z`).toISOString() },
    });
    setBusy(false);
    if (!data) {
      setReplay(null);
      return setProblem(errorText(error, response.status));
    }
    setProblem(null);
    setReplay(data);
  }

  return (
    <section>
      <h1>{t('fddRules.title')}</h1>
      <p>
        <a href="/faults/by-money">{t('fdd.toByMoney')}</a>
      </p>
      <Problem text={rules.problem} />
      <Problem text={switchProblem} />
      {rules.data && <RulesTable rules={rules.data} admin={can('admin')} switched={rules.reload} failed={setSwitchProblem} />}
      <h2>{t('fddRules.tryTitle')}</h2>
      {operator ? (
        <form class="card stack" onSubmit={run} noValidate aria-busy={busy ? 'true' : undefined}>
          <div class="filters">
            <Field label={t('fdd.rule')}>
              {(id) => (
                <select id={id} value={ruleId} onChange={(e) => setRuleId(e.currentTarget.value)}>
                  {(rules.data ?? []).map((rule) => (
                    <option key={rule.id} value={rule.id}>
                      {rule.title}
                    </option>
                  ))}
                </select>
              )}
            </Field>
            <Field label={t('fddRules.from')}>{(id) => <input id={id} type="date" value={from} onInput={(e) => setFrom(e.currentTarget.value)} />}</Field>
            <Field label={t('fddRules.to')}>{(id) => <input id={id} type="date" value={to} onInput={(e) => setTo(e.currentTarget.value)} />}</Field>
          </div>
          <Problem text={problem} />
          <div class="actions">
            <button type="submit" class="primary" disabled={busy}>
              {t('fddRules.try')}
            </button>
          </div>
        </form>
      ) : (
        <p class="notice">{t('fddRules.operatorOnly')}</p>
      )}
      {replay && (
        <div data-replay="result">
          <p>{t('fddRules.found', { count: replay.episodes.length, kwh: num(replay.wasteKwh, 1), money: money(replay.wasteMoney, replay.currency) })}</p>
          {replay.cannotRun.length > 0 && <p class="notice">{replay.cannotRun.join('; ')}</p>}
          {replay.episodes.length > 0 && (
            <ul class="worklist">
              {replay.episodes.map((e) => (
                <li key={`${e.equipment}-${e.startedAt}`}>
                  <strong>{e.equipment}</strong> {dateTime(e.startedAt)} – {e.endedAt ? dateTime(e.endedAt) : dateTime(e.lastSeenAt)} · {num(e.wasteKwh, 1)} kWh
                  · {money(e.wasteMoney, replay.currency)}
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
    </section>
  );
}

type RuleRow = NonNullable<ReturnType<typeof useRules>['data']>[number];

function useRules() {
  return useApi(() => api.GET('/api/fdd/rules'), []);
}

/** The rules with source, status, hits and "not a fault" rate; an admin's switch per rule. */
function RulesTable({ rules, admin, switched, failed }: { rules: RuleRow[]; admin: boolean; switched: () => void; failed: (problem: string | null) => void }) {
  async function toggle(rule: RuleRow) {
    const enabled = !rule.enabled || rule.paused !== null;
    const { error, response } = await api.PUT('/api/fdd/rules/{id}/switch', { params: { path: { id: rule.id } }, body: { enabled } });
    if (!response.ok) return failed(errorText(error, response.status));
    failed(null);
    switched();
  }

  return (
    <div class="table-wrap">
      <table data-table="fdd-rules">
        <caption>{t('fddRules.caption')}</caption>
        <thead>
          <tr>
            <th scope="col">{t('fdd.rule')}</th>
            <th scope="col">{t('fddRules.source')}</th>
            <th scope="col">{t('fddRules.status')}</th>
            <th scope="col">{t('fddRules.hits')}</th>
            <th scope="col">{t('fddRules.notAFaultRate')}</th>
          </tr>
        </thead>
        <tbody>
          {rules.map((rule) => (
            <tr key={rule.id} data-rule={rule.id}>
              <td>
                <strong>{rule.title}</strong>
                <br />
                <span class="muted">
                  {rule.id} v{rule.version} ·{' '}
                  {rule.enabled ? (rule.paused ? t('fddRules.paused', { reason: rule.paused.reason }) : t('fddRules.on')) : t('fddRules.off')}
                </span>
                {admin && (
                  <>
                    {' '}
                    <button type="button" onClick={() => toggle(rule)}>
                      {rule.enabled && !rule.paused ? t('fddRules.switchOff') : t('fddRules.switchOn')}
                    </button>
                  </>
                )}
              </td>
              <td>
                {rule.source.scheme} {rule.source.ref}
              </td>
              <td>{rule.status.join('; ')}</td>
              <td class="num">{num(rule.hits, 0)}</td>
              <td class="num">{rule.notAFaultRate === null ? '–' : percent(rule.notAFaultRate)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
