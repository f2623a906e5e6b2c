// /api/reports: the seeded templates, plan CRUD, roles, cron/email/template validation, filters, pagination, audit.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { auditRows, createRoles, uniqueName, type Roles } from '../helpers/facility.ts';

type Template = { id: number; key: string; name: string; description: string };

describe('reports', () => {
  let server: TestServer;
  let users: Roles;
  let templates: Template[];

  before(async () => {
    server = await startTestServer();
    users = await createRoles(server);
    templates = (await server.request('GET', '/api/reports/templates', { token: users.viewer.accessToken })).body.items;
  });
  after(() => server.close());

  const validPlan = (extra: Record<string, unknown> = {}) => ({
    name: 'Weekly energy',
    templateId: templates[0].id,
    cron: '0 7 * * MON',
    recipients: ['facility@example.test', 'cfo@example.test'],
    ...extra,
  });
  const createPlan = async (extra: Record<string, unknown> = {}) => {
    const res = await server.request('POST', '/api/reports/plans', { token: users.operator.accessToken, body: validPlan(extra) });
    assert.equal(res.status, 201, res.text);
    return res.body;
  };

  test('the built-in templates from the seed migration are listed to any signed-in user', async () => {
    assert.equal((await server.request('GET', '/api/reports/templates')).status, 401);
    assert.deepEqual(
      templates.map((t) => t.key),
      ['weekly-energy', 'monthly-energy', 'alerts-faults', 'maintenance-due', 'month-to-date'],
    );
    for (const template of templates) {
      assert.equal(typeof template.id, 'number');
      assert.ok(template.name.length > 0 && template.description.length > 0);
    }
  });

  test('operator creates, reads, updates and deletes a plan', async () => {
    const created = await createPlan();
    assert.equal(created.format, 'pdf', 'default format');
    assert.equal(created.enabled, true, 'enabled by default');
    assert.equal(created.lastRunAt, null);
    assert.deepEqual(created.recipients, ['facility@example.test', 'cfo@example.test']);

    const read = await server.request('GET', `/api/reports/plans/${created.id}`, { token: users.viewer.accessToken });
    assert.deepEqual(read.body, created);

    const updated = await server.request('PUT', `/api/reports/plans/${created.id}`, {
      token: users.operator.accessToken,
      body: { format: 'json', enabled: false, recipients: ['ops@example.test'], templateId: templates[3].id, cron: '*/15 * * * *' },
    });
    assert.equal(updated.status, 200, updated.text);
    assert.equal(updated.body.format, 'json');
    assert.equal(updated.body.enabled, false);
    assert.deepEqual(updated.body.recipients, ['ops@example.test']);
    assert.equal(updated.body.templateId, templates[3].id);
    assert.equal(updated.body.cron, '*/15 * * * *');
    assert.equal(updated.body.name, 'Weekly energy');

    assert.equal((await server.request('DELETE', `/api/reports/plans/${created.id}`, { token: users.operator.accessToken })).status, 204);
    assert.equal((await server.request('GET', `/api/reports/plans/${created.id}`, { token: users.viewer.accessToken })).status, 404);
  });

  test('viewer reads plans but cannot write; admin writes', async () => {
    const plan = await createPlan();
    const viewer = users.viewer.accessToken;
    assert.equal((await server.request('GET', '/api/reports/plans')).status, 401);
    assert.equal((await server.request('GET', '/api/reports/plans', { token: viewer })).status, 200);
    assert.equal((await server.request('GET', `/api/reports/plans/${plan.id}`, { token: viewer })).status, 200);
    for (const [method, path, body] of [
      ['POST', '/api/reports/plans', validPlan()],
      ['PUT', `/api/reports/plans/${plan.id}`, { enabled: false }],
      ['DELETE', `/api/reports/plans/${plan.id}`, undefined],
    ] as const) {
      assert.equal((await server.request(method, path, { token: viewer, body })).status, 403, `${method} ${path}`);
    }
    assert.equal((await server.request('GET', `/api/reports/plans/${plan.id}`, { token: viewer })).body.enabled, true);
    assert.equal((await server.request('POST', '/api/reports/plans', { token: users.admin.accessToken, body: validPlan() })).status, 201);
  });

  test('templateId takes the template key as well as its number; the plan answers with the number', async () => {
    const byKey = await createPlan({ templateId: 'maintenance-due' });
    assert.equal(byKey.templateId, templates.find((t) => t.key === 'maintenance-due')!.id);
    const moved = await server.request('PUT', `/api/reports/plans/${byKey.id}`, { token: users.operator.accessToken, body: { templateId: 'weekly-energy' } });
    assert.equal(moved.status, 200, moved.text);
    assert.equal(moved.body.templateId, templates.find((t) => t.key === 'weekly-energy')!.id);
  });

  test('cron, recipients and templateId are validated: 400 with details naming the field', async () => {
    const token = users.operator.accessToken;
    const cases: [unknown, string, RegExp?][] = [
      [validPlan({ cron: '61 * * * *' }), 'body.cron', /minute/],
      [validPlan({ cron: 'every monday' }), 'body.cron', /not a valid cron/],
      [validPlan({ cron: '   ' }), 'body.cron'],
      [validPlan({ templateId: 999999 }), 'body.templateId', /no report template/],
      [validPlan({ recipients: ['not-an-email'] }), 'body.recipients.0', /email/],
      [validPlan({ recipients: ['a@example.test', 'bad@'] }), 'body.recipients.1'],
      [validPlan({ recipients: [] }), 'body.recipients'],
      [validPlan({ recipients: ['a@example.test', 'a@example.test'] }), 'body.recipients'],
      [validPlan({ recipients: 'a@example.test' }), 'body.recipients'],
      [validPlan({ format: 'xlsx' }), 'body.format'],
      [validPlan({ templateId: 'no-such-template' }), 'body.templateId', /no report template with key "no-such-template"/],
      [validPlan({ name: '' }), 'body.name'],
      [{ templateId: templates[0].id, cron: '0 7 * * *', recipients: ['a@example.test'] }, 'body.name'],
    ];
    for (const [body, where, message] of cases) {
      const res = await server.request('POST', '/api/reports/plans', { token, body });
      assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.text}`);
      const detail = res.body.details?.find((d: { path: string }) => d.path === where || d.path.startsWith(`${where}`));
      assert.ok(detail, `${JSON.stringify(body)}: ${JSON.stringify(res.body)} names ${where}`);
      if (message) assert.match(detail.message, message);
    }
    const both = await server.request('POST', '/api/reports/plans', { token, body: validPlan({ cron: 'x', templateId: 999999 }) });
    assert.deepEqual(
      both.body.details.map((d: { path: string }) => d.path),
      ['body.cron', 'body.templateId'],
      'both problems at once',
    );

    const plan = await createPlan();
    const badUpdate = await server.request('PUT', `/api/reports/plans/${plan.id}`, { token, body: { cron: '0 25 * * *', name: 'renamed' } });
    assert.equal(badUpdate.status, 400);
    assert.equal(badUpdate.body.details[0].path, 'body.cron');
    assert.equal((await server.request('GET', `/api/reports/plans/${plan.id}`, { token })).body.name, 'Weekly energy', 'nothing written');
    assert.equal((await server.request('GET', '/api/reports/plans?enabled=maybe', { token })).status, 400);
    assert.equal((await server.request('PUT', `/api/reports/plans/${plan.id}`, { token, body: {} })).status, 400);
  });

  test('six-field cron expressions (seconds first) are accepted as node-cron reads them', async () => {
    const plan = await createPlan({ cron: '30 0 7 * * 1-5' });
    assert.equal(plan.cron, '30 0 7 * * 1-5');
  });

  test('missing plans are 404', async () => {
    const token = users.operator.accessToken;
    for (const [method, body] of [['GET'], ['PUT', { enabled: false }], ['DELETE']] as const) {
      const res = await server.request(method, '/api/reports/plans/999999', { token, body });
      assert.equal(res.status, 404, method);
      assert.equal(typeof res.body.error, 'string');
    }
  });

  test('filters q, templateId, enabled; pagination newest first', async () => {
    const tag = uniqueName('plan');
    const a = await createPlan({ name: `${tag} energy`, templateId: templates[0].id });
    const b = await createPlan({ name: `${tag} faults`, templateId: templates[3].id, enabled: false });
    const c = await createPlan({ name: `${tag} more energy`, templateId: templates[0].id });
    const ids = async (query: string) => {
      const res = await server.request('GET', `/api/reports/plans?q=${encodeURIComponent(tag)}&${query}`, { token: users.viewer.accessToken });
      assert.equal(res.status, 200, res.text);
      return res.body.items.map((item: { id: number }) => item.id);
    };
    assert.deepEqual(await ids(''), [c.id, b.id, a.id]);
    assert.deepEqual(await ids(`templateId=${templates[0].id}`), [c.id, a.id]);
    assert.deepEqual(await ids('enabled=false'), [b.id]);
    assert.deepEqual(await ids('enabled=true'), [c.id, a.id]);
    const page = await server.request('GET', `/api/reports/plans?q=${encodeURIComponent(tag)}&page=2&pageSize=2`, { token: users.viewer.accessToken });
    assert.deepEqual({ ...page.body, items: page.body.items.map((item: { id: number }) => item.id) }, { items: [a.id], total: 3, page: 2, pageSize: 2 });
  });

  test('every plan write leaves an audit row with before/after', async () => {
    const plan = await createPlan();
    await server.request('PUT', `/api/reports/plans/${plan.id}`, { token: users.admin.accessToken, body: { enabled: false } });
    await server.request('DELETE', `/api/reports/plans/${plan.id}`, { token: users.operator.accessToken });
    const rows = auditRows(server, 'report_plans', plan.id);
    assert.deepEqual(
      rows.map((row) => [row.action, row.userId]),
      [
        ['create', users.operator.user.id],
        ['update', users.admin.user.id],
        ['delete', users.operator.user.id],
      ],
    );
    assert.deepEqual([rows[1].before.enabled, rows[1].after.enabled], [true, false]);
    assert.deepEqual(rows[0].after.recipients, ['facility@example.test', 'cfo@example.test']);
    assert.equal(rows[2].before.id, plan.id);
  });
});
