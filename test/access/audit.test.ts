// GET /api/audit: admins only, paginated, filtered; every write on users, energy, configs and dashboard settings leaves an entry.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(() => server.close());

type Entry = {
  id: number;
  at: string;
  userId: number | null;
  username: string | null;
  action: string;
  resource: string;
  resourceId: string | null;
  before: any;
  after: any;
};

async function entries(token: string, query: string): Promise<Entry[]> {
  const response = await server.request('GET', `/api/audit?pageSize=200&${query}`, { token });
  assert.equal(response.status, 200, response.text);
  return response.body.items;
}

test('only admins read the trail', async () => {
  for (const role of ['viewer', 'operator'] as const) {
    const caller = await server.createUser({ role });
    assert.equal((await server.request('GET', '/api/audit', { token: caller.accessToken })).status, 403, role);
  }
  assert.equal((await server.request('GET', '/api/audit')).status, 401);
  const admin = await server.createUser({ role: 'admin' });
  assert.equal((await server.request('GET', '/api/audit', { token: admin.accessToken })).status, 200);
});

test('a role change is recorded with who, when, before and after', async () => {
  const admin = await server.createUser({ role: 'admin' });
  const target = await server.createUser();
  const startedAt = new Date().toISOString();
  await server.request('PUT', `/api/users/${target.user.id}/role`, { token: admin.accessToken, body: { role: 'operator' } });
  await server.request('PUT', `/api/users/${target.user.id}`, { token: admin.accessToken, body: { role: 'admin', displayName: 'Promoted' } });

  const trail = await entries(admin.accessToken, `resource=users&resourceId=${target.user.id}`);
  assert.equal(trail.length, 3);
  const [putRole, putProfile, viaRole] = trail; // newest first
  assert.equal(viaRole.action, 'role');
  assert.equal(viaRole.userId, admin.user.id);
  assert.equal(viaRole.username, admin.user.username);
  assert.deepEqual([viaRole.before, viaRole.after], [{ role: 'viewer' }, { role: 'operator' }]);
  assert.ok(viaRole.at >= startedAt);
  // PUT /users/:id changing role and profile: the role change is a 'role' entry of its own.
  assert.deepEqual([putProfile.action, putProfile.before, putProfile.after], ['update', { displayName: null }, { displayName: 'Promoted' }]);
  assert.deepEqual([putRole.action, putRole.before, putRole.after], ['role', { role: 'operator' }, { role: 'admin' }]);
  const roleChanges = await entries(admin.accessToken, `resource=users&resourceId=${target.user.id}&action=role`);
  assert.deepEqual(
    roleChanges.map((e) => e.id),
    [putRole.id, viaRole.id],
  );
});

