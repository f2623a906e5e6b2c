// SPEC.md authentication endpoints and state tables, against a real server, real SMTP and the shipped migrations.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, TEST_PASSWORD, type TestServer } from '../helpers/server.ts';
import { startMailCatcher, type MailCatcher } from '../helpers/smtp.ts';
import { runCli } from '../helpers/cli.ts';

let mail: MailCatcher;
let server: TestServer;
let seq = 0;
const uniqueEmail = () => `person${process.pid}x${++seq}@example.test`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

before(async () => {
  mail = await startMailCatcher();
  server = await startTestServer({ EMS_SMTP_URL: mail.url, EMS_MAIL_FROM: 'EMS <ems@example.test>' });
});
after(async () => {
  await server.close();
  await mail.close();
});

async function registerViaCode(s: TestServer, username: string, email: string, password = 'a-good-password') {
  const sent = await s.request('POST', '/api/auth/register/send-code', { body: { email } });
  assert.equal(sent.status, 200, sent.text);
  const code = await mail.codeFor(email);
  return s.request('POST', '/api/auth/register', { body: { username, email, password, code } });
}

describe('login', () => {
  test('accepts the username or the email and returns tokens and the user without secrets', async () => {
    const { user } = await server.createUser({ role: 'operator' });
    for (const login of [user.username, user.email, user.username.toUpperCase()]) {
      const response = await server.request('POST', '/api/auth/login', { body: { username: login, password: TEST_PASSWORD } });
      assert.equal(response.status, 200, response.text);
      assert.equal(typeof response.body.accessToken, 'string');
      assert.equal(Buffer.from(response.body.refreshToken, 'base64').length, 32);
      assert.equal(response.body.user.id, user.id);
      assert.equal(response.body.user.role, 'operator');
      assert.equal('passwordHash' in response.body.user, false);
      assert.doesNotMatch(response.text, /\$2[aby]\$/);
    }
  });

  test('a sign-in records lastLoginAt and is not an edit of the account (updatedAt stays)', async () => {
    const { user } = await server.createUser();
    await sleep(5);
    const before = Date.now();
    const login = await server.request('POST', '/api/auth/login', { body: { username: user.username, password: TEST_PASSWORD } });
    assert.equal(login.status, 200, login.text);
    const me = await server.request('GET', '/api/auth/me', { token: login.body.accessToken });
    assert.equal(me.status, 200, me.text);
    assert.ok(Date.parse(me.body.lastLoginAt) >= before, `lastLoginAt ${me.body.lastLoginAt} is this sign-in's`);
    assert.equal(me.body.updatedAt, user.updatedAt);
  });

  test('the same 401 for an unknown user and a wrong password', async () => {
    const { user } = await server.createUser();
    const wrong = await server.request('POST', '/api/auth/login', { body: { username: user.username, password: 'not-the-password' } });
    const unknown = await server.request('POST', '/api/auth/login', { body: { username: 'nobody-here', password: 'not-the-password' } });
    assert.equal(wrong.status, 401);
    assert.equal(unknown.status, 401);
    assert.deepEqual(wrong.body, unknown.body);
    assert.equal(typeof wrong.body.error, 'string');
  });

  test('a second login invalidates the first device refresh token (one session per user)', async () => {
    const { user } = await server.createUser();
    const first = await server.request('POST', '/api/auth/login', { body: { username: user.username, password: TEST_PASSWORD } });
    const second = await server.request('POST', '/api/auth/login', { body: { username: user.username, password: TEST_PASSWORD } });
    assert.equal(second.status, 200);
    const stale = await server.request('POST', '/api/auth/refresh', { body: { refreshToken: first.body.refreshToken } });
    assert.equal(stale.status, 401);
    const fresh = await server.request('POST', '/api/auth/refresh', { body: { refreshToken: second.body.refreshToken } });
    assert.equal(fresh.status, 200);
    const rows = server.service.deps.db.sqlite.prepare('SELECT count(*) AS n FROM refresh_tokens WHERE user_id = ?').get(user.id) as { n: number };
    assert.equal(rows.n, 1);
  });

  test('the refresh token is stored only as a hash', async () => {
    const { user, refreshToken } = await server.createUser();
    const row = server.service.deps.db.sqlite.prepare('SELECT token_hash FROM refresh_tokens WHERE user_id = ?').get(user.id) as { token_hash: string };
    assert.notEqual(row.token_hash, refreshToken);
    assert.match(row.token_hash, /^[0-9a-f]{64}$/);
  });
});

