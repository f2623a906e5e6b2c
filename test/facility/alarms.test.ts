// Gateway alarms become alerts (simulator over HTTP, real SQLite, real SMTP): one per occurrence, clearing seen, no
// duplicate after a restart; notes, shelving, bulk moves; notification rules, escalation and flood summaries.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { AlarmNotifier } from '../../src/facility/notifications/notifier.ts';
import { AlertService } from '../../src/facility/alerts/service.ts';
import { AuditLog } from '../../src/platform/db/auditTrail.ts';
import { startGatewaySimulator, type RunningSimulator } from '../../src/gateway/simulator/server.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { createMailer } from '../../src/platform/mail/mailer.ts';
import { OverviewService } from '../../src/screens/overview/service.ts';
import { startMailCatcher, type MailCatcher } from '../helpers/smtp.ts';
import { eventually, startTestServer, type TestServer } from '../helpers/server.ts';
import { siteMailReader } from '../../src/platform/mail/siteMail.ts';
import { siteSettings } from '../../src/site/index.ts';

const POLL = '1s';
let sim: RunningSimulator;
let mail: MailCatcher;
before(async () => {
  sim = await startGatewaySimulator();
  mail = await startMailCatcher();
});
after(async () => {
  await sim.close();
  await mail.close();
});

