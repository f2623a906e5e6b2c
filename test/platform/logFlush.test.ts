// The service log is written in batches; none is lost when the process ends: a clean stop, process.exit, or an
// uncaught exception — the service's request lines included. The request line's own writer writes what pino would.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { after, test } from 'node:test';
import { createLogger, lineWriter } from '../../src/platform/logger.ts';
import { tempDir } from '../helpers/server.ts';
import { repoRoot, spawnService } from '../helpers/serviceProcess.ts';

function runLogging(ending: string): { lines: Array<Record<string, unknown>>; status: number | null } {
  const script = `
    import { createLogger } from ${JSON.stringify(path.join(repoRoot, 'src', 'platform', 'logger.ts'))};
    const logger = createLogger('info');
    for (let i = 0; i < 5000; i++) logger.info({ i, pad: 'x'.repeat(200) }, 'line');
    ${ending}
  `;
  const result = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: repoRoot,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const lines = result.stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { lines, status: result.status };
}

test('every line reaches stdout when the process exits, crashes or just ends', () => {
  for (const ending of ['process.exit(0);', "setTimeout(() => { throw new Error('crash'); }, 0);", '']) {
    const { lines, status } = runLogging(ending);
    assert.equal(lines.length, 5000, `after "${ending || 'the end of the script'}" (exit ${status})`);
    assert.deepEqual(
      lines.map((line) => line.i),
      Array.from({ length: 5000 }, (_, i) => i),
    );
  }
});

test('a lone line in a quiet process is written within the batching delay, before any exit', async () => {
  const script = `
    import { createLogger } from ${JSON.stringify(path.join(repoRoot, 'src', 'platform', 'logger.ts'))};
    createLogger('info').info('quiet');
    setInterval(() => {}, 1000);
  `;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  const seen = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), 10_000);
    child.stdout.on('data', (chunk) => {
      out += chunk;
      if (out.includes('"msg":"quiet"')) {
        clearTimeout(timer);
        resolve(true);
      }
    });
  });
  // SIGKILL: no exit handler runs, so the line must already have been written on its own.
  child.kill('SIGKILL');
  assert.ok(seen, 'the line never reached stdout while the process ran');
});

test('the service writes one request line per request, every one of them out by the time a stop (SIGTERM) ends it', async () => {
  const dataDir = tempDir('ems-log-lines-');
  after(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const service = await spawnService(dataDir);
  const requests = 300;
  // 50 at a time: the lines of one batch (4 KiB) come from several requests in flight, the last ones only at the stop.
  for (let sent = 0; sent < requests; sent += 50) {
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => fetch(`${service.url}/api/health?n=${sent + i}`)));
    for (const answer of answers) await answer.arrayBuffer();
  }
  service.child.kill('SIGTERM');
  assert.equal(await service.exited, 0, service.stderr());
  const lines = service.lines().filter((line) => line.msg === 'request' && line.path === '/api/health');
  assert.equal(lines.length, requests);
  assert.equal(new Set(lines.map((line) => line.reqId)).size, requests);
  for (const line of lines) {
    assert.equal(line.level, 'info');
    assert.equal(line.service, 'ems');
    assert.equal(line.method, 'GET');
    assert.equal(line.route, '/api/health');
    assert.equal(line.status, 200);
    assert.equal(line.userId, null);
    assert.equal(line.ip, '127.0.0.1');
    assert.equal(typeof line.durationMs, 'number');
    assert.match(String(line.time), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  }
});

test("lineWriter writes the line pino would (level, time, bindings, fields, msg), with the journal's prefix, and only at an enabled level", () => {
  const written: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      written.push(String(chunk));
      done();
    },
  });
  const members = { reqId: 'a-b', method: 'GET', route: null, path: '/api/x"y', status: 200, durationMs: 1.25, userId: 3, ip: '::1' };
  const text = JSON.stringify(members).slice(1, -1);
  const logger = createLogger('info', sink, { journal: true });
  lineWriter(logger, 'request')('info', text);
  logger.info(members, 'request');
  lineWriter(logger, 'request')('warn', text);
  const [direct, viaPino, warned] = written;
  assert.ok(direct.startsWith('<6>{"level":"info","time":"') && direct.endsWith('\n'), direct);
  // The same text but for the time (a millisecond apart at most).
  const withoutTime = (line: string) => line.replace(/"time":"[^"]+"/, '');
  assert.equal(withoutTime(direct), withoutTime(viaPino));
  assert.deepEqual(JSON.parse(direct.slice(3)), { ...JSON.parse(viaPino.slice(3)), time: JSON.parse(direct.slice(3)).time });
  assert.ok(warned.startsWith('<4>{"level":"warn"'));

  const quiet: string[] = [];
  const warnOnly = createLogger(
    'warn',
    new Writable({
      write(chunk, _encoding, done) {
        quiet.push(String(chunk));
        done();
      },
    }),
  );
  lineWriter(warnOnly, 'request')('info', text);
  lineWriter(warnOnly, 'request')('warn', text);
  assert.equal(quiet.length, 1);
  assert.equal(JSON.parse(quiet[0]).level, 'warn');
});
