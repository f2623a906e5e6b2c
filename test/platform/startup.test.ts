// Start-up: config validation, first-start admin, SQLite pragmas, fail-closed opening of a damaged database.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { ConfigError, loadConfig, parseDuration } from '../../src/platform/config.ts';
import { DatabaseOpenError, openDatabase, closeDatabase } from '../../src/platform/db/client.ts';
import { bindListener } from '../../src/platform/http/listener.ts';
import { startTestServer, tempDir } from '../helpers/server.ts';
import { compiledBuild } from '../helpers/compiledBuild.ts';
import { spawnService, trackChild } from '../helpers/serviceProcess.ts';

/**
 * The entry point as installed: the compiled service (built once from the current sources; ~1.5 s faster a start than
 * tsx), resolved while the file loads so a first build does not count against a test's timeout.
 */
const compiledMain = path.join(compiledBuild(), 'dist', 'src', 'main.js');
const mainJs = () => compiledMain;
/** A run expected to end by itself (a refused start) that has not ended after this long is killed and fails. */
const RUN_LIMIT_MS = 180_000;

function runMain(env: Record<string, string>, as: { uid?: number; gid?: number } = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const entry = mainJs();
  return new Promise((resolve, reject) => {
    const child = trackChild(spawn(process.execPath, [entry], { env: { ...process.env, EMS_LOG_LEVEL: 'info', ...env }, ...as }));
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the service did not exit within ${RUN_LIMIT_MS / 1000} s (killed): ${stderr}`));
    }, RUN_LIMIT_MS);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('configuration', () => {
  test('defaults make a fresh checkout work', () => {
    const config = loadConfig({});
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.port, 3000);
    assert.equal(config.dataDir, path.resolve('data'));
    assert.equal(config.accessTokenTtlSec, 900);
    assert.equal(config.refreshTokenTtlSec, 7 * 86400);
    assert.equal(config.codeTtlSec, 300);
    assert.equal(config.iot.baseUrl, 'sim');
    assert.equal(config.iot.timeoutMs, 10000);
    assert.equal(config.uploadMaxBytes, 104857600);
    assert.equal(config.publicUrl, 'http://localhost:3000');
    assert.deepEqual(config.oauth, {});
  });

  test('unset, EMS_PUBLIC_URL follows EMS_PORT (an OAuth redirect must come back to this port)', () => {
    assert.equal(loadConfig({ EMS_PORT: '8080' }).publicUrl, 'http://localhost:8080');
    assert.equal(loadConfig({ EMS_PORT: '8080', EMS_PUBLIC_URL: 'https://ems.example.lan' }).publicUrl, 'https://ems.example.lan');
  });

  test('durations accept seconds or s/m/h/d', () => {
    assert.equal(parseDuration('900'), 900);
    assert.equal(parseDuration('15m'), 900);
    assert.equal(parseDuration('2h'), 7200);
    assert.equal(parseDuration('7d'), 604800);
    for (const bad of ['', '0', '-5', '1.5m', '10 minutes', 'm', '5w']) assert.equal(parseDuration(bad), undefined, bad);
  });

  test('EMS_COLLECT_INTERVAL: off, a duration, or whole milliseconds of at least 10 (a sped-up clock: the soak)', () => {
    assert.equal(loadConfig({}).collectIntervalMs, 60_000);
    assert.equal(loadConfig({ EMS_COLLECT_INTERVAL: 'off' }).collectIntervalMs, 0);
    assert.equal(loadConfig({ EMS_COLLECT_INTERVAL: '5m' }).collectIntervalMs, 300_000);
    assert.equal(loadConfig({ EMS_COLLECT_INTERVAL: '42ms' }).collectIntervalMs, 42);
    for (const bad of ['9ms', '0ms', '1.5ms', 'ms', '42 ms'])
      assert.throws(
        () => loadConfig({ EMS_COLLECT_INTERVAL: bad }),
        (error: unknown) => error instanceof ConfigError && error.message.startsWith('EMS_COLLECT_INTERVAL:'),
        bad,
      );
  });

  test('each bad value names its variable', () => {
    const cases: Array<[Record<string, string>, string]> = [
      [{ EMS_PORT: 'abc' }, 'EMS_PORT'],
      [{ EMS_PORT: '70000' }, 'EMS_PORT'],
      [{ EMS_ACCESS_TOKEN_TTL: '15 minutes' }, 'EMS_ACCESS_TOKEN_TTL'],
      [{ EMS_REFRESH_TOKEN_TTL: '0' }, 'EMS_REFRESH_TOKEN_TTL'],
      [{ EMS_CODE_TTL: 'soon' }, 'EMS_CODE_TTL'],
      [{ EMS_JWT_SECRET: 'short' }, 'EMS_JWT_SECRET'],
      [{ EMS_SMTP_URL: 'not a url' }, 'EMS_SMTP_URL'],
      [{ EMS_PUBLIC_URL: 'ftp://x' }, 'EMS_PUBLIC_URL'],
      [{ EMS_PORTAL_ORIGIN: 'https://dash.example/path' }, 'EMS_PORTAL_ORIGIN'],
      [{ EMS_OAUTH_GITHUB_CLIENT_ID: 'id-only' }, 'EMS_OAUTH_GITHUB_CLIENT_SECRET'],
      [{ EMS_OAUTH_OIDC_CLIENT_ID: 'a', EMS_OAUTH_OIDC_CLIENT_SECRET: 'b' }, 'EMS_OAUTH_OIDC_ISSUER'],
      [{ EMS_IOT_BASE_URL: 'http://10.0.0.5:8080' }, 'EMS_IOT_USERNAME'],
      [{ EMS_IOT_TIMEOUT_MS: '5s' }, 'EMS_IOT_TIMEOUT_MS'],
      [{ EMS_UPLOAD_MAX_BYTES: '-1' }, 'EMS_UPLOAD_MAX_BYTES'],
      [{ EMS_LOG_LEVEL: 'loud' }, 'EMS_LOG_LEVEL'],
    ];
    for (const [env, name] of cases) {
      assert.throws(
        () => loadConfig(env),
        (error: unknown) => error instanceof ConfigError && error.message.startsWith(`${name}:`),
        name,
      );
    }
  });

  test('the service refuses to start on a bad value with one line naming it', async () => {
    const result = await runMain({ EMS_DATA_DIR: tempDir(), EMS_PORT: 'abc' });
    assert.equal(result.code, 2);
    assert.equal(result.stderr.trim().split('\n').length, 1);
    assert.match(result.stderr, /EMS_PORT/);
  });
});

describe('a start that cannot serve', () => {
  test('port in use: one line naming it, exit 2, and nothing created (no database, no admin account)', async (t) => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    t.after(() => blocker.close());
    const port = (blocker.address() as net.AddressInfo).port;
    const dataDir = tempDir();
    t.after(() => fs.rmSync(dataDir, { recursive: true, force: true }));

    const result = await runMain({ EMS_DATA_DIR: dataDir, EMS_HOST: '127.0.0.1', EMS_PORT: String(port) });
    assert.equal(result.code, 2, result.stderr);
    assert.deepEqual(result.stderr.split('\n'), [
      `ems: EMS_PORT: port ${port} on 127.0.0.1 is already in use (is another EMS or another program listening there?)`,
      '',
    ]);
    assert.equal(result.stdout, '');
    assert.deepEqual(fs.readdirSync(dataDir), [], 'no database, no initial-admin-password, no folders');
  });

  test('a data dir that cannot be created (a file is in the way): one line naming it, exit 2', async (t) => {
    const parent = tempDir();
    t.after(() => fs.rmSync(parent, { recursive: true, force: true }));
    fs.writeFileSync(path.join(parent, 'not-a-dir'), '');
    const dataDir = path.join(parent, 'not-a-dir', 'data');
    const result = await runMain({ EMS_DATA_DIR: dataDir, EMS_PORT: '0' });
    assert.equal(result.code, 2, result.stderr);
    assert.deepEqual(result.stderr.split('\n'), [`ems: EMS_DATA_DIR: ${path.join(parent, 'not-a-dir')} is not a directory (a file is in the way)`, '']);
  });

  test('a data dir that is a regular file: "not a directory", exit 2 (issue 39: was "not writable (EEXIST)")', async (t) => {
    const parent = tempDir();
    t.after(() => fs.rmSync(parent, { recursive: true, force: true }));
    const dataDir = path.join(parent, 'file');
    fs.writeFileSync(dataDir, 'x');
    const result = await runMain({ EMS_DATA_DIR: dataDir, EMS_PORT: '0' });
    assert.equal(result.code, 2, result.stderr);
    assert.deepEqual(result.stderr.split('\n'), [`ems: EMS_DATA_DIR: ${dataDir} is not a directory (a file is in the way)`, '']);
  });

  test("a data dir under /proc fails at once with one line (issue 39: Node's recursive mkdir spun there for 40 s and more)", async () => {
    const started = Date.now();
    const result = await runMain({ EMS_DATA_DIR: '/proc/ems-data/data', EMS_PORT: '0' });
    assert.equal(result.code, 2, result.stderr);
    assert.deepEqual(result.stderr.split('\n'), ['ems: EMS_DATA_DIR: /proc/ems-data cannot be created here (ENOENT: its parent takes no new folders)', '']);
    console.log(`EMS_DATA_DIR=/proc/ems-data/data refused after ${Date.now() - started} ms (process start included)`);
  });

  test('a data dir the service user may not write: one line naming it, exit 2, nothing created', async (t) => {
    const parent = tempDir();
    t.after(() => fs.rmSync(parent, { recursive: true, force: true }));
    const dataDir = path.join(parent, 'data');
    fs.mkdirSync(dataDir);
    let as: { uid?: number; gid?: number } = {};
    if (process.getuid?.() === 0) {
      // root may write anywhere: run the service as nobody against a folder owned by root, as after a root-run copy.
      fs.chmodSync(parent, 0o755);
      fs.chmodSync(dataDir, 0o755);
      as = { uid: 65534, gid: 65534 };
    } else {
      fs.chmodSync(dataDir, 0o500);
      t.after(() => fs.chmodSync(dataDir, 0o700));
    }
    const result = await runMain({ EMS_DATA_DIR: dataDir, EMS_PORT: '0' }, as);
    assert.equal(result.code, 2, result.stderr);
    const lines = result.stderr.split('\n');
    assert.equal(lines.length, 2, result.stderr);
    assert.match(lines[0], new RegExp(`^ems: EMS_DATA_DIR: ${dataDir}(/[a-z]+)? is not writable for this service \\((EACCES|EPERM)\\)$`));
    assert.deepEqual(fs.readdirSync(dataDir), []);
  });

  test('while the service is still starting, its port answers 503 with Retry-After, then the app takes over', async (t) => {
    const listener = await bindListener({ host: '127.0.0.1', port: 0, tls: null });
    t.after(() => new Promise<void>((resolve) => listener.server.close(() => resolve())));
    const early = await fetch(`${listener.url}/api/health`);
    assert.equal(early.status, 503);
    assert.equal(early.headers.get('retry-after'), '1');
    assert.equal(((await early.json()) as { code: string }).code, 'UNAVAILABLE');
    listener.attach((_req, res) => res.end('ready'));
    assert.equal(await (await fetch(`${listener.url}/api/health`)).text(), 'ready');
  });
});

describe('database', () => {
  test('WAL, synchronous=NORMAL, foreign keys and a busy timeout', () => {
    const dir = tempDir();
    const db = openDatabase(path.join(dir, 'ems.db'));
    try {
      assert.equal(db.sqlite.pragma('journal_mode', { simple: true }), 'wal');
      assert.equal(db.sqlite.pragma('synchronous', { simple: true }), 1);
      assert.equal(db.sqlite.pragma('foreign_keys', { simple: true }), 1);
      assert.equal(db.sqlite.pragma('busy_timeout', { simple: true }), 5000);
      const tables = db.sqlite.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all();
      for (const table of ['users', 'refresh_tokens', 'alerts', 'faults', 'fault_stats', 'files', 'backup_schedule']) assert.ok(tables.includes(table), table);
    } finally {
      closeDatabase(db);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a damaged database stops the service with a clear message and is left as it was', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'ems.db');
    const garbage = Buffer.concat([Buffer.from('SQLite format 3\0'), Buffer.alloc(8192, 0xab)]);
    fs.writeFileSync(file, garbage);
    assert.throws(() => openDatabase(file), DatabaseOpenError);
    const result = await runMain({ EMS_DATA_DIR: dir, EMS_PORT: '0' });
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /cannot be used|restore/);
    assert.deepEqual(fs.readFileSync(file), garbage, 'the damaged file is not replaced by an empty database');
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe('first start', () => {
  test('creates admin with a random password, logged once and written 0600', async () => {
    const server = await startTestServer();
    try {
      const file = path.join(server.dataDir, 'initial-admin-password');
      const password = fs.readFileSync(file, 'utf8').trim();
      assert.ok(password.length >= 12);
      assert.equal(fs.statSync(file).mode & 0o777, 0o600);
      const login = await server.request('POST', '/api/auth/login', { body: { username: 'admin', password } });
      assert.equal(login.status, 200);
      assert.equal(login.body.user.role, 'admin');
      const logged = server.logs.filter((line) => line.includes(password));
      assert.equal(logged.length, 1);
    } finally {
      await server.close();
    }
  });

  test('each later start logs the password again while its file exists; changing the password deletes the file', async () => {
    const dir = tempDir();
    const first = await startTestServer({ EMS_DATA_DIR: dir });
    const file = path.join(dir, 'initial-admin-password');
    const password = fs.readFileSync(file, 'utf8').trim();
    await first.service.close();

    const second = await startTestServer({ EMS_DATA_DIR: dir });
    try {
      const reminder = second.logs.map((line) => JSON.parse(line)).find((entry) => entry.initialPassword === password);
      assert.ok(reminder, 'the password is logged again while its file exists');
      assert.equal(reminder.level, 'warn');
      assert.equal(reminder.file, file);
      const login = await second.request('POST', '/api/auth/login', { body: { username: 'admin', password } });
      assert.equal(login.status, 200);
      const changed = await second.request('PUT', `/api/users/${login.body.user.id}/password`, {
        token: login.body.accessToken,
        body: { currentPassword: password, newPassword: 'the-new-admin-password' },
      });
      assert.equal(changed.status, 200, changed.text);
      // The file would now mislead whoever reads it (the README's curl example): it goes with the change.
      assert.equal(fs.existsSync(file), false, 'the file is deleted with the change');
      assert.ok(second.logs.some((line) => line.includes("admin's initial password was changed: its file is deleted")));
    } finally {
      await second.service.close();
    }

    // A stale file (put back from a copy, or left by a reset by mail): deleted at the next start, its content not logged.
    fs.writeFileSync(file, `${password}\n`, { mode: 0o600 });
    const third = await startTestServer({ EMS_DATA_DIR: dir });
    try {
      assert.equal(
        third.logs.some((line) => line.includes(password)),
        false,
      );
      assert.equal(fs.existsSync(file), false, 'a stale file is deleted');
    } finally {
      await third.service.close();
    }

    const fourth = await startTestServer({ EMS_DATA_DIR: dir });
    try {
      assert.equal(
        fourth.logs.some((line) => line.includes('initial admin password') || line.includes('initialPassword')),
        false,
      );
      assert.equal(fs.existsSync(file), false, 'not written again');
    } finally {
      await fourth.close();
    }
  });

  test('the real entry point answers requests and exits 0 on SIGTERM', async (t) => {
    const dir = tempDir();
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    // spawnService kills the child itself when it does not start (no hang); t.after when an assertion fails.
    const service = await spawnService(dir, {}, [mainJs()]);
    t.after(() => service.child.kill('SIGKILL'));
    const started = service.lines().find((line) => line.msg === 'EMS started')!;
    assert.equal(typeof started.startupMs, 'number');
    const health = await fetch(`${service.url}/api/health`);
    assert.equal(health.status, 200);
    service.child.kill('SIGTERM');
    assert.equal(await service.exited, 0);
    assert.ok(service.lines().some((line) => line.msg === 'stopped'));
  });
});
