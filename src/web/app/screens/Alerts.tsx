// The alerts work-list: active, cleared at source but not acknowledged, acknowledged, shelved, resolved; filters by
// level and text; acknowledge / resolve / shelve with a note, bulk acknowledge of the ticked ones, an alert's history,
// and a maintenance record opened from an alert. Operators act; viewers read.
// Requests: one GET /api/alerts per tab (the active tab's list holds the cleared and shelved ones too) and the counts
// once; then the live stream's counts, and the list again when they change (state/live.ts).
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, errorText } from '../api/client';
import type { Alert } from '../api/types';
import { Done, Field, Problem } from '../components/Field';
import { useApi } from '../components/useApi';
import { hasDraft, useDraft } from '../components/useDraft';
import { dateTime, label, num, t } from '../i18n';
import { type AlertCounts, askToNotify, liveAlerts, notifyCritical, useLive } from '../state/live';
import { can } from '../state/session';
import { DraftNotice } from '../components/DraftNotice';

type Tab = 'active' | 'cleared' | 'acknowledged' | 'shelved' | 'resolved';
const TABS: Tab[] = ['active', 'cleared', 'acknowledged', 'shelved', 'resolved'];
type Level = '' | Alert['level'];
type Counts = AlertCounts;

function tabOf(alert: Alert, now: number): Tab {
  if (alert.status !== 'active') return alert.status;
  if (alert.shelvedUntil && Date.parse(alert.shelvedUntil) > now) return 'shelved';
  return alert.clearedAt ? 'cleared' : 'active';
}

const STATUS_FOR: Record<Tab, 'active' | 'acknowledged' | 'resolved'> = {
  active: 'active',
  cleared: 'active',
  shelved: 'active',
  acknowledged: 'acknowledged',
  resolved: 'resolved',
};

/** The Notification API, asked for with a click and never assumed (the browser's own prompt follows). */
function NotifyToggle() {
  if (typeof Notification === 'undefined') return null;
  if (Notification.permission === 'denied') return <p class="muted">{t('live.notifyDenied')}</p>;
  const on = notifyCritical.value;
  return (
    <p>
      <button type="button" class="ghost" aria-pressed={on} onClick={() => void askToNotify(!on)}>
        {t(on ? 'live.notifyOff' : 'live.notify')}
      </button>
    </p>
  );
}

export default function Alerts() {
  const [tab, setTab] = useState<Tab>('active');
  const [level, setLevel] = useState<Level>('');
  const [q, setQ] = useState('');
  const [query, setQuery] = useState('');
  const [picked, setPicked] = useState<Set<number>>(new Set());
  const [open, setOpen] = useState<number | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const list = useApi(
    () =>
      api.GET('/api/alerts', {
        params: { query: { status: [STATUS_FOR[tab]], pageSize: 200, ...(level ? { level: [level] } : {}), ...(query ? { q: query } : {}) } },
      }),
    [tab, level, query],
  );
  const operator = can('operator');
  // One truth per count: the tabs show GET /api/alerts/counts, then the live stream's counts; news reloads the list.
  const fetched = useApi(() => api.GET('/api/alerts/counts'));
  const counts = liveAlerts.value ?? fetched.data;
  useLive('alerts', () => list.reload());
  const now = Date.now();
  const items = (list.data?.items ?? []).filter((alert) => tabOf(alert, now) === tab);
  // A note typed before the session ended (or a reload, or an outage) opens its alert again, once.
  const reopened = useRef(false);
  useEffect(() => {
    if (reopened.current || !list.data || open !== null || !operator) return;
    reopened.current = true;
    const kept = items.find((alert) => hasDraft(noteDraftKey(alert.id)));
    if (kept) setOpen(kept.id);
  }, [list.data]);

  async function bulkAcknowledge() {
    const ids = [...picked];
    const { data, error, response } = await api.POST('/api/alerts/bulk', { body: { action: 'acknowledge', filter: { ids } } });
    if (!data) return setProblem(errorText(error, response.status));
    setProblem(null);
    setDone(t('alerts.bulkDone', { changed: data.changed, skipped: data.skipped }));
    setPicked(new Set());
    list.reload();
    fetched.reload();
  }

  return (
    <section>
      <h1>{t('alerts.title')}</h1>
      <NotifyToggle />
      <AlertTabs
        tab={tab}
        counts={counts}
        onPick={(name) => {
          setTab(name);
          setPicked(new Set());
          setOpen(null);
        }}
      />
      <AlertFilters level={level} setLevel={setLevel} q={q} setQ={setQ} onSearch={() => setQuery(q.trim())} />
      {!operator && tab !== 'resolved' && tab !== 'acknowledged' && (
        <p class="muted" data-hint="viewer">
          {t('alerts.viewerHint')}
        </p>
      )}
      {operator && tab !== 'resolved' && tab !== 'acknowledged' && (
        <p>
          <button type="button" disabled={picked.size === 0} onClick={bulkAcknowledge}>
            {t('alerts.bulkAcknowledge', { n: picked.size })}
          </button>
        </p>
      )}
      <Problem text={problem ?? list.problem} />
      <Done text={done} />
      {list.data && items.length === 0 && <p class="muted">{t('alerts.none')}</p>}
      <ul class="worklist">
        {items.map((alert) => (
          <AlertRow
            key={alert.id}
            alert={alert}
            operator={operator}
            pickable={operator && tab !== 'resolved' && tab !== 'acknowledged'}
            picked={picked.has(alert.id)}
            onPicked={(on) => {
              const next = new Set(picked);
              if (on) next.add(alert.id);
              else next.delete(alert.id);
              setPicked(next);
            }}
            open={open === alert.id}
            onOpen={() => setOpen(open === alert.id ? null : alert.id)}
            onChanged={(text) => {
              setDone(text);
              setOpen(null);
              list.reload();
            }}
          />
        ))}
      </ul>
    </section>
  );
}

