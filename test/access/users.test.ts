// /api/users: CRUD, the role matrix, self-service limits, passwords, sessions ending on delete, the last admin.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, TEST_PASSWORD, type TestServer } from '../helpers/server.ts';
import { UserLookup } from '../../src/access/users/userRecords.ts';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(() => server.close());

let seq = 0;
const unique = (prefix: string) => `${prefix}${process.pid}x${++seq}`;

function detailPaths(body: { details?: { path: string }[] }): string[] {
  return (body.details ?? []).map((detail) => detail.path);
}

describe('users CRUD as admin', () => {
  test('create, read, list, update, delete; no password hash in any response', async () => {
    const admin = await server.createUser({ role: 'admin' });
    const username = unique('crud');
    const created = await server.request('POST', '/api/users', {
      token: admin.accessToken,
      body: { username, email: `${username}@example.test`, password: 'a-good-password', displayName: 'Dana Doe', phone: '+49 30 1234' },
    });
    assert.equal(created.status, 201);
    assert.equal(created.body.username, username);
    assert.equal(created.body.role, 'viewer', 'default role is the lowest');
    assert.equal(created.body.displayName, 'Dana Doe');
    assert.equal('passwordHash' in created.body, false);
    assert.doesNotMatch(created.text, /\$2[aby]\$/);
    const id = created.body.id as number;

    const read = await server.request('GET', `/api/users/${id}`, { token: admin.accessToken });
    assert.equal(read.status, 200);
    assert.deepEqual(read.body, created.body);

    const list = await server.request('GET', `/api/users?q=${username}`, { token: admin.accessToken });
    assert.equal(list.status, 200);
    assert.deepEqual(
      list.body.items.map((u: { id: number }) => u.id),
      [id],
    );

    const updated = await server.request('PUT', `/api/users/${id}`, {
      token: admin.accessToken,
      body: { displayName: 'Dana D.', phone: null, role: 'operator' },
    });
    assert.equal(updated.status, 200);
    assert.equal(updated.body.displayName, 'Dana D.');
    assert.equal(updated.body.phone, null);
    assert.equal(updated.body.role, 'operator');

    const signIn = await server.request('POST', '/api/auth/login', { body: { username, password: 'a-good-password' } });
    assert.equal(signIn.status, 200, 'the password given at creation works');

    const removed = await server.request('DELETE', `/api/users/${id}`, { token: admin.accessToken });
    assert.equal(removed.status, 204);
    assert.equal((await server.request('GET', `/api/users/${id}`, { token: admin.accessToken })).status, 404);
  });

  test('400 with details for invalid input', async () => {
    const admin = await server.createUser({ role: 'admin' });
    const bad = await server.request('POST', '/api/users', {
      token: admin.accessToken,
      body: { username: 'x', email: 'e@example.test', password: 'a-good-password' },
    });
    assert.equal(bad.status, 400);
    assert.deepEqual(detailPaths(bad.body), ['body.username']);

    const noEmail = await server.request('POST', '/api/users', {
      token: admin.accessToken,
      body: { username: unique('v'), email: 'not-an-email', password: 'a-good-password' },
    });
    assert.equal(noEmail.status, 400);
    assert.deepEqual(detailPaths(noEmail.body), ['body.email']);

    const shortPassword = await server.request('POST', '/api/users', {
      token: admin.accessToken,
      body: { username: unique('v'), email: `${unique('v')}@example.test`, password: 'short' },
    });
    assert.equal(shortPassword.status, 400);
    assert.deepEqual(detailPaths(shortPassword.body), ['body.password']);

    // 40 two-byte characters: within 72 characters but 80 bytes, which bcrypt would silently truncate.
    const longPassword = await server.request('POST', '/api/users', {
      token: admin.accessToken,
      body: { username: unique('v'), email: `${unique('v')}@example.test`, password: 'é'.repeat(40) },
    });
    assert.equal(longPassword.status, 400);
    assert.deepEqual(detailPaths(longPassword.body), ['body.password']);

    const badRole = await server.request('PUT', `/api/users/${admin.user.id}/role`, { token: admin.accessToken, body: { role: 'superuser' } });
    assert.equal(badRole.status, 400);
    assert.deepEqual(detailPaths(badRole.body), ['body.role']);

    const badId = await server.request('GET', '/api/users/abc', { token: admin.accessToken });
    assert.equal(badId.status, 400);
    assert.deepEqual(detailPaths(badId.body), ['params.id']);

    const badPage = await server.request('GET', '/api/users?pageSize=500', { token: admin.accessToken });
    assert.equal(badPage.status, 400);
    assert.deepEqual(detailPaths(badPage.body), ['query.pageSize']);
  });

  test('409 for a duplicate username or email, case-insensitively', async () => {
    const admin = await server.createUser({ role: 'admin' });
    const existing = await server.createUser();
    const sameName = await server.request('POST', '/api/users', {
      token: admin.accessToken,
      body: { username: existing.user.username.toUpperCase(), email: `${unique('d')}@example.test`, password: 'a-good-password' },
    });
    assert.equal(sameName.status, 409);
    assert.match(sameName.body.error, /username/);
    const sameEmail = await server.request('PUT', `/api/users/${admin.user.id}`, {
      token: admin.accessToken,
      body: { email: existing.user.email.toUpperCase() },
    });
    assert.equal(sameEmail.status, 409);
    assert.match(sameEmail.body.error, /email/);
  });

  test('404 for a user that does not exist', async () => {
    const admin = await server.createUser({ role: 'admin' });
    for (const [method, path, body] of [
      ['GET', '/api/users/999999', undefined],
      ['PUT', '/api/users/999999', { displayName: 'x' }],
      ['DELETE', '/api/users/999999', undefined],
      ['PUT', '/api/users/999999/role', { role: 'viewer' }],
      ['PUT', '/api/users/999999/password', { newPassword: 'another-password' }],
    ] as const) {
      const response = await server.request(method, path, { token: admin.accessToken, body });
      assert.equal(response.status, 404, `${method} ${path}`);
      assert.equal(typeof response.body.error, 'string');
    }
  });

  test('list is paginated, newest first, and filters by q and role', async () => {
    const admin = await server.createUser({ role: 'admin' });
    const tag = unique('page');
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) ids.push((await server.createUser({ username: `${tag}_${i}`, role: i < 2 ? 'operator' : 'viewer' })).user.id);

    const page2 = await server.request('GET', `/api/users?q=${tag}&page=2&pageSize=2`, { token: admin.accessToken });
    assert.equal(page2.status, 200);
    assert.deepEqual(Object.keys(page2.body).sort(), ['items', 'page', 'pageSize', 'total']);
    assert.equal(page2.body.total, 5);
    assert.equal(page2.body.page, 2);
    assert.equal(page2.body.pageSize, 2);
    assert.deepEqual(
      page2.body.items.map((u: { id: number }) => u.id),
      [ids[2], ids[1]],
      'newest first',
    );

    const operators = await server.request('GET', `/api/users?q=${tag}&role=operator`, { token: admin.accessToken });
    assert.deepEqual(operators.body.items.map((u: { id: number }) => u.id).sort(), [ids[0], ids[1]].sort());

    const beyond = await server.request('GET', `/api/users?q=${tag}&page=9`, { token: admin.accessToken });
    assert.equal(beyond.body.total, 5);
    assert.deepEqual(beyond.body.items, []);

    // LIKE wildcards in q match literally.
    const wildcard = await server.request('GET', '/api/users?q=%25', { token: admin.accessToken });
    assert.equal(wildcard.body.total, 0);
  });

  test('GET /users/roles lists the roles lowest first', async () => {
    const viewer = await server.createUser();
    const roles = await server.request('GET', '/api/users/roles', { token: viewer.accessToken });
    assert.equal(roles.status, 200);
    assert.deepEqual(roles.body, { roles: ['viewer', 'operator', 'admin'] });
  });
});

