// Hardening round 3, report mail abuse: a minimum schedule interval, a "run now" budget (under parallel load), and a
// cap on mails per plan per 24 hours.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MAILS_PER_PLAN_PER_DAY, MANUAL_RUNS_PER_PLAN, MANUAL_RUNS_PER_SITE } from '../../src/reporting/reports/runs.ts';
import { startMailCatcher, type MailCatcher } from '../helpers/smtp.ts';
import { eventually, startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let mail: MailCatcher;
let token: string;
before(async () => {
  mail = await startMailCatcher();
  server = await startTestServer({ EMS_SMTP_URL: mail.url });
  token = (await server.createUser({ role: 'operator' })).accessToken;
});
after(async () => {
  await server.close();
  await mail.close();
});

let plans = 0;
async function createPlan(recipient: string, cron = '0 7 * * *') {
  plans += 1;
  const answer = await server.request('POST', '/api/reports/plans', {
    token,
    body: { name: `Plan ${plans}`, templateId: 'alerts-faults', cron, format: 'csv', recipients: [recipient] },
  });
  assert.equal(answer.status, 201, answer.text);
  return answer.body as { id: number };
}

const finished = (runId: number) =>
  eventually(async () => {
    const run = (await server.request('GET', `/api/reports/runs/${runId}`, { token })).body;
    return run.status === 'running' ? undefined : run;
  }, `run ${runId}`);

/** History rows as earlier runs would have left them (the limits count the history, so a restart resets nothing). */
function pastRuns(planId: number, count: number, fields: { trigger: string; mailAttempts: number; agoMs: number }) {
  const insert = server.service.deps.db.sqlite.prepare(
    "INSERT INTO report_runs (plan_id, trigger, status, format, period_from, period_to, started_at, mail_attempts) VALUES (?, ?, 'ok', 'csv', '2026-01-01', '2026-01-02', ?, ?)",
  );
  const at = new Date(Date.now() - fields.agoMs).toISOString();
  server.service.deps.db.sqlite.transaction(() => {
    for (let i = 0; i < count; i += 1) insert.run(planId, fields.trigger, at, fields.mailAttempts);
  })();
}

describe('schedule interval', () => {
  test('a cron running more often than every 15 minutes is 400 on create and update; every 15 minutes is fine', async () => {
    for (const cron of ['* * * * *', '* * * * * *', '*/10 * * * *', '0,5 7 * * *', '*/30 * * * * *', '0,55 * * * *']) {
      const answer = await server.request('POST', '/api/reports/plans', {
        token,
        body: { name: 'Spam', templateId: 'alerts-faults', cron, recipients: ['x@example.test'] },
      });
      assert.equal(answer.status, 400, `${cron}: ${answer.text}`);
      assert.equal(answer.body.details[0].path, 'body.cron');
      assert.match(answer.body.details[0].message, /at most every 15 minutes/);
    }
    const fine = await createPlan('fine@example.test', '*/15 * * * *');
    const tooOften = await server.request('PUT', `/api/reports/plans/${fine.id}`, { token, body: { cron: '* * * * *' } });
    assert.equal(tooOften.status, 400);
    for (const cron of ['0 7 * * MON', '30 0 7 * * 1-5', '0 */6 * * *', '0,45 7 * * *']) {
      assert.equal((await server.request('PUT', `/api/reports/plans/${fine.id}`, { token, body: { cron } })).status, 200, cron);
    }
  });
});

describe('run now', () => {
  test(`60 parallel calls on one plan, then more in a row: ${MANUAL_RUNS_PER_PLAN} runs in 10 minutes, then 429 with Retry-After`, async () => {
    const plan = await createPlan('burst@example.test');
    const answers = await Promise.all(Array.from({ length: 60 }, () => server.request('POST', `/api/reports/plans/${plan.id}/run`, { token })));
    const statuses = answers.map((answer) => answer.status);
    let accepted = statuses.filter((status) => status === 202).length;
    assert.ok(accepted >= 1 && accepted <= MANUAL_RUNS_PER_PLAN, statuses.join(','));
    assert.ok(
      statuses.every((status) => status === 202 || status === 409 || status === 429),
      statuses.join(','),
    );
    for (const answer of answers) if (answer.status === 202) await finished(answer.body.id);
    let refused;
    for (let i = 0; i < 20 && !refused; i += 1) {
      const answer = await server.request('POST', `/api/reports/plans/${plan.id}/run`, { token });
      if (answer.status === 202) {
        accepted += 1;
        await finished(answer.body.id);
      } else refused = answer;
    }
    assert.equal(accepted, MANUAL_RUNS_PER_PLAN);
    assert.equal(refused!.status, 429, refused!.text);
    assert.equal(refused!.body.code, 'RATE_LIMITED');
    const retryAfter = Number(refused!.headers.get('retry-after'));
    assert.ok(retryAfter >= 1 && retryAfter <= 600, `Retry-After ${retryAfter}`);
    assert.equal(mail.messages.filter((m) => m.to.includes('burst@example.test')).length, MANUAL_RUNS_PER_PLAN);
    // A run more than 10 minutes old no longer counts.
    server.service.deps.db.sqlite
      .prepare('UPDATE report_runs SET started_at = ? WHERE plan_id = ?')
      .run(new Date(Date.now() - 11 * 60_000).toISOString(), plan.id);
    const again = await server.request('POST', `/api/reports/plans/${plan.id}/run`, { token });
    assert.equal(again.status, 202, again.text);
    await finished(again.body.id);
  });

  test(`${MANUAL_RUNS_PER_SITE + 10} plans run at once: exactly ${MANUAL_RUNS_PER_SITE} start, the rest are 429; scheduled runs go on`, async () => {
    server.service.deps.db.sqlite
      .prepare("UPDATE report_runs SET started_at = ? WHERE trigger = 'manual'")
      .run(new Date(Date.now() - 11 * 60_000).toISOString());
    const many = [];
    for (let i = 0; i < MANUAL_RUNS_PER_SITE + 10; i += 1) many.push(await createPlan(`site-${i}@example.test`));
    const answers = await Promise.all(many.map((plan) => server.request('POST', `/api/reports/plans/${plan.id}/run`, { token })));
    const statuses = answers.map((answer) => answer.status);
    assert.equal(statuses.filter((status) => status === 202).length, MANUAL_RUNS_PER_SITE, statuses.join(','));
    assert.equal(statuses.filter((status) => status === 429).length, 10, statuses.join(','));
    assert.match(answers.find((answer) => answer.status === 429)!.body.error, /all plans/);
    for (const answer of answers) if (answer.status === 202) await finished(answer.body.id);
    const idle = many[statuses.indexOf(429)];
    const started = server.service.deps.reportRuns.start(idle.id, 'schedule', null);
    assert.equal((await started.finished).status, 'ok');
    server.service.deps.db.sqlite
      .prepare("UPDATE report_runs SET started_at = ? WHERE trigger = 'manual'")
      .run(new Date(Date.now() - 11 * 60_000).toISOString());
  });
});

describe('mails per plan', () => {
  test(`past ${MAILS_PER_PLAN_PER_DAY} mails in 24 hours a run keeps its files but is not mailed; one alert, not one per run`, async () => {
    const plan = await createPlan('capped@example.test');
    pastRuns(plan.id, MAILS_PER_PLAN_PER_DAY, { trigger: 'schedule', mailAttempts: 1, agoMs: 3_600_000 });
    const alertsBefore = (await server.request('GET', '/api/alerts?q=not%20delivered&pageSize=200', { token })).body.total;
    for (let i = 0; i < 2; i += 1) {
      const run = await server.service.deps.reportRuns.start(plan.id, 'schedule', null).finished;
      assert.equal(run.status, 'failed');
      assert.match(run.error!, /not mailed: the plan has mailed 100 times in the last 24 hours/);
      assert.equal(run.mailAttempts, 0);
      assert.equal(run.files.length, 1, 'the files are kept');
    }
    assert.equal(mail.messages.filter((m) => m.to.includes('capped@example.test')).length, 0);
    const alertsAfter = (await server.request('GET', '/api/alerts?q=not%20delivered&pageSize=200', { token })).body.total;
    assert.equal(alertsAfter - alertsBefore, 1);
    // Once the oldest mails leave the 24 hours, the plan mails again.
    server.service.deps.db.sqlite
      .prepare('UPDATE report_runs SET started_at = ? WHERE plan_id = ? AND mail_attempts > 0')
      .run(new Date(Date.now() - 25 * 3_600_000).toISOString(), plan.id);
    const run = await server.service.deps.reportRuns.start(plan.id, 'schedule', null).finished;
    assert.equal(run.status, 'ok', run.error ?? '');
    assert.equal(mail.messages.filter((m) => m.to.includes('capped@example.test')).length, 1);
  });
});
