// /api/faults and /api/faults/stats: CRUD, roles, validation, resolvedAt, filters, audit, and the snapshot under concurrent writes.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { auditRows, createRoles, uniqueName, type Roles } from '../helpers/facility.ts';

type Fault = { id: number; device: string; severity: string; status: string; reportedAt: string; resolvedAt: string | null; [key: string]: unknown };

/** The snapshot as it should be, counted straight from the faults table in JavaScript. */
function recount(server: TestServer) {
  const rows = server.service.deps.db.sqlite
    .prepare('SELECT status, severity, reported_at AS reportedAt, resolved_at AS resolvedAt FROM faults')
    .all() as Fault[];
  const count = (pick: (row: Fault) => boolean) => rows.filter(pick).length;
  const repaired = rows.filter((row) => (row.status === 'resolved' || row.status === 'closed') && row.resolvedAt);
  const hours = repaired.map((row) => (Date.parse(row.resolvedAt!) - Date.parse(row.reportedAt)) / 3_600_000);
  return {
    total: rows.length,
    open: count((row) => row.status === 'open'),
    inProgress: count((row) => row.status === 'in_progress'),
    resolved: count((row) => row.status === 'resolved'),
    closed: count((row) => row.status === 'closed'),
    bySeverity: {
      low: count((row) => row.severity === 'low'),
      medium: count((row) => row.severity === 'medium'),
      high: count((row) => row.severity === 'high'),
      critical: count((row) => row.severity === 'critical'),
    },
    mttrHours: hours.length ? hours.reduce((a, b) => a + b, 0) / hours.length : null,
  };
}

function assertStatsMatch(actual: Record<string, any>, expected: ReturnType<typeof recount>) {
  const { mttrHours, updatedAt, ...counts } = actual;
  const { mttrHours: expectedMttr, ...expectedCounts } = expected;
  assert.deepEqual(counts, expectedCounts);
  assert.equal(typeof updatedAt, 'string');
  if (expectedMttr === null) assert.equal(mttrHours, null);
  else assert.ok(Math.abs(mttrHours - expectedMttr) < 0.001, `mttrHours ${mttrHours} ≈ ${expectedMttr}`);
}