describe('role matrix', () => {
  test('viewer and operator cannot manage users; nobody without a token', async () => {
    const target = await server.createUser();
    for (const role of ['viewer', 'operator'] as const) {
      const caller = await server.createUser({ role });
      const token = caller.accessToken;
      const refused = [
        ['GET', '/api/users', undefined],
        ['POST', '/api/users', { username: unique('r'), email: `${unique('r')}@example.test`, password: 'a-good-password' }],
        ['GET', `/api/users/${target.user.id}`, undefined],
        ['PUT', `/api/users/${target.user.id}`, { displayName: 'hijacked' }],
        ['DELETE', `/api/users/${target.user.id}`, undefined],
        ['PUT', `/api/users/${target.user.id}/role`, { role: 'viewer' }],
        ['PUT', `/api/users/${caller.user.id}/role`, { role: 'admin' }],
        ['PUT', `/api/users/${target.user.id}/password`, { newPassword: 'another-password' }],
      ] as const;
      for (const [method, path, body] of refused) {
        const response = await server.request(method, path, { token, body });
        assert.equal(response.status, 403, `${role} ${method} ${path}`);
      }
      assert.equal((await server.request('GET', `/api/users/${caller.user.id}`, { token })).status, 200, `${role} reads itself`);
    }
    for (const [method, path] of [
      ['GET', '/api/users'],
      ['GET', `/api/users/${target.user.id}`],
      ['GET', '/api/users/roles'],
      ['DELETE', `/api/users/${target.user.id}`],
    ] as const) {
      assert.equal((await server.request(method, path)).status, 401, `${method} ${path} without a token`);
    }
    const unchanged = await server.request('GET', `/api/users/${target.user.id}`, { token: (await server.createUser({ role: 'admin' })).accessToken });
    assert.equal(unchanged.body.displayName, null);
  });

  test('a user edits its own profile fields but not its role or username', async () => {
    const viewer = await server.createUser();
    const token = viewer.accessToken;
    const id = viewer.user.id;
    const email = `${unique('self')}@example.test`;
    const ok = await server.request('PUT', `/api/users/${id}`, { token, body: { displayName: 'Vic Viewer', phone: '+1 555 0100', email } });
    assert.equal(ok.status, 200);
    assert.deepEqual([ok.body.displayName, ok.body.phone, ok.body.email], ['Vic Viewer', '+1 555 0100', email]);

    const promote = await server.request('PUT', `/api/users/${id}`, { token, body: { role: 'admin' } });
    assert.equal(promote.status, 403);
    assert.match(promote.body.error, /role/);
    const rename = await server.request('PUT', `/api/users/${id}`, { token, body: { username: unique('renamed') } });
    assert.equal(rename.status, 403);

    // Sending back the unchanged role (a form posting the whole record) is fine.
    const sameRole = await server.request('PUT', `/api/users/${id}`, { token, body: { role: 'viewer', displayName: 'Vic V.' } });
    assert.equal(sameRole.status, 200);

    const me = await server.request('GET', '/api/auth/me', { token });
    assert.equal(me.body.role, 'viewer');
    assert.equal(me.body.username, viewer.user.username);
    assert.equal(me.body.displayName, 'Vic V.');
  });

  test('a role change takes effect on the next request with the same token', async () => {
    const admin = await server.createUser({ role: 'admin' });
    const user = await server.createUser();
    assert.equal((await server.request('GET', '/api/users', { token: user.accessToken })).status, 403);

    const promoted = await server.request('PUT', `/api/users/${user.user.id}/role`, { token: admin.accessToken, body: { role: 'admin' } });
    assert.equal(promoted.status, 200);
    assert.equal(promoted.body.role, 'admin');
    assert.equal((await server.request('GET', '/api/users', { token: user.accessToken })).status, 200);

    const demoted = await server.request('PUT', `/api/users/${user.user.id}`, { token: admin.accessToken, body: { role: 'viewer' } });
    assert.equal(demoted.status, 200);
    assert.equal((await server.request('GET', '/api/users', { token: user.accessToken })).status, 403);
  });
});

