// emsctl against the same data dir as a running server: secret rotation, token revocation, user admin, errors.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { runCli } from './helpers/cli.ts';
import fs from 'node:fs';
import path from 'node:path';
import { fileBody } from './helpers/uploads.ts';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(() => server.close());

const cli = (...args: string[]) => runCli(['--data-dir', server.dataDir, ...args]);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('emsctl against a running server', () => {
  test('secret rotate: earlier access tokens are rejected within 1 s, refresh tokens keep working', async () => {
    const { accessToken, refreshToken } = await server.createUser();
    assert.equal((await server.request('GET', '/api/auth/me', { token: accessToken })).status, 200);
    const result = await cli('secret', 'rotate');
    assert.equal(result.code, 0, result.stderr);
    await sleep(1000);
    assert.equal((await server.request('GET', '/api/auth/me', { token: accessToken })).status, 401);
    const refreshed = await server.request('POST', '/api/auth/refresh', { body: { refreshToken } });
    assert.equal(refreshed.status, 200);
    assert.equal((await server.request('GET', '/api/auth/me', { token: refreshed.body.accessToken })).status, 200);
  });

  test('tokens revoke-all deletes every refresh token', async () => {
    const a = await server.createUser();
    const b = await server.createUser();
    const result = await cli('--json', 'tokens', 'revoke-all');
    assert.equal(result.code, 0, result.stderr);
    assert.ok(JSON.parse(result.stdout).revoked >= 2);
    for (const user of [a, b]) assert.equal((await server.request('POST', '/api/auth/refresh', { body: { refreshToken: user.refreshToken } })).status, 401);
  });

  test('user add (generated password printed once), list --json, set-role, set-password, remove', async () => {
    const added = await cli('--json', 'user', 'add', 'cli_user', '--email', 'cli_user@example.test', '--role', 'operator');
    assert.equal(added.code, 0, added.stderr);
    const { password } = JSON.parse(added.stdout);
    assert.equal(typeof password, 'string');
    const login = await server.request('POST', '/api/auth/login', { body: { username: 'cli_user', password } });
    assert.equal(login.status, 200);
    assert.equal(login.body.user.role, 'operator');

    const listed = JSON.parse((await cli('--json', 'user', 'list')).stdout) as Array<{ username: string; role: string }>;
    assert.equal(listed.find((u) => u.username === 'cli_user')?.role, 'operator');
    assert.equal(JSON.stringify(listed).includes('$2b$'), false);

    assert.equal((await cli('user', 'set-role', 'cli_user', 'admin')).code, 0);
    assert.equal((await server.request('GET', '/api/auth/me', { token: login.body.accessToken })).body.role, 'admin');

    const setPassword = await runCli(['--data-dir', server.dataDir, 'user', 'set-password', 'cli_user', '--password-stdin'], { input: 'from-standard-input\n' });
    assert.equal(setPassword.code, 0, setPassword.stderr);
    assert.equal((await server.request('POST', '/api/auth/login', { body: { username: 'cli_user', password: 'from-standard-input' } })).status, 200);

    assert.equal((await cli('user', 'remove', 'cli_user')).code, 0);
    assert.equal((await server.request('GET', '/api/auth/me', { token: login.body.accessToken })).status, 401);
  });

  test('user commands go through the user service: audited as emsctl, remove deletes the avatar, unlock checks the name', async () => {
    const target = await server.createUser({ role: 'operator' });
    const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(64)]);
    const multipart = fileBody(png, 'me.png', 'image/png');
    const set = await server.request('PUT', `/api/users/${target.user.id}/avatar`, { token: target.accessToken, raw: multipart.body, headers: { 'content-type': multipart.contentType } });
    assert.equal(set.status, 200, set.text);
    const db = server.service.deps.db.sqlite;
    const stored = db.prepare('SELECT avatar_stored_name FROM users WHERE id = ?').pluck().get(target.user.id) as string;
    const avatarFile = path.join(server.dataDir, 'avatars', stored);
    assert.ok(fs.existsSync(avatarFile));

    // Lock the account with failed sign-ins, then unlock it from emsctl.
    for (let i = 0; i < 10; i++) await server.request('POST', '/api/auth/login', { body: { username: target.user.username, password: 'wrong-password-1' } });
    const locked = await server.request('POST', '/api/auth/login', { body: { username: target.user.username, password: target.password } });
    assert.equal(locked.status, 429);
    const unlocked = await cli('--json', 'user', 'unlock', target.user.username);
    assert.equal(unlocked.code, 0, unlocked.stderr);
    assert.equal(JSON.parse(unlocked.stdout).cleared, true);
    assert.equal((await server.request('POST', '/api/auth/login', { body: { username: target.user.username, password: target.password } })).status, 200);

    assert.equal((await cli('user', 'set-role', target.user.username, 'viewer')).code, 0);
    assert.equal((await cli('user', 'set-password', target.user.username)).code, 0);
    assert.equal((await cli('user', 'remove', target.user.username)).code, 0);
    assert.equal(fs.existsSync(avatarFile), false, 'the avatar file is removed with the user');

    const trail = db
      .prepare("SELECT action, user_id AS userId, username, before, after FROM audit_log WHERE resource = 'users' AND resource_id = ? AND username = 'emsctl' ORDER BY id")
      .all(String(target.user.id)) as { action: string; userId: number | null; before: string | null; after: string | null }[];
    assert.deepEqual(trail.map((row) => row.action), ['unlock', 'role', 'password', 'delete']);
    assert.ok(trail.every((row) => row.userId === null));
    assert.deepEqual(JSON.parse(trail[1].after!), { role: 'viewer' });
    assert.equal(JSON.parse(trail[3].before!).username, target.user.username);

    const added = await cli('--json', 'user', 'add', 'cli_audited', '--email', 'cli_audited@example.test');
    assert.equal(added.code, 0, added.stderr);
    const created = db.prepare("SELECT username FROM audit_log WHERE resource = 'users' AND action = 'create' AND resource_id = ?").pluck().get(String(JSON.parse(added.stdout).id));
    assert.equal(created, 'emsctl');
  });

  test('the last admin can be neither removed nor demoted', async () => {
    const db = server.service.deps.db.sqlite;
    const admins = db.prepare("SELECT username FROM users WHERE role = 'admin'").pluck().all() as string[];
    for (const name of admins.slice(1)) db.prepare("UPDATE users SET role = 'operator' WHERE username = ?").run(name);
    const demote = await cli('user', 'set-role', admins[0], 'viewer');
    assert.notEqual(demote.code, 0);
    assert.match(demote.stderr, /last admin/);
    const remove = await cli('user', 'remove', admins[0]);
    assert.notEqual(remove.code, 0);
  });

  test('role list, db check and status', async () => {
    const roles = JSON.parse((await cli('--json', 'role', 'list')).stdout) as Array<{ name: string }>;
    assert.deepEqual(
      roles.map((r) => r.name),
      ['viewer', 'operator', 'admin'],
    );
    const check = await cli('db', 'check');
    assert.equal(check.code, 0);
    assert.match(check.stdout, /ok/);
    const status = JSON.parse((await cli('--json', 'status')).stdout);
    assert.ok(status.users >= 1);
    assert.equal(status.dataDir, server.dataDir);
  });

  test('bad input: one-line error and a non-zero exit', async () => {
    const cases = [
      ['user', 'add', 'x', '--email', 'x@example.test'],
      ['user', 'add', 'valid_name', '--email', 'not-an-email'],
      ['user', 'set-role', 'nobody_at_all', 'admin'],
      ['user', 'set-role', 'admin', 'emperor'],
      ['user', 'remove', 'nobody_at_all'],
      ['user', 'unlock', 'nobody_at_all'],
      ['user', 'set-password', 'nobody_at_all'],
      // commander's own complaints take the same form.
      ['user', 'add', 'valid_name', '--role', 'viewer'],
      ['user', 'frobnicate'],
      ['user', 'set-role', 'admin'],
    ];
    for (const args of cases) {
      const result = await cli(...args);
      assert.notEqual(result.code, 0, args.join(' '));
      assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
      assert.match(result.stderr, /^emsctl: /);
    }
    const short = await runCli(['--data-dir', server.dataDir, 'user', 'set-password', 'admin', '--password-stdin'], { input: 'short' });
    assert.notEqual(short.code, 0);
    const missing = await runCli(['--data-dir', `${server.dataDir}/nowhere`, 'user', 'list']);
    assert.notEqual(missing.code, 0);
    assert.match(missing.stderr, /no database/);
  });

  test('secret rotate refuses when EMS_JWT_SECRET pins the secret', async () => {
    const result = await runCli(['--data-dir', server.dataDir, 'secret', 'rotate'], { env: { EMS_JWT_SECRET: 's'.repeat(40) } });
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /EMS_JWT_SECRET/);
  });
});
