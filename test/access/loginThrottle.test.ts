// The password-check budget holds under parallel load: requests in flight at once meet the same limit as requests in a row.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestServer, TEST_PASSWORD, type TestServer } from '../helpers/server.ts';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(() => server.close());

function statuses(responses: { status: number }[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const { status } of responses) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}

const login = (username: string, password: string) => server.request('POST', '/api/auth/login', { body: { username, password } });

describe('login throttle under parallel load', () => {
  test('60 wrong passwords in flight at once: 10 are checked (401), the other 50 are refused with 429', async () => {
    const { user } = await server.createUser();
    const responses = await Promise.all(Array.from({ length: 60 }, () => login(user.username, 'wrong-password')));
    assert.deepEqual(statuses(responses), { 401: 10, 429: 50 });
    assert.ok(responses.filter((r) => r.status === 429).every((r) => r.body.code === 'AUTH_THROTTLED'));
    for (const response of responses.filter((r) => r.status === 429)) assert.ok(Number(response.headers.get('retry-after')) > 0);
  });

  test('300 in flight with the right password last: the budget is spent before it is checked, so no sign-in', async () => {
    const { user } = await server.createUser();
    const responses = await Promise.all(Array.from({ length: 300 }, (_, i) => login(user.username, i === 299 ? TEST_PASSWORD : 'wrong-password')));
    assert.deepEqual(statuses(responses), { 401: 10, 429: 290 });
    assert.equal(responses[299].status, 429);
  });

  test('username and email share one counter per account', async () => {
    const { user } = await server.createUser();
    const asName = await Promise.all(Array.from({ length: 5 }, () => login(user.username, 'wrong-password')));
    const asEmail = await Promise.all(Array.from({ length: 5 }, () => login(user.email.toUpperCase(), 'wrong-password')));
    assert.deepEqual(statuses([...asName, ...asEmail]), { 401: 10 });
    assert.equal((await login(user.email, TEST_PASSWORD)).status, 429);
    assert.equal((await login(user.username, TEST_PASSWORD)).status, 429);
  });

  test('a right password gives its attempt back: signing in does not eat the budget', async () => {
    const { user } = await server.createUser();
    for (let i = 0; i < 12; i += 1) assert.equal((await login(user.username, TEST_PASSWORD)).status, 200);
    const wrong = await Promise.all(Array.from({ length: 12 }, () => login(user.username, 'wrong-password')));
    assert.deepEqual(statuses(wrong), { 401: 10, 429: 2 });
  });

  test('30 wrong current passwords in flight on a password change: 10 checked (400), 20 refused (429)', async () => {
    const { user, accessToken } = await server.createUser();
    const responses = await Promise.all(
      Array.from({ length: 30 }, () =>
        server.request('PUT', `/api/users/${user.id}/password`, {
          token: accessToken,
          body: { currentPassword: 'wrong-password', newPassword: 'brand-new-password' },
        }),
      ),
    );
    assert.deepEqual(statuses(responses), { 400: 10, 429: 20 });
  });

  test('one address: at most 100 password checks per window across accounts, however many in flight', async () => {
    // A server of its own so the address budget spent here does not lock out the other tests.
    const own = await startTestServer();
    try {
      const responses = await Promise.all(
        Array.from({ length: 115 }, (_, i) => own.request('POST', '/api/auth/login', { body: { username: `nobody-${i}`, password: 'wrong-password' } })),
      );
      assert.deepEqual(statuses(responses), { 401: 100, 429: 15 });
    } finally {
      await own.close();
    }
  });
});