describe('sessions and passwords', () => {
  test('deleting a user ends its sessions at once: access token 401, refresh token 401', async () => {
    const admin = await server.createUser({ role: 'admin' });
    const doomed = await server.createUser();
    assert.equal((await server.request('GET', '/api/auth/me', { token: doomed.accessToken })).status, 200);
    assert.equal((await server.request('DELETE', `/api/users/${doomed.user.id}`, { token: admin.accessToken })).status, 204);

    const me = await server.request('GET', '/api/auth/me', { token: doomed.accessToken });
    assert.equal(me.status, 401);
    const refresh = await server.request('POST', '/api/auth/refresh', { body: { refreshToken: doomed.refreshToken } });
    assert.equal(refresh.status, 401);
    const rows = server.service.deps.db.sqlite.prepare('SELECT count(*) FROM refresh_tokens WHERE user_id = ?').pluck().get(doomed.user.id);
    assert.equal(rows, 0);
  });

  test('changing your own password needs the current one', async () => {
    const user = await server.createUser();
    const path = `/api/users/${user.user.id}/password`;
    const token = user.accessToken;

    const missing = await server.request('PUT', path, { token, body: { newPassword: 'brand-new-password' } });
    assert.equal(missing.status, 400);
    assert.deepEqual(detailPaths(missing.body), ['body.currentPassword']);

    const wrong = await server.request('PUT', path, { token, body: { currentPassword: 'not-my-password', newPassword: 'brand-new-password' } });
    assert.equal(wrong.status, 400);
    assert.deepEqual(detailPaths(wrong.body), ['body.currentPassword']);

    const tooShort = await server.request('PUT', path, { token, body: { currentPassword: TEST_PASSWORD, newPassword: 'short' } });
    assert.equal(tooShort.status, 400);
    assert.deepEqual(detailPaths(tooShort.body), ['body.newPassword']);

    const ok = await server.request('PUT', path, { token, body: { currentPassword: TEST_PASSWORD, newPassword: 'brand-new-password' } });
    assert.equal(ok.status, 200);
    assert.equal(ok.body.ok, true);

    assert.equal((await server.request('POST', '/api/auth/login', { body: { username: user.user.username, password: TEST_PASSWORD } })).status, 401);
    assert.equal((await server.request('POST', '/api/auth/login', { body: { username: user.user.username, password: 'brand-new-password' } })).status, 200);
  });

  test("a password change ends the other devices' session; the device that changed it keeps one (issue 56, R5-7)", async () => {
    const user = await server.createUser();
    const login = () => server.request('POST', '/api/auth/login', { body: { username: user.user.username, password: TEST_PASSWORD } });
    const deviceA = await login();
    const thief = await login(); // the second sign-in holds the user's refresh token (one per user)
    assert.equal(deviceA.status, 200);
    assert.equal(thief.status, 200);

    const changed = await server.request('PUT', `/api/users/${user.user.id}/password`, {
      token: deviceA.body.accessToken,
      body: { currentPassword: TEST_PASSWORD, newPassword: 'brand-new-password' },
    });
    assert.equal(changed.status, 200, changed.text);
    const stolen = await server.request('POST', '/api/auth/refresh', { body: { refreshToken: thief.body.refreshToken } });
    assert.equal(stolen.status, 401, 'the refresh token held before the change no longer works');

    // Device A got its own new pair: the token refreshes, and the access token names the same user.
    assert.equal(typeof changed.body.refreshToken, 'string');
    assert.equal((await server.request('GET', '/api/auth/me', { token: changed.body.accessToken })).body.id, user.user.id);
    const kept = await server.request('POST', '/api/auth/refresh', { body: { refreshToken: changed.body.refreshToken } });
    assert.equal(kept.status, 200, 'the device that changed the password stays signed in');
    const rows = server.service.deps.db.sqlite.prepare('SELECT count(*) FROM refresh_tokens WHERE user_id = ?').pluck().get(user.user.id);
    assert.equal(rows, 1);
  });

  test("an admin's change of another user's password ends that user's session and gives the admin no tokens", async () => {
    const admin = await server.createUser({ role: 'admin' });
    const user = await server.createUser();
    const set = await server.request('PUT', `/api/users/${user.user.id}/password`, { token: admin.accessToken, body: { newPassword: 'admin-chose-this' } });
    assert.equal(set.status, 200, set.text);
    assert.deepEqual(set.body, { ok: true });
    assert.equal((await server.request('POST', '/api/auth/refresh', { body: { refreshToken: user.refreshToken } })).status, 401);
    assert.equal(
      (await server.request('POST', '/api/auth/refresh', { body: { refreshToken: admin.refreshToken } })).status,
      200,
      "the admin's own session is untouched",
    );
  });

  test("an admin sets another user's password without the current one; others may not", async () => {
    const admin = await server.createUser({ role: 'admin' });
    const operator = await server.createUser({ role: 'operator' });
    const user = await server.createUser();
    const path = `/api/users/${user.user.id}/password`;

    assert.equal((await server.request('PUT', path, { token: operator.accessToken, body: { newPassword: 'operator-chose-it' } })).status, 403);
    const set = await server.request('PUT', path, { token: admin.accessToken, body: { newPassword: 'admin-chose-this' } });
    assert.equal(set.status, 200);
    assert.equal((await server.request('POST', '/api/auth/login', { body: { username: user.user.username, password: 'admin-chose-this' } })).status, 200);

    const own = await server.request('PUT', `/api/users/${admin.user.id}/password`, { token: admin.accessToken, body: { newPassword: 'admin-own-new-one' } });
    assert.equal(own.status, 400, 'an admin changing its own password also needs the current one');
  });

  test('repeated wrong current passwords are throttled like sign-ins', async () => {
    const user = await server.createUser();
    const path = `/api/users/${user.user.id}/password`;
    // Pre-load the counter to one below its limit instead of spending nine bcrypt rounds.
    server.service.deps.db.sqlite
      .prepare('INSERT INTO login_throttle (key, failures, window_started_at) VALUES (?, 9, ?)')
      .run(`user:${user.user.id}`, Date.now());
    const tenth = await server.request('PUT', path, {
      token: user.accessToken,
      body: { currentPassword: 'guess-number-10', newPassword: 'brand-new-password' },
    });
    assert.equal(tenth.status, 400);
    const blocked = await server.request('PUT', path, { token: user.accessToken, body: { currentPassword: TEST_PASSWORD, newPassword: 'brand-new-password' } });
    assert.equal(blocked.status, 429);
    assert.ok(Number(blocked.headers.get('retry-after')) > 0);
  });
});

