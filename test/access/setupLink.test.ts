// The one-time set-up link (issue 53): the first start writes it to the data dir (0600; only its hash in the
// database); opening it sets admin's password once; a second use, an expired link and a guess are refused; sixty
// uses at once succeed exactly once. Real service, real SQLite, over HTTP.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(() => server?.close());

function tokenOf(box: TestServer): string {
  const url = fs.readFileSync(path.join(box.dataDir, 'setup-link'), 'utf8').trim();
  assert.match(url, /^http:\/\/localhost:\d+\/first-sign-in#[A-Za-z0-9_-]{43}$/);
  return url.split('#')[1];
}

test('the link is written 0600 and printed, only its hash is stored, it sets the password once', async () => {
  const token = tokenOf(server);
  assert.equal(fs.statSync(path.join(server.dataDir, 'setup-link')).mode & 0o777, 0o600);
  assert.ok(fs.existsSync(path.join(server.dataDir, 'initial-admin-password')), 'the password file stays as the fallback');
  assert.ok(server.logs.some((line) => line.includes('one-time set-up link') && line.includes(token)));
  const stored = server.service.deps.db.sqlite.prepare('SELECT token_hash, used_at FROM setup_links').all() as { token_hash: string; used_at: number | null }[];
  assert.equal(stored.length, 1);
  assert.notEqual(stored[0].token_hash, token);
  assert.match(stored[0].token_hash, /^[0-9a-f]{64}$/);

  const short = await server.request('POST', '/api/auth/setup-link', { body: { token, newPassword: 'short' } });
  assert.equal(short.status, 400);
  assert.equal(short.body.details[0].path, 'body.newPassword');
  const malformed = await server.request('POST', '/api/auth/setup-link', { body: { token: 'not-a-token', newPassword: 'a-good-password-1' } });
  assert.equal(malformed.status, 400);
  assert.match(malformed.text, /token/);
  const guess = await server.request('POST', '/api/auth/setup-link', { body: { token: 'A'.repeat(43), newPassword: 'a-good-password-1' } });
  assert.equal(guess.status, 409);

  const used = await server.request('POST', '/api/auth/setup-link', { body: { token, newPassword: 'a-good-password-1' } });
  assert.equal(used.status, 200, used.text);
  assert.equal(used.body.user.username, 'admin');
  assert.equal(used.body.user.mustChangePassword, false);
  const me = await server.request('GET', '/api/auth/me', { token: used.body.accessToken });
  assert.equal(me.body.role, 'admin');
  const login = await server.request('POST', '/api/auth/login', { body: { username: 'admin', password: 'a-good-password-1' } });
  assert.equal(login.status, 200, 'the chosen password signs in');

  const again = await server.request('POST', '/api/auth/setup-link', { body: { token, newPassword: 'another-password-2' } });
  assert.equal(again.status, 409, 'a second use is refused');
  assert.match(again.body.error, /used already or has expired/);
  assert.equal(fs.existsSync(path.join(server.dataDir, 'setup-link')), false);
  assert.equal(fs.existsSync(path.join(server.dataDir, 'initial-admin-password')), false, 'the generated password is no longer true');
  const trail = server.service.deps.db.sqlite.prepare("SELECT username FROM audit_log WHERE action = 'user.setup_link'").pluck().all();
  assert.deepEqual(trail, ['admin']);
});

test('sixty uses at once: exactly one sets the password', async () => {
  const box = await startTestServer();
  try {
    const token = tokenOf(box);
    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, i) => box.request('POST', '/api/auth/setup-link', { body: { token, newPassword: `parallel-password-${i}` } })),
    );
    const statuses = answers.map((answer) => answer.status);
    assert.equal(statuses.filter((status) => status === 200).length, 1, statuses.join(','));
    assert.equal(statuses.filter((status) => status === 409).length, 59);
    const winner = answers.findIndex((answer) => answer.status === 200);
    const login = await box.request('POST', '/api/auth/login', { body: { username: 'admin', password: `parallel-password-${winner}` } });
    assert.equal(login.status, 200, "the winner's password is admin's");
    assert.equal(box.service.deps.db.sqlite.prepare("SELECT count(*) FROM audit_log WHERE action = 'user.setup_link'").pluck().get(), 1);
  } finally {
    await box.close();
  }
});

test('an expired link is refused and the password is unchanged', async () => {
  const box = await startTestServer();
  try {
    const token = tokenOf(box);
    box.service.deps.db.sqlite.prepare('UPDATE setup_links SET expires_at = ?').run(Date.now() - 1000);
    const late = await box.request('POST', '/api/auth/setup-link', { body: { token, newPassword: 'too-late-password' } });
    assert.equal(late.status, 409);
    const password = fs.readFileSync(path.join(box.dataDir, 'initial-admin-password'), 'utf8').trim();
    const login = await box.request('POST', '/api/auth/login', { body: { username: 'admin', password } });
    assert.equal(login.status, 200, 'the file is still the way in');
  } finally {
    await box.close();
  }
});
