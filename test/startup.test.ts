// Start-up: config validation, first-start admin, SQLite pragmas, fail-closed opening of a damaged database.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError, loadConfig, parseDuration } from '../src/config.ts';
import { DatabaseOpenError, openDatabase, closeDatabase } from '../src/db/client.ts';
import { startTestServer, tempDir } from './helpers/server.ts';

const mainTs = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../src/main.ts');

function runMain(env: Record<string, string>, waitForMs = 15000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', mainTs], { env: { ...process.env, EMS_LOG_LEVEL: 'info', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), waitForMs);
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

  test('durations accept seconds or s/m/h/d', () => {
    assert.equal(parseDuration('900'), 900);
    assert.equal(parseDuration('15m'), 900);
    assert.equal(parseDuration('2h'), 7200);
    assert.equal(parseDuration('7d'), 604800);
    for (const bad of ['', '0', '-5', '1.5m', '10 minutes', 'm', '5w']) assert.equal(parseDuration(bad), undefined, bad);
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
      assert.throws(() => loadConfig(env), (error: unknown) => error instanceof ConfigError && error.message.startsWith(`${name}:`), name);
    }
  });

  test('the service refuses to start on a bad value with one line naming it', async () => {
    const result = await runMain({ EMS_DATA_DIR: tempDir(), EMS_PORT: 'abc' });
    assert.equal(result.code, 2);
    assert.equal(result.stderr.trim().split('\n').length, 1);
    assert.match(result.stderr, /EMS_PORT/);
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

  test('a second start keeps the existing users and does not print a password again', async () => {
    const dir = tempDir();
    const first = await startTestServer({ EMS_DATA_DIR: dir });
    const password = fs.readFileSync(path.join(dir, 'initial-admin-password'), 'utf8').trim();
    await first.service.close();
    const second = await startTestServer({ EMS_DATA_DIR: dir });
    try {
      assert.equal(second.logs.some((line) => line.includes(password)), false);
      assert.equal((await second.request('POST', '/api/auth/login', { body: { username: 'admin', password } })).status, 200);
    } finally {
      await second.close();
    }
  });

  test('the real entry point answers requests and exits 0 on SIGTERM', async () => {
    const dir = tempDir();
    const child = spawn(process.execPath, ['--import', 'tsx', mainTs], { env: { ...process.env, EMS_DATA_DIR: dir, EMS_PORT: '0', EMS_LOG_LEVEL: 'info' } });
    let stdout = '';
    const started = await new Promise<{ url: string; startupMs: number }>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no start line')), 15000);
      child.stdout.on('data', (chunk) => {
        stdout += chunk;
        const line = stdout.split('\n').find((l) => l.includes('"EMS started"'));
        if (line) {
          clearTimeout(timer);
          resolve(JSON.parse(line));
        }
      });
    });
    assert.equal(typeof started.startupMs, 'number');
    const health = await fetch(`${started.url}/api/health`);
    assert.equal(health.status, 200);
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    child.kill('SIGTERM');
    assert.equal(await exited, 0);
    assert.match(stdout, /"stopped"/);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
