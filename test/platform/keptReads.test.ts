// Reads kept until the database's next write — a list's count(*), an alerts page, the caller's user row: every way a
// row can change ends them — a write through the service, raw SQL on the same connection, another connection (emsctl,
// a second process) — and a rolled-back transaction leaves nothing behind.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import Database from 'better-sqlite3';
import { AlertService } from '../../src/facility/alerts/service.ts';
import { AuditLog } from '../../src/platform/db/auditTrail.ts';
import { testDatabase } from '../helpers/database.ts';
import { startTestServer } from '../helpers/server.ts';

const actor = { id: null, username: 'tester' };

function alertsOnTempDb() {
  const db = testDatabase();
  const alerts = new AlertService(db, new AuditLog(db));
  const page = (filters: Record<string, unknown> = {}) => alerts.page({ page: 1, pageSize: 20, ...filters } as Parameters<AlertService['page']>[0]);
  const total = (filters: Record<string, unknown> = {}) => page(filters).total;
  return { db, alerts, page, total, file: db.path };
}

test('writes through the service and raw SQL on the same connection move the total, per filter', () => {
  const { db, alerts, total } = alertsOnTempDb();
  assert.equal(total(), 0);
  const first = alerts.create({ title: 'one', level: 'warning' }, actor);
  assert.equal(total(), 1);
  assert.equal(total({ status: ['active'] }), 1);
  alerts.transition(first.id, 'resolved', actor);
  assert.equal(total({ status: ['active'] }), 0);
  assert.equal(total({ status: ['resolved'] }), 1);
  db.sqlite
    .prepare(
      "INSERT INTO alerts (title, level, occurred_at, created_at, updated_at) VALUES ('raw', 'info', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')",
    )
    .run();
  assert.equal(total(), 2);
  db.sqlite.prepare('DELETE FROM alerts').run();
  assert.equal(total(), 0);
});

/** data_version is read once per synchronous run of JavaScript (src/platform/db/kept.ts): another connection's commit shows from the next. */
const nextRun = () => new Promise<void>((resolve) => setImmediate(resolve));

test("another connection's commit moves the total", async () => {
  const { alerts, total, file } = alertsOnTempDb();
  alerts.create({ title: 'one', level: 'warning' }, actor);
  assert.equal(total(), 1);
  const other = new Database(file);
  other.pragma('busy_timeout = 5000');
  other
    .prepare(
      "INSERT INTO alerts (title, level, occurred_at, created_at, updated_at) VALUES ('elsewhere', 'info', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')",
    )
    .run();
  await nextRun();
  assert.equal(total(), 2);
  other.prepare('DELETE FROM alerts').run();
  other.close();
  await nextRun();
  assert.equal(total(), 0);
});

test('a total read inside a transaction that rolls back is not kept', () => {
  const { db, alerts, total } = alertsOnTempDb();
  alerts.create({ title: 'one', level: 'warning' }, actor);
  assert.equal(total(), 1);
  assert.throws(() =>
    db.sqlite.transaction(() => {
      alerts.create({ title: 'two', level: 'warning' }, actor);
      assert.equal(total(), 2);
      throw new Error('roll back');
    })(),
  );
  assert.equal(total(), 1);
});

test('a page read again before any write is the same object; any write gives a fresh one with the change', () => {
  const { db, alerts, page, file } = alertsOnTempDb();
  const first = alerts.create({ title: 'one', level: 'warning' }, actor);
  page();
  const before = page();
  assert.equal(page(), before, 'kept from the second read on');
  page({ status: ['active'] });
  assert.equal(page({ status: ['active'] }), page({ status: ['active'] }));
  assert.notEqual(page({ pageSize: 10 }), before, 'another page size is another page');

  alerts.update(first.id, { title: 'renamed' }, actor);
  const renamed = page();
  assert.notEqual(renamed, before);
  assert.equal(renamed.items[0].title, 'renamed');
  assert.equal(before.items[0].title, 'one', 'a page handed out earlier is never changed in place');

  const other = new Database(file);
  other.prepare("UPDATE alerts SET title = 'from elsewhere'").run();
  other.close();
  assert.equal(page().items[0].title, 'from elsewhere');

  db.sqlite.prepare("UPDATE alerts SET level = 'critical'").run();
  assert.equal(page().items[0].level, 'critical');
});