async function simCall(path: string, body: unknown): Promise<any> {
  const token = (
    (await (
      await fetch(`${sim.url}/auth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'ems', password: 'ems-simulator' }),
      })
    ).json()) as { token: string }
  ).token;
  const response = await fetch(`${sim.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  });
  return response.json();
}

const until = <T>(what: string, probe: () => Promise<T | undefined>) => eventually(probe, what, 15_000);

const gatewayEnv = (dataDir?: string) => ({
  EMS_IOT_BASE_URL: sim.url,
  EMS_IOT_USERNAME: 'ems',
  EMS_IOT_PASSWORD: 'ems-simulator',
  EMS_ALARM_POLL_INTERVAL: POLL,
  EMS_SMTP_URL: mail.url,
  ...(dataDir && { EMS_DATA_DIR: dataDir }),
});

describe('gateway alarms → alerts', () => {
  test('an alarm raised at the gateway is an alert within two polls, mailed to the rule; its clearing is seen; a restart duplicates nothing', async () => {
    let server = await startTestServer(gatewayEnv());
    try {
      const admin = (await server.createUser({ role: 'admin' })).accessToken;
      const rule = await server.request('POST', '/api/notification-rules', {
        token: admin,
        body: { name: 'Plant', levels: ['critical'], recipients: ['plant@example.test'] },
      });
      assert.equal(rule.status, 201, rule.text);
      const raisedAt = Date.now();
      const alarm = await simCall('/sim/alarms', { code: 'chiller.1', level: 'critical', message: 'Chiller 1 tripped' });
      const alert = await until('the alert', async () => {
        const list = await server.request('GET', '/api/alerts?q=Chiller%201%20tripped', { token: admin });
        return list.body.items[0];
      });
      const delayMs = Date.parse(alert.createdAt) - raisedAt;
      console.log(`# alarm → alert delay ${delayMs} ms (poll every ${POLL})`);
      assert.equal(alert.level, 'critical');
      assert.equal(alert.source, 'chiller.1');
      assert.equal(alert.alarmKey, `chiller.1@${alarm.raisedAt}`);
      assert.equal(alert.status, 'active');
      assert.match(
        await until('the mail', async () => mail.messages.find((m) => m.to.includes('plant@example.test') && m.raw.includes('Chiller 1 tripped'))?.raw),
        /EMS critical/,
      );
      const sends = await until('the send record', async () => {
        const record = await server.request('GET', `/api/alerts/${alert.id}/notifications`, { token: admin });
        return record.body.items.length ? record.body.items : undefined;
      });
      assert.deepEqual(
        sends.map((s: any) => [s.kind, s.recipient, s.status]),
        [['alert', 'plant@example.test', 'delivered']],
      );

      assert.deepEqual(await simCall('/sim/alarms/clear', { id: alarm.id }), { success: true });
      const cleared = await until('the clearing', async () => {
        const current = (await server.request('GET', `/api/alerts/${alert.id}`, { token: admin })).body;
        return current.clearedAt ? current : undefined;
      });
      assert.equal(cleared.status, 'active', 'cleared at the gateway, still to be acknowledged (ISA-18.2)');

      const before = (await server.request('GET', '/api/alerts?pageSize=200', { token: admin })).body.total;
      const { dataDir } = server;
      await server.service.close();
      server = await startTestServer(gatewayEnv(dataDir));
      await sleep(3000); // three polls of the restarted service
      const afterRestart = await server.request('GET', '/api/alerts?pageSize=200', { token: (await server.createUser({ role: 'admin' })).accessToken });
      assert.equal(afterRestart.body.total, before, 'no alert raised twice');
      const keys = afterRestart.body.items.map((item: any) => item.alarmKey).filter(Boolean);
      assert.equal(new Set(keys).size, keys.length);
    } finally {
      await server.close();
    }
  });
});

describe('working with alerts', () => {
  let server: TestServer;
  let operator: Awaited<ReturnType<TestServer['createUser']>>;
  before(async () => {
    server = await startTestServer();
    operator = await server.createUser({ role: 'operator' });
  });
  after(() => server.close());
  const create = async (body: Record<string, unknown>) => (await server.request('POST', '/api/alerts', { token: operator.accessToken, body })).body;

  test('acknowledge, resolve and comment carry notes shown with who and when', async () => {
    const alert = await create({ title: 'Boiler pressure', level: 'warning' });
    assert.equal(
      (await server.request('POST', `/api/alerts/${alert.id}/acknowledge`, { token: operator.accessToken, body: { note: 'on my way' } })).status,
      200,
    );
    assert.equal(
      (await server.request('POST', `/api/alerts/${alert.id}/notes`, { token: operator.accessToken, body: { text: 'valve replaced' } })).status,
      201,
    );
    assert.equal((await server.request('POST', `/api/alerts/${alert.id}/resolve`, { token: operator.accessToken })).status, 200);
    const notes = (await server.request('GET', `/api/alerts/${alert.id}/notes`, { token: operator.accessToken })).body.items;
    assert.deepEqual(
      notes.map((n: any) => [n.kind, n.text, n.username]),
      [
        ['acknowledge', 'on my way', operator.user.username],
        ['comment', 'valve replaced', operator.user.username],
        ['resolve', '', operator.user.username],
      ],
    );
    assert.ok(notes.every((n: any) => Number.isFinite(Date.parse(n.at))));
  });

  test('a shelved alert leaves the active counts until the shelf expires, or until unshelved', async () => {
    const alert = await create({ title: 'Noisy sensor', level: 'critical' });
    const overview = new OverviewService(server.service.deps.db);
    const active = (at: Date) => overview.stats(at).criticalAlerts;
    const start = Date.now();
    const countBefore = active(new Date(start));
    let now = start;
    const alerts = new AlertService(server.service.deps.db, new AuditLog(server.service.deps.db), () => now);
    alerts.shelve(alert.id, { durationMin: 30, reason: 'sensor being replaced' }, { id: operator.user.id, username: operator.user.username });
    assert.equal(active(new Date(start + 1000)), countBefore - 1);
    assert.equal(active(new Date(start + 30 * 60_000 - 1)), countBefore - 1, 'still shelved a moment before expiry');
    assert.equal(active(new Date(start + 30 * 60_000)), countBefore, 'back at the expiry');
    now = start + 1000;
    const unshelved = await server.request('POST', `/api/alerts/${alert.id}/unshelve`, { token: operator.accessToken });
    assert.equal(unshelved.status, 200);
    assert.equal(unshelved.body.shelvedUntil, null);
    const shelved = await server.request('POST', `/api/alerts/${alert.id}/shelve`, { token: operator.accessToken, body: { durationMin: 60, reason: 'again' } });
    assert.equal(shelved.status, 200);
    assert.equal(shelved.body.shelveReason, 'again');
    const dashboard = (await server.request('GET', '/api/dashboard')).body;
    assert.equal(dashboard.overview.criticalAlerts, active(new Date()));
  });

  test('bulk acknowledge of a filtered set: each audited, moves that do not apply skipped', async () => {
    const tag = `bulk-${Date.now()}`;
    const ids = [];
    for (let i = 0; i < 5; i += 1) ids.push((await create({ title: `${tag} ${i}`, level: 'info' })).id);
    await server.request('POST', `/api/alerts/${ids[0]}/resolve`, { token: operator.accessToken });
    const result = await server.request('POST', '/api/alerts/bulk', {
      token: operator.accessToken,
      body: { action: 'acknowledge', filter: { q: tag }, note: 'seen, all of them' },
    });
    assert.equal(result.status, 200, result.text);
    assert.deepEqual(result.body, { matched: 5, changed: 4, skipped: 1 });
    const audited = server.service.deps.db.sqlite
      .prepare("SELECT count(*) FROM audit_log WHERE resource = 'alerts' AND action = 'acknowledge' AND resource_id IN (SELECT value FROM json_each(?))")
      .pluck()
      .get(JSON.stringify(ids.map(String)));
    assert.equal(audited, 4);
    const refused = await server.request('POST', '/api/alerts/bulk', { token: operator.accessToken, body: { action: 'shelve', filter: { q: tag } } });
    assert.equal(refused.status, 400);
  });

  test('one call opens maintenance linked to an alert or a fault', async () => {
    const alert = await create({ title: 'AHU-2 belt slipping', level: 'warning', source: 'ahu2' });
    const fromAlert = await server.request('POST', `/api/alerts/${alert.id}/maintenance`, { token: operator.accessToken, body: {} });
    assert.equal(fromAlert.status, 201, fromAlert.text);
    assert.deepEqual(
      [fromAlert.body.alertId, fromAlert.body.equipment, fromAlert.body.type, fromAlert.body.status],
      [alert.id, 'ahu2', 'corrective', 'planned'],
    );
    const fault = (
      await server.request('POST', '/api/faults', {
        token: operator.accessToken,
        body: { device: 'pump-3', code: 'E42', description: 'seal leak', severity: 'high' },
      })
    ).body;
    const fromFault = await server.request('POST', `/api/faults/${fault.id}/maintenance`, { token: operator.accessToken, body: { type: 'inspection' } });
    assert.equal(fromFault.status, 201);
    assert.deepEqual([fromFault.body.faultId, fromFault.body.equipment, fromFault.body.type], [fault.id, 'pump-3', 'inspection']);
    assert.equal((await server.request('POST', '/api/alerts/999999/maintenance', { token: operator.accessToken, body: {} })).status, 404);
  });
});

describe('notifications', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.close());
  const logger = createLogger('silent');

  test('1,000 alerts in a burst: 10 mails each, then one summary per recipient in the window', async () => {
    const db = server.service.deps.db;
    const audit = new AuditLog(db);
    const tag = `flood${Date.now()}`;
    const recipients = [`a-${tag}@example.test`, `b-${tag}@example.test`];
    await server.request('POST', '/api/notification-rules', {
      token: (await server.createUser({ role: 'admin' })).accessToken,
      body: { name: tag, levels: ['warning'], area: tag, recipients },
    });
    const notifier = new AlarmNotifier({
      db,
      mailer: createMailer({ smtpUrl: mail.url, from: 'EMS <ems@localhost>', logger }),
      logger,
      publicUrl: 'http://ems.local',
      siteMail: siteMailReader(siteSettings(db), 'http://ems.local'),
      summaryDelayMs: 200,
    });
    const alerts = new AlertService(db, audit);
    alerts.onCreated((alert) => notifier.alertRaised(alert));
    for (let i = 0; i < 1000; i += 1) alerts.create({ title: `${tag} ${i}`, level: 'warning', area: tag }, null);
    await until('the summaries', async () =>
      mail.messages.filter((m) => m.raw.includes('new alerts arrived faster')).filter((m) => recipients.some((r) => m.to.includes(r))).length >= 2
        ? true
        : undefined,
    );
    await notifier.idle();
    await sleep(500);
    for (const recipient of recipients) {
      const to = mail.messages.filter((m) => m.to.includes(recipient));
      assert.equal(to.filter((m) => m.raw.includes('EMS warning')).length, 10, recipient);
      const summaries = to.filter((m) => m.raw.includes('new alerts arrived faster'));
      assert.equal(summaries.length, 1, `one summary for ${recipient}`);
      assert.match(summaries[0].raw, /990 new alerts/);
    }
    const recorded = db.sqlite
      .prepare('SELECT kind, count(*) FROM notification_sends WHERE recipient IN (?, ?) GROUP BY kind ORDER BY kind')
      .raw()
      .all(...recipients);
    assert.deepEqual(recorded, [
      ['alert', 20],
      ['summary', 2],
    ]);
    await notifier.stop();
  });

  test('a critical alert not acknowledged within N minutes escalates to the next list, once; an acknowledged one does not', async () => {
    const db = server.service.deps.db;
    const audit = new AuditLog(db);
    const tag = `esc${Date.now()}`;
    const admin = (await server.createUser({ role: 'admin' })).accessToken;
    const rule = await server.request('POST', '/api/notification-rules', {
      token: admin,
      body: {
        name: tag,
        levels: ['critical'],
        area: tag,
        recipients: [`duty-${tag}@example.test`],
        escalateAfterMin: 15,
        escalateTo: [`boss-${tag}@example.test`],
      },
    });
    assert.equal(rule.status, 201);
    let now = Date.now();
    const notifier = new AlarmNotifier({
      db,
      mailer: createMailer({ smtpUrl: mail.url, from: 'EMS <ems@localhost>', logger }),
      logger,
      publicUrl: 'http://ems.local',
      siteMail: siteMailReader(siteSettings(db), 'http://ems.local'),
      now: () => now,
    });
    const alerts = new AlertService(db, audit, () => now);
    alerts.onCreated((alert) => notifier.alertRaised(alert));
    const start = now;
    const late = alerts.create({ title: `${tag} late`, level: 'critical', area: tag, occurredAt: new Date(start).toISOString() }, null);
    const handled = alerts.create({ title: `${tag} handled`, level: 'critical', area: tag, occurredAt: new Date(start).toISOString() }, null);
    await notifier.idle();
    alerts.transition(handled.id, 'acknowledged', { id: null, username: 'test' });
    now = start + 15 * 60_000 - 1000;
    assert.equal(await notifier.checkEscalations(), 0, 'not before the deadline');
    now = start + 15 * 60_000;
    assert.equal(await notifier.checkEscalations(), 1, 'at the deadline, only the unacknowledged one');
    assert.equal(await notifier.checkEscalations(), 0, 'once');
    const escalations = mail.messages.filter((m) => m.to.includes(`boss-${tag}@example.test`));
    assert.equal(escalations.length, 1);
    assert.match(escalations[0].raw, new RegExp(`${tag} late`));
    assert.deepEqual(
      notifier.sends(late.id).map((s) => s.kind),
      ['alert', 'escalation'],
    );
  });

  test('a failed send is recorded with its reason on the alert', async () => {
    const db = server.service.deps.db;
    const tag = `fail${Date.now()}`;
    await server.request('POST', '/api/notification-rules', {
      token: (await server.createUser({ role: 'admin' })).accessToken,
      body: { name: tag, levels: ['info'], area: tag, recipients: [`x-${tag}@example.test`] },
    });
    const notifier = new AlarmNotifier({
      db,
      mailer: createMailer({ smtpUrl: 'smtp://127.0.0.1:1', from: 'EMS <ems@localhost>', logger }),
      logger,
      publicUrl: 'http://ems.local',
      siteMail: siteMailReader(siteSettings(db), 'http://ems.local'),
    });
    const alerts = new AlertService(db, new AuditLog(db));
    alerts.onCreated((alert) => notifier.alertRaised(alert));
    const alert = alerts.create({ title: tag, level: 'info', area: tag }, null);
    await notifier.idle();
    const [send] = notifier.sends(alert.id);
    assert.equal(send.status, 'failed');
    assert.match(send.error!, /ECONNREFUSED|connect/i);
  });
});
