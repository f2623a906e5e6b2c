// Report plans that run: DST change days on an injected clock, PDF + CSV mailed to a real SMTP server, failing SMTP with
// retries and an alert, run now under parallel load, retention of files, a missed time caught up once at start.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { runTool } from '../helpers/tools.ts';
import fs from 'node:fs';
import Database from 'better-sqlite3';
import path from 'node:path';
import { Writable } from 'node:stream';
import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';
import { AlertService } from '../../src/facility/alerts/service.ts';
import { AuditLog } from '../../src/platform/db/auditTrail.ts';
import { ConfigError, loadConfig } from '../../src/platform/config.ts';
import { databasePath } from '../../src/platform/db/client.ts';
import { addDays, siteDay } from '../../src/platform/time/calendar.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { createMailer } from '../../src/platform/mail/mailer.ts';
import { ReportContentBuilder } from '../../src/reporting/reports/content.ts';
import { dailyEnergyFigures } from '../helpers/reportEnergy.ts';
import { ReportRunner } from '../../src/reporting/reports/runs.ts';
import { ReportScheduler } from '../../src/reporting/reports/scheduler.ts';
import { testDatabase } from '../helpers/database.ts';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.ts';
import { startMailCatcher, type MailCatcher } from '../helpers/smtp.ts';
import { SiteFormat } from '../../src/platform/i18n/format.ts';
import { attachmentsOf } from '../helpers/mailParts.ts';
import { insertAlert, insertEnergyDaily } from '../helpers/facilityRows.ts';
import { auditRows, createRoles, type Roles } from '../helpers/facility.ts';

const MINUTE = 60_000;

