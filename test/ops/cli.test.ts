// emsctl against the same data dir as a running server: secret rotation, token revocation, user admin, errors.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { runCli } from '../helpers/cli.ts';
import fs from 'node:fs';
import path from 'node:path';
import { fileBody } from '../helpers/uploads.ts';

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

    const setPassword = await runCli(['--data-dir', server.dataDir, 'user', 'set-password', 'cli_user', '--password-stdin'], {
      input: 'from-standard-input\n',
    });
    assert.equal(setPassword.code, 0, setPassword.stderr);
    assert.equal((await server.request('POST', '/api/auth/login', { body: { username: 'cli_user', password: 'from-standard-input' } })).status, 200);

    assert.equal((await cli('user', 'remove', 'cli_user')).code, 0);
    assert.equal((await server.request('GET', '/api/auth/me', { token: login.body.accessToken })).status, 401);
  });

  test('user commands go through the user service: audited as emsctl, remove deletes the avatar, unlock checks the name', async () => {
    const target = await server.createUser({ role: 'operator' });
    const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(64)]);
    const multipart = fileBody(png, 'me.png', 'image/png');
    const set = await server.request('PUT', `/api/users/${target.user.id}/avatar`, {
      token: target.accessToken,
      raw: multipart.body,
      headers: { 'content-type': multipart.contentType },
    });
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
      .prepare(
        "SELECT action, user_id AS userId, username, before, after FROM audit_log WHERE resource = 'users' AND resource_id = ? AND username = 'emsctl' ORDER BY id",
      )
      .all(String(target.user.id)) as { action: string; userId: number | null; before: string | null; after: string | null }[];
    assert.deepEqual(
      trail.map((row) => row.action),
      ['unlock', 'role', 'password', 'delete'],
    );
    assert.ok(trail.every((row) => row.userId === null));
    assert.deepEqual(JSON.parse(trail[1].after!), { role: 'viewer' });
    assert.equal(JSON.parse(trail[3].before!).username, target.user.username);

    const added = await cli('--json', 'user', 'add', 'cli_audited', '--email', 'cli_audited@example.test');
    assert.equal(added.code, 0, added.stderr);
    const created = db
      .prepare("SELECT username FROM audit_log WHERE resource = 'users' AND action = 'create' AND resource_id = ?")
      .pluck()
      .get(String(JSON.parse(added.stdout).id));
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

  test('user add without arguments names every missing one; --json errors are {"error"} on stderr with stdout empty', async () => {
    const bare = await cli('user', 'add');
    assert.equal(bare.code, 2, 'a usage error');
    assert.equal(bare.stderr, 'emsctl: missing <username> and --email <email>\n');
    const noEmail = await cli('user', 'add', 'someone');
    assert.equal(noEmail.stderr, 'emsctl: missing --email <email>\n');

    const cases: Array<[string[], RegExp]> = [
      [['user', 'add'], /^missing <username> and --email <email>$/],
      [['user', 'set-role', 'nobody_at_all', 'admin'], /nobody_at_all/],
      [['user', 'add', 'valid_name', '--email', 'not-an-email'], /not an email address/],
      // commander's own complaints too.
      [['user', 'frobnicate'], /unknown command/],
      [['user', 'set-role', 'admin'], /missing required argument/],
      [['backup', 'schedule', 'set', '--hour', '25'], /--hour: expected an integer from 0 to 23/],
    ];
    for (const [args, message] of cases) {
      const result = await cli('--json', ...args);
      assert.notEqual(result.code, 0, args.join(' '));
      assert.equal(result.stdout, '', 'nothing on stdout: a script reading it sees no result');
      const lines = result.stderr.trim().split('\n');
      assert.equal(lines.length, 1, result.stderr);
      const parsed = JSON.parse(lines[0]) as { error: string };
      assert.deepEqual(Object.keys(parsed), ['error']);
      assert.match(parsed.error, message, args.join(' '));
    }
  });

  test("usage errors exit 2 in every command (as commander's own); a refused command exits 1", async () => {
    const usage = [
      ['user', 'add'],
      ['user', 'add', 'someone'],
      ['user', 'add', 'x', '--email', 'x@example.test'],
      ['user', 'add', 'valid_name', '--email', 'not-an-email'],
      ['user', 'add', 'valid_name', '--email', 'v@example.test', '--role', 'superuser'],
      ['user', 'list', 'extra'],
      ['user', 'set-role', 'admin'],
      ['user', 'set-role', 'admin', 'emperor'],
      ['user', 'set-password'],
      ['user', 'remove'],
      ['user', 'unlock'],
      ['user', 'ad', 'foo'],
      ['role', 'list', 'extra'],
      ['secret', 'rotate', '--nope'],
      ['tokens', 'revoke-all', 'extra'],
      ['db', 'check', 'extra'],
      ['backup', 'restore'],
      ['backup', 'drill', 'a', 'b'],
      ['backup', 'schedule', 'set'],
      ['backup', 'schedule', 'set', '--hour', '25'],
      ['backup', 'schedule', 'set', '--at', '25:00'],
      ['backup', 'schedule', 'set', '--at', '02:00', '--hour', '3'],
      ['backup', 'schedule', 'set', '--enable', '--disable'],
      ['backup', 'schedule', 'set', '--cron', 'every month'],
      ['gateway', 'simulate', '--port', 'abc'],
      ['status', 'extra'],
      ['frobnicate'],
      ['--jsn', 'status'],
    ];
    const results = await Promise.all(usage.map((args) => cli(...args)));
    for (const [i, result] of results.entries()) {
      assert.equal(result.code, 2, `${usage[i].join(' ')}: ${result.stderr}`);
      assert.match(result.stderr, /^emsctl: \S/);
    }
    const refused = await Promise.all([cli('user', 'set-role', 'nobody_at_all', 'admin'), cli('backup', 'restore', 'ems-nope.db')]);
    assert.deepEqual(
      refused.map((result) => result.code),
      [1, 1],
    );
  });

  test('status: the database size is the same figure in text and --json, in binary units named as such', async () => {
    const [text, json] = await Promise.all([cli('status'), cli('--json', 'status')]);
    const report = JSON.parse(json.stdout) as { databaseBytes: number; databaseWalBytes: number };
    const line = /^database +(\d+\.\d) (KiB|MiB) \(([\d,]+) bytes; write-ahead log ([\d.]+ (?:B|KiB|MiB))\)$/m.exec(text.stdout);
    assert.ok(line, text.stdout);
    const shownBytes = Number(line[3].replaceAll(',', ''));
    // Two calls a moment apart: the WAL may have moved; the text's own figures agree with each other exactly.
    assert.equal(Number(line[1]), Number((shownBytes / (line[2] === 'KiB' ? 1024 : 1048576)).toFixed(1)));
    assert.ok(report.databaseBytes > 0 && report.databaseWalBytes <= report.databaseBytes);
    assert.doesNotMatch(text.stdout, /\d (KB|MB|GB)\b/, 'no decimal-named units anywhere');
  });

  test('--json: one thing is printed with the same fields as its entry in the list', async () => {
    const added = JSON.parse((await cli('--json', 'user', 'add', 'shape_user', '--email', 'shape@example.test', '--role', 'operator')).stdout);
    const listed = (JSON.parse((await cli('--json', 'user', 'list')).stdout) as Array<Record<string, unknown>>).find((user) => user.username === 'shape_user')!;
    const { password, ...addedUser } = added;
    assert.equal(typeof password, 'string');
    assert.deepEqual(addedUser, listed, 'user add prints the user as user list does, plus the generated password');
    const changed = JSON.parse((await cli('--json', 'user', 'set-role', 'shape_user', 'viewer')).stdout);
    const relisted = (JSON.parse((await cli('--json', 'user', 'list')).stdout) as Array<Record<string, unknown>>).find(
      (user) => user.username === 'shape_user',
    )!;
    assert.deepEqual(changed, relisted);
    for (const args of [
      ['user', 'unlock', 'shape_user'],
      ['user', 'set-password', 'shape_user'],
      ['user', 'remove', 'shape_user'],
    ]) {
      const single = JSON.parse((await cli('--json', ...args)).stdout) as Record<string, unknown>;
      for (const key of Object.keys(relisted)) assert.ok(key in single, `${args.join(' ')} prints ${key}`);
    }

    const ran = JSON.parse((await cli('--json', 'backup', 'run')).stdout) as Record<string, unknown>;
    const entry = (JSON.parse((await cli('--json', 'backup', 'list')).stdout) as Array<Record<string, unknown>>).find((row) => row.name === ran.name)!;
    assert.deepEqual(Object.keys(entry), ['name', 'createdAt', 'sizeBytes', 'fileCount', 'filesBytes'], 'list entries hold data, not display text');
    for (const [key, value] of Object.entries(entry)) assert.deepEqual(ran[key], value, `backup run prints ${key} as backup list does`);
    const roles = JSON.parse((await cli('--json', 'role', 'list')).stdout);
    assert.ok(Array.isArray(roles) && roles.every((role: object) => Object.keys(role).join() === 'name,rank'));
  });

  test('backup schedule show and status give the next run in the time zone the cron runs in, and name it', async () => {
    // Zones whose ICU names are canonical (Asia/Kolkata would print as Asia/Calcutta).
    for (const zone of ['America/New_York', 'Europe/Berlin']) {
      const env = { TZ: zone };
      const set = await runCli(['--data-dir', server.dataDir, 'backup', 'schedule', 'set', '--at', '03:30', '--enable'], { env });
      assert.equal(set.code, 0, set.stderr);
      assert.match(set.stdout, new RegExp(`cron +30 3 \\* \\* \\* \\(local time: ${zone}\\)`));
      const offset = zone === 'Europe/Berlin' ? '\\+0[12]:00' : '-0[45]:00';
      const next = new RegExp(`next run +\\d{4}-\\d\\d-\\d\\d 03:30 ${offset} ${zone} \\((\\S+)\\)`).exec(set.stdout);
      assert.ok(next, set.stdout);
      // The local time shown is the UTC instant beside it, in that zone.
      assert.equal(next[1], new Date(next[1]).toISOString());
      const local = new Intl.DateTimeFormat('en-GB', { timeZone: zone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(new Date(next[1]));
      assert.equal(local, '03:30');
      const json = JSON.parse((await runCli(['--data-dir', server.dataDir, '--json', 'backup', 'schedule', 'show'], { env })).stdout);
      assert.equal(json.timeZone, zone);
      assert.equal(json.nextRunAt, next[1]);
      const status = await runCli(['--data-dir', server.dataDir, 'status'], { env });
      assert.match(status.stdout, new RegExp(`schedule +"30 3 \\* \\* \\*" \\(${zone}\\), next \\d{4}-\\d\\d-\\d\\d 03:30 ${offset};`));
    }
  });

  test("status reads port, host and TLS from --env-file (the service's settings), the environment winning", async (t) => {
    const port = new URL(server.url).port;
    const envFile = path.join(server.dataDir, 'ems.env');
    fs.writeFileSync(envFile, `# as /etc/ems/ems.env\nEMS_HOST=127.0.0.1\nEMS_PORT=${port}\nEMS_DATA_DIR=${server.dataDir}\n`);
    t.after(() => fs.rmSync(envFile, { force: true }));
    // No EMS_PORT in the environment: without the file it would ask port 3000.
    const status = await runCli(['--env-file', envFile, '--json', 'status']);
    assert.equal(status.code, 0, status.stderr + status.stdout);
    const report = JSON.parse(status.stdout);
    assert.equal(report.service.state, 'running');
    assert.equal(report.service.healthUrl, `http://127.0.0.1:${port}/api/health`);
    assert.equal(report.envFile, envFile);
    assert.equal(report.dataDir, server.dataDir);
    // The environment wins over the file (as with node --env-file and systemd's Environment= over EnvironmentFile=).
    const overridden = await runCli(['--env-file', envFile, '--json', 'status'], { env: { EMS_PORT: '9' } });
    assert.equal(overridden.code, 3);
    assert.equal(JSON.parse(overridden.stdout).service.healthUrl, 'http://127.0.0.1:9/api/health');
    // TLS from the file: https.
    fs.appendFileSync(envFile, `EMS_TLS_CERT=${path.join(server.dataDir, 'no.crt')}\nEMS_TLS_KEY=${path.join(server.dataDir, 'no.key')}\n`);
    const tls = await runCli(['--env-file', envFile, '--json', 'status']);
    // The test server speaks plain HTTP: asked over HTTPS it does not answer as a service (exit 3), but the URL shows the file was read.
    assert.equal(tls.code, 3, tls.stderr);
    assert.equal(JSON.parse(tls.stdout).service.healthUrl, `https://127.0.0.1:${port}/api/health`);
    assert.equal(JSON.parse(tls.stdout).service.state, 'not answering');
    // A missing file is an error naming it. (Node 20 itself also reads an --env-file given after the script and stops
    // first with exit 9 and its own one line; newer Node leaves it to emsctl.)
    const missing = await runCli(['--env-file', path.join(server.dataDir, 'nope.env'), 'status']);
    assert.ok(missing.code === 1 || missing.code === 9, String(missing.code));
    assert.match(missing.stderr, /^(emsctl: cannot read the env file .*nope\.env: ENOENT|\S*node: .*nope\.env: not found)\n$/);
  });

  test('secret rotate refuses when EMS_JWT_SECRET pins the secret', async () => {
    const result = await runCli(['--data-dir', server.dataDir, 'secret', 'rotate'], { env: { EMS_JWT_SECRET: 's'.repeat(40) } });
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /EMS_JWT_SECRET/);
  });
});
