// Code emails: a per-address and a global budget that hold under parallel load, and a reset request that answers the
// same (status, body, repeat, timing) whether or not the email has an account.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SendBudget, SENDS_PER_ADDRESS } from '../../src/access/auth/sendBudget.ts';
import { startMailCatcher, type MailCatcher } from '../helpers/smtp.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let seq = 0;
const email = () => `send-${process.pid}-${seq++}@example.test`;

describe('send budget', () => {
  test(`60 register/send-code requests in flight from one address: ${SENDS_PER_ADDRESS} sent, the rest 429 with Retry-After`, async () => {
    const server = await startTestServer();
    try {
      const responses = await Promise.all(
        Array.from({ length: 60 }, () => server.request('POST', '/api/auth/register/send-code', { body: { email: email() } })),
      );
      assert.equal(responses.filter((r) => r.status === 200).length, SENDS_PER_ADDRESS);
      const refused = responses.filter((r) => r.status === 429);
      assert.equal(refused.length, 60 - SENDS_PER_ADDRESS);
      assert.ok(refused.every((r) => Number(r.headers.get('retry-after')) > 0));
      assert.ok(server.service.deps.auth.codes.size <= SENDS_PER_ADDRESS, 'refused requests add nothing to the code store');
      // The reset path shares the same budget.
      assert.equal((await server.request('POST', '/api/auth/forgot-password/send-code', { body: { email: email() } })).status, 429);
    } finally {
      await server.close();
    }
  });

  test('the global budget caps all addresses together; windows end', () => {
    let now = 0;
    const budget = new SendBudget(() => now, { perAddress: 3, global: 10, windowMs: 1000 });
    let sent = 0;
    for (let i = 0; i < 50; i += 1) {
      try {
        budget.take(`10.0.0.${i}`);
        sent += 1;
      } catch (error) {
        assert.equal((error as { status: number }).status, 429);
      }
    }
    assert.equal(sent, 10);
    now = 1000;
    budget.take('10.0.0.1');
  });
});

describe('forgot-password/send-code does not reveal accounts', () => {
  let server: TestServer;
  let mail: MailCatcher;
  let held: Array<() => void> = [];
  before(async () => {
    mail = await startMailCatcher({ hold: (release) => held.push(release) });
    server = await startTestServer({ EMS_SMTP_URL: mail.url });
  });
  after(async () => {
    held.forEach((release) => release());
    held = [];
    await server.close();
    await mail.close();
  });

  test('known and unknown emails: the same status and body, first time and on a repeat', async () => {
    const known = (await server.createUser()).user.email;
    const unknown = email();
    const answers = [];
    for (const address of [known, unknown]) {
      const first = await server.request('POST', '/api/auth/forgot-password/send-code', { body: { email: address } });
      const again = await server.request('POST', '/api/auth/forgot-password/send-code', { body: { email: address } });
      answers.push([first.status, first.text, again.status, again.body.error]);
    }
    assert.deepEqual(answers[0], answers[1]);
    assert.equal(answers[0][0], 200);
    assert.equal(answers[0][2], 429);
    // Let the held mail go, so the next test starts with an idle SMTP connection.
    while (held.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    held.splice(0).forEach((release) => release());
    await mail.codeFor(known);
  });

  test('the answer does not wait for the mail: it arrives while the SMTP server still holds the message', async () => {
    const known = (await server.createUser()).user.email;
    const response = await server.request('POST', '/api/auth/forgot-password/send-code', { body: { email: known } });
    assert.equal(response.status, 200);
    assert.equal(mail.messages.filter((m) => m.to.includes(known.toLowerCase())).length, 0, 'not delivered yet when the answer came');
    while (held.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    held.splice(0).forEach((release) => release());
    assert.match(await mail.codeFor(known), /^\d{6}$/);
  });
});
