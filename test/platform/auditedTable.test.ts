// The shared audited table over a real SQLite file with the shipped migrations: typed rows, RETURNING, one transaction per write.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { desc } from 'drizzle-orm';
import { AuditLog } from '../../src/platform/db/auditTrail.ts';
import { AuditedTable } from '../../src/platform/db/auditedTable.ts';
import { contains, equals, oneOf, timeWindow } from '../../src/platform/db/listQuery.ts';
import { alerts, reportPlans } from '../../src/platform/db/schema/index.ts';
import { BadRequest, Conflict, NotFound } from '../../src/platform/errors.ts';
import { testDatabase } from '../helpers/database.ts';

const actor = { id: null, username: 'tester' };

describe('AuditedTable', () => {
  const db = testDatabase();
  const audit = new AuditLog(db);
  const auditRows = (resource: string) =>
    db.sqlite.prepare('SELECT action, resource_id AS resourceId, before, after, username FROM audit_log WHERE resource = ? ORDER BY id').all(resource) as {
      action: string;
      resourceId: string;
      before: string | null;
      after: string | null;
      username: string;
    }[];

  const alertTable = (rules: Partial<ConstructorParameters<typeof AuditedTable<typeof alerts>>[3]> = {}) =>
    new AuditedTable(db, audit, alerts, {
      resource: 'test_alerts',
      notFound: 'Alert not found',
      orderBy: [desc(alerts.occurredAt), desc(alerts.id)],
      ...rules,
    });

  test('create fills column defaults, returns the stored row and audits it with NULL before', () => {
    const table = alertTable();
    const created = table.create({ title: 'Pump', level: 'info' }, actor);
    assert.equal(created.message, '', 'SQL default of the column');
    assert.equal(created.status, 'active');
    assert.equal(created.createdAt, created.updatedAt);
    assert.deepEqual(table.get(created.id), created);
    const [entry] = auditRows('test_alerts').filter((row) => row.resourceId === String(created.id));
    assert.equal(entry.action, 'create');
    assert.equal(entry.before, null, 'a missing before is NULL, not the JSON text "null"');
    assert.deepEqual(JSON.parse(entry.after!), created);
    assert.equal(entry.username, 'tester');
  });

  test('json and boolean columns round-trip typed; filters encode booleans', () => {
    const plans = new AuditedTable(db, audit, reportPlans, { resource: 'test_plans', notFound: 'no plan', orderBy: [desc(reportPlans.id)] });
    const plan = plans.create({ name: 'Daily', templateId: 1, cron: '0 7 * * *', recipients: ['a@example.com'], enabled: false }, actor);
    assert.deepEqual(plan.recipients, ['a@example.com']);
    assert.equal(plan.enabled, false);
    const stored = db.sqlite.prepare('SELECT recipients, enabled FROM report_plans WHERE id = ?').get(plan.id);
    assert.deepEqual(stored, { recipients: '["a@example.com"]', enabled: 0 });
    assert.deepEqual(
      plans.page(equals(reportPlans.enabled, 'enabled', false), 1, 10).items.map((p) => p.id),
      [plan.id],
    );
    assert.equal(plans.page(equals(reportPlans.enabled, 'enabled', true), 1, 10).items.filter((p) => p.id === plan.id).length, 0);
  });

  test('update merges only defined fields, audits only the changed ones, and a no-op writes nothing', () => {
    const table = alertTable();
    const created = table.create({ title: 'Fan', level: 'info', area: 'Roof' }, actor);
    const updated = table.update(created.id, { title: 'Fan 2', area: undefined }, actor);
    assert.equal(updated.title, 'Fan 2');
    assert.equal(updated.area, 'Roof', 'undefined keeps the stored value');
    const entries = auditRows('test_alerts').filter((row) => row.resourceId === String(created.id));
    assert.deepEqual(
      entries.map((row) => row.action),
      ['create', 'update'],
    );
    assert.deepEqual(JSON.parse(entries[1].before!), { title: 'Fan' });
    assert.deepEqual(JSON.parse(entries[1].after!), { title: 'Fan 2' });

    const same = table.update(created.id, { title: 'Fan 2' }, actor);
    assert.deepEqual(same, updated);
    assert.equal(auditRows('test_alerts').filter((row) => row.resourceId === String(created.id)).length, 2, 'no entry for a no-op');
    assert.throws(() => table.update(created.id, {}, actor), BadRequest, 'an empty patch is refused');
  });

  test('the change hook and the update action are the resource’s; a thrown rule leaves no write', () => {
    const table = alertTable({ updateAction: (before, next) => (before.status !== next.status ? `to_${next.status}` : 'update') });
    const created = table.create({ title: 'Door', level: 'warning' }, actor);
    const moved = table.update(created.id, {}, actor, (next, _before, now) => ({ ...next, status: 'acknowledged', acknowledgedAt: now }));
    assert.equal(moved.status, 'acknowledged');
    assert.equal(moved.acknowledgedAt, moved.updatedAt);
    assert.equal(auditRows('test_alerts').at(-1)!.action, 'to_acknowledged');
    assert.throws(
      () =>
        table.update(created.id, { title: 'x' }, actor, () => {
          throw new Conflict('no');
        }),
      Conflict,
    );
    assert.equal(table.get(created.id).title, 'Door');
  });

  test('a failing afterWrite rolls back the row and its audit entry together', () => {
    let fail = false;
    const table = alertTable({
      afterWrite: () => {
        if (fail) throw new Error('derived table broke');
      },
    });
    const kept = table.create({ title: 'Kept', level: 'info' }, actor);
    const entriesBefore = auditRows('test_alerts').length;
    const rowsBefore = db.sqlite.prepare('SELECT count(*) AS n FROM alerts').get();
    fail = true;
    assert.throws(() => table.create({ title: 'Lost', level: 'info' }, actor), /derived table broke/);
    assert.throws(() => table.update(kept.id, { title: 'Changed' }, actor), /derived table broke/);
    assert.throws(() => table.delete(kept.id, actor), /derived table broke/);
    assert.deepEqual(db.sqlite.prepare('SELECT count(*) AS n FROM alerts').get(), rowsBefore);
    assert.equal(table.get(kept.id).title, 'Kept');
    assert.equal(auditRows('test_alerts').length, entriesBefore);
  });

  test('the check rule sees the complete row on create and update', () => {
    const seen: string[] = [];
    const table = alertTable({
      check: (next, before) => {
        seen.push(`${before ? 'update' : 'create'}:${next.title}:${next.level}`);
        if (next.title === 'bad') throw new BadRequest('Invalid body');
      },
    });
    const created = table.create({ title: 'ok', level: 'critical' }, actor);
    table.update(created.id, { title: 'fine' }, actor);
    assert.throws(() => table.update(created.id, { title: 'bad' }, actor), BadRequest);
    assert.deepEqual(seen, ['create:ok:critical', 'update:fine:critical', 'update:bad:critical']);
    assert.equal(table.get(created.id).title, 'fine');
  });

  test('delete returns the removed row via RETURNING and audits it; a missing id is NotFound everywhere', () => {
    const table = alertTable();
    const created = table.create({ title: 'Gone', level: 'info' }, actor);
    assert.deepEqual(table.delete(created.id, actor), created);
    const last = auditRows('test_alerts').at(-1)!;
    assert.equal(last.action, 'delete');
    assert.deepEqual(JSON.parse(last.before!), created);
    assert.throws(() => table.get(created.id), NotFound);
    assert.throws(() => table.update(created.id, { title: 'x' }, actor), NotFound);
    assert.throws(() => table.delete(created.id, actor), NotFound);
  });

  test('page: filters, order, pagination and a total independent of the page', () => {
    const table = alertTable();
    const area = `area-${Date.now()}`;
    const made = ['2024-01-01T00:00:00.000Z', '2024-01-02T00:00:00.000Z', '2024-01-03T00:00:00.000Z'].map((occurredAt, i) =>
      table.create({ title: `50%_off ${i}`, level: i === 0 ? 'critical' : 'info', area, occurredAt }, actor),
    );
    const byArea = equals(alerts.area, 'area', area);
    const first = table.page(byArea, 1, 2);
    assert.equal(first.total, 3);
    assert.deepEqual(
      first.items.map((a) => a.id),
      [made[2].id, made[1].id],
      'newest first',
    );
    assert.deepEqual(
      table.page(byArea, 2, 2).items.map((a) => a.id),
      [made[0].id],
    );
    assert.deepEqual(table.page(byArea, 5, 2), { items: [], total: 3, page: 5, pageSize: 2 });
    assert.deepEqual(
      table.page([...byArea, ...oneOf(alerts.level, 'level', ['critical'])], 1, 10).items.map((a) => a.id),
      [made[0].id],
    );
    assert.equal(table.page([...byArea, ...contains([alerts.title], '50%_')], 1, 10).total, 3);
    assert.equal(table.page([...byArea, ...contains([alerts.title], '50x')], 1, 10).total, 0, '% is literal');
    assert.deepEqual(
      table.page([...byArea, ...timeWindow(alerts.occurredAt, '2024-01-02', '2024-01-02')], 1, 10).items.map((a) => a.id),
      [made[1].id],
    );
    assert.throws(() => timeWindow(alerts.occurredAt, '2024-01-03', '2024-01-02'), BadRequest);
  });
});
