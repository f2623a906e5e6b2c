// Admin: users and roles (list, add, change a role), backups (the last run, the drill, the nightly time and how many
// to keep; a backup now, the restore drill now, the backups with a download each), and the box's health (database, gateway, collector, last backup). Each section its own request.
import { useEffect, useState } from 'preact/hooks';
import { api, errorText } from '../api/client';
import { Done, Field, Problem } from '../components/Field';
import { useApi } from '../components/useApi';
import { dateTime, num, t, type Key } from '../i18n';
import { user as me } from '../state/session';
import { AdminLinks } from '../components/adminLinks';
import { saveBlob } from '../components/saveFile';
import { GuidedRestore } from '../components/GuidedRestore';

const ROLES = ['viewer', 'operator', 'admin'] as const;
type Role = (typeof ROLES)[number];

export default function Admin() {
  return (
    <section>
      <h1>{t('admin.title')}</h1>
      <AdminLinks here="/admin" />
      <div class="columns">
        <Users />
        <div class="stack">
          <Health />
          <Box />
          <Backups />
        </div>
      </div>
    </section>
  );
}

/** The box without a shell: version, the HTTPS certificate (warned 30 days before its end), the fleet link. */
function Box() {
  const box = useApi(() => api.GET('/api/system/box'));
  const b = box.data;
  return (
    <section class="card" aria-labelledby="box-heading" data-section="box">
      <h2 id="box-heading">{t('box.title')}</h2>
      <Problem text={box.problem} />
      {b && (
        <>
          {b.https.warning && (
            <p class="notice warn" role="status" data-notice="certificate">
              {b.https.error
                ? t('box.certUnreadable', { error: b.https.error })
                : (b.https.daysLeft ?? 0) < 0
                  ? t('box.certExpired', { at: dateTime(b.https.validTo) })
                  : t('box.certSoon', { days: b.https.daysLeft ?? 0, at: dateTime(b.https.validTo) })}
            </p>
          )}
          <dl class="facts">
            <dt>{t('box.version')}</dt>
            <dd data-field="version">{b.version}</dd>
            <dt>{t('box.running')}</dt>
            <dd>{dateTime(b.startedAt)}</dd>
            <dt>{t('box.https')}</dt>
            <dd data-field="https">
              {b.https.enabled
                ? b.https.subject
                  ? t('box.certificate', { subject: b.https.subject, at: dateTime(b.https.validTo) })
                  : '–'
                : t('box.httpsOff')}
            </dd>
            <dt>{t('box.fleet')}</dt>
            <dd data-field="fleet">
              {b.fleet.joined
                ? t('box.fleetJoined', {
                    url: b.fleet.fleetUrl ?? '',
                    lag: b.fleet.lagSec === null ? '–' : num(b.fleet.lagSec / 60, 0),
                    unsent: num(b.fleet.unsentRows, 0),
                  })
                : t('box.fleetOff')}
              {b.fleet.lastError && <span> {t('box.fleetError', { error: b.fleet.lastError })}</span>}
            </dd>
          </dl>
        </>
      )}
    </section>
  );
}

