// The real service as a child process: kill -9 mid-burst loses no acknowledged write; SIGTERM finishes in-flight requests, stops cron and closes the DB.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { SERVICE_LOCK_FILE } from '../../src/operations/backup/locks.ts';
import { tempDir } from '../helpers/server.ts';
import { signInAdmin, spawnService, type ServiceProcess } from '../helpers/serviceProcess.ts';

const SCHEDULE = '/api/system/backup-schedule';

/** Write number k as a cron expression no other k shares (28 days × 24 h × 60 min). */
function cronFor(k: number): string {
  return `${k % 60} ${Math.floor(k / 60) % 24} ${1 + (Math.floor(k / 1440) % 28)} * *`;
}

function put(url: string, token: string, body: unknown): Promise<Response> {
  return fetch(url + SCHEDULE, {
    method: 'PUT',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

/**
 * A PUT whose headers the server has parsed and dispatched (it answered 100 Continue) but whose body is
 * not sent yet: a request that is in flight for as long as the test wants.
 */
async function heldRequest(service: ServiceProcess, token: string, body: unknown) {
  const payload = Buffer.from(JSON.stringify(body));
  const request = http.request(service.url + SCHEDULE, {
    method: 'PUT',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': payload.length, expect: '100-continue' },
  });
  const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
    request.on('response', (res) => {
      let text = '';
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      res.on('error', reject);
    });
    request.on('error', reject);
  });
  await new Promise<void>((resolve, reject) => {
    request.once('continue', resolve);
    request.once('error', reject);
    request.flushHeaders();
  });
  return { response, finish: () => request.end(payload) };
}

function openReadonly(dataDir: string): Database.Database {
  return new Database(path.join(dataDir, 'ems.db'), { readonly: true });
}

describe('crash safety', () => {
  test('kill -9 during a burst of writes: restart passes integrity_check and every acknowledged write is there', { timeout: 90_000 }, async (t) => {
    const dataDir = tempDir();
    t.after(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    const first = await spawnService(dataDir);
    t.after(() => first.child.kill('SIGKILL'));
    const token = await signInAdmin(first.url, dataDir);

    const acknowledged = new Set<number>();
    let next = 0;
    let killed = false;
    let failedInFlight = 0;
    const KILL_AFTER = 250;
    const worker = async () => {
      while (!killed) {
        const k = next++;
        try {
          const response = await put(first.url, token, { enabled: false, cron: cronFor(k), retention: 1 + (k % 1000) });
          await response.arrayBuffer();
          if (response.status === 200) acknowledged.add(k);
          else throw new Error(`write ${k} answered ${response.status}`);
        } catch (error) {
          if (!killed) throw error;
          failedInFlight += 1;
          return;
        }
        if (acknowledged.size >= KILL_AFTER && !killed) {
          killed = true;
          first.child.kill('SIGKILL');
        }
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    assert.equal(await first.exited, 'SIGKILL');
    assert.ok(acknowledged.size >= KILL_AFTER);
    t.diagnostic(`acknowledged ${acknowledged.size} writes, ${failedInFlight} in flight at the kill, ${next} started`);

    // Restart on the same data dir: the stale service lock is taken over, the database opens and passes quick_check.
    const second = await spawnService(dataDir);
    t.after(() => second.child.kill('SIGKILL'));
    const health = await fetch(`${second.url}/api/health`);
    assert.equal(health.status, 200);
    assert.equal(((await health.json()) as { database: string }).database, 'ok');
    const schedule = await fetch(second.url + SCHEDULE, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(schedule.status, 200);
    second.child.kill('SIGTERM');
    assert.equal(await second.exited, 0);

    const db = openReadonly(dataDir);
    t.after(() => db.close());
    assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');
    const written = new Set(
      (db.prepare("SELECT after FROM audit_log WHERE resource = 'backup_schedule'").pluck().all() as string[]).map(
        (after) => (JSON.parse(after) as { cron: string }).cron,
      ),
    );
    const missing = [...acknowledged].filter((k) => !written.has(cronFor(k)));
    assert.deepEqual(missing, [], 'every write that got a 200 survived the kill');
  });
});

describe('graceful shutdown', () => {
  test('SIGTERM: stops accepting, finishes the request in flight, stops cron, checkpoints and closes the database, exits 0', { timeout: 60_000 }, async (t) => {
    const dataDir = tempDir();
    t.after(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    const service = await spawnService(dataDir);
    t.after(() => service.child.kill('SIGKILL'));
    const token = await signInAdmin(service.url, dataDir);

    // Cron is live during the shutdown: a per-second backup schedule that has already fired.
    assert.equal((await put(service.url, token, { enabled: true, cron: '* * * * * *', retention: 2 })).status, 200);
    await service.waitForLog('backup completed');
    assert.ok(fs.existsSync(path.join(dataDir, SERVICE_LOCK_FILE)));

    const held = await heldRequest(service, token, { enabled: false, cron: '15 4 * * *', retention: 3 });
    service.child.kill('SIGTERM');
    await service.waitForLog('shutting down');

    // No longer accepting: a new connection is refused while the held request is still open.
    await assert.rejects(fetch(`${service.url}/api/health`));

    held.finish();
    const answer = await held.response;
    assert.equal(answer.status, 200, answer.body);
    assert.equal(JSON.parse(answer.body).cron, '15 4 * * *');

    assert.equal(await service.exited, 0);
    const lines = service.lines();
    const at = (msg: string) => Date.parse(String(lines.find((line) => line.msg === msg)?.time));
    t.diagnostic(`shutdown took ${at('stopped') - at('shutting down')} ms from SIGTERM to stopped`);
    assert.ok(lines.some((line) => line.msg === 'stopped'));
    assert.deepEqual(
      lines.filter((line) => line.level === 'error' || line.level === 'fatal').map((line) => line.msg),
      [],
      'no error while shutting down',
    );
    assert.ok(!fs.existsSync(path.join(dataDir, SERVICE_LOCK_FILE)), 'the service lock is released');
    assert.ok(!fs.existsSync(path.join(dataDir, 'ems.db-wal')), 'the WAL was checkpointed into the database and removed');
    assert.ok(!fs.readdirSync(path.join(dataDir, 'backups')).some((name) => name.endsWith('.partial')), 'no half-written backup left behind');

    const db = openReadonly(dataDir);
    t.after(() => db.close());
    assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');
    assert.deepEqual(db.prepare('SELECT enabled, cron, retention FROM backup_schedule WHERE id = 1').get(), { enabled: 0, cron: '15 4 * * *', retention: 3 });
  });

  test('SIGTERM with a request that never completes: the wait is bounded and the process still exits 0', { timeout: 60_000 }, async (t) => {
    const dataDir = tempDir();
    t.after(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    const service = await spawnService(dataDir);
    t.after(() => service.child.kill('SIGKILL'));
    const token = await signInAdmin(service.url, dataDir);

    const held = await heldRequest(service, token, { retention: 4 });
    held.response.catch(() => {});
    service.child.kill('SIGTERM');
    // The body never comes: after the grace period the connection is cut and the shutdown completes.
    assert.equal(await service.exited, 0);
    await assert.rejects(held.response, /socket hang up|ECONNRESET/);
    assert.ok(service.lines().some((line) => line.msg === 'stopped'));
    assert.ok(!fs.existsSync(path.join(dataDir, 'ems.db-wal')));
  });
});