describe('refresh', () => {
  test('rotates: a new pair, and the old token is dead at once', async () => {
    const { refreshToken, user } = await server.createUser();
    const rotated = await server.request('POST', '/api/auth/refresh', { body: { refreshToken } });
    assert.equal(rotated.status, 200);
    assert.notEqual(rotated.body.refreshToken, refreshToken);
    const me = await server.request('GET', '/api/auth/me', { token: rotated.body.accessToken });
    assert.equal(me.body.id, user.id);
    const reuse = await server.request('POST', '/api/auth/refresh', { body: { refreshToken } });
    assert.equal(reuse.status, 401);
    assert.equal(typeof reuse.body.error, 'string');
  });

  test('of 10 concurrent refreshes with one token exactly one succeeds', async () => {
    const { refreshToken } = await server.createUser();
    const results = await Promise.all(Array.from({ length: 10 }, () => server.request('POST', '/api/auth/refresh', { body: { refreshToken } })));
    assert.deepEqual(results.map((r) => r.status).sort(), [200, 401, 401, 401, 401, 401, 401, 401, 401, 401]);
  });

  test('an unknown token is 401', async () => {
    const response = await server.request('POST', '/api/auth/refresh', { body: { refreshToken: 'bm90LWEtdG9rZW4=' } });
    assert.equal(response.status, 401);
  });
});

describe('logout and me', () => {
  test('logout removes the refresh token; me returns the caller', async () => {
    const { accessToken, refreshToken, user } = await server.createUser();
    const me = await server.request('GET', '/api/auth/me', { token: accessToken });
    assert.equal(me.status, 200);
    assert.equal(me.body.username, user.username);
    const out = await server.request('POST', '/api/auth/logout', { token: accessToken });
    assert.equal(out.status, 200);
    const refresh = await server.request('POST', '/api/auth/refresh', { body: { refreshToken } });
    assert.equal(refresh.status, 401);
  });

  test('logout and me need a token', async () => {
    assert.equal((await server.request('POST', '/api/auth/logout')).status, 401);
    assert.equal((await server.request('GET', '/api/auth/me')).status, 401);
  });
});