test('large pages (bulk reads) are not kept', () => {
  const { alerts, page } = alertsOnTempDb();
  alerts.create({ title: 'one', level: 'warning' }, actor);
  page({ pageSize: 200 });
  assert.notEqual(page({ pageSize: 200 }), page({ pageSize: 200 }));
  page({ pageSize: 100 });
  assert.equal(page({ pageSize: 100 }), page({ pageSize: 100 }));
});

test('a page is kept only when it is asked for again among the last 16 pages: paging through history keeps nothing', () => {
  const { alerts, page } = alertsOnTempDb();
  for (let i = 0; i < 40; i++) alerts.create({ title: `alert ${i}`, level: 'info' }, actor);
  const walk = () => Array.from({ length: 20 }, (_, i) => page({ page: i + 1, pageSize: 2 }));
  const first = walk();
  const second = walk();
  assert.ok(
    first.every((result, i) => result !== second[i]),
    'twenty pages in turn: none read again among the last 16',
  );
  page({ page: 3, pageSize: 2 });
  assert.equal(page({ page: 3, pageSize: 2 }), page({ page: 3, pageSize: 2 }));
});

test("the caller's row, kept between writes, follows a change by another connection on the very next request", async () => {
  const server = await startTestServer();
  after(() => server.close());
  const { accessToken, user } = await server.createUser({ role: 'viewer' });
  for (let i = 0; i < 2; i++) assert.equal((await server.request('GET', '/api/users', { token: accessToken })).status, 403);
  assert.equal((await server.request('GET', '/api/auth/me', { token: accessToken })).body.role, 'viewer');
  const other = new Database(path.join(server.dataDir, 'ems.db'));
  other.pragma('busy_timeout = 5000');
  after(() => other.close());
  other.prepare("UPDATE users SET role = 'admin' WHERE id = ?").run(user.id);
  assert.equal((await server.request('GET', '/api/users', { token: accessToken })).status, 200);
  assert.equal((await server.request('GET', '/api/auth/me', { token: accessToken })).body.role, 'admin');
  other.prepare('DELETE FROM refresh_tokens WHERE user_id = ?').run(user.id);
  other.prepare('DELETE FROM users WHERE id = ?').run(user.id);
  assert.equal((await server.request('GET', '/api/auth/me', { token: accessToken })).status, 401);
});

test("the tariff list and the fault stats see another connection's commit (emsctl, a manual SQL fix)", async () => {
  const { Tariffs } = await import('../../src/pricing/tariffs.ts');
  const { FaultService } = await import('../../src/facility/faults/service.ts');
  const { insertFault } = await import('../helpers/facilityRows.ts');
  const { db, file } = alertsOnTempDb();
  const audit = new AuditLog(db);
  const tariffs = new Tariffs(db, audit, () => '2026-01-01');
  const faults = new FaultService(db, audit);
  faults.recountStats();
  const before = tariffs.versionOn('2030-06-01');
  assert.equal(faults.stats().total, 0);

  const other = new Database(file);
  other.pragma('busy_timeout = 5000');
  const now = new Date().toISOString();
  other.prepare("INSERT INTO tariff_versions (valid_from, price, carbon_factor, created_at, updated_at) VALUES ('2030-01-01', 0.42, 0.1, ?, ?)").run(now, now);
  insertFault(other, 'open');
  insertFault(other, 'resolved');
  other.close();
  await nextRun();

  assert.notEqual(before.validFrom, '2030-01-01');
  assert.equal(tariffs.versionOn('2030-06-01').price, 0.42, 'the new version prices days from its start');
  assert.equal(faults.stats().total, 2);
  assert.equal(faults.stats().open, 1);
  // A write through the service afterwards builds on the recounted snapshot, not the stale one.
  faults.create({ device: 'Pump 1', code: 'P1', description: 'Leak', severity: 'low', status: 'open' } as Parameters<typeof faults.create>[0], actor);
  assert.equal(faults.stats().total, 3);
  assert.equal(faults.stats().open, 2);
});
