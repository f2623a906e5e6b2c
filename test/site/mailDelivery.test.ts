// What became of a mail, told honestly (issue 45 item 2): a report run's `delivery` is sent / logged (no SMTP: the
// log only, and the log says so instead of "report delivered") / failed with why; POST /api/configs/test-mail sends
// one message and answers the same three outcomes. Real services, a real SMTP server, and a port nobody listens on.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, test } from 'node:test';
import { eventually, startTestServer, type TestServer } from '../helpers/server.ts';
import { startMailCatcher } from '../helpers/smtp.ts';

const servers: TestServer[] = [];
after(async () => {
  for (const server of servers) await server.close();
});

async function serverWith(env: Record<string, string>) {
  const server = await startTestServer({ EMS_REPORT_MAIL_RETRY: 'none', ...env });
  servers.push(server);
  const admin = await server.createUser({ role: 'admin' });
  return { server, token: admin.accessToken, email: admin.user.email };
}

async function runOnce(server: TestServer, token: string) {
  const templates = (await server.request('GET', '/api/reports/templates', { token })).body;
  const template = (templates.items ?? templates)[0];
  const plan = await server.request('POST', '/api/reports/plans', {
    token,
    body: { name: 'Monthly', templateId: template.id, cron: '0 7 1 * *', recipients: ['fm@example.test'], format: 'csv' },
  });
  assert.equal(plan.status, 201, plan.text);
  const started = await server.request('POST', `/api/reports/plans/${plan.body.id}/run`, { token });
  assert.equal(started.status, 202, started.text);
  return eventually(async () => {
    const read = (await server.request('GET', `/api/reports/runs/${started.body.id}`, { token })).body;
    return read.status === 'running' ? undefined : read;
  }, 'the run');
}

async function closedPort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as net.AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

test('without SMTP: the run says logged, the log does not say delivered; the test mail says logged', async () => {
  const { server, token, email } = await serverWith({});
  const run = await runOnce(server, token);
  assert.equal(run.status, 'ok');
  assert.equal(run.delivery, 'logged');
  const lines = server.logs.map((line) => JSON.parse(line) as { msg: string; runId?: number; delivery?: string });
  assert.ok(!lines.some((line) => line.msg === 'report delivered'), 'no "report delivered" for a mail that only went to the log');
  assert.ok(lines.some((line) => line.runId === run.id && line.delivery === 'logged' && /log only/.test(line.msg)));
  assert.deepEqual((await server.request('GET', '/api/configs/mail', { token })).body, { smtpConfigured: false });
  const outcome = await server.request('POST', '/api/configs/test-mail', { token, body: {} });
  assert.equal(outcome.status, 200);
  assert.deepEqual(outcome.body, { to: email, smtpConfigured: false, delivery: 'logged', error: null });
});

test('with SMTP: sent, and the message arrives; a refused mail is failed with the reason', async () => {
  const mail = await startMailCatcher();
  try {
    const { server, token } = await serverWith({ EMS_SMTP_URL: mail.url });
    assert.deepEqual((await server.request('GET', '/api/configs/mail', { token })).body, { smtpConfigured: true });
    const run = await runOnce(server, token);
    assert.equal(run.delivery, 'sent');
    const outcome = await server.request('POST', '/api/configs/test-mail', { token, body: { to: 'someone@example.test' } });
    assert.deepEqual(outcome.body, { to: 'someone@example.test', smtpConfigured: true, delivery: 'sent', error: null });
    assert.ok(mail.messages.some((message) => message.to.includes('someone@example.test') && /test mail/.test(message.raw)));
  } finally {
    await mail.close();
  }
  const { server, token } = await serverWith({ EMS_SMTP_URL: `smtp://127.0.0.1:${await closedPort()}` });
  const run = await runOnce(server, token);
  assert.equal(run.status, 'failed');
  assert.equal(run.delivery, 'failed');
  assert.match(run.error, /mail not delivered after 1 attempt: .*ECONNREFUSED/);
  const outcome = await server.request('POST', '/api/configs/test-mail', { token, body: {} });
  assert.equal(outcome.body.delivery, 'failed');
  assert.match(outcome.body.error, /ECONNREFUSED/);
});

test('test mail: admins only; a bad address is a 400', async () => {
  const { server } = await serverWith({});
  const operator = await server.createUser({ role: 'operator' });
  assert.equal((await server.request('POST', '/api/configs/test-mail', { token: operator.accessToken, body: {} })).status, 403);
  const admin = await server.createUser({ role: 'admin' });
  assert.equal((await server.request('POST', '/api/configs/test-mail', { token: admin.accessToken, body: { to: 'not an address' } })).status, 400);
});