async function waitForRun(server: TestServer, token: string, runId: number): Promise<any> {
  for (;;) {
    const res = await server.request('GET', `/api/reports/runs/${runId}`, { token });
    assert.equal(res.status, 200, res.text);
    if (res.body.status !== 'running') return res.body;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

test('EMS_REPORT_MAIL_RETRY and EMS_REPORT_KEEP_FILES: defaults, lists, "none", and bad values named', () => {
  assert.deepEqual(loadConfig({}).reports, { mailRetryDelaysMs: [60_000, 300_000, 900_000], keepFilesPerPlan: 10, minIntervalMin: 15 });
  assert.deepEqual(loadConfig({ EMS_REPORT_MAIL_RETRY: '250ms, 30s,2h', EMS_REPORT_KEEP_FILES: '3', EMS_REPORT_MIN_INTERVAL: '1m' }).reports, {
    mailRetryDelaysMs: [250, 30_000, 7_200_000],
    keepFilesPerPlan: 3,
    minIntervalMin: 1,
  });
  assert.deepEqual(loadConfig({ EMS_REPORT_MAIL_RETRY: 'none' }).reports.mailRetryDelaysMs, []);
  for (const [env, name] of [
    [{ EMS_REPORT_MAIL_RETRY: '5 minutes' }, 'EMS_REPORT_MAIL_RETRY'],
    [{ EMS_REPORT_MAIL_RETRY: '1s,,2s' }, 'EMS_REPORT_MAIL_RETRY'],
    [{ EMS_REPORT_MAIL_RETRY: '25h' }, 'EMS_REPORT_MAIL_RETRY'],
    [{ EMS_REPORT_MAIL_RETRY: Array(11).fill('1s').join(',') }, 'EMS_REPORT_MAIL_RETRY'],
    [{ EMS_REPORT_KEEP_FILES: '0' }, 'EMS_REPORT_KEEP_FILES'],
  ] as const) {
    assert.throws(
      () => loadConfig(env),
      (error: unknown) => error instanceof ConfigError && error.message.startsWith(`${name}:`),
      name,
    );
  }
});

describe('report scheduler on an injected clock (Europe/Berlin): DST change days, overlap, history', () => {
  const db = testDatabase();
  const dataDir = db.dir;
  const sink = new Writable({ write: (_chunk, _encoding, done) => done() });
  const logger = createLogger('silent', sink);
  let now = 0;
  const clock = { now: () => now };
  const audit = new AuditLog(db);
  const runnerDeps = {
    db,
    audit,
    alerts: new AlertService(db, audit),
    mailer: createMailer({ from: 'EMS <ems@localhost>', logger }),
    logger,
    directory: path.join(dataDir, 'reports'),
    content: new ReportContentBuilder(db, dailyEnergyFigures(db)),
    clock,
    mailRetryDelaysMs: [],
    keepFilesPerPlan: 5,
  };
  const runner = new ReportRunner(runnerDeps);
  db.sqlite.prepare(`UPDATE platform_config SET timezone = 'Europe/Berlin' WHERE id = 1`).run();
  const insertPlan = db.sqlite.prepare(
    `INSERT INTO report_plans (name, template_id, cron, format, recipients, enabled, created_at, updated_at)
     VALUES (?, (SELECT id FROM report_templates WHERE key = 'alerts-faults'), ?, 'csv', '["ops@example.test"]', 1, ?, ?)`,
  );
  const runsOf = (planId: number) => db.sqlite.prepare('SELECT started_at FROM report_runs WHERE plan_id = ? ORDER BY id').pluck().all(planId) as string[];

  /** Plans written a minute before local midnight; the clock then steps a minute at a time through one local day, as the timer would wake the scheduler. */
  async function drive(fromIso: string, toIso: string, crons: string[]): Promise<number[]> {
    const written = new Date(Date.parse(fromIso) - MINUTE).toISOString();
    const ids = crons.map((cron) => Number(insertPlan.run(`plan ${cron} ${fromIso}`, cron, written, written).lastInsertRowid));
    const scheduler = new ReportScheduler({ db, logger, runner, clock });
    for (now = Date.parse(fromIso); now <= Date.parse(toIso); now += MINUTE) await Promise.all(scheduler.tick());
    db.sqlite.prepare(`UPDATE report_plans SET enabled = 0 WHERE id IN (${ids.join(',')})`).run();
    return ids;
  }

  test('history keeps the newest rows per plan, and files of the newest runs only', async () => {
    const small = new ReportRunner({ ...runnerDeps, keepFilesPerPlan: 2, historyRowsPerPlan: 4 });
    const scheduler = new ReportScheduler({ db, logger, runner: small, clock });
    const written = '2026-06-01T09:59:00.000Z';
    const id = Number(insertPlan.run('every minute', '* * * * *', written, written).lastInsertRowid);
    for (now = Date.parse('2026-06-01T10:00:00.000Z'); now <= Date.parse('2026-06-01T10:09:00.000Z'); now += MINUTE) await Promise.all(scheduler.tick());
    db.sqlite.prepare('UPDATE report_plans SET enabled = 0 WHERE id = ?').run(id);
    const rows = db.sqlite.prepare('SELECT started_at AS startedAt, files FROM report_runs WHERE plan_id = ? ORDER BY id').all(id) as {
      startedAt: string;
      files: string;
    }[];
    assert.deepEqual(
      rows.map((r) => r.startedAt.slice(11, 16)),
      ['10:06', '10:07', '10:08', '10:09'],
    );
    assert.deepEqual(
      rows.map((r) => JSON.parse(r.files).length),
      [0, 0, 1, 1],
    );
    assert.equal(fs.readdirSync(path.join(dataDir, 'reports', String(id))).length, 2);
  });

  test('a due time that finds the previous run still going is skipped, not queued', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const holding = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData(stream, _session, callback) {
        stream.resume();
        stream.on('end', () => void held.then(() => callback()));
      },
    });
    await new Promise<void>((resolve) => holding.listen(0, '127.0.0.1', resolve));
    const mailer = createMailer({ smtpUrl: `smtp://127.0.0.1:${(holding.server.address() as AddressInfo).port}`, from: 'EMS <ems@localhost>', logger });
    try {
      const slow = new ReportRunner({ ...runnerDeps, mailer });
      const scheduler = new ReportScheduler({ db, logger, runner: slow, clock });
      const written = '2026-07-01T09:59:00.000Z';
      const id = Number(insertPlan.run('slow', '* * * * *', written, written).lastInsertRowid);
      now = Date.parse('2026-07-01T10:00:00.000Z');
      const first = scheduler.tick();
      assert.equal(first.length, 1);
      now += MINUTE;
      assert.equal(scheduler.tick().length, 0, '10:01 finds the 10:00 run waiting on SMTP');
      release();
      await Promise.all(first);
      now += MINUTE;
      await Promise.all(scheduler.tick());
      db.sqlite.prepare('UPDATE report_plans SET enabled = 0 WHERE id = ?').run(id);
      assert.deepEqual(
        runsOf(id).map((at) => at.slice(11, 16)),
        ['10:00', '10:02'],
      );
    } finally {
      mailer.close();
      await new Promise<void>((resolve) => holding.close(() => resolve()));
    }
  });

  test('spring forward (29 March 2026): 02:30 does not exist and runs once at the change, an hourly plan runs 23 times', async () => {
    const [daily, hourly, morning] = await drive('2026-03-28T23:00:00.000Z', '2026-03-29T21:59:00.000Z', ['30 2 * * *', '0 * * * *', '0 7 * * *']);
    assert.deepEqual(runsOf(daily), ['2026-03-29T01:00:00.000Z'], 'once, at 03:00 CEST (the moment of the change)');
    assert.equal(runsOf(hourly).length, 23, 'a 23-hour day');
    assert.deepEqual(runsOf(morning), ['2026-03-29T05:00:00.000Z'], '07:00 CEST');
  });

  test('fall back (25 October 2026): 02:30 happens twice and runs once, an hourly plan runs 25 times', async () => {
    const [daily, hourly, morning] = await drive('2026-10-24T22:00:00.000Z', '2026-10-25T22:59:00.000Z', ['30 2 * * *', '0 * * * *', '0 7 * * *']);
    assert.deepEqual(runsOf(daily), ['2026-10-25T00:30:00.000Z'], 'the first 02:30 (CEST) only');
    assert.equal(runsOf(hourly).length, 25, 'a 25-hour day, every real hour');
    assert.deepEqual(runsOf(morning), ['2026-10-25T06:00:00.000Z'], '07:00 CET');
  });
});

