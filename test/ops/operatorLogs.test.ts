// Logs an operator can filter: string levels, journald priority prefixes on a real service's lines, client address,
// one warning per gateway outage (start and end), one per sign-in lockout, a warning per failed write.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { createLogger, writesToJournal } from '../../src/platform/logger.ts';
import { freePort } from '../bench/harness.ts';
import { startFakeGateway, type FakeGateway } from '../helpers/fakeGateway.ts';
import { startTestServer, tempDir } from '../helpers/server.ts';
import { cleanEnv, initialAdminPassword, repoRoot } from '../helpers/serviceProcess.ts';
import { testEnv } from '../helpers/testEnv.ts';

const PRIORITY: Record<string, number> = { fatal: 3, error: 3, warn: 4, info: 6, debug: 7, trace: 7 };

type Line = { priority: number | null; entry: Record<string, unknown> };

function parseLines(text: string): Line[] {
  return text
    .split('\n')
    .filter(Boolean)
    .map((raw) => {
      const match = /^<(\d)>(.*)$/.exec(raw);
      return { priority: match ? Number(match[1]) : null, entry: JSON.parse(match ? match[2] : raw) as Record<string, unknown> };
    });
}

describe('log lines', () => {
  test('levels are strings; with the journal on, each line starts with its sd-daemon priority', () => {
    const written: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        written.push(...String(chunk).split('\n').filter(Boolean));
        done();
      },
    });
    const logger = createLogger('trace', sink, { journal: true });
    for (const level of ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const) logger[level]({ level_: level }, `a ${level} line`);
    logger.child({}, { redact: [] }).warn('from a child logger');
    const lines = parseLines(written.join('\n'));
    assert.deepEqual(
      lines.map((line) => [line.entry.level, line.priority]),
      [
        ['fatal', 3],
        ['error', 3],
        ['warn', 4],
        ['info', 6],
        ['debug', 7],
        ['trace', 7],
        ['warn', 4],
      ],
    );

    const plain: string[] = [];
    const plainSink = new Writable({
      write(chunk, _encoding, done) {
        plain.push(String(chunk));
        done();
      },
    });
    createLogger('info', plainSink).warn('no journal');
    assert.match(plain[0], /^\{"level":"warn",/);
  });

  test('without a trusted proxy the request line carries the socket peer, whatever X-Forwarded-For claims', async (t) => {
    const server = await startTestServer();
    t.after(() => server.close());
    const response = await server.request('GET', '/api/health', { headers: { 'x-forwarded-for': '10.1.2.3' } });
    const line = server.logs.map((text) => JSON.parse(text)).find((entry) => entry.reqId === response.headers.get('x-request-id'));
    assert.equal(line.ip, '127.0.0.1');
    assert.equal(line.level, 'info');
  });

  test('the journal is recognised by the device and inode of stdout, not by the variable alone', () => {
    const dir = tempDir();
    const file = path.join(dir, 'out.log');
    const fd = fs.openSync(file, 'w');
    try {
      const stat = fs.fstatSync(fd, { bigint: true });
      assert.equal(writesToJournal(fd, { JOURNAL_STREAM: `${stat.dev}:${stat.ino}` }), true);
      assert.equal(writesToJournal(fd, { JOURNAL_STREAM: `${stat.dev}:${stat.ino + 1n}` }), false, 'inherited from a parent whose stdout was the journal');
      assert.equal(writesToJournal(fd, {}), false);
    } finally {
      fs.closeSync(fd);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

/**
 * The real service with stdout on a file whose device:inode is in JOURNAL_STREAM, as systemd does for a unit whose
 * output goes to the journal (the prefix decision is the same for the journal's socket and for this file).
 */
describe('a service writing to the journal stream', () => {
  const dataDir = tempDir();
  const logFile = path.join(tempDir(), 'journal.log');
  let child: ChildProcess;
  let exited: Promise<number | null>;
  let url = '';
  let gatewayPort = 0;
  let gateway: FakeGateway | undefined;
  let adminToken = '';

  const lines = () => parseLines(fs.readFileSync(logFile, 'utf8'));
  async function waitFor(predicate: (line: Line) => boolean, what: string): Promise<Line> {
    for (;;) {
      const found = lines().find(predicate);
      if (found) return found;
      if (child.exitCode !== null) throw new Error(`service exited before logging ${what}`);
      await sleep(25);
    }
  }
  const api = (method: string, pathname: string, body?: unknown, headers: Record<string, string> = {}) =>
    fetch(url + pathname, {
      method,
      headers: {
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(adminToken ? { authorization: `Bearer ${adminToken}` } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  before(async () => {
    gatewayPort = await freePort();
    const fd = fs.openSync(logFile, 'w');
    const stat = fs.fstatSync(fd, { bigint: true });
    child = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'src', 'main.ts')], {
      cwd: repoRoot,
      stdio: ['ignore', fd, 'pipe'],
      env: cleanEnv(
        testEnv(dataDir, {
          // Collected as the service's default is (the test config turns it off): the gateway's state shows in the logs.
          EMS_COLLECT_INTERVAL: '60s',
          EMS_TRUST_PROXY: '127.0.0.1',
          // Nothing listens there yet: the gateway is down from the start.
          EMS_IOT_BASE_URL: `http://127.0.0.1:${gatewayPort}`,
          EMS_IOT_USERNAME: 'svc',
          EMS_IOT_PASSWORD: 'svc-secret',
          JOURNAL_STREAM: `${stat.dev}:${stat.ino}`,
        }),
      ),
    });
    fs.closeSync(fd);
    exited = new Promise((resolve) => child.on('close', resolve));
    const started = await waitFor((line) => line.entry.msg === 'EMS started', 'its start');
    url = String(started.entry.url);
    const login = await api('POST', '/api/auth/login', { username: 'admin', password: initialAdminPassword(dataDir) });
    assert.equal(login.status, 200);
    adminToken = ((await login.json()) as { accessToken: string }).accessToken;
  });

  after(async () => {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
    await gateway?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.rmSync(path.dirname(logFile), { recursive: true, force: true });
  });

  test('request lines carry the client address: the forwarded one when the peer is a trusted proxy', async () => {
    const response = await api('GET', '/api/auth/me', undefined, { 'x-forwarded-for': '203.0.113.7' });
    assert.equal(response.status, 200);
    const reqId = response.headers.get('x-request-id');
    const line = await waitFor((candidate) => candidate.entry.reqId === reqId, 'the request line');
    assert.equal(line.entry.ip, '203.0.113.7');
    assert.equal(line.entry.level, 'info');
    assert.equal(line.priority, 6);
  });

  test('a gateway down from the start: one warning however many requests fail, one when it answers again', async () => {
    let last: Response | undefined;
    for (let i = 0; i < 3; i += 1) {
      last = await api('POST', '/api/iot/codes/values', { codes: ['a'] });
      assert.equal(last.status, 502);
    }
    await waitFor((line) => line.entry.reqId === last!.headers.get('x-request-id'), 'the last failed request');
    const down = lines().filter((line) => line.entry.msg === 'IoT gateway unreachable');
    assert.equal(down.length, 1, 'one warning, not one per failed request');
    assert.equal(down[0].priority, 4);
    assert.equal(down[0].entry.gateway, `http://127.0.0.1:${gatewayPort}`);

    gateway = await startFakeGateway({ port: gatewayPort });
    assert.equal((await api('POST', '/api/iot/codes/values', { codes: ['a'] })).status, 200);
    assert.equal((await api('POST', '/api/iot/codes/values', { codes: ['a'] })).status, 200);
    const back = await waitFor((line) => line.entry.msg === 'IoT gateway reachable again', 'the gateway coming back');
    assert.equal(back.priority, 4);
    assert.equal(typeof back.entry.downForSec, 'number');
    assert.equal(lines().filter((line) => line.entry.msg === 'IoT gateway reachable again').length, 1);
  });

  test('a write the service could not carry out is a warning; a failed read is not', async () => {
    await gateway!.kill();
    const write = await api('POST', '/api/iot/codes/set', { code: 'sp.zone1', value: 21 });
    assert.equal(write.status, 502);
    const read = await api('POST', '/api/iot/codes/values', { codes: ['a'] });
    assert.equal(read.status, 502);
    const writeLine = await waitFor((line) => line.entry.reqId === write.headers.get('x-request-id'), 'the write request line');
    assert.deepEqual([writeLine.entry.level, writeLine.priority, writeLine.entry.status, writeLine.entry.route], ['warn', 4, 502, '/api/iot/codes/set']);
    const readLine = await waitFor((line) => line.entry.reqId === read.headers.get('x-request-id'), 'the read request line');
    assert.deepEqual([readLine.entry.level, readLine.priority], ['info', 6]);
  });

  test('a sign-in lockout is one warning with the account and the address, however many attempts are refused', async () => {
    const user = await api('POST', '/api/users', { username: 'locked.out', email: 'locked.out@example.test', password: 'the-right-password', role: 'viewer' });
    assert.equal(user.status, 201);
    const { id } = (await user.json()) as { id: number };
    const attempt = () =>
      fetch(`${url}/api/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': '198.51.100.23' },
        body: JSON.stringify({ username: 'locked.out', password: 'a-wrong-password' }),
      });
    for (let i = 0; i < 10; i += 1) assert.equal((await attempt()).status, 401);
    for (let i = 0; i < 3; i += 1) assert.equal((await attempt()).status, 429);
    await waitFor((line) => line.entry.msg === 'request' && line.entry.status === 429, 'a refused attempt');
    const warnings = lines().filter((line) => String(line.entry.msg).startsWith('sign-in locked out'));
    assert.equal(warnings.length, 1, 'one warning per lockout, not one per refused attempt');
    assert.equal(warnings[0].priority, 4);
    assert.deepEqual(
      [warnings[0].entry.lockout, warnings[0].entry.key, warnings[0].entry.login, warnings[0].entry.ip],
      ['account', `user:${id}`, 'locked.out', '198.51.100.23'],
    );
    assert.ok(!JSON.stringify(warnings[0].entry).includes('a-wrong-password'));
  });

  test('every line of the run carries the priority of its level', async () => {
    child.kill('SIGTERM');
    assert.equal(await exited, 0);
    const all = lines();
    assert.ok(all.length > 20, `${all.length} lines`);
    assert.ok(all.some((line) => line.entry.msg === 'stopped'));
    for (const line of all) assert.equal(line.priority, PRIORITY[String(line.entry.level)], JSON.stringify(line.entry));
  });
});
