// One rule for unknown body fields everywhere: dropped; a partial update left with nothing known is 400. The audit
// trail never stores a secret, whatever a caller hands it. Passwords past 72 bytes never match (no truncation).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { AuditLog } from '../../src/platform/db/auditTrail.ts';
import { startTestServer, TEST_PASSWORD, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let admin: Awaited<ReturnType<TestServer['createUser']>>;
before(async () => {
  server = await startTestServer();
  admin = await server.createUser({ role: 'admin' });
});
after(() => server.close());

describe('unknown fields', () => {
  test('PUT /api/users/:id with only unknown fields is 400 and changes nothing; the hash never reaches the audit log', async () => {
    const { user } = await server.createUser();
    const before = server.service.deps.db.sqlite.prepare('SELECT password_hash, updated_at FROM users WHERE id = ?').get(user.id);
    const hashOnly = await server.request('PUT', `/api/users/${user.id}`, { token: admin.accessToken, body: { passwordHash: 'x' } });
    assert.equal(hashOnly.status, 400);
    const foo = await server.request('PUT', `/api/users/${user.id}`, { token: admin.accessToken, body: { foo: 1 } });
    assert.equal(foo.status, 400);
    assert.deepEqual(server.service.deps.db.sqlite.prepare('SELECT password_hash, updated_at FROM users WHERE id = ?').get(user.id), before);
    const mixed = await server.request('PUT', `/api/users/${user.id}`, { token: admin.accessToken, body: { displayName: 'Mixed', passwordHash: 'x' } });
    assert.equal(mixed.status, 200);
    assert.equal(mixed.body.displayName, 'Mixed');
    const trail = server.service.deps.db.sqlite
      .prepare("SELECT before, after FROM audit_log WHERE resource = 'users' AND resource_id = ?")
      .all(String(user.id)) as { before: string; after: string }[];
    assert.ok(trail.length > 0);
    for (const entry of trail) assert.doesNotMatch(`${entry.before}${entry.after}`, /\$2[aby]\$|passwordHash/);
  });

  test('a viewer sending an unknown key is not told it needs an admin', async () => {
    const viewer = await server.createUser();
    const response = await server.request('PUT', `/api/users/${viewer.user.id}`, { token: viewer.accessToken, body: { displayName: 'Me', foo: 1 } });
    assert.equal(response.status, 200);
  });

  for (const [path, role] of [
    ['/api/configs', 'admin'],
    ['/api/three-d-config', 'admin'],
    ['/api/dashboard/settings', 'viewer'],
  ] as const) {
    test(`PUT ${path} with { foo: 1 } is 400 as on every other resource`, async () => {
      const actor = role === 'admin' ? admin : await server.createUser();
      const response = await server.request('PUT', path, { token: actor.accessToken, body: { foo: 1 } });
      assert.equal(response.status, 400);
      assert.equal(response.body.details[0].message, 'must contain at least one writable field');
    });
  }

  test('the audit writer drops secret keys whatever a caller passes', () => {
    const audit = new AuditLog(server.service.deps.db);
    audit.record({
      actor: null,
      action: 'update',
      resource: 'probe',
      resourceId: 1,
      before: { passwordHash: '$2b$10$x', name: 'a', nested: { refreshToken: 't', jwtSecret: 's' } },
      after: { clientSecret: 'c', name: 'b' },
    });
    const row = server.service.deps.db.sqlite.prepare("SELECT before, after FROM audit_log WHERE resource = 'probe'").get() as {
      before: string;
      after: string;
    };
    assert.deepEqual(JSON.parse(row.before), { name: 'a', nested: {} });
    assert.deepEqual(JSON.parse(row.after), { name: 'b' });
  });
});

describe('passwords past 72 bytes', () => {
  test('a 72-byte password does not sign in with one more byte appended', async () => {
    const password = 'a'.repeat(72);
    const { user } = await server.createUser({ password });
    assert.equal((await server.request('POST', '/api/auth/login', { body: { username: user.username, password } })).status, 200);
    assert.equal((await server.request('POST', '/api/auth/login', { body: { username: user.username, password: `${password}b` } })).status, 401);
  });

  test('nor as the current password of a password change', async () => {
    const password = 'b'.repeat(72);
    const me = await server.createUser({ password });
    const response = await server.request('PUT', `/api/users/${me.user.id}/password`, {
      token: me.accessToken,
      body: { currentPassword: `${password}x`, newPassword: TEST_PASSWORD },
    });
    assert.equal(response.status, 400);
    assert.equal(response.body.error, 'Current password is incorrect');
  });
});