describe('report runs through the API', () => {
  let server: TestServer;
  let mail: MailCatcher;
  let users: Roles;
  const today = () => siteDay('UTC');

  before(async () => {
    mail = await startMailCatcher();
    server = await startTestServer({ EMS_SMTP_URL: mail.url, EMS_REPORT_KEEP_FILES: '2' });
    users = await createRoles(server);
    const sqlite = server.service.deps.db.sqlite;
    sqlite
      .prepare(`UPDATE platform_config SET site_name = 'Riverside Plant', currency = 'EUR', electricity_price = 0.3, carbon_factor = 0.5 WHERE id = 1`)
      .run();
    // Seven days before today: site totals and two areas; a day outside the period that must not count.
    for (let offset = 1; offset <= 7; offset += 1) {
      const day = addDays(today(), -offset);
      insertEnergyDaily(sqlite, day, 100 + offset * 10);
      insertEnergyDaily(sqlite, day, 60 + offset * 6, 'HVAC');
      insertEnergyDaily(sqlite, day, 40 + offset * 4, 'Lighting');
    }
    insertEnergyDaily(sqlite, addDays(today(), -8), 99999);
    insertAlert(sqlite, { title: 'Chiller 2 tripped', level: 'critical', occurredAt: new Date(Date.now() - 2 * 86_400_000).toISOString() });
    // A fault reported three days ago and resolved six hours later (MTTR 6), one reported today (outside the period).
    const reported = Date.parse(`${addDays(today(), -3)}T08:00:00.000Z`);
    sqlite
      .prepare(
        `INSERT INTO faults (device, severity, status, reported_at, resolved_at, created_at, updated_at) VALUES ('AHU-1', 'high', 'resolved', ?, ?, ?, ?)`,
      )
      .run(new Date(reported).toISOString(), new Date(reported + 6 * 3_600_000).toISOString(), new Date().toISOString(), new Date().toISOString());
    sqlite
      .prepare(`INSERT INTO faults (device, severity, status, reported_at, created_at, updated_at) VALUES ('AHU-2', 'low', 'open', ?, ?, ?)`)
      .run(new Date().toISOString(), new Date().toISOString(), new Date().toISOString());
  });
  after(async () => {
    await server.close();
    await mail.close();
  });

  const createPlan = async (body: Record<string, unknown>) => {
    const res = await server.request('POST', '/api/reports/plans', {
      token: users.operator.accessToken,
      body: { name: 'Weekly energy', templateId: 'weekly-energy', cron: '0 7 * * MON', recipients: ['facility@example.test', 'cfo@example.test'], ...body },
    });
    assert.equal(res.status, 201, res.text);
    return res.body;
  };

  test('a pdf plan mails the PDF and the CSV of the same figures; the PDF text carries them; files download', async () => {
    const plan = await createPlan({});
    assert.equal(plan.format, 'pdf');
    const before = mail.messages.length;
    const started = await server.request('POST', `/api/reports/plans/${plan.id}/run`, { token: users.operator.accessToken });
    assert.equal(started.status, 202, started.text);
    assert.equal(started.body.status, 'running');
    const run = await waitForRun(server, users.viewer.accessToken, started.body.id);
    assert.equal(run.status, 'ok', run.error);
    assert.equal(run.trigger, 'manual');
    assert.equal(run.mailAttempts, 1);
    assert.equal(run.periodFrom, addDays(today(), -7));
    assert.equal(run.periodTo, today());

    const message = mail.messages.slice(before).find((m) => m.to.includes('cfo@example.test'));
    assert.ok(message, 'mail received');
    assert.deepEqual(message.to.sort(), ['cfo@example.test', 'facility@example.test']);
    const parts = attachmentsOf(message.raw);
    const from = addDays(today(), -7);
    const last = addDays(today(), -1);
    assert.deepEqual(parts.map((p) => p.filename).sort(), [`weekly-energy_${from}_${last}.csv`, `weekly-energy_${from}_${last}.pdf`]);
    const pdf = parts.find((p) => p.filename.endsWith('.pdf'))!;
    const csv = parts.find((p) => p.filename.endsWith('.csv'))!.content.toString('utf8');
    assert.equal(pdf.content.subarray(0, 5).toString(), '%PDF-');
    assert.equal(run.sizeBytes, pdf.content.length + Buffer.byteLength(csv));

    // Expected figures computed here from the seeded rows: 7 days of 110..170 kWh, price 0.3, factor 0.5.
    const totalKwh = [1, 2, 3, 4, 5, 6, 7].reduce((sum, offset) => sum + 100 + offset * 10, 0);
    const hvac = [1, 2, 3, 4, 5, 6, 7].reduce((sum, offset) => sum + 60 + offset * 6, 0);
    const file = path.join(server.dataDir, 'tmp', 'report.pdf');
    fs.writeFileSync(file, pdf.content);
    const text = await runTool('pdftotext', ['-layout', file, '-']);
    // The PDF writes the site's locale (en-US here): grouped numbers, the currency sign, medium dates.
    const f = new SiteFormat({ locale: 'en-US', timezone: 'UTC', currency: 'EUR' });
    const norm = (value: string) => value.replace(/\s+/g, ' ');
    for (const expected of [
      'Riverside Plant',
      'Weekly energy',
      `Period: ${f.date(from)} to ${f.date(last)}`,
      f.kwh(totalKwh),
      f.money(totalKwh * 0.3),
      f.carbon(totalKwh * 0.5),
      'HVAC',
      f.number(hvac, 1),
      f.number(hvac * 0.3, 2),
      'Lighting',
      'Chiller 2 tripped',
    ]) {
      assert.ok(norm(text).includes(norm(expected)), `PDF text has ${expected}:\n${text}`);
    }
    assert.ok(!text.includes('99999') && !text.includes('99,999'), 'a day outside the period is not counted');
    assert.match(csv, new RegExp(`^totals\\r\\nkwh,cost,carbon_kg\\r\\n${totalKwh},${totalKwh * 0.3},${totalKwh * 0.5}\\r\\n`, 'm'));
    assert.match(csv, new RegExp(`^HVAC,${hvac},${hvac * 0.3},${hvac * 0.5}\\r$`, 'm'));
    for (let offset = 1; offset <= 7; offset += 1) {
      const kwh = 100 + offset * 10;
      assert.match(csv, new RegExp(`^${addDays(today(), -offset)},${kwh},${Math.round(kwh * 0.3 * 100) / 100},${kwh * 0.5}\\r$`, 'm'));
    }

    const download = await fetch(`${server.url}/api/reports/runs/${run.id}/files/${encodeURIComponent(pdf.filename)}`, {
      headers: { authorization: `Bearer ${users.viewer.accessToken}` },
    });
    assert.equal(download.status, 200);
    assert.equal(download.headers.get('content-type'), 'application/pdf');
    assert.deepEqual(Buffer.from(await download.arrayBuffer()), pdf.content);
    assert.equal((await server.request('GET', `/api/reports/runs/${run.id}/files/${encodeURIComponent(pdf.filename)}`)).status, 401);
    assert.equal((await server.request('GET', `/api/reports/runs/${run.id}/files/other.pdf`, { token: users.viewer.accessToken })).status, 404);

    assert.equal((await server.request('GET', '/api/reports/plans/999999/runs', { token: users.viewer.accessToken })).status, 404);
    assert.equal((await server.request('GET', '/api/reports/runs/abc', { token: users.viewer.accessToken })).status, 400);
    assert.equal((await server.request('GET', `/api/reports/runs/${run.id}/files/${'x'.repeat(300)}`, { token: users.viewer.accessToken })).status, 400);
    assert.equal((await server.request('GET', `/api/reports/plans/${plan.id}/runs?pageSize=500`, { token: users.viewer.accessToken })).status, 400);
    const history = await server.request('GET', `/api/reports/plans/${plan.id}/runs`, { token: users.viewer.accessToken });
    assert.equal(history.body.total, 1);
    assert.equal(history.body.items[0].id, run.id);
    assert.ok(history.body.items[0].durationMs >= 0 && history.body.items[0].finishedAt);
    const audit = auditRows(server, 'report_plans', plan.id).filter((row) => row.action === 'run');
    assert.equal(audit.length, 1);
    assert.equal(audit[0].username, users.operator.user.username);
    assert.equal(audit[0].after.status, 'ok');
    assert.notEqual((await server.request('GET', `/api/reports/plans/${plan.id}`, { token: users.viewer.accessToken })).body.lastRunAt, null);
  });

  test('csv and json plans mail their one file', async () => {
    for (const format of ['csv', 'json'] as const) {
      const plan = await createPlan({ format, templateId: 'alerts-faults', recipients: [`${format}@example.test`] });
      const run = await waitForRun(
        server,
        users.viewer.accessToken,
        (await server.request('POST', `/api/reports/plans/${plan.id}/run`, { token: users.operator.accessToken })).body.id,
      );
      assert.equal(run.status, 'ok', run.error);
      const message = mail.messages.find((m) => m.to.includes(`${format}@example.test`))!;
      const parts = attachmentsOf(message.raw);
      assert.deepEqual(
        parts.map((p) => p.filename.split('.').pop()),
        [format],
      );
      if (format === 'json')
        assert.equal(JSON.parse(parts[0].content.toString()).tables.find((t: any) => t.key === 'top-alerts').rows[0][2], 'Chiller 2 tripped');
      else {
        const text = parts[0].content.toString();
        assert.match(text, /^alerts\r\nlevel,active,acknowledged,resolved,total\r\ncritical,1,0,0,1\r$/m);
        assert.match(text, /^faults\r\nseverity,open,in_progress,resolved,closed,total\r\nhigh,0,0,1,0,1\r\n\r\n/m);
        assert.match(text, /^repair\r\nmttr_hours\r\n6\r$/m);
        // The same counts as the API answers for the same days (site time zone UTC here; a date-only `to` includes its day).
        const window = `from=${addDays(today(), -7)}&to=${addDays(today(), -1)}`;
        const critical = await server.request('GET', `/api/alerts?level=critical&${window}`, { token: users.viewer.accessToken });
        const faults = await server.request('GET', `/api/faults?${window}`, { token: users.viewer.accessToken });
        assert.equal(critical.body.total, 1);
        assert.match(text, new RegExp(`^critical,1,0,0,${critical.body.total}\r$`, 'm'));
        assert.match(text, new RegExp(`^high,0,0,1,0,${faults.body.total}\r$`, 'm'));
      }
    }
  });

  test('retention keeps the files of the newest EMS_REPORT_KEEP_FILES runs; older runs stay in the history without files', async () => {
    const plan = await createPlan({ format: 'csv' });
    const runs = [];
    for (let i = 0; i < 3; i += 1) {
      const started = await server.request('POST', `/api/reports/plans/${plan.id}/run`, { token: users.operator.accessToken });
      runs.push(await waitForRun(server, users.viewer.accessToken, started.body.id));
    }
    const oldest = (await server.request('GET', `/api/reports/runs/${runs[0].id}`, { token: users.viewer.accessToken })).body;
    assert.deepEqual(oldest.files, []);
    assert.notEqual(oldest.filesDeletedAt, null);
    assert.equal(
      (await server.request('GET', `/api/reports/runs/${runs[0].id}/files/${runs[0].files[0].name}`, { token: users.viewer.accessToken })).status,
      404,
    );
    assert.equal(
      (await server.request('GET', `/api/reports/runs/${runs[2].id}/files/${runs[2].files[0].name}`, { token: users.viewer.accessToken })).status,
      200,
    );
    assert.deepEqual(
      fs.readdirSync(path.join(server.dataDir, 'reports', String(plan.id))).sort(),
      runs
        .slice(1)
        .map((r) => `${r.id}-${r.files[0].name}`)
        .sort(),
    );

    // A deleted plan takes its history along; its folder goes with the next run of any plan.
    assert.equal((await server.request('DELETE', `/api/reports/plans/${plan.id}`, { token: users.operator.accessToken })).status, 204);
    assert.equal((await server.request('GET', `/api/reports/runs/${runs[2].id}`, { token: users.viewer.accessToken })).status, 404);
    const other = await createPlan({ format: 'csv' });
    await waitForRun(
      server,
      users.viewer.accessToken,
      (await server.request('POST', `/api/reports/plans/${other.id}/run`, { token: users.operator.accessToken })).body.id,
    );
    assert.ok(!fs.existsSync(path.join(server.dataDir, 'reports', String(plan.id))));
  });
});