/** The tab's unsaved note on an alert (components/useDraft.ts): kept as typed, gone once an action with it succeeds. */
/** The tabs with their counts (GET /api/alerts/counts, then the live stream's). */
function AlertTabs({ tab, counts, onPick }: { tab: Tab; counts: Counts | null | undefined; onPick: (tab: Tab) => void }) {
  return (
    <div class="tabs" role="tablist" aria-label={t('alerts.title')}>
      {TABS.map((name) => (
        <button type="button" role="tab" key={name} aria-selected={tab === name} onClick={() => onPick(name)}>
          {label('alerts.tab', name)}
          {counts && (
            <span class="count" data-count={counts[name]}>
              {' '}
              {num(counts[name], 0)}
            </span>
          )}
        </button>
      ))}
    </div>
  );
}

/** The level and the words searched for (sent on submit). */
function AlertFilters(props: { level: Level; setLevel: (level: Level) => void; q: string; setQ: (q: string) => void; onSearch: () => void }) {
  const { level, setLevel, q, setQ, onSearch } = props;
  return (
    <form
      class="filters"
      onSubmit={(event) => {
        event.preventDefault();
        onSearch();
      }}
    >
      <Field label={t('alerts.level')}>
        {(id) => (
          <select id={id} value={level} onChange={(e) => setLevel(e.currentTarget.value as Level)}>
            <option value="">{t('alerts.anyLevel')}</option>
            <option value="critical">{t('level.critical')}</option>
            <option value="warning">{t('level.warning')}</option>
            <option value="info">{t('level.info')}</option>
          </select>
        )}
      </Field>
      <Field label={t('alerts.search')}>{(id) => <input id={id} type="search" value={q} onInput={(e) => setQ(e.currentTarget.value)} />}</Field>
      <button type="submit">{t('alerts.filter')}</button>
    </form>
  );
}

/** One alert: ticked for a bulk acknowledgement, opened for its detail. */
function AlertRow(props: {
  alert: Alert;
  operator: boolean;
  pickable: boolean;
  picked: boolean;
  onPicked: (on: boolean) => void;
  open: boolean;
  onOpen: () => void;
  onChanged: (text: string) => void;
}) {
  const { alert, operator, pickable, picked, onPicked, open, onOpen, onChanged } = props;
  return (
    <li class={`alert level-${alert.level}`} data-alert-id={alert.id}>
      <div class="row">
        {pickable && (
          <input type="checkbox" aria-label={t('alerts.pick', { title: alert.title })} checked={picked} onChange={(e) => onPicked(e.currentTarget.checked)} />
        )}
        <span class={`badge ${alert.level}`}>{t(`level.${alert.level}`)}</span>
        <button type="button" class="link title" aria-expanded={open} onClick={onOpen}>
          {alert.title}
        </button>
        <span class="muted when">
          {dateTime(alert.occurredAt)}
          {alert.area ? ` · ${alert.area}` : ''}
        </span>
      </div>
      {alert.clearedAt && alert.status === 'active' && <p class="muted">{t('alerts.clearedAt', { at: dateTime(alert.clearedAt) })}</p>}
      {open && <AlertDetail alert={alert} operator={operator} onChanged={onChanged} />}
    </li>
  );
}

