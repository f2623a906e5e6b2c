// /api/alerts: CRUD, role matrix, validation, pagination and filters, the lifecycle with who/when, audit rows.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { auditRows, createRoles, uniqueName, type Roles } from '../helpers/facility.ts';

describe('alerts', () => {
  let server: TestServer;
  let users: Roles;

  before(async () => {
    server = await startTestServer();
    users = await createRoles(server);
  });
  after(() => server.close());

  const createAlert = async (body: Record<string, unknown> = {}) => {
    const res = await server.request('POST', '/api/alerts', { token: users.operator.accessToken, body: { title: 'Chiller trip', level: 'warning', ...body } });
    assert.equal(res.status, 201, res.text);
    return res.body;
  };

  test('operator creates, reads, updates and deletes an alert', async () => {
    const created = await createAlert({ message: 'compressor 2 stopped', source: 'CH-2', area: 'Plant room', occurredAt: '2024-03-01T10:00:00+02:00' });
    assert.equal(created.status, 'active');
    assert.equal(created.occurredAt, '2024-03-01T08:00:00.000Z', 'stored as UTC');
    assert.equal(created.acknowledgedBy, null);

    const read = await server.request('GET', `/api/alerts/${created.id}`, { token: users.viewer.accessToken });
    assert.equal(read.status, 200);
    assert.deepEqual(read.body, created);

    const updated = await server.request('PUT', `/api/alerts/${created.id}`, { token: users.operator.accessToken, body: { level: 'critical', area: null } });
    assert.equal(updated.status, 200);
    assert.equal(updated.body.level, 'critical');
    assert.equal(updated.body.area, null);
    assert.equal(updated.body.title, 'Chiller trip', 'omitted fields keep their value');

    const removed = await server.request('DELETE', `/api/alerts/${created.id}`, { token: users.operator.accessToken });
    assert.equal(removed.status, 204);
    assert.equal((await server.request('GET', `/api/alerts/${created.id}`, { token: users.viewer.accessToken })).status, 404);
  });

  test('viewer reads but cannot write; no token is 401; admin writes', async () => {
    const alert = await createAlert();
    const viewer = users.viewer.accessToken;
    assert.equal((await server.request('GET', '/api/alerts')).status, 401);
    assert.equal((await server.request('GET', '/api/alerts', { token: viewer })).status, 200);
    assert.equal((await server.request('GET', `/api/alerts/${alert.id}`, { token: viewer })).status, 200);
    const refused = [
      await server.request('POST', '/api/alerts', { token: viewer, body: { title: 'x', level: 'info' } }),
      await server.request('PUT', `/api/alerts/${alert.id}`, { token: viewer, body: { title: 'y' } }),
      await server.request('POST', `/api/alerts/${alert.id}/acknowledge`, { token: viewer }),
      await server.request('POST', `/api/alerts/${alert.id}/resolve`, { token: viewer }),
      await server.request('DELETE', `/api/alerts/${alert.id}`, { token: viewer }),
    ];
    for (const res of refused) {
      assert.equal(res.status, 403);
      assert.equal(typeof res.body.error, 'string');
    }
    assert.equal((await server.request('GET', `/api/alerts/${alert.id}`, { token: viewer })).body.title, 'Chiller trip', 'nothing changed');
    const byAdmin = await server.request('POST', '/api/alerts', { token: users.admin.accessToken, body: { title: 'by admin', level: 'info' } });
    assert.equal(byAdmin.status, 201);
  });

  test('bad bodies, params and queries are 400 with details', async () => {
    const token = users.operator.accessToken;
    const cases: [string, string, unknown, string][] = [
      ['POST', '/api/alerts', { level: 'info' }, 'body.title'],
      ['POST', '/api/alerts', { title: 'x', level: 'panic' }, 'body.level'],
      ['POST', '/api/alerts', { title: 'x', level: 'info', occurredAt: 'yesterday' }, 'body.occurredAt'],
      ['PUT', '/api/alerts/1', { status: 'gone' }, 'body.status'],
      ['PUT', '/api/alerts/1', {}, 'body'],
      ['PUT', '/api/alerts/1', { acknowledgedBy: 5, resolvedAt: '2024-01-01T00:00:00Z' }, 'body'],
      ['GET', '/api/alerts/abc', undefined, 'params.id'],
      ['GET', '/api/alerts?pageSize=500', undefined, 'query.pageSize'],
      ['GET', '/api/alerts?page=0', undefined, 'query.page'],
      ['GET', '/api/alerts?status=bogus', undefined, 'query.status'],
      ['GET', '/api/alerts?from=not-a-date', undefined, 'query.from'],
      ['GET', '/api/alerts?from=2024-02-01&to=2024-01-01', undefined, 'query.from'],
    ];
    for (const [method, path, body, where] of cases) {
      const res = await server.request(method, path, { token, body });
      assert.equal(res.status, 400, `${method} ${path}: ${res.text}`);
      assert.ok(Array.isArray(res.body.details) && res.body.details.length > 0, `${method} ${path} has details`);
      assert.ok(
        res.body.details.some((d: { path: string }) => d.path.startsWith(where)),
        `${method} ${path}: ${JSON.stringify(res.body.details)} names ${where}`,
      );
    }
    const level = await server.request('POST', '/api/alerts', { token, body: { title: 'x', level: 'panic' } });
    assert.deepEqual(level.body.details, [{ path: 'body.level', message: 'must be one of: info, warning, critical' }]);
    const broken = await server.request('POST', '/api/alerts', { token, raw: '{"title":', headers: { 'content-type': 'application/json' } });
    assert.equal(broken.status, 400);
  });

  test('missing alerts are 404 for every verb', async () => {
    const token = users.operator.accessToken;
    for (const [method, path, body] of [
      ['GET', '/api/alerts/999999', undefined],
      ['PUT', '/api/alerts/999999', { title: 'x' }],
      ['DELETE', '/api/alerts/999999', undefined],
      ['POST', '/api/alerts/999999/acknowledge', undefined],
      ['POST', '/api/alerts/999999/resolve', undefined],
    ] as const) {
      const res = await server.request(method, path, { token, body });
      assert.equal(res.status, 404, `${method} ${path}`);
      assert.deepEqual(Object.keys(res.body), ['error', 'code']);
      assert.equal(res.body.code, 'NOT_FOUND');
    }
  });

  test('lifecycle records who and when; the client cannot set them; no backwards moves', async () => {
    const second = await server.createUser({ role: 'operator' });
    const alert = await createAlert({ acknowledgedBy: users.admin.user.id, acknowledgedAt: '2020-01-01T00:00:00Z', status: 'resolved' });
    assert.equal(alert.status, 'active', 'status and lifecycle fields in a create body are ignored');
    assert.equal(alert.acknowledgedBy, null);
    assert.equal(alert.acknowledgedAt, null);

    const t0 = new Date().toISOString();
    const acked = await server.request('POST', `/api/alerts/${alert.id}/acknowledge`, { token: users.operator.accessToken });
    assert.equal(acked.status, 200);
    assert.equal(acked.body.status, 'acknowledged');
    assert.equal(acked.body.acknowledgedBy, users.operator.user.id);
    assert.ok(acked.body.acknowledgedAt >= t0 && acked.body.acknowledgedAt <= new Date().toISOString(), 'acknowledgedAt is now');
    assert.equal(acked.body.resolvedAt, null);

    const again = await server.request('POST', `/api/alerts/${alert.id}/acknowledge`, { token: second.accessToken });
    assert.equal(again.status, 409);
    const forged = await server.request('PUT', `/api/alerts/${alert.id}`, {
      token: second.accessToken,
      body: { acknowledgedBy: second.user.id, title: 'renamed' },
    });
    assert.equal(forged.status, 200);
    assert.equal(forged.body.acknowledgedBy, users.operator.user.id, 'who acknowledged cannot be rewritten');
    assert.equal(forged.body.acknowledgedAt, acked.body.acknowledgedAt);

    const resolved = await server.request('POST', `/api/alerts/${alert.id}/resolve`, { token: second.accessToken });
    assert.equal(resolved.status, 200);
    assert.equal(resolved.body.status, 'resolved');
    assert.equal(resolved.body.resolvedBy, second.user.id);
    assert.ok(resolved.body.resolvedAt >= acked.body.acknowledgedAt);
    assert.equal(resolved.body.acknowledgedBy, users.operator.user.id);

    assert.equal((await server.request('POST', `/api/alerts/${alert.id}/resolve`, { token: second.accessToken })).status, 409);
    const reopen = await server.request('PUT', `/api/alerts/${alert.id}`, { token: second.accessToken, body: { status: 'active' } });
    assert.equal(reopen.status, 409);
    assert.match(reopen.body.error, /resolved/);
    assert.equal((await server.request('GET', `/api/alerts/${alert.id}`, { token: users.viewer.accessToken })).body.status, 'resolved');
  });

  test('PUT with a status moves the lifecycle the same way, straight from active to resolved too', async () => {
    const alert = await createAlert();
    const res = await server.request('PUT', `/api/alerts/${alert.id}`, { token: users.admin.accessToken, body: { status: 'resolved' } });
    assert.equal(res.status, 200);
    assert.equal(res.body.status, 'resolved');
    assert.equal(res.body.resolvedBy, users.admin.user.id);
    assert.ok(res.body.resolvedAt);
    assert.equal(res.body.acknowledgedBy, null, 'nobody acknowledged it');
    const same = await server.request('PUT', `/api/alerts/${alert.id}`, { token: users.admin.accessToken, body: { status: 'resolved', message: 'fixed' } });
    assert.equal(same.status, 200, 'repeating the current status is not a move');
    assert.equal(same.body.resolvedAt, res.body.resolvedAt);
    assert.equal(same.body.message, 'fixed');
  });

  test('every write leaves an audit row with the actor and before/after of status changes', async () => {
    const alert = await createAlert();
    await server.request('POST', `/api/alerts/${alert.id}/acknowledge`, { token: users.operator.accessToken });
    await server.request('PUT', `/api/alerts/${alert.id}`, { token: users.admin.accessToken, body: { title: 'Chiller trip (CH-2)' } });
    const unchanged = await server.request('PUT', `/api/alerts/${alert.id}`, {
      token: users.admin.accessToken,
      body: { title: 'Chiller trip (CH-2)', level: 'warning' },
    });
    assert.equal(unchanged.status, 200, 'sending the current values back is fine, and is no write');
    await server.request('PUT', `/api/alerts/${alert.id}`, { token: users.admin.accessToken, body: { status: 'resolved' } });
    await server.request('DELETE', `/api/alerts/${alert.id}`, { token: users.admin.accessToken });

    const rows = auditRows(server, 'alerts', alert.id);
    assert.deepEqual(
      rows.map((row) => [row.action, row.userId]),
      [
        ['create', users.operator.user.id],
        ['acknowledge', users.operator.user.id],
        ['update', users.admin.user.id],
        ['resolve', users.admin.user.id],
        ['delete', users.admin.user.id],
      ],
    );
    assert.equal(rows[0].after.title, 'Chiller trip', 'a create records the whole new row');
    assert.equal(rows[0].after.level, 'warning');
    // Updates record only the fields they changed, as every other resource's audit entries do.
    assert.deepEqual(rows[1].before, { status: 'active', acknowledgedAt: null, acknowledgedBy: null });
    assert.deepEqual(Object.keys(rows[1].after).sort(), ['acknowledgedAt', 'acknowledgedBy', 'status']);
    assert.equal(rows[1].after.status, 'acknowledged');
    assert.equal(rows[1].after.acknowledgedBy, users.operator.user.id);
    assert.deepEqual(rows[2].before, { title: 'Chiller trip' });
    assert.deepEqual(rows[2].after, { title: 'Chiller trip (CH-2)' });
    assert.equal(rows[3].before.status, 'acknowledged');
    assert.equal(rows[3].after.status, 'resolved');
    assert.equal(rows[3].after.resolvedBy, users.admin.user.id);
    assert.equal(rows[3].before.resolvedBy, null);
    assert.equal(rows[4].before.id, alert.id);
    assert.equal(rows[4].after, null);
    assert.equal(rows[4].username, users.admin.user.username);
  });

  test('a refused write leaves no audit row', async () => {
    const alert = await createAlert();
    await server.request('PUT', `/api/alerts/${alert.id}`, { token: users.viewer.accessToken, body: { title: 'nope' } });
    await server.request('POST', `/api/alerts/${alert.id}/resolve`, { token: users.operator.accessToken });
    await server.request('POST', `/api/alerts/${alert.id}/acknowledge`, { token: users.operator.accessToken });
    assert.deepEqual(
      auditRows(server, 'alerts', alert.id).map((row) => row.action),
      ['create', 'resolve'],
    );
  });

  test('filters: status, level (repeatable), area, q, from/to', async () => {
    const area = uniqueName('area');
    const make = (title: string, level: string, occurredAt: string, extra: Record<string, unknown> = {}) =>
      createAlert({ title, level, occurredAt, area, ...extra });
    const a = await make('Boiler pressure low', 'warning', '2024-01-10T08:00:00Z', { source: 'BLR-1' });
    const b = await make('Fire panel fault', 'critical', '2024-01-15T23:59:59Z');
    const c = await make('Meter offline', 'info', '2024-01-16T00:00:00Z', { message: 'feed 100% lost' });
    const d = await make('Pump 3 vibration', 'warning', '2024-02-01T12:00:00Z');
    await server.request('POST', `/api/alerts/${b.id}/acknowledge`, { token: users.operator.accessToken });
    await server.request('POST', `/api/alerts/${d.id}/resolve`, { token: users.operator.accessToken });
    await createAlert({ title: 'Boiler elsewhere', level: 'warning', area: uniqueName('other') });

    const ids = async (query: string) => {
      const res = await server.request('GET', `/api/alerts?area=${encodeURIComponent(area)}&${query}`, { token: users.viewer.accessToken });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.total, res.body.items.length);
      return res.body.items.map((item: { id: number }) => item.id);
    };
    assert.deepEqual(await ids(''), [d.id, c.id, b.id, a.id], 'newest first by occurredAt');
    assert.deepEqual(await ids('status=active'), [c.id, a.id]);
    assert.deepEqual(await ids('status=active&status=acknowledged'), [c.id, b.id, a.id]);
    assert.deepEqual(await ids('level=warning'), [d.id, a.id]);
    assert.deepEqual(await ids('level=warning&level=critical&status=active'), [a.id]);
    assert.deepEqual(await ids('q=boiler'), [a.id], 'case-insensitive, title');
    assert.deepEqual(await ids('q=BLR'), [a.id], 'source');
    assert.deepEqual(await ids('q=100%25'), [c.id], 'message, % literal');
    assert.deepEqual(await ids('q=1_0'), [], '_ is literal, not a wildcard');
    assert.deepEqual(await ids('from=2024-01-15&to=2024-01-15'), [b.id], 'a date-only to includes the whole day');
    assert.deepEqual(await ids('from=2024-01-15T23:59:59Z&to=2024-01-16T00:00:00Z'), [c.id, b.id], 'date-time bounds are inclusive');
    assert.deepEqual(await ids('from=2024-01-16T02:00:00%2B02:00'), [d.id, c.id], 'offsets are normalised to UTC');
    assert.deepEqual(await ids('to=2024-01-31'), [c.id, b.id, a.id]);
  });

  test('pagination shape, newest first, past the end', async () => {
    const own = await startTestServer();
    try {
      const operator = await own.createUser({ role: 'operator' });
      const created: number[] = [];
      for (let i = 0; i < 25; i++) {
        const occurredAt = new Date(Date.UTC(2024, 0, 1, 0, i)).toISOString();
        const res = await own.request('POST', '/api/alerts', { token: operator.accessToken, body: { title: `alert ${i}`, level: 'info', occurredAt } });
        created.push(res.body.id);
      }
      // Two alerts at the same instant still page deterministically (newest id first).
      const tie = await own.request('POST', '/api/alerts', {
        token: operator.accessToken,
        body: { title: 'tie', level: 'info', occurredAt: '2024-01-01T00:24:00Z' },
      });
      created.push(tie.body.id);
      const newestFirst = [...created].reverse();

      const first = await own.request('GET', '/api/alerts', { token: operator.accessToken });
      assert.equal(first.status, 200);
      assert.deepEqual(Object.keys(first.body).sort(), ['items', 'page', 'pageSize', 'total']);
      assert.equal(first.body.page, 1);
      assert.equal(first.body.pageSize, 20, 'default page size');
      assert.equal(first.body.total, 26);
      assert.deepEqual(
        first.body.items.map((a: { id: number }) => a.id),
        newestFirst.slice(0, 20),
      );

      const pages = [];
      for (let page = 1; page <= 3; page++) {
        const res = await own.request('GET', `/api/alerts?page=${page}&pageSize=10`, { token: operator.accessToken });
        assert.equal(res.body.total, 26);
        assert.equal(res.body.page, page);
        assert.equal(res.body.pageSize, 10);
        pages.push(...res.body.items.map((a: { id: number }) => a.id));
      }
      assert.deepEqual(pages, newestFirst, 'pages cover every row once, in order');
      const beyond = await own.request('GET', '/api/alerts?page=9&pageSize=10', { token: operator.accessToken });
      assert.deepEqual(beyond.body, { items: [], total: 26, page: 9, pageSize: 10 });
    } finally {
      await own.close();
    }
  });

  test('the list walks an index instead of sorting', () => {
    const plan = (sql: string) =>
      (server.service.deps.db.sqlite.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as { detail: string }[]).map((row) => row.detail).join(' | ');
    const unfiltered = plan('SELECT id FROM alerts ORDER BY occurred_at DESC, id DESC LIMIT 20 OFFSET 0');
    assert.match(unfiltered, /alerts_occurred_idx/);
    assert.doesNotMatch(unfiltered, /TEMP B-TREE/);
    const byStatus = plan("SELECT id FROM alerts WHERE status IN ('active') ORDER BY occurred_at DESC, id DESC LIMIT 20");
    assert.match(byStatus, /alerts_status_idx/);
    assert.doesNotMatch(byStatus, /TEMP B-TREE/);
  });
});