test('every write on these resources leaves one entry; reads and refused writes leave none', async () => {
  const admin = await server.createUser({ role: 'admin' });
  const viewer = await server.createUser();
  const token = admin.accessToken;
  const count = () => server.service.deps.db.sqlite.prepare('SELECT count(*) FROM audit_log WHERE user_id = ?').pluck().get(admin.user.id) as number;

  const created = await server.request('POST', '/api/users', {
    token,
    body: { username: `aud${process.pid}`, email: `aud${process.pid}@example.test`, password: 'a-good-password' },
  });
  const id = created.body.id;
  const writes: [string, string, unknown][] = [
    ['PUT', `/api/users/${id}`, { phone: '+1 555 0101' }],
    ['PUT', `/api/users/${id}/role`, { role: 'operator' }],
    ['PUT', `/api/users/${id}/password`, { newPassword: 'reset-by-admin' }],
    ['PUT', '/api/energy/areas', { areas: [{ name: 'Hall A', todayKwh: 1, monthKwh: 2, yearKwh: 3, powerKw: 4 }] }],
    ['PUT', '/api/configs', { siteName: 'Audited site' }],
    ['PUT', '/api/three-d-config', { ambientIntensity: 0.9 }],
    ['PUT', '/api/dashboard/settings', { theme: 'dark' }],
    ['DELETE', `/api/users/${id}`, undefined],
  ];
  for (const [method, path, body] of writes) {
    const n = count();
    const response = await server.request(method, path, { token, body });
    assert.ok(response.status < 300, `${method} ${path}: ${response.status}`);
    assert.equal(count(), n + 1, `${method} ${path} records one entry`);
  }

  const n = count();
  await server.request('GET', '/api/users', { token });
  await server.request('GET', '/api/configs', { token });
  await server.request('PUT', '/api/configs', { token, body: { timezone: 'Not/AZone' } });
  await server.request('PUT', '/api/users/999999/role', { token, body: { role: 'viewer' } });
  assert.equal(count(), n, 'reads, invalid and failed writes record nothing');
  assert.equal((await server.request('PUT', '/api/configs', { token: viewer.accessToken, body: { siteName: 'x' } })).status, 403);

  const mine = await entries(token, `userId=${admin.user.id}`);
  assert.deepEqual(
    mine.map((e) => `${e.resource}:${e.action}`),
    [
      'users:delete',
      'dashboard_settings:update',
      'three_d_config:update',
      'platform_config:update',
      'energy_areas:replace',
      'users:password',
      'users:role',
      'users:update',
      'users:create',
    ],
  );
  const password = mine.find((e) => e.action === 'password')!;
  assert.deepEqual([password.before, password.after], [null, null], 'a password change records no hash');
  const config = mine.find((e) => e.resource === 'platform_config')!;
  assert.equal(config.after.siteName, 'Audited site');
  assert.equal(typeof config.before.siteName, 'string');
  const deleted = mine.find((e) => e.action === 'delete')!;
  assert.equal(deleted.before.username, `aud${process.pid}`);
  assert.equal(deleted.before.passwordHash, undefined);
});

test('pagination shape and time filters', async () => {
  const admin = await server.createUser({ role: 'admin' });
  const token = admin.accessToken;
  for (const theme of ['dark', 'light', 'system'] as const) await server.request('PUT', '/api/dashboard/settings', { token, body: { theme } });

  const page = await server.request('GET', `/api/audit?resource=dashboard_settings&userId=${admin.user.id}&page=2&pageSize=1`, { token });
  assert.equal(page.status, 200);
  assert.deepEqual(Object.keys(page.body).sort(), ['items', 'page', 'pageSize', 'total']);
  assert.deepEqual([page.body.total, page.body.page, page.body.pageSize, page.body.items.length], [3, 2, 1, 1]);
  assert.deepEqual(page.body.items[0].after, { theme: 'light' }, 'newest first: page 2 of 1 is the middle write');

  const all = await entries(token, `resource=dashboard_settings&userId=${admin.user.id}`);
  const oldest = all[all.length - 1];
  const fromOldest = await entries(token, `resource=dashboard_settings&userId=${admin.user.id}&from=${encodeURIComponent(oldest.at)}`);
  assert.equal(fromOldest.length, 3);
  const upToOldest = await entries(token, `resource=dashboard_settings&userId=${admin.user.id}&to=${encodeURIComponent(oldest.at)}`);
  assert.ok(
    upToOldest.some((e) => e.id === oldest.id),
    '`to` is inclusive',
  );
  assert.ok(upToOldest.length <= 3);
  const future = await entries(token, `from=${new Date(Date.now() + 86_400_000).toISOString().slice(0, 10)}`);
  assert.deepEqual(future, []);
  const today = new Date().toISOString().slice(0, 10);
  assert.equal(
    (await entries(token, `resource=dashboard_settings&userId=${admin.user.id}&from=${today}&to=${today}`)).length,
    3,
    'a date-only to covers the whole day',
  );

  for (const [query, path] of [
    ['from=yesterday', 'query.from'],
    ['from=2030-01-02&to=2030-01-01', 'query.from'],
    ['userId=abc', 'query.userId'],
    ['pageSize=0', 'query.pageSize'],
  ]) {
    const response = await server.request('GET', `/api/audit?${query}`, { token });
    assert.equal(response.status, 400, query);
    assert.equal(response.body.details[0].path, path, query);
  }
});