const noteDraftKey = (id: number) => `alert.note.${id}`;

function AlertDetail({ alert, operator, onChanged }: { alert: Alert; operator: boolean; onChanged: (text: string) => void }) {
  const draft = useDraft(noteDraftKey(alert.id), { note: '' });
  const note = draft.values.note;
  const setNote = (next: string) => draft.set({ note: next });
  const [minutes, setMinutes] = useState('60');
  const [problem, setProblem] = useState<string | null>(null);
  const history = useApi(() => api.GET('/api/alerts/{id}/notes', { params: { path: { id: alert.id } } }), [alert.id]);
  const path = { params: { path: { id: alert.id } } };

  async function act(kind: 'acknowledge' | 'resolve' | 'shelve' | 'maintenance') {
    const answer =
      kind === 'acknowledge'
        ? await api.POST('/api/alerts/{id}/acknowledge', { ...path, body: note ? { note } : {} })
        : kind === 'resolve'
          ? await api.POST('/api/alerts/{id}/resolve', { ...path, body: note ? { note } : {} })
          : kind === 'shelve'
            ? await api.POST('/api/alerts/{id}/shelve', { ...path, body: { durationMin: Number(minutes), reason: note } })
            : await api.POST('/api/alerts/{id}/maintenance', { ...path, body: note ? { description: note } : {} });
    if (!answer.response.ok) return setProblem(errorText(answer.error, answer.response.status));
    draft.saved();
    onChanged(t(`alerts.done.${kind}`, { title: alert.title }));
  }

  return (
    <div class="detail">
      <p class="message">{alert.message}</p>
      <dl class="facts">
        {alert.source && (
          <>
            <dt>{t('alerts.source')}</dt>
            <dd>{alert.source}</dd>
          </>
        )}
        {alert.shelvedUntil && (
          <>
            <dt>{t('alerts.shelvedUntil')}</dt>
            <dd>
              {dateTime(alert.shelvedUntil)} {alert.shelveReason ? `(${alert.shelveReason})` : ''}
            </dd>
          </>
        )}
      </dl>
      <h3>{t('alerts.history')}</h3>
      {history.data && history.data.items.length === 0 && <p class="muted">{t('alerts.noHistory')}</p>}
      <ol class="history">
        {(history.data?.items ?? []).map((entry) => (
          <li key={entry.id}>
            <span class="muted">{dateTime(entry.at)}</span> <strong>{entry.username ?? '–'}</strong> {t(`note.${entry.kind}`)}
            {entry.text ? `: ${entry.text}` : ''}
          </li>
        ))}
      </ol>
      {operator && alert.status !== 'resolved' && (
        <form class="stack" onSubmit={(e) => e.preventDefault()}>
          <DraftNotice draft={draft} />
          <Field label={t('alerts.note')}>
            {(id) => <textarea id={id} rows={2} maxLength={2000} value={note} onInput={(e) => setNote(e.currentTarget.value)} />}
          </Field>
          <Problem text={problem} />
          <div class="actions">
            {alert.status === 'active' && (
              <button type="button" class="primary" onClick={() => act('acknowledge')}>
                {t('alerts.acknowledge')}
              </button>
            )}
            <button type="button" onClick={() => act('resolve')}>
              {t('alerts.resolve')}
            </button>
            <button type="button" onClick={() => act('maintenance')}>
              {t('alerts.createMaintenance')}
            </button>
          </div>
          {alert.status === 'active' && (
            <div class="actions">
              <Field label={t('alerts.shelveFor')}>
                {(id) => (
                  <select id={id} value={minutes} onChange={(e) => setMinutes(e.currentTarget.value)}>
                    <option value="60">{t('alerts.hours', { n: 1 })}</option>
                    <option value="240">{t('alerts.hours', { n: 4 })}</option>
                    <option value="1440">{t('alerts.hours', { n: 24 })}</option>
                    <option value="10080">{t('alerts.days', { n: 7 })}</option>
                  </select>
                )}
              </Field>
              <button type="button" disabled={!note.trim()} onClick={() => act('shelve')} title={t('alerts.shelveNeedsNote')}>
                {t('alerts.shelve')}
              </button>
            </div>
          )}
        </form>
      )}
    </div>
  );
}
