// Hardening round 3, the alarm pipeline: escalation covers alerts folded into flood summaries (15 at once, thousands
// unacknowledged), a hostile gateway's alarms are bounded and range-checked, a gateway whose raisedAt moves with its
// clock raises one alert, acknowledge never answers 400, and the public payload carries no gateway alarm text.
import assert from 'node:assert/strict';
import type http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { AlarmNotifier, ESCALATION_BATCH } from '../../src/facility/notifications/notifier.ts';
import { AlarmPoller } from '../../src/facility/notifications/poller.ts';
import { AlertService } from '../../src/facility/alerts/service.ts';
import { AuditLog } from '../../src/platform/db/auditTrail.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { createMailer } from '../../src/platform/mail/mailer.ts';
import { startFakeGateway, type FakeGateway } from '../helpers/fakeGateway.ts';
import { startMailCatcher, type MailCatcher } from '../helpers/smtp.ts';
import { eventually, startTestServer, type TestServer } from '../helpers/server.ts';
import { siteMailReader } from '../../src/platform/mail/siteMail.ts';
import { siteSettings } from '../../src/site/index.ts';

const logger = createLogger('silent');
let mail: MailCatcher;
before(async () => {
  mail = await startMailCatcher();
});
after(() => mail.close());

describe('escalation covers every critical alert its rule covers', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.close());

  async function rig(tag: string, now: () => number) {
    const admin = (await server.createUser({ role: 'admin' })).accessToken;
    const rule = await server.request('POST', '/api/notification-rules', {
      token: admin,
      body: {
        name: tag,
        levels: ['critical'],
        area: tag,
        recipients: [`duty-${tag}@example.test`],
        escalateAfterMin: 15,
        escalateTo: [`boss-${tag}@example.test`, `deputy-${tag}@example.test`],
      },
    });
    assert.equal(rule.status, 201, rule.text);
    const db = server.service.deps.db;
    const notifier = new AlarmNotifier({
      db,
      mailer: createMailer({ smtpUrl: mail.url, from: 'EMS <ems@localhost>', logger }),
      logger,
      publicUrl: 'http://ems.local',
      siteMail: siteMailReader(siteSettings(db), 'http://ems.local'),
      now,
      summaryDelayMs: 100,
    });
    const alerts = new AlertService(db, new AuditLog(db), now);
    const escalated = () =>
      db.sqlite
        .prepare("SELECT count(DISTINCT alert_id) FROM notification_sends WHERE kind = 'escalation' AND rule_id = ? AND recipient = ?")
        .pluck()
        .get(rule.body.id, `boss-${tag}@example.test`) as number;
    return { notifier, alerts, escalated, rule: rule.body };
  }

  test('15 critical alerts at once (5 folded into a summary): all 15 escalate, to each escalation address, once', async () => {
    const tag = `fifteen${Date.now()}`;
    let now = Date.now();
    const { notifier, alerts, escalated } = await rig(tag, () => now);
    alerts.onCreated((alert) => notifier.alertRaised(alert));
    const start = now;
    for (let i = 0; i < 15; i += 1) alerts.create({ title: `${tag} pump ${i}`, level: 'critical', area: tag, occurredAt: new Date(start).toISOString() }, null);
    await eventually(
      async () => (mail.messages.some((m) => m.to.includes(`duty-${tag}@example.test`) && m.raw.includes('new alerts arrived faster')) ? true : undefined),
      'the flood summary',
    );
    await notifier.idle();
    const direct = mail.messages.filter((m) => m.to.includes(`duty-${tag}@example.test`) && m.raw.includes('[EMS critical]'));
    assert.equal(direct.length, 10, 'the flood limit folded 5 into the summary');
    now = start + 15 * 60_000;
    // Two checks at once (the timer and a slow previous run) escalate each alert once.
    const counts = await Promise.all([notifier.checkEscalations(), notifier.checkEscalations()]);
    assert.equal(counts[0] + counts[1], 15);
    assert.equal(await notifier.checkEscalations(), 0, 'once');
    assert.equal(escalated(), 15);
    const lists = mail.messages.filter((m) => m.to.includes(`boss-${tag}@example.test`));
    assert.equal(lists.length, 1, 'one list, not 15 mails');
    assert.match(lists[0].raw, /15 critical alerts not acknowledged/);
    assert.equal(mail.messages.filter((m) => m.to.includes(`deputy-${tag}@example.test`)).length, 1);
    await notifier.stop();
  });

  test('5,020 unacknowledged critical alerts: every one escalates, in lists of at most ESCALATION_BATCH', async () => {
    const tag = `backlog${Date.now()}`;
    let now = Date.now();
    const { notifier, alerts, escalated } = await rig(tag, () => now);
    const start = now;
    const db = server.service.deps.db;
    db.sqlite.transaction(() => {
      for (let i = 0; i < 5020; i += 1) alerts.create({ title: `${tag} ${i}`, level: 'critical', area: tag, occurredAt: new Date(start).toISOString() }, null);
    })();
    // One acknowledged and one of another area are not the rule's to escalate.
    const handled = alerts.create({ title: `${tag} handled`, level: 'critical', area: tag, occurredAt: new Date(start).toISOString() }, null);
    alerts.transition(handled.id, 'acknowledged', { id: null, username: 'test' });
    alerts.create({ title: `${tag} elsewhere`, level: 'critical', area: `${tag}-other`, occurredAt: new Date(start).toISOString() }, null);
    now = start + 15 * 60_000;
    const rounds: number[] = [];
    for (let round = 0; round < 5; round += 1) {
      const count = await notifier.checkEscalations();
      if (count === 0) break;
      rounds.push(count);
    }
    assert.deepEqual(rounds, [ESCALATION_BATCH, ESCALATION_BATCH, 5020 - 2 * ESCALATION_BATCH]);
    assert.equal(escalated(), 5020);
    const lists = mail.messages.filter((m) => m.to.includes(`boss-${tag}@example.test`));
    assert.equal(lists.length, 3);
    assert.ok(
      lists.some((m) => /and 1950 more/.test(m.raw.replace(/=\r?\n/g, ''))),
      'a list names the first 50 and counts the rest',
    );
    assert.deepEqual(notifier.sends(handled.id), []);
    await notifier.stop();
  });
});