describe('runs of one plan never overlap', () => {
  test('60 parallel "run now" calls while a run waits on SMTP: exactly one starts, 59 are 409; after it, the next starts', async () => {
    let release!: () => void;
    let held = new Promise<void>((resolve) => (release = resolve));
    let received = 0;
    const holding = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData(stream, _session, callback) {
        stream.resume();
        stream.on('end', () => {
          received += 1;
          void held.then(() => callback());
        });
      },
    });
    await new Promise<void>((resolve) => holding.listen(0, '127.0.0.1', resolve));
    const server = await startTestServer({ EMS_SMTP_URL: `smtp://127.0.0.1:${(holding.server.address() as AddressInfo).port}` });
    try {
      const users = await createRoles(server);
      const plan = (
        await server.request('POST', '/api/reports/plans', {
          token: users.operator.accessToken,
          body: { name: 'Held', templateId: 'alerts-faults', cron: '0 7 * * *', format: 'csv', recipients: ['ops@example.test'] },
        })
      ).body;
      const answers = await Promise.all(
        Array.from({ length: 60 }, () => server.request('POST', `/api/reports/plans/${plan.id}/run`, { token: users.operator.accessToken })),
      );
      assert.deepEqual(answers.map((a) => a.status).sort(), [202, ...Array(59).fill(409)]);
      assert.equal(answers.find((a) => a.status === 409)!.body.error, 'A run of this report plan is in progress');
      release();
      const first = await waitForRun(server, users.viewer.accessToken, answers.find((a) => a.status === 202)!.body.id);
      assert.equal(first.status, 'ok', first.error);
      assert.equal(received, 1);
      const next = await server.request('POST', `/api/reports/plans/${plan.id}/run`, { token: users.operator.accessToken });
      assert.equal(next.status, 202, 'a new run once the previous one is recorded');
      await waitForRun(server, users.viewer.accessToken, next.body.id);
      assert.equal((await server.request('GET', `/api/reports/plans/${plan.id}/runs`, { token: users.viewer.accessToken })).body.total, 2);
      assert.equal((await server.request('POST', `/api/reports/plans/${plan.id}/run`, { token: users.viewer.accessToken })).status, 403);
      assert.equal((await server.request('POST', '/api/reports/plans/999999/run', { token: users.operator.accessToken })).status, 404);

      // The plan deleted while a run of it waits on SMTP: the run ends quietly, the service stays up, the folder goes.
      held = new Promise<void>((resolve) => (release = resolve));
      const doomed = await server.request('POST', `/api/reports/plans/${plan.id}/run`, { token: users.operator.accessToken });
      assert.equal(doomed.status, 202);
      assert.equal((await server.request('DELETE', `/api/reports/plans/${plan.id}`, { token: users.operator.accessToken })).status, 204);
      release();
      while (
        !server.logs.some(
          (line) =>
            JSON.parse(line).runId === doomed.body.id &&
            /report (delivered|run failed|run could not be recorded|plan deleted during its run)/.test(JSON.parse(line).msg),
        )
      ) {
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      // Not an error (issue 39 #12): one info line says the run was dropped.
      const lines = server.logs.map((line) => JSON.parse(line)).filter((line) => line.runId === doomed.body.id);
      assert.deepEqual(
        lines.map((line) => [line.level, line.msg]),
        [['info', 'report plan deleted during its run: the run is dropped']],
      );
      assert.equal((await server.request('GET', '/api/health')).status, 200);
      assert.equal((await server.request('GET', `/api/reports/runs/${doomed.body.id}`, { token: users.viewer.accessToken })).status, 404);
      assert.ok(!fs.existsSync(path.join(server.dataDir, 'reports', String(plan.id))));
    } finally {
      await server.close();
      await new Promise<void>((resolve) => holding.close(() => resolve()));
    }
  });
});