function Users() {
  const list = useApi(() => api.GET('/api/users', { params: { query: { pageSize: 200 } } }));
  const [problem, setProblem] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [form, setForm] = useState({ username: '', email: '', password: '', role: 'viewer' as Role });

  async function setRole(id: number, username: string, role: Role) {
    const { data, error, response } = await api.PUT('/api/users/{id}/role', { params: { path: { id } }, body: { role } });
    if (!data) return setProblem(errorText(error, response.status));
    setProblem(null);
    setDone(t('admin.roleChanged', { username, role: t(`role.${role}`) }));
    list.reload();
  }

  async function add(event: Event) {
    event.preventDefault();
    const { data, error, response } = await api.POST('/api/users', { body: { ...form, username: form.username.trim(), email: form.email.trim() } });
    if (!data) return setProblem(errorText(error, response.status));
    setProblem(null);
    setDone(t('admin.userAdded', { username: data.username }));
    setForm({ username: '', email: '', password: '', role: 'viewer' });
    list.reload();
  }

  return (
    <section class="card" aria-labelledby="users-heading">
      <h2 id="users-heading">{t('admin.users')}</h2>
      <Problem text={problem ?? list.problem} />
      <Done text={done} />
      <div class="table-scroll">
        <table>
          <thead>
            <tr>
              <th scope="col">{t('admin.username')}</th>
              <th scope="col">{t('field.email')}</th>
              <th scope="col">{t('admin.role')}</th>
              <th scope="col">{t('admin.lastLogin')}</th>
            </tr>
          </thead>
          <tbody>
            {(list.data?.items ?? []).map((person) => (
              <tr key={person.id} data-user={person.username}>
                <th scope="row" class="wrap">
                  {person.username}
                </th>
                <td class="wrap">{person.email}</td>
                <td>
                  <select
                    aria-label={t('admin.roleOf', { username: person.username })}
                    value={person.role}
                    disabled={person.id === me.value?.id}
                    onChange={(e) => setRole(person.id, person.username, e.currentTarget.value as Role)}
                  >
                    {ROLES.map((role) => (
                      <option key={role} value={role}>
                        {t(`role.${role}`)}
                      </option>
                    ))}
                  </select>
                </td>
                <td>{dateTime(person.lastLoginAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <form class="stack" onSubmit={add} noValidate aria-labelledby="add-user-heading">
        <h3 id="add-user-heading">{t('admin.addUser')}</h3>
        <Field label={t('admin.username')}>
          {(id) => <input id={id} autocomplete="off" value={form.username} onInput={(e) => setForm({ ...form, username: e.currentTarget.value })} />}
        </Field>
        <Field label={t('field.email')}>
          {(id) => <input id={id} type="email" autocomplete="off" value={form.email} onInput={(e) => setForm({ ...form, email: e.currentTarget.value })} />}
        </Field>
        <Field label={t('admin.initialPassword')} hint={t('field.passwordHint')}>
          {(id, hint) => (
            <input
              id={id}
              type="password"
              autocomplete="new-password"
              aria-describedby={hint}
              value={form.password}
              onInput={(e) => setForm({ ...form, password: e.currentTarget.value })}
            />
          )}
        </Field>
        <Field label={t('admin.role')}>
          {(id) => (
            <select id={id} value={form.role} onChange={(e) => setForm({ ...form, role: e.currentTarget.value as Role })}>
              {ROLES.map((role) => (
                <option key={role} value={role}>
                  {t(`role.${role}`)}
                </option>
              ))}
            </select>
          )}
        </Field>
        <button type="submit" class="primary">
          {t('admin.addUser')}
        </button>
      </form>
    </section>
  );
}

function Health() {
  const health = useApi(() => api.GET('/api/health'));
  const h = health.data;
  const row = (label: Key, value: string, good: boolean) => (
    <>
      <dt>{t(label)}</dt>
      <dd class={good ? 'good' : 'bad'}>{value}</dd>
    </>
  );
  return (
    <section class="card" aria-labelledby="health-heading">
      <h2 id="health-heading">{t('admin.health')}</h2>
      <Problem text={health.problem} />
      {h && (
        <dl class="facts" data-status={h.status}>
          {row('admin.status', h.status, h.status === 'ok')}
          {row('admin.database', h.database, h.database === 'ok')}
          {row('admin.gateway', h.iot.gateway + (h.iot.lastError ? ` (${h.iot.lastError})` : ''), h.iot.gateway === 'reachable' || h.iot.gateway === 'unknown')}
          {row(
            'admin.collector',
            `${h.collector.state}, ${h.collector.meters - h.collector.metersNotOk}/${h.collector.meters}`,
            h.collector.state !== 'failing',
          )}
          {row('admin.lastBackup', h.backup?.lastGoodAt ? dateTime(h.backup.lastGoodAt) : t('admin.never'), h.backup?.lastStatus !== 'failed')}
          {row('admin.version', `${h.version}, ${t('admin.uptime', { hours: Math.floor(h.uptimeSec / 3600) })}`, true)}
        </dl>
      )}
    </section>
  );
}

function Backups() {
  const schedule = useApi(() => api.GET('/api/system/backup-schedule'));
  const [form, setForm] = useState({ enabled: true, time: '03:30', daily: '7' });
  const [problem, setProblem] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const s = schedule.data;
  const daily = s ? /^(\d{1,2}) (\d{1,2}) \* \* \*$/.exec(s.cron) : null;
  useEffect(() => {
    if (!s) return;
    setForm({
      enabled: s.enabled,
      time: daily ? `${daily[2].padStart(2, '0')}:${daily[1].padStart(2, '0')}` : '03:30',
      daily: String(s.retention.daily),
    });
  }, [s]);

  async function save(event: Event) {
    event.preventDefault();
    const [hour, minute] = form.time.split(':').map(Number);
    const { data, error, response } = await api.PUT('/api/system/backup-schedule', {
      body: { enabled: form.enabled, cron: `${minute} ${hour} * * *`, retention: { ...s!.retention, daily: Number(form.daily) } },
    });
    if (!data) return setProblem(errorText(error, response.status));
    setProblem(null);
    setDone(t('admin.backupSaved'));
    schedule.reload();
  }

  return (
    <section class="card" aria-labelledby="backup-heading">
      <h2 id="backup-heading">{t('admin.backups')}</h2>
      <Problem text={schedule.problem ?? problem} />
      {s && (
        <>
          <dl class="facts">
            <dt>{t('admin.lastRun')}</dt>
            <dd>{s.lastRunAt ? `${dateTime(s.lastRunAt)} (${s.lastStatus ?? '–'})` : t('admin.never')}</dd>
            <dt>{t('admin.nextRun')}</dt>
            {/* In the box's zone, as the time the schedule is set in below: one clock on one card (issue 58). */}
            <dd data-field="nextRun">
              {dateTime(s.nextRunAt, s.timezone)} ({s.timezone})
            </dd>
            <dt>{t('admin.drill')}</dt>
            <dd>{s.drill ? `${dateTime(s.drill.at)} (${s.drill.status}${s.drill.error ? `: ${s.drill.error}` : ''})` : t('admin.never')}</dd>
          </dl>
          <form class="stack" onSubmit={save} noValidate>
            <label class="check">
              <input type="checkbox" checked={form.enabled} onChange={(e) => setForm({ ...form, enabled: e.currentTarget.checked })} />{' '}
              {t('admin.backupEnabled')}
            </label>
            <Field label={t('admin.backupTime', { zone: s.timezone })}>
              {(id) => <input id={id} type="time" value={form.time} onInput={(e) => setForm({ ...form, time: e.currentTarget.value || '03:30' })} />}
            </Field>
            <Field label={t('admin.keepDaily')}>
              {(id) => (
                <input id={id} type="number" min={1} max={1000} value={form.daily} onInput={(e) => setForm({ ...form, daily: e.currentTarget.value })} />
              )}
            </Field>
            {!daily && <p class="muted">{t('admin.customCron', { cron: s.cron })}</p>}
            <Done text={done} />
            <button type="submit" class="primary">
              {t('admin.saveBackup')}
            </button>
          </form>
          <BackupDesk onRan={schedule.reload} />
          <p class="muted">{t('admin.backupRunHint')}</p>
        </>
      )}
    </section>
  );
}

/** A backup now, the restore drill and its result, the backups with a download each (admin, audited by the service). */
function BackupDesk({ onRan }: { onRan: () => void }) {
  const list = useApi(() => api.GET('/api/system/backups'));
  const [busy, setBusy] = useState<'backup' | 'drill' | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [restoring, setRestoring] = useState<{ name: string; createdAt: string } | null>(null);

  async function backupNow() {
    setBusy('backup');
    setDone(null);
    const { data, error, response } = await api.POST('/api/system/backups');
    setBusy(null);
    if (!data) return setProblem(errorText(error, response.status));
    setProblem(data.status === 'ok' ? null : t('admin.backupNotTaken', { reason: data.reason ?? data.status }));
    if (data.status === 'ok') setDone(t('admin.backupTaken', { name: data.name!, size: bytes(data.sizeBytes!) }));
    list.reload();
    onRan();
  }

  async function drillNow() {
    setBusy('drill');
    setDone(null);
    const { data, error, response } = await api.POST('/api/system/backups/drill');
    setBusy(null);
    if (!data) return setProblem(errorText(error, response.status));
    setProblem(data.status === 'ok' ? null : t('admin.drillFailed', { error: data.error ?? '' }));
    if (data.status === 'ok') setDone(t('admin.drillPassed', { backup: data.backup ?? '', tables: data.tables ?? 0, rows: num(data.rows ?? 0, 0) }));
    list.reload();
    onRan();
  }

  async function download(name: string) {
    const { data, error, response } = await api.GET('/api/system/backups/{name}', { params: { path: { name } }, parseAs: 'blob' });
    if (!data) return setProblem(errorText(error, response.status));
    saveBlob(data, name);
  }

  const items = list.data?.items ?? [];
  return (
    <div class="stack" data-section="backup-desk">
      <div class="row">
        <button type="button" class="primary" disabled={busy !== null} aria-busy={busy === 'backup'} onClick={backupNow}>
          {busy === 'backup' ? t('admin.backupRunning') : t('admin.backupNow')}
        </button>{' '}
        <button type="button" disabled={busy !== null || items.length === 0} aria-busy={busy === 'drill'} onClick={drillNow}>
          {busy === 'drill' ? t('admin.drillRunning') : t('admin.drillNow')}
        </button>
      </div>
      <Problem text={list.problem ?? problem} />
      <Done text={done} />
      {restoring && <GuidedRestore {...restoring} onCancel={() => setRestoring(null)} />}
      <h3>{t('admin.backupList')}</h3>
      {items.length === 0 ? (
        <p class="muted">{t('admin.noBackups')}</p>
      ) : (
        <div class="table-scroll">
          <table>
            <thead>
              <tr>
                <th scope="col">{t('admin.backupTakenAt')}</th>
                <th scope="col" class="n">
                  {t('admin.backupSize')}
                </th>
                <th scope="col">
                  <span class="sr-only">{t('admin.download')}</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {items.map((backup) => (
                <tr key={backup.name} data-backup={backup.name}>
                  <th scope="row">{dateTime(backup.createdAt)}</th>
                  <td class="n">{bytes(backup.sizeBytes + (backup.filesBytes ?? 0))}</td>
                  <td>
                    <button type="button" class="link" aria-label={t('admin.downloadBackup', { name: backup.name })} onClick={() => download(backup.name)}>
                      {t('admin.download')}
                    </button>{' '}
                    <button type="button" class="link" aria-label={t('restore.open', { name: backup.name })} onClick={() => setRestoring(backup)}>
                      {t('restore.action')}
                    </button>
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

function bytes(value: number): string {
  return value >= 1048576 ? `${num(value / 1048576, 1)} MiB` : `${num(value / 1024, 0)} KiB`;
}