describe('a hostile gateway', () => {
  let gateway: FakeGateway;
  let server: TestServer;
  let rows: unknown[] = [];
  let admin: string;
  before(async () => {
    gateway = await startFakeGateway();
    gateway.script('/alarms', (_request, res: http.ServerResponse) => {
      const text = JSON.stringify({ data: rows, total: rows.length });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    });
    server = await startTestServer({ EMS_IOT_BASE_URL: gateway.url, EMS_IOT_USERNAME: gateway.username, EMS_IOT_PASSWORD: gateway.password });
    admin = (await server.createUser({ role: 'admin' })).accessToken;
  });
  after(async () => {
    await server.close();
    await gateway.close();
  });

  const poller = (now: () => number) =>
    new AlarmPoller({ iot: server.service.deps.iot, alerts: server.service.deps.alerts, logger: server.service.deps.logger, intervalMs: 60_000, now });
  const alertsOf = async (q: string) => (await server.request('GET', `/api/alerts?pageSize=200&q=${encodeURIComponent(q)}`, { token: admin })).body;
  const warnings = () => server.logs.map((line) => JSON.parse(line)).filter((line) => /gateway alarms out of bounds/.test(line.msg));

  test('an over-long code is refused with a log line; a long message is cut to 200 characters', async () => {
    const now = Date.now();
    const at = new Date(now - 60_000).toISOString();
    rows = [
      { id: 1, code: `huge.${'x'.repeat(1024 * 1024)}`, level: 'critical', message: 'big code', raisedAt: at, clearedAt: null },
      { id: 2, code: 'pump.long', level: 'warning', message: `long ${'m'.repeat(500_000)}`, raisedAt: at, clearedAt: null },
    ];
    const before = warnings().length;
    const sizeBefore = (server.service.deps.db.sqlite.prepare('PRAGMA page_count').pluck().get() as number) * 4096;
    const counts = await poller(() => now).poll();
    assert.equal(counts.raised, 1);
    assert.equal((await alertsOf('big code')).total, 0);
    const [long] = (await alertsOf('pump.long')).items;
    assert.equal(long.title.length, 200);
    const logged = warnings().slice(before);
    assert.equal(logged.length, 1);
    assert.equal(logged[0].refused, 1);
    assert.match(logged[0].reason, /characters \(at most 128\)/);
    const sizeAfter = (server.service.deps.db.sqlite.prepare('PRAGMA page_count').pluck().get() as number) * 4096;
    assert.ok(sizeAfter - sizeBefore < 200_000, `the database grew ${sizeAfter - sizeBefore} bytes`);
  });

  test('times outside 2000 .. now+5 min take the time seen; the alert reads, acknowledges (200) and stays off the top', async () => {
    const now = Date.now();
    rows = [
      { id: 3, code: 'clock.ancient', level: 'critical', message: 'ancient clock', raisedAt: '-271821-04-20T00:00:00.000Z', clearedAt: null },
      { id: 4, code: 'clock.future', level: 'critical', message: 'future clock', raisedAt: '2999-01-01T00:00:00.000Z', clearedAt: null },
      { id: 5, code: 'clock.skew', level: 'info', message: 'slightly ahead', raisedAt: new Date(now + 60_000).toISOString(), clearedAt: null },
    ];
    const p = poller(() => now);
    assert.equal((await p.poll()).raised, 3);
    assert.equal((await p.poll()).raised, 0, 'the same rows are the same occurrences on the next poll');
    for (const q of ['ancient clock', 'future clock']) {
      const [alert] = (await alertsOf(q)).items;
      assert.equal(Date.parse(alert.occurredAt), now, `${q}: ${alert.occurredAt}`);
      const read = await server.request('GET', `/api/alerts/${alert.id}`, { token: admin });
      assert.equal(read.status, 200, read.text);
      const ack = await server.request('POST', `/api/alerts/${alert.id}/acknowledge`, { token: admin, body: {} });
      assert.equal(ack.status, 200, ack.text);
    }
    const [skewed] = (await alertsOf('slightly ahead')).items;
    assert.equal(skewed.occurredAt, new Date(now + 60_000).toISOString(), 'within the tolerance the gateway time is kept');
    assert.ok(warnings().at(-1).clamped >= 2);
    const top = (await server.request('GET', '/api/dashboard')).body.recentAlerts[0];
    assert.ok(Date.parse(top.occurredAt) <= now + 5 * 60_000, `the wallboard top is ${top.occurredAt}`);
  });

  test('a gateway whose raisedAt moves with its clock raises one alert, and its clearing is still seen', async () => {
    let now = Date.now();
    const p = poller(() => now);
    const moving = () => [
      { id: 9, code: 'chiller.moving', level: 'critical', message: 'Chiller tripped (moving clock)', raisedAt: new Date(now).toISOString(), clearedAt: null },
    ];
    for (let poll = 0; poll < 5; poll += 1) {
      rows = moving();
      await p.poll();
      now += 30_000;
    }
    const list = await alertsOf('moving clock');
    assert.equal(list.total, 1, 'one alert for five polls');
    rows = [{ ...moving()[0], clearedAt: new Date(now).toISOString() }];
    assert.equal((await p.poll()).cleared, 1);
    assert.ok((await alertsOf('moving clock')).items[0].clearedAt);
    // Cleared, the next occurrence of the same alarm is a new alert.
    now += 60_000;
    rows = moving();
    assert.equal((await p.poll()).raised, 1);
    assert.equal((await alertsOf('moving clock')).total, 2);
  });

  test('the public payload names the point of a gateway alarm, never its text', async () => {
    const now = Date.now();
    rows = [
      {
        id: 11,
        code: 'door.lobby',
        level: 'warning',
        message: 'Tenant Jane Doe forced door 3 (badge 4711)',
        raisedAt: new Date(now).toISOString(),
        clearedAt: null,
      },
    ];
    assert.equal((await poller(() => now).poll()).raised, 1);
    const written = await server.request('POST', '/api/alerts', { token: admin, body: { title: 'Hand-written notice', level: 'info' } });
    assert.equal(written.status, 201);
    const payload = await server.request('GET', '/api/dashboard');
    assert.doesNotMatch(payload.text, /Jane Doe|badge 4711/);
    const titles = payload.body.recentAlerts.map((alert: { title: string }) => alert.title);
    assert.ok(titles.includes('Alarm on door.lobby'), titles.join(' | '));
    assert.ok(titles.includes('Hand-written notice'));
    // Signed-in users still see the gateway's text.
    assert.equal((await alertsOf('badge 4711')).total, 1);
  });
});