describe('failing SMTP', () => {
  test('a refused send is retried with backoff, then the run is failed, audited and raised as an alert', async () => {
    let attempts = 0;
    const refusing = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData(stream, _session, callback) {
        stream.resume();
        stream.on('end', () => {
          attempts += 1;
          const error = Object.assign(new Error('mailbox unavailable'), { responseCode: 550 });
          callback(error);
        });
      },
    });
    await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve));
    const server = await startTestServer({
      EMS_SMTP_URL: `smtp://127.0.0.1:${(refusing.server.address() as AddressInfo).port}`,
      EMS_REPORT_MAIL_RETRY: '20ms,40ms',
    });
    try {
      const users = await createRoles(server);
      const plan = (
        await server.request('POST', '/api/reports/plans', {
          token: users.operator.accessToken,
          body: { name: 'Maintenance list', templateId: 'maintenance-due', cron: '0 7 * * *', format: 'csv', recipients: ['ops@example.test'] },
        })
      ).body;
      const started = await server.request('POST', `/api/reports/plans/${plan.id}/run`, { token: users.operator.accessToken });
      const run = await waitForRun(server, users.viewer.accessToken, started.body.id);
      assert.equal(run.status, 'failed');
      assert.equal(run.mailAttempts, 3);
      assert.equal(attempts, 3, 'the SMTP server saw the first try and two retries');
      assert.match(run.error, /mail not delivered after 3 attempts: .*mailbox unavailable/);
      assert.equal(run.files.length, 1, 'the file is kept for download all the same');
      const alerts = await server.request('GET', '/api/alerts?q=not%20delivered', { token: users.viewer.accessToken });
      assert.equal(alerts.body.total, 1);
      assert.equal(alerts.body.items[0].title, 'Report "Maintenance list" not delivered');
      assert.equal(alerts.body.items[0].source, 'reports');
      assert.equal(auditRows(server, 'report_plans', plan.id).find((row) => row.action === 'run')!.after.status, 'failed');
    } finally {
      await server.close();
      await new Promise<void>((resolve) => refusing.close(() => resolve()));
    }
  });

  test('an SMTP server that refuses twice and then accepts: the run is ok after 3 attempts', async () => {
    let attempts = 0;
    const flaky = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData(stream, _session, callback) {
        stream.resume();
        stream.on('end', () => {
          attempts += 1;
          callback(attempts < 3 ? Object.assign(new Error('try again later'), { responseCode: 451 }) : undefined);
        });
      },
    });
    await new Promise<void>((resolve) => flaky.listen(0, '127.0.0.1', resolve));
    const server = await startTestServer({
      EMS_SMTP_URL: `smtp://127.0.0.1:${(flaky.server.address() as AddressInfo).port}`,
      EMS_REPORT_MAIL_RETRY: '20ms,20ms,20ms',
    });
    try {
      const users = await createRoles(server);
      const plan = (
        await server.request('POST', '/api/reports/plans', {
          token: users.operator.accessToken,
          body: { name: 'Alerts', templateId: 'alerts-faults', cron: '0 7 * * *', format: 'json', recipients: ['ops@example.test'] },
        })
      ).body;
      const run = await waitForRun(
        server,
        users.viewer.accessToken,
        (await server.request('POST', `/api/reports/plans/${plan.id}/run`, { token: users.operator.accessToken })).body.id,
      );
      assert.equal(run.status, 'ok', run.error);
      assert.equal(run.mailAttempts, 3);
      assert.equal((await server.request('GET', '/api/alerts?q=not%20delivered', { token: users.viewer.accessToken })).body.total, 0);
    } finally {
      await server.close();
      await new Promise<void>((resolve) => flaky.close(() => resolve()));
    }
  });
});