describe('registration', () => {
  test('send-code → register: 201, default role viewer, tokens work, code single use', async () => {
    const email = uniqueEmail();
    const before = mail.messages.length;
    const sent = await server.request('POST', '/api/auth/register/send-code', { body: { email } });
    assert.equal(sent.status, 200);
    const code = await mail.codeFor(email, { after: before });
    assert.match(code, /^\d{6}$/);
    const username = `reg${seq}`;
    const created = await server.request('POST', '/api/auth/register', { body: { username, email, password: 'a-good-password', code } });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.user.role, 'viewer');
    assert.equal(created.body.user.email, email);
    const me = await server.request('GET', '/api/auth/me', { token: created.body.accessToken });
    assert.equal(me.body.username, username);
    const refresh = await server.request('POST', '/api/auth/refresh', { body: { refreshToken: created.body.refreshToken } });
    assert.equal(refresh.status, 200);
    const hash = server.service.deps.db.sqlite.prepare('SELECT password_hash FROM users WHERE username = ?').pluck().get(username) as string;
    assert.match(hash, /^\$2b\$10\$/);
    const login = await server.request('POST', '/api/auth/login', { body: { username, password: 'a-good-password' } });
    assert.equal(login.status, 200);
    const again = await server.request('POST', '/api/auth/register', { body: { username: `${username}b`, email, password: 'a-good-password', code } });
    assert.ok(again.status === 400 || again.status === 409, `reuse answered ${again.status}`);
  });

  test('send-code for a registered email is 409; a second send within a minute is 429 with Retry-After', async () => {
    const { user } = await server.createUser();
    const taken = await server.request('POST', '/api/auth/register/send-code', { body: { email: user.email } });
    assert.equal(taken.status, 409);
    const email = uniqueEmail();
    assert.equal((await server.request('POST', '/api/auth/register/send-code', { body: { email } })).status, 200);
    const again = await server.request('POST', '/api/auth/register/send-code', { body: { email } });
    assert.equal(again.status, 429);
    assert.ok(Number(again.headers.get('retry-after')) > 0);
  });

  test('a wrong code is 400, and five wrong tries void the code', async () => {
    const email = uniqueEmail();
    const before = mail.messages.length;
    await server.request('POST', '/api/auth/register/send-code', { body: { email } });
    const code = await mail.codeFor(email, { after: before });
    const wrong = code === '000000' ? '111111' : '000000';
    for (let i = 0; i < 5; i += 1) {
      const attempt = await server.request('POST', '/api/auth/register', {
        body: { username: `wrong${seq}`, email, password: 'a-good-password', code: wrong },
      });
      assert.equal(attempt.status, 400);
    }
    const right = await server.request('POST', '/api/auth/register', { body: { username: `wrong${seq}`, email, password: 'a-good-password', code } });
    assert.equal(right.status, 400, 'the code is void after 5 wrong tries');
  });

  test('a reset code cannot be used to register (purpose-bound)', async () => {
    const { user } = await server.createUser();
    const before = mail.messages.length;
    await server.request('POST', '/api/auth/forgot-password/send-code', { body: { email: user.email } });
    const code = await mail.codeFor(user.email, { after: before });
    const response = await server.request('POST', '/api/auth/register', {
      body: { username: `purpose${seq}`, email: user.email, password: 'a-good-password', code },
    });
    assert.ok(response.status === 400 || response.status === 409);
    const other = uniqueEmail();
    const cross = await server.request('POST', '/api/auth/register', { body: { username: `purpose${seq}`, email: other, password: 'a-good-password', code } });
    assert.equal(cross.status, 400);
  });

  test('duplicate username is 409', async () => {
    const { user } = await server.createUser();
    const email = uniqueEmail();
    const response = await registerViaCode(server, user.username.toUpperCase(), email);
    assert.equal(response.status, 409);
    assert.match(response.body.error, /username/i);
  });

  test('passwords must be 8 to 72 bytes; longer is refused, not truncated', async () => {
    const email = uniqueEmail();
    const tooLongInBytes = 'é'.repeat(40); // 40 characters, 80 bytes
    const response = await registerViaCode(server, `bytes${seq}`, email, tooLongInBytes);
    assert.equal(response.status, 400);
    assert.ok(response.body.details.some((d: { path: string }) => d.path.includes('password')));
    const short = await server.request('POST', '/api/auth/register', { body: { username: `short${seq}`, email, password: 'short', code: '123456' } });
    assert.equal(short.status, 400);
  });
});

describe('password reset', () => {
  test('unknown email answers 200 and sends nothing', async () => {
    const before = mail.messages.length;
    const response = await server.request('POST', '/api/auth/forgot-password/send-code', { body: { email: uniqueEmail() } });
    assert.equal(response.status, 200);
    await sleep(300);
    assert.equal(mail.messages.length, before);
  });

  test('reset replaces the password and ends the session (refresh token 401; the access token lives out its TTL); a register code cannot reset', async () => {
    const { user, accessToken, refreshToken } = await server.createUser();
    const before = mail.messages.length;
    assert.equal((await server.request('POST', '/api/auth/forgot-password/send-code', { body: { email: user.email } })).status, 200);
    const code = await mail.codeFor(user.email, { after: before });
    const reset = await server.request('POST', '/api/auth/forgot-password/reset', { body: { email: user.email, code, newPassword: 'brand-new-password' } });
    assert.equal(reset.status, 200, reset.text);
    const oldLogin = await server.request('POST', '/api/auth/login', { body: { username: user.username, password: TEST_PASSWORD } });
    assert.equal(oldLogin.status, 401);
    assert.equal((await server.request('GET', '/api/auth/me', { token: accessToken })).status, 200);
    const refreshed = await server.request('POST', '/api/auth/refresh', { body: { refreshToken } });
    assert.equal(refreshed.status, 401, 'a reset is the remedy for a stolen session: the refresh token is deleted');
    const rows = server.service.deps.db.sqlite.prepare('SELECT count(*) FROM refresh_tokens WHERE user_id = ?').pluck().get(user.id);
    assert.equal(rows, 0);
    const reuse = await server.request('POST', '/api/auth/forgot-password/reset', { body: { email: user.email, code, newPassword: 'another-password' } });
    assert.equal(reuse.status, 400);
    const newLogin = await server.request('POST', '/api/auth/login', { body: { username: user.email, password: 'brand-new-password' } });
    assert.equal(newLogin.status, 200);
  });
});

