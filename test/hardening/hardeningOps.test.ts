// Hardening round 3, operations: a backup killed mid-run is recorded as failed at the next start and its .partial files
// go; a full database makes health say so (degraded) until a write succeeds again.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { closeDatabase, migrationsFolder, openDatabase } from '../../src/platform/db/client.ts';
import { startTestServer, tempDir } from '../helpers/server.ts';

describe('a backup killed mid-run', () => {
  test('its .partial files are removed at the next start and the run is recorded as failed', async () => {
    const dataDir = tempDir();
    // What kill -9 leaves between the online backup and the renames: the copy and the half-linked tree.
    const backups = path.join(dataDir, 'backups');
    fs.mkdirSync(path.join(backups, 'ems-20261123T030000.000Z.files.partial', 'uploads'), { recursive: true });
    fs.writeFileSync(path.join(backups, 'ems-20261123T030000.000Z.db.partial'), 'SQLite format 3\0 half a copy');
    fs.writeFileSync(path.join(backups, 'ems-20261123T030000.000Z.files.partial', 'uploads', 'a.bin'), 'x');
    const server = await startTestServer({ EMS_DATA_DIR: dataDir });
    try {
      assert.deepEqual(
        fs.readdirSync(backups).filter((name) => name.endsWith('.partial')),
        [],
      );
      const admin = (await server.createUser({ role: 'admin' })).accessToken;
      const schedule = (await server.request('GET', '/api/system/backup-schedule', { token: admin })).body;
      assert.match(schedule.lastStatus, /^failed: interrupted/);
      assert.ok(Date.now() - Date.parse(schedule.lastRunAt) < 60_000);
      const health = (await server.request('GET', '/api/health')).body;
      assert.equal(health.backup.lastStatus, 'failed');
      assert.ok(server.logs.some((line) => /backup interrupted by the last shutdown/.test(JSON.parse(line).msg)));
    } finally {
      await server.close();
    }
  });

  test('a start with no leftovers records nothing', async () => {
    const server = await startTestServer();
    try {
      const admin = (await server.createUser({ role: 'admin' })).accessToken;
      assert.equal((await server.request('GET', '/api/system/backup-schedule', { token: admin })).body.lastStatus, null);
    } finally {
      await server.close();
    }
  });
});

describe('a full database', () => {
  test('health says database full (degraded, 503) after a write failed for space, and ok again after a write succeeds', async () => {
    const server = await startTestServer();
    try {
      const admin = (await server.createUser({ role: 'admin' })).accessToken;
      assert.equal((await server.request('GET', '/api/health')).body.database, 'ok');
      const sqlite = server.service.deps.db.sqlite;
      // SQLite's own limit on the file's pages: the same SQLITE_FULL a full disk gives, without filling one.
      sqlite.pragma(`max_page_count = ${sqlite.pragma('page_count', { simple: true }) as number}`);
      let refused;
      for (let i = 0; i < 200 && !refused; i += 1) {
        const answer = await server.request('POST', '/api/alerts', { token: admin, body: { title: `filler ${i}`, level: 'info', message: 'x'.repeat(4000) } });
        if (answer.status !== 201) refused = answer;
      }
      assert.equal(refused?.status, 507, refused?.text);
      const full = await server.request('GET', '/api/health');
      assert.equal(full.status, 503);
      assert.equal(full.body.status, 'degraded');
      assert.equal(full.body.database, 'full');
      assert.equal((await server.request('GET', '/api/health')).body.database, 'full', 'reads do not clear it');

      sqlite.pragma('max_page_count = 1073741823');
      assert.equal((await server.request('POST', '/api/alerts', { token: admin, body: { title: 'room again', level: 'info' } })).status, 201);
      const healthy = await server.request('GET', '/api/health');
      assert.equal(healthy.status, 200);
      assert.equal(healthy.body.database, 'ok');
    } finally {
      await server.close();
    }
  });
});

describe('migration 0006', () => {
  test('repairs gateway alerts stored with times outside 2000 .. created_at + 5 min; other alerts keep theirs', () => {
    const dir = tempDir();
    const file = path.join(dir, 'ems.db');
    try {
      // A database as 0004 left it (the migrations up to 0004 only), with the alerts the unbounded poller wrote; every
      // later migration, 0006 among them, is applied at the next open.
      const upTo0004 = path.join(dir, 'migrations');
      fs.mkdirSync(path.join(upTo0004, 'meta'), { recursive: true });
      const journal = JSON.parse(fs.readFileSync(path.join(migrationsFolder(), 'meta', '_journal.json'), 'utf8'));
      journal.entries = journal.entries.filter((entry: { tag: string }) => entry.tag <= '0004');
      fs.writeFileSync(path.join(upTo0004, 'meta', '_journal.json'), JSON.stringify(journal));
      for (const entry of journal.entries) fs.copyFileSync(path.join(migrationsFolder(), `${entry.tag}.sql`), path.join(upTo0004, `${entry.tag}.sql`));
      const old = new Database(file);
      migrate(drizzle(old), { migrationsFolder: upTo0004 });
      old.close();
      let db = openDatabase(file, { migrate: false });
      const insert = db.sqlite.prepare(
        "INSERT INTO alerts (title, level, source, status, occurred_at, alarm_key, cleared_at, created_at, updated_at) VALUES (?, 'critical', 'p', 'active', ?, ?, ?, '2026-11-20T10:00:00.000Z', '2026-11-20T10:00:00.000Z')",
      );
      insert.run('ancient', '-271821-04-20T00:00:00.000Z', 'p@ancient', null);
      insert.run('future', '2999-01-01T00:00:00.000Z', 'p@future', null);
      insert.run('fine', '2026-11-20T09:59:00.000Z', 'p@fine', '2026-11-20T10:30:00.000Z');
      insert.run('by hand', '2999-01-01T00:00:00.000Z', null, null);
      closeDatabase(db);
      db = openDatabase(file);
      const rows = db.sqlite.prepare('SELECT title, occurred_at AS occurredAt, cleared_at AS clearedAt FROM alerts ORDER BY id').all();
      assert.deepEqual(rows, [
        { title: 'ancient', occurredAt: '2026-11-20T10:00:00.000Z', clearedAt: null },
        { title: 'future', occurredAt: '2026-11-20T10:00:00.000Z', clearedAt: null },
        { title: 'fine', occurredAt: '2026-11-20T09:59:00.000Z', clearedAt: '2026-11-20T10:30:00.000Z' },
        { title: 'by hand', occurredAt: '2999-01-01T00:00:00.000Z', clearedAt: null },
      ]);
      assert.equal(db.sqlite.prepare("SELECT count(*) FROM sqlite_master WHERE name IN ('alerts_open_alarm_idx', 'refresh_tokens_retired')").pluck().get(), 2);
      closeDatabase(db);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
