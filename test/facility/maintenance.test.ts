// /api/maintenance: CRUD, roles, validation (including the fault link), completedAt, filters, pagination, audit.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { auditRows, createRoles, uniqueName, type Roles } from '../helpers/facility.ts';

type Record_ = { id: number; status: string; completedAt: string | null; faultId: number | null; [key: string]: unknown };

describe('maintenance', () => {
  let server: TestServer;
  let users: Roles;

  before(async () => {
    server = await startTestServer();
    users = await createRoles(server);
  });
  after(() => server.close());

  const createRecord = async (body: Record<string, unknown> = {}): Promise<Record_> => {
    const res = await server.request('POST', '/api/maintenance', {
      token: users.operator.accessToken,
      body: { equipment: 'Chiller 1', type: 'preventive', ...body },
    });
    assert.equal(res.status, 201, res.text);
    return res.body;
  };
  const createFault = async () => {
    const res = await server.request('POST', '/api/faults', { token: users.operator.accessToken, body: { device: 'Chiller 1', severity: 'high' } });
    assert.equal(res.status, 201);
    return res.body as { id: number };
  };

  test('operator creates, reads, updates and deletes a record linked to a fault', async () => {
    const fault = await createFault();
    const created = await createRecord({
      type: 'corrective',
      description: 'replace valve',
      scheduledAt: '2024-06-01T08:00:00Z',
      assignee: 'Kim',
      cost: 120.5,
      faultId: fault.id,
    });
    assert.equal(created.status, 'planned');
    assert.equal(created.faultId, fault.id);
    assert.equal(created.cost, 120.5);
    assert.equal(created.scheduledAt, '2024-06-01T08:00:00.000Z');
    assert.equal(created.completedAt, null);

    const read = await server.request('GET', `/api/maintenance/${created.id}`, { token: users.viewer.accessToken });
    assert.deepEqual(read.body, created);

    const updated = await server.request('PUT', `/api/maintenance/${created.id}`, {
      token: users.operator.accessToken,
      body: { cost: null, faultId: null, status: 'in_progress' },
    });
    assert.equal(updated.status, 200);
    assert.equal(updated.body.cost, null);
    assert.equal(updated.body.faultId, null);
    assert.equal(updated.body.status, 'in_progress');
    assert.equal(updated.body.description, 'replace valve');

    assert.equal((await server.request('DELETE', `/api/maintenance/${created.id}`, { token: users.operator.accessToken })).status, 204);
    assert.equal((await server.request('GET', `/api/maintenance/${created.id}`, { token: users.viewer.accessToken })).status, 404);
  });

  test('viewer reads but cannot write; admin writes', async () => {
    const record = await createRecord();
    const viewer = users.viewer.accessToken;
    assert.equal((await server.request('GET', '/api/maintenance')).status, 401);
    assert.equal((await server.request('GET', '/api/maintenance', { token: viewer })).status, 200);
    for (const [method, path, body] of [
      ['POST', '/api/maintenance', { equipment: 'x', type: 'inspection' }],
      ['PUT', `/api/maintenance/${record.id}`, { status: 'done' }],
      ['DELETE', `/api/maintenance/${record.id}`, undefined],
    ] as const) {
      assert.equal((await server.request(method, path, { token: viewer, body })).status, 403, `${method} ${path}`);
    }
    assert.equal((await server.request('GET', `/api/maintenance/${record.id}`, { token: viewer })).body.status, 'planned');
    assert.equal(
      (await server.request('POST', '/api/maintenance', { token: users.admin.accessToken, body: { equipment: 'x', type: 'inspection' } })).status,
      201,
    );
  });

  test('faultId must name an existing fault: 400 with details, nothing written', async () => {
    const record = await createRecord();
    const missing = await server.request('POST', '/api/maintenance', {
      token: users.operator.accessToken,
      body: { equipment: 'x', type: 'corrective', faultId: 987654 },
    });
    assert.equal(missing.status, 400);
    assert.deepEqual(missing.body.details, [{ path: 'body.faultId', message: 'no fault with id 987654' }]);
    const relink = await server.request('PUT', `/api/maintenance/${record.id}`, {
      token: users.operator.accessToken,
      body: { faultId: 987654, equipment: 'renamed' },
    });
    assert.equal(relink.status, 400);
    assert.equal(relink.body.details[0].path, 'body.faultId');
    const unchanged = await server.request('GET', `/api/maintenance/${record.id}`, { token: users.viewer.accessToken });
    assert.equal(unchanged.body.equipment, 'Chiller 1', 'the refused update changed nothing');
    assert.deepEqual(
      auditRows(server, 'maintenance', record.id).map((row) => row.action),
      ['create'],
    );
  });

  test('deleting a fault unlinks its maintenance records', async () => {
    const fault = await createFault();
    const record = await createRecord({ faultId: fault.id });
    assert.equal((await server.request('DELETE', `/api/faults/${fault.id}`, { token: users.operator.accessToken })).status, 204);
    const after = await server.request('GET', `/api/maintenance/${record.id}`, { token: users.viewer.accessToken });
    assert.equal(after.status, 200);
    assert.equal(after.body.faultId, null);
  });

  test('other bad input is 400 with details; missing records are 404', async () => {
    const token = users.operator.accessToken;
    const cases: [string, string, unknown, string][] = [
      ['POST', '/api/maintenance', { type: 'preventive' }, 'body.equipment'],
      ['POST', '/api/maintenance', { equipment: 'x', type: 'repair' }, 'body.type'],
      ['POST', '/api/maintenance', { equipment: 'x', type: 'preventive', cost: -5 }, 'body.cost'],
      ['POST', '/api/maintenance', { equipment: 'x', type: 'preventive', cost: '12' }, 'body.cost'],
      ['POST', '/api/maintenance', { equipment: 'x', type: 'preventive', faultId: 'one' }, 'body.faultId'],
      ['POST', '/api/maintenance', { equipment: 'x', type: 'preventive', scheduledAt: '2024-13-01T00:00:00Z' }, 'body.scheduledAt'],
      ['PUT', '/api/maintenance/1', { status: 'finished' }, 'body.status'],
      ['GET', '/api/maintenance?type=repair', undefined, 'query.type'],
      ['GET', '/api/maintenance?faultId=x', undefined, 'query.faultId'],
      ['GET', '/api/maintenance?from=2024-05-02&to=2024-05-01', undefined, 'query.from'],
    ];
    for (const [method, path, body, where] of cases) {
      const res = await server.request(method, path, { token, body });
      assert.equal(res.status, 400, `${method} ${path}: ${res.text}`);
      assert.ok(
        res.body.details?.some((d: { path: string }) => d.path.startsWith(where)),
        `${method} ${path}: ${JSON.stringify(res.body)}`,
      );
    }
    for (const [method, body] of [['GET'], ['PUT', { status: 'done' }], ['DELETE']] as const) {
      assert.equal((await server.request(method, '/api/maintenance/999999', { token, body })).status, 404, method);
    }
  });

  test('completedAt is stamped when the status becomes done and cleared when it leaves done', async () => {
    const put = async (id: number, body: object) => {
      const res = await server.request('PUT', `/api/maintenance/${id}`, { token: users.operator.accessToken, body });
      assert.equal(res.status, 200, res.text);
      return res.body as Record_;
    };
    const record = await createRecord({ completedAt: '2020-01-01T00:00:00Z' });
    assert.equal(record.completedAt, null, 'completedAt in a body is ignored');
    assert.equal((await put(record.id, { status: 'in_progress' })).completedAt, null);
    const t0 = new Date().toISOString();
    const done = await put(record.id, { status: 'done' });
    assert.ok(done.completedAt && done.completedAt >= t0);
    assert.equal((await put(record.id, { assignee: 'Lee' })).completedAt, done.completedAt, 'other edits keep it');
    assert.equal((await put(record.id, { status: 'done' })).completedAt, done.completedAt, 'done → done is not a new completion');
    assert.equal((await put(record.id, { status: 'cancelled' })).completedAt, null);
    assert.ok((await createRecord({ status: 'done' })).completedAt, 'created done');
  });

  test('filters: status, type, faultId, q, from/to on scheduledAt; pagination newest first', async () => {
    const tag = uniqueName('pump');
    const fault = await createFault();
    const a = await createRecord({ equipment: `${tag} A`, type: 'inspection', scheduledAt: '2024-05-01T10:00:00Z' });
    const b = await createRecord({ equipment: `${tag} B`, type: 'corrective', scheduledAt: '2024-05-10T10:00:00Z', faultId: fault.id, status: 'in_progress' });
    const c = await createRecord({ equipment: `${tag} C`, type: 'preventive', assignee: 'Alex', status: 'done' });
    await createRecord({ equipment: 'unrelated', type: 'inspection', scheduledAt: '2024-05-01T10:00:00Z' });

    const ids = async (query: string) => {
      const res = await server.request('GET', `/api/maintenance?q=${encodeURIComponent(tag)}&${query}`, { token: users.viewer.accessToken });
      assert.equal(res.status, 200, res.text);
      return res.body.items.map((item: Record_) => item.id);
    };
    assert.deepEqual(await ids(''), [c.id, b.id, a.id], 'newest first');
    assert.deepEqual(await ids('status=planned&status=in_progress'), [b.id, a.id]);
    assert.deepEqual(await ids('type=preventive'), [c.id]);
    assert.deepEqual(await ids(`faultId=${fault.id}`), [b.id]);
    assert.deepEqual(await ids('from=2024-05-01&to=2024-05-09'), [a.id]);
    assert.deepEqual(await ids('from=2024-05-02'), [b.id]);
    const byAssignee = await server.request('GET', '/api/maintenance?q=alex', { token: users.viewer.accessToken });
    assert.ok(byAssignee.body.items.some((item: Record_) => item.id === c.id));

    const page = await server.request('GET', `/api/maintenance?q=${encodeURIComponent(tag)}&page=2&pageSize=2`, { token: users.viewer.accessToken });
    assert.deepEqual({ ...page.body, items: page.body.items.map((item: Record_) => item.id) }, { items: [a.id], total: 3, page: 2, pageSize: 2 });
  });

  test('every write leaves an audit row with before/after', async () => {
    const record = await createRecord();
    await server.request('PUT', `/api/maintenance/${record.id}`, { token: users.admin.accessToken, body: { status: 'done' } });
    await server.request('DELETE', `/api/maintenance/${record.id}`, { token: users.operator.accessToken });
    const rows = auditRows(server, 'maintenance', record.id);
    assert.deepEqual(
      rows.map((row) => [row.action, row.userId]),
      [
        ['create', users.operator.user.id],
        ['update', users.admin.user.id],
        ['delete', users.operator.user.id],
      ],
    );
    assert.deepEqual([rows[1].before.status, rows[1].after.status], ['planned', 'done']);
    assert.ok(rows[1].after.completedAt);
    assert.equal(rows[2].before.status, 'done');
  });
});