describe('faults', () => {
  let server: TestServer;
  let users: Roles;

  before(async () => {
    server = await startTestServer();
    users = await createRoles(server);
  });
  after(() => server.close());

  const createFault = async (body: Record<string, unknown> = {}): Promise<Fault> => {
    const res = await server.request('POST', '/api/faults', { token: users.operator.accessToken, body: { device: 'AHU-1', severity: 'medium', ...body } });
    assert.equal(res.status, 201, res.text);
    return res.body;
  };

  test('operator creates, reads, updates and deletes a fault', async () => {
    const created = await createFault({ code: 'E42', description: 'fan belt slipping', area: 'Roof', assignee: 'Sam' });
    assert.equal(created.status, 'open');
    assert.equal(created.resolvedAt, null);
    assert.equal(created.code, 'E42');

    const read = await server.request('GET', `/api/faults/${created.id}`, { token: users.viewer.accessToken });
    assert.equal(read.status, 200);
    assert.deepEqual(read.body, created);

    const updated = await server.request('PUT', `/api/faults/${created.id}`, { token: users.operator.accessToken, body: { severity: 'high', assignee: null } });
    assert.equal(updated.status, 200);
    assert.equal(updated.body.severity, 'high');
    assert.equal(updated.body.assignee, null);
    assert.equal(updated.body.description, 'fan belt slipping');

    assert.equal((await server.request('DELETE', `/api/faults/${created.id}`, { token: users.operator.accessToken })).status, 204);
    assert.equal((await server.request('GET', `/api/faults/${created.id}`, { token: users.viewer.accessToken })).status, 404);
  });

  test('viewer reads faults and stats but cannot write; admin writes', async () => {
    const fault = await createFault();
    const viewer = users.viewer.accessToken;
    assert.equal((await server.request('GET', '/api/faults/stats')).status, 401);
    assert.equal((await server.request('GET', '/api/faults', { token: viewer })).status, 200);
    assert.equal((await server.request('GET', '/api/faults/stats', { token: viewer })).status, 200);
    for (const [method, path, body] of [
      ['POST', '/api/faults', { device: 'x', severity: 'low' }],
      ['PUT', `/api/faults/${fault.id}`, { status: 'closed' }],
      ['DELETE', `/api/faults/${fault.id}`, undefined],
    ] as const) {
      assert.equal((await server.request(method, path, { token: viewer, body })).status, 403, `${method} ${path}`);
    }
    assert.equal((await server.request('GET', `/api/faults/${fault.id}`, { token: viewer })).body.status, 'open');
    assert.equal((await server.request('POST', '/api/faults', { token: users.admin.accessToken, body: { device: 'x', severity: 'low' } })).status, 201);
  });

  test('bad input is 400 with details; missing faults are 404', async () => {
    const token = users.operator.accessToken;
    const cases: [string, string, unknown, string][] = [
      ['POST', '/api/faults', { severity: 'low' }, 'body.device'],
      ['POST', '/api/faults', { device: 'x', severity: 'urgent' }, 'body.severity'],
      ['POST', '/api/faults', { device: 'x', severity: 'low', status: 'fixed' }, 'body.status'],
      ['POST', '/api/faults', { device: '', severity: 'low' }, 'body.device'],
      ['POST', '/api/faults', { device: 'x', severity: 'low', status: 'resolved', reportedAt: '2999-01-01T00:00:00Z' }, 'body.reportedAt'],
      ['PUT', '/api/faults/1', {}, 'body'],
      ['PUT', '/api/faults/1', { resolvedAt: '2024-01-01T00:00:00Z' }, 'body'],
      ['GET', '/api/faults?severity=urgent', undefined, 'query.severity'],
      ['GET', '/api/faults?pageSize=201', undefined, 'query.pageSize'],
      ['GET', '/api/faults?to=31-01-2024', undefined, 'query.to'],
      ['GET', '/api/faults/0', undefined, 'params.id'],
    ];
    for (const [method, path, body, where] of cases) {
      const res = await server.request(method, path, { token, body });
      assert.equal(res.status, 400, `${method} ${path}: ${res.text}`);
      assert.ok(
        res.body.details?.some((d: { path: string }) => d.path.startsWith(where)),
        `${method} ${path}: ${JSON.stringify(res.body)}`,
      );
    }
    for (const [method, body] of [['GET'], ['PUT', { status: 'closed' }], ['DELETE']] as const) {
      assert.equal((await server.request(method, '/api/faults/999999', { token, body })).status, 404, method);
    }
  });

  test('resolvedAt is stamped on resolving, kept on closing, cleared on reopening; the client cannot set it', async () => {
    const put = async (id: number, body: object) => {
      const res = await server.request('PUT', `/api/faults/${id}`, { token: users.operator.accessToken, body });
      assert.equal(res.status, 200, res.text);
      return res.body as Fault;
    };
    const fault = await createFault({ resolvedAt: '2020-01-01T00:00:00Z' });
    assert.equal(fault.resolvedAt, null);
    assert.equal((await put(fault.id, { status: 'in_progress' })).resolvedAt, null);
    const t0 = new Date().toISOString();
    const resolved = await put(fault.id, { status: 'resolved' });
    assert.ok(resolved.resolvedAt && resolved.resolvedAt >= t0, 'stamped now');
    assert.equal((await put(fault.id, { status: 'closed' })).resolvedAt, resolved.resolvedAt, 'closing keeps the repair time');
    assert.equal((await put(fault.id, { description: 'note', resolvedAt: null })).resolvedAt, resolved.resolvedAt, 'resolvedAt in a body is ignored');
    assert.equal((await put(fault.id, { status: 'open' })).resolvedAt, null, 'reopened');

    const born = await createFault({ status: 'closed' });
    assert.ok(born.resolvedAt, 'created already closed');
  });

  test('stats: counts by status and severity, MTTR over resolved and closed faults', async () => {
    const own = await startTestServer();
    try {
      const operator = await own.createUser({ role: 'operator' });
      const stats = async () => (await own.request('GET', '/api/faults/stats', { token: operator.accessToken })).body;
      const empty = await stats();
      assert.deepEqual(
        { ...empty, updatedAt: 'x' },
        {
          total: 0,
          open: 0,
          inProgress: 0,
          resolved: 0,
          closed: 0,
          bySeverity: { low: 0, medium: 0, high: 0, critical: 0 },
          mttrHours: null,
          updatedAt: 'x',
        },
      );

      const post = async (body: object) => (await own.request('POST', '/api/faults', { token: operator.accessToken, body })).body as Fault;
      const hoursAgo = (h: number) => new Date(Date.now() - h * 3_600_000).toISOString();
      const a = await post({ device: 'A', severity: 'low', reportedAt: hoursAgo(2) });
      const b = await post({ device: 'B', severity: 'critical', reportedAt: hoursAgo(4) });
      await post({ device: 'C', severity: 'critical', status: 'in_progress' });
      await own.request('PUT', `/api/faults/${a.id}`, { token: operator.accessToken, body: { status: 'resolved' } });
      await own.request('PUT', `/api/faults/${b.id}`, { token: operator.accessToken, body: { status: 'closed' } });

      const after = await stats();
      assert.equal(after.total, 3);
      assert.equal(after.open, 0);
      assert.equal(after.inProgress, 1);
      assert.equal(after.resolved, 1);
      assert.equal(after.closed, 1);
      assert.deepEqual(after.bySeverity, { low: 1, medium: 0, high: 0, critical: 2 });
      assert.ok(Math.abs(after.mttrHours - 3) < 0.01, `mean of ~2 h and ~4 h, got ${after.mttrHours}`);
      assert.ok(after.updatedAt > empty.updatedAt);
      assertStatsMatch(after, recount(own));

      await own.request('DELETE', `/api/faults/${b.id}`, { token: operator.accessToken });
      const afterDelete = await stats();
      assert.equal(afterDelete.total, 2);
      assert.ok(Math.abs(afterDelete.mttrHours - 2) < 0.01);
      assertStatsMatch(afterDelete, recount(own));

      const refused = await own.request('PUT', `/api/faults/${a.id}`, { token: operator.accessToken, body: { reportedAt: '2999-01-01T00:00:00Z' } });
      assert.equal(refused.status, 400, 'reported after it was resolved');
      assert.deepEqual(await stats(), afterDelete, 'a refused write leaves the snapshot alone');
    } finally {
      await own.close();
    }
  });

  test('stats equal a recount of the table after a burst of 50 concurrent writes over HTTP', async () => {
    const own = await startTestServer();
    try {
      const [first, second] = [await own.createUser({ role: 'operator' }), await own.createUser({ role: 'admin' })];
      const token = (i: number) => (i % 2 ? first.accessToken : second.accessToken);
      const severities = ['low', 'medium', 'high', 'critical'];
      const statuses = ['open', 'in_progress', 'resolved', 'closed'];
      const seed = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          own.request('POST', '/api/faults', {
            token: token(i),
            body: { device: `seed-${i}`, severity: severities[i % 4], reportedAt: new Date(Date.now() - (i + 1) * 3_600_000).toISOString() },
          }),
        ),
      );
      const ids = seed.map((res) => res.body.id as number);

      // 50 writes at once: 30 creates, 15 status/severity updates, 5 deletes, interleaved.
      const writes = Array.from({ length: 50 }, (_, i) => {
        if (i % 10 === 9) return own.request('DELETE', `/api/faults/${ids[Math.floor(i / 10)]}`, { token: token(i) }).then((res) => [res, 204] as const);
        if (i % 10 >= 6) {
          const body = { status: statuses[i % 4], severity: severities[(i + 1) % 4] };
          return own.request('PUT', `/api/faults/${ids[5 + (i % 5)]}`, { token: token(i), body }).then((res) => [res, 200] as const);
        }
        const body = { device: `burst-${i}`, severity: severities[i % 4], status: statuses[(i >> 1) % 4] };
        return own.request('POST', '/api/faults', { token: token(i), body }).then((res) => [res, 201] as const);
      });
      const results = await Promise.all(writes);
      for (const [res, expected] of results) assert.equal(res.status, expected, res.text);

      const stats = await own.request('GET', '/api/faults/stats', { token: first.accessToken });
      const expected = recount(own);
      assert.equal(expected.total, 10 + 30 - 5);
      assertStatsMatch(stats.body, expected);

      const auditCount = own.service.deps.db.sqlite.prepare("SELECT count(*) AS n FROM audit_log WHERE resource = 'faults'").get() as { n: number };
      assert.equal(auditCount.n, 10 + 50, 'one audit row per write');
    } finally {
      await own.close();
    }
  });

  test('a snapshot that no longer matches the table (rows written outside the service) is rebuilt when the service starts', async () => {
    const first = await startTestServer();
    const operator = await first.createUser({ role: 'operator' });
    await first.request('POST', '/api/faults', { token: operator.accessToken, body: { device: 'A', severity: 'low' } });
    const sqlite = first.service.deps.db.sqlite;
    // As a restored backup or a hand edit would: rows change, the snapshot does not.
    sqlite
      .prepare(
        "INSERT INTO faults (device, severity, status, reported_at, resolved_at, created_at, updated_at) VALUES ('B', 'high', 'closed', '2024-01-01T00:00:00.000Z', '2024-01-01T06:00:00.000Z', 'x', 'x')",
      )
      .run();
    sqlite.prepare('UPDATE fault_stats SET total = 99 WHERE id = 1').run();
    assert.equal((await first.request('GET', '/api/faults/stats', { token: operator.accessToken })).body.total, 99);
    await first.service.close();

    // The same data dir, started again: the service recounts once while it is built (not while routes are).
    const own = await startTestServer({ EMS_DATA_DIR: first.dataDir });
    try {
      const rebuilt = (await own.request('GET', '/api/faults/stats', { token: operator.accessToken })).body;
      assertStatsMatch(rebuilt, recount(own));
      assert.equal(rebuilt.total, 2);
      assert.equal(rebuilt.mttrHours, 6);
      assert.equal(rebuilt.closed, 1);

      own.service.deps.db.sqlite.prepare('DELETE FROM fault_stats').run();
      await own.request('POST', '/api/faults', { token: operator.accessToken, body: { device: 'C', severity: 'medium' } });
      assertStatsMatch((await own.request('GET', '/api/faults/stats', { token: operator.accessToken })).body, recount(own));
    } finally {
      await own.close();
    }
  });

  test('filters: status, severity (repeatable), area, q, from/to; newest first by reportedAt', async () => {
    const area = uniqueName('wing');
    const make = (device: string, severity: string, reportedAt: string, extra: object = {}) => createFault({ device, severity, reportedAt, area, ...extra });
    const a = await make('Lift 1', 'high', '2024-04-01T09:00:00Z', { code: 'L-17' });
    const b = await make('Lift 2', 'low', '2024-04-02T09:00:00Z', { assignee: 'Robin' });
    const c = await make('Pump 7', 'critical', '2024-04-03T09:00:00Z', { status: 'in_progress' });
    await createFault({ device: 'Lift 9', severity: 'high', area: uniqueName('elsewhere') });

    const ids = async (query: string) => {
      const res = await server.request('GET', `/api/faults?area=${encodeURIComponent(area)}&${query}`, { token: users.viewer.accessToken });
      assert.equal(res.status, 200, res.text);
      return res.body.items.map((item: Fault) => item.id);
    };
    assert.deepEqual(await ids(''), [c.id, b.id, a.id]);
    assert.deepEqual(await ids('status=open'), [b.id, a.id]);
    assert.deepEqual(await ids('severity=high&severity=critical'), [c.id, a.id]);
    assert.deepEqual(await ids('q=lift'), [b.id, a.id]);
    assert.deepEqual(await ids('q=l-17'), [a.id], 'code');
    assert.deepEqual(await ids('q=robin'), [b.id], 'assignee');
    assert.deepEqual(await ids('from=2024-04-02&to=2024-04-02'), [b.id]);

    const paged = await server.request('GET', `/api/faults?area=${encodeURIComponent(area)}&pageSize=2&page=2`, { token: users.viewer.accessToken });
    assert.deepEqual({ ...paged.body, items: paged.body.items.map((item: Fault) => item.id) }, { items: [a.id], total: 3, page: 2, pageSize: 2 });
  });

  test('every write leaves an audit row; status changes carry before and after', async () => {
    const fault = await createFault();
    await server.request('PUT', `/api/faults/${fault.id}`, { token: users.admin.accessToken, body: { status: 'resolved' } });
    await server.request('DELETE', `/api/faults/${fault.id}`, { token: users.operator.accessToken });
    const rows = auditRows(server, 'faults', fault.id);
    assert.deepEqual(
      rows.map((row) => [row.action, row.userId]),
      [
        ['create', users.operator.user.id],
        ['update', users.admin.user.id],
        ['delete', users.operator.user.id],
      ],
    );
    assert.equal(rows[0].after.device, 'AHU-1');
    assert.deepEqual([rows[1].before.status, rows[1].after.status], ['open', 'resolved']);
    assert.equal(rows[1].before.resolvedAt, null);
    assert.ok(rows[1].after.resolvedAt);
    assert.equal(rows[2].before.status, 'resolved');
  });
});