describe('the last admin', () => {
  test('cannot be deleted or demoted; can once another admin exists', async (t) => {
    // A server of its own: the seeded "admin" is the only admin there.
    const own = await startTestServer();
    t.after(() => own.close());
    const seeded = new UserLookup(own.service.deps.db).findByLogin('admin')!;
    const token = own.service.deps.auth.signIn(seeded).accessToken;

    const remove = await own.request('DELETE', `/api/users/${seeded.id}`, { token });
    assert.equal(remove.status, 409);
    assert.match(remove.body.error, /last admin/);
    const demote = await own.request('PUT', `/api/users/${seeded.id}/role`, { token, body: { role: 'operator' } });
    assert.equal(demote.status, 409);
    assert.match(demote.body.error, /last admin/);
    const demoteViaPut = await own.request('PUT', `/api/users/${seeded.id}`, { token, body: { role: 'viewer' } });
    assert.equal(demoteViaPut.status, 409);
    assert.equal((await own.request('GET', `/api/users/${seeded.id}`, { token })).body.role, 'admin');

    const second = await own.createUser({ role: 'admin' });
    const demoted = await own.request('PUT', `/api/users/${seeded.id}/role`, { token: second.accessToken, body: { role: 'operator' } });
    assert.equal(demoted.status, 200);
    const lastAgain = await own.request('DELETE', `/api/users/${second.user.id}`, { token: second.accessToken });
    assert.equal(lastAgain.status, 409, 'the remaining admin is now the last one');
  });
});