describe('a time missed while the service was down', () => {
  test('runs once at start (catch-up), however many times were missed', async () => {
    const mail = await startMailCatcher();
    const dataDir = tempDir();
    const first = await startTestServer({ EMS_DATA_DIR: dataDir, EMS_SMTP_URL: mail.url });
    const users = await createRoles(first);
    const plan = (
      await first.request('POST', '/api/reports/plans', {
        token: users.operator.accessToken,
        body: { name: 'Hourly', templateId: 'alerts-faults', cron: '0 * * * *', format: 'csv', recipients: ['ops@example.test'] },
      })
    ).body;
    await first.service.close();
    // The plan was written three hours ago and the service was down since: three hourly times passed.
    const db = new Database(databasePath(dataDir));
    db.prepare('UPDATE report_plans SET updated_at = ? WHERE id = ?').run(new Date(Date.now() - 3 * 3_600_000).toISOString(), plan.id);
    // And a run the process was in the middle of when it died.
    const interrupted = Number(
      db
        .prepare(
          `INSERT INTO report_runs (plan_id, trigger, status, format, period_from, period_to, started_at) VALUES (?, 'schedule', 'running', 'csv', '2026-01-01', '2026-01-08', ?)`,
        )
        .run(plan.id, new Date(Date.now() - 4 * 3_600_000).toISOString()).lastInsertRowid,
    );
    db.close();
    const second = await startTestServer({ EMS_DATA_DIR: dataDir, EMS_SMTP_URL: mail.url });
    try {
      let runs: any;
      for (;;) {
        runs = (await second.request('GET', `/api/reports/plans/${plan.id}/runs`, { token: users.viewer.accessToken })).body;
        if (runs.items.some((run: any) => run.trigger === 'catch-up' && run.status !== 'running')) break;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      assert.equal(runs.total, 2, 'the interrupted run and one catch-up, not three');
      assert.equal(runs.items[0].trigger, 'catch-up');
      const dead = runs.items.find((run: any) => run.id === interrupted);
      assert.equal(dead.status, 'failed');
      assert.match(dead.error, /interrupted/);
      assert.equal(runs.items[0].status, 'ok', runs.items[0].error);
      assert.ok(mail.messages.some((m) => m.to.includes('ops@example.test')));
    } finally {
      await second.close();
      await mail.close();
    }
  });
});