describe('expiry (short lifetimes set by the operator)', () => {
  test('codes, access tokens and refresh tokens expire', async () => {
    // JWT times are whole seconds, so a 1 s token issued late in a second may be dead at once: the access token gets 3 s,
    // and the test waits for the exp the token itself carries instead of guessing.
    const short = await startTestServer({ EMS_SMTP_URL: mail.url, EMS_CODE_TTL: '1s', EMS_ACCESS_TOKEN_TTL: '3s', EMS_REFRESH_TOKEN_TTL: '1s' });
    try {
      const email = uniqueEmail();
      const before = mail.messages.length;
      await short.request('POST', '/api/auth/register/send-code', { body: { email } });
      const code = await mail.codeFor(email, { after: before });
      const { accessToken, refreshToken } = await short.createUser();
      const claims = JSON.parse(Buffer.from(accessToken.split('.')[1], 'base64url').toString()) as { iat: number; exp: number };
      assert.equal(claims.exp - claims.iat, 3, 'the operator-set lifetime is the one signed');
      assert.equal((await short.request('GET', '/api/auth/me', { token: accessToken })).status, 200);
      await sleep(Math.max(2100, claims.exp * 1000 - Date.now() + 1100));
      const late = await short.request('POST', '/api/auth/register', { body: { username: `late${seq}`, email, password: 'a-good-password', code } });
      assert.equal(late.status, 400);
      const expired = await short.request('GET', '/api/auth/me', { token: accessToken });
      assert.equal(expired.status, 401);
      assert.equal(typeof expired.body.error, 'string');
      assert.equal((await short.request('POST', '/api/auth/refresh', { body: { refreshToken } })).status, 401);
    } finally {
      await short.close();
    }
  });
});

describe('login throttling', () => {
  test('10 failures for one username → 429 with Retry-After, even with the right password; emsctl user unlock clears it', async () => {
    const { user } = await server.createUser();
    for (let i = 0; i < 10; i += 1) {
      const response = await server.request('POST', '/api/auth/login', { body: { username: user.username, password: 'wrong-password' } });
      assert.equal(response.status, 401);
    }
    const locked = await server.request('POST', '/api/auth/login', { body: { username: user.username.toUpperCase(), password: TEST_PASSWORD } });
    assert.equal(locked.status, 429);
    const retryAfter = Number(locked.headers.get('retry-after'));
    assert.ok(retryAfter > 0 && retryAfter <= 900, `Retry-After ${retryAfter}`);
    const cli = await runCli(['--data-dir', server.dataDir, 'user', 'unlock', user.username]);
    assert.equal(cli.code, 0, cli.stderr);
    const open = await server.request('POST', '/api/auth/login', { body: { username: user.username, password: TEST_PASSWORD } });
    assert.equal(open.status, 200);
  });
});

describe('mail without SMTP', () => {
  test('the code goes to the log with a warning', async () => {
    const quiet = await startTestServer();
    try {
      const email = uniqueEmail();
      assert.equal((await quiet.request('POST', '/api/auth/register/send-code', { body: { email } })).status, 200);
      const line = quiet.logs.map((l) => JSON.parse(l)).find((entry) => entry.to === email);
      assert.ok(line, 'a log line for the mail');
      assert.equal(line.level, 'warn');
      assert.match(String(line.code), /^\d{6}$/);
      const registered = await quiet.request('POST', '/api/auth/register', {
        body: { username: `logged${seq}`, email, password: 'a-good-password', code: line.code },
      });
      assert.equal(registered.status, 201);
    } finally {
      await quiet.close();
    }
  });
});