describe('per-person language and theme (issue 53)', () => {
  test('kept on the server: set on one device, a new sign-in (another device) gets them; null gives the choice back; bad values name the field', async () => {
    const testUser = await server.createUser({ role: 'viewer' });
    const person = { ...testUser.user, ...testUser };
    const fresh = await server.request('GET', '/api/auth/me', { token: person.accessToken });
    assert.equal(fresh.status, 200);
    assert.equal(fresh.body.language, null, 'nothing chosen yet: the browser decides');
    assert.equal(fresh.body.theme, null);

    const set = await server.request('PUT', `/api/users/${person.id}`, { token: person.accessToken, body: { language: 'de', theme: 'dark' } });
    assert.equal(set.status, 200, JSON.stringify(set.body));
    assert.equal(set.body.language, 'de');
    assert.equal(set.body.theme, 'dark');

    // A second device signs in (ending the first one's session, as the spec says) and gets the same choice.
    const second = await server.request('POST', '/api/auth/login', { body: { username: person.username, password: person.password } });
    assert.equal(second.status, 200);
    assert.equal(second.body.user.language, 'de');
    assert.equal(second.body.user.theme, 'dark');
    const me = await server.request('GET', '/api/auth/me', { token: second.body.accessToken });
    assert.deepEqual([me.body.language, me.body.theme], ['de', 'dark']);

    // The theme alone back to the browser's; the language kept.
    const reset = await server.request('PUT', `/api/users/${person.id}`, { token: second.body.accessToken, body: { theme: null } });
    assert.equal(reset.status, 200);
    assert.deepEqual([reset.body.language, reset.body.theme], ['de', null]);

    for (const [body, field] of [
      [{ language: 'xx' }, 'language'],
      [{ theme: 'neon' }, 'theme'],
      [{ language: 42 }, 'language'],
    ] as const) {
      const bad = await server.request('PUT', `/api/users/${person.id}`, { token: second.body.accessToken, body });
      assert.equal(bad.status, 400, JSON.stringify(body));
      assert.ok(
        detailPaths(bad.body).some((path) => path.endsWith(field)),
        `${JSON.stringify(body)}: ${JSON.stringify(bad.body)}`,
      );
    }
    // Someone else's preferences are theirs.
    const other = await server.createUser({ role: 'operator' });
    const refused = await server.request('PUT', `/api/users/${person.id}`, { token: other.accessToken, body: { language: 'fr' } });
    assert.equal(refused.status, 403);
    const after = await server.request('GET', `/api/users/${person.id}`, { token: second.body.accessToken });
    assert.deepEqual([after.body.language, after.body.theme], ['de', null]);
  });
});
