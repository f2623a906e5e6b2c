// Background writes that used to hold every request: a bulk action on thousands of alerts (one transaction) and a write
// waiting on another process's lock (5 s inside the statement). Both must let requests through while they run.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import Database from 'better-sqlite3';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';

const ALERTS = 3000;

describe('requests keep flowing during long writes', () => {
  let server: TestServer;
  let operator: TestUser;
  let reader: Database.Database;
  before(async () => {
    server = await startTestServer();
    operator = await server.createUser({ role: 'operator' });
    const sqlite = server.service.deps.db.sqlite;
    const insert = sqlite.prepare(
      `INSERT INTO alerts (title, message, level, source, area, status, occurred_at, created_at, updated_at)
       VALUES (?, 'bulk test', 'warning', 'edge', 'Hall', 'active', ?, ?, ?)`,
    );
    const at = new Date().toISOString();
    sqlite.transaction(() => {
      for (let i = 0; i < ALERTS; i += 1) insert.run(`edge-bulk ${i}`, at, at, at);
    })();
    // A second connection, as another process would read: it sees only what is committed.
    reader = new Database(server.service.deps.db.path, { readonly: true });
  });
  after(async () => {
    reader.close();
    await server.close();
  });

  test('a bulk acknowledge of 3,000 alerts commits in slices; requests answered meanwhile see part of it done', async () => {
    const acknowledged = reader.prepare("SELECT count(*) FROM alerts WHERE source = 'edge' AND status = 'acknowledged'").pluck();
    let done = false;
    const bulk = server
      .request('POST', '/api/alerts/bulk', { token: operator.accessToken, body: { action: 'acknowledge', filter: { q: 'edge-bulk' }, note: 'all seen' } })
      .finally(() => (done = true));
    // What other readers saw each time a request was answered while the bulk action ran.
    const seen: number[] = [];
    while (!done) {
      const health = await server.request('GET', '/api/health');
      assert.equal(health.status, 200);
      if (!done) seen.push(acknowledged.get() as number);
    }
    const result = await bulk;
    assert.equal(result.status, 200, result.text);
    assert.deepEqual(result.body, { matched: ALERTS, changed: ALERTS, skipped: 0 });
    assert.equal(acknowledged.get(), ALERTS);
    const partial = seen.filter((count) => count > 0 && count < ALERTS);
    assert.ok(partial.length > 0, `no request was answered while the bulk action was part done (seen: ${seen.join(', ')})`);
    // Each alert still has its own audit row and note, exactly once.
    const audits = reader.prepare("SELECT count(*) FROM audit_log WHERE resource = 'alerts' AND action = 'acknowledge'").pluck().get() as number;
    assert.equal(audits, ALERTS);
    const notes = reader.prepare("SELECT count(*) FROM alert_notes WHERE kind = 'acknowledge' AND text = 'all seen'").pluck().get() as number;
    assert.equal(notes, ALERTS);
  });

  test("a write meeting another process's lock waits off the event loop and succeeds once the lock is released", async () => {
    // Another process takes the write lock and keeps it until told to let go.
    const holder = spawn(
      process.execPath,
      [
        '-e',
        `const D = require('better-sqlite3'); const db = new D(process.argv[1]); db.exec('BEGIN IMMEDIATE');
         db.prepare("UPDATE platform_config SET updated_at = updated_at WHERE id = 1").run();
         console.log('locked');
         process.stdin.once('data', () => { db.exec('COMMIT'); db.close(); console.log('released'); process.exit(0); });`,
        server.service.deps.db.path,
      ],
      { cwd: process.cwd(), stdio: ['pipe', 'pipe', 'inherit'] },
    );
    try {
      await new Promise<void>((resolve, reject) => {
        holder.stdout!.on('data', (chunk: Buffer) => String(chunk).includes('locked') && resolve());
        holder.once('exit', (code) => reject(new Error(`lock holder exited (${code})`)));
      });
      let answered = false;
      const write = server
        .request('POST', '/api/alerts', { token: operator.accessToken, body: { title: 'edge-lock write', level: 'info' } })
        .finally(() => (answered = true));
      // While the lock is held the write is pending, and other requests are answered: the event loop is free.
      let healthAnswers = 0;
      for (let i = 0; i < 5; i += 1) {
        const health = await server.request('GET', '/api/health');
        assert.equal(health.status, 200);
        assert.equal(answered, false, 'the write was answered while another process held the lock');
        healthAnswers += 1;
      }
      assert.equal(healthAnswers, 5);
      holder.stdin!.write('go\n');
      const created = await write;
      assert.equal(created.status, 201, created.text);
      assert.equal(reader.prepare("SELECT count(*) FROM alerts WHERE title = 'edge-lock write'").pluck().get(), 1);
    } finally {
      holder.kill('SIGKILL');
    }
  });
});
