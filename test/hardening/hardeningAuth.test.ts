// Hardening round 3, sessions: a refresh token used again after its rotation ends the whole session (RFC 9700 §4.14.2).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(() => server.close());

const refresh = (refreshToken: string, userAgent = 'ems-test-tab') =>
  server.request('POST', '/api/auth/refresh', { body: { refreshToken }, headers: { 'user-agent': userAgent } });

describe('refresh token reuse detection', () => {
  test('replaying a rotated token is 401 and the current token of that session stops working too', async () => {
    const user = await server.createUser();
    const first = await refresh(user.refreshToken);
    assert.equal(first.status, 200);
    const second = await refresh(first.body.refreshToken);
    assert.equal(second.status, 200);

    // An attacker (or a stale copy) presents the token rotated away two steps ago.
    const replay = await refresh(user.refreshToken);
    assert.equal(replay.status, 401);
    assert.equal(replay.headers.get('cache-control'), 'no-store');
    const warned = server.logs.map((line) => JSON.parse(line)).find((line) => /used again after its rotation/.test(line.msg));
    assert.equal(warned?.userId, user.user.id);
    assert.doesNotMatch(JSON.stringify(warned), new RegExp(user.refreshToken.replace(/[+/=]/g, '.')));

    // The legitimate holder's current token is dead as well: the family is ended, sign in again.
    const current = await refresh(second.body.refreshToken);
    assert.equal(current.status, 401);
    const count = server.service.deps.db.sqlite.prepare('SELECT count(*) FROM refresh_tokens WHERE user_id = ?').pluck().get(user.user.id);
    assert.equal(count, 0);

    const again = await server.request('POST', '/api/auth/login', { body: { username: user.user.username, password: user.password } });
    assert.equal(again.status, 200);
    assert.equal((await refresh(again.body.refreshToken)).status, 200, 'a new sign-in starts a new family');
  });

  test("another user's session is untouched, and an unknown token ends nothing", async () => {
    const victim = await server.createUser();
    const bystander = await server.createUser();
    const rotated = await refresh(victim.refreshToken);
    assert.equal((await refresh('bm90LWEtdG9rZW4=')).status, 401);
    assert.equal((await refresh(rotated.body.refreshToken)).status, 200, 'an unknown token is no replay');
    assert.equal((await refresh(bystander.refreshToken)).status, 200);
  });

  test('two tabs refreshing with the same token at the same moment: one wins, the other gets 401, and the session lives on', async () => {
    const user = await server.createUser();
    const answers = await Promise.all(Array.from({ length: 6 }, () => refresh(user.refreshToken)));
    const won = answers.filter((answer) => answer.status === 200);
    assert.equal(won.length, 1, 'exactly one concurrent refresh wins');
    assert.ok(answers.every((answer) => answer.status === 200 || answer.status === 401));
    assert.equal((await refresh(won[0]!.body.refreshToken)).status, 200, "the winner's token still works: a concurrent refresh is no replay");
  });

  test("a token two rotations old ends the session even seconds after its rotation (only the current token's predecessor has the grace)", async () => {
    const user = await server.createUser();
    const first = await refresh(user.refreshToken);
    const second = await refresh(first.body.refreshToken);
    // first.refreshToken is the predecessor of the live token: presented at once, it is a second tab, not a thief.
    assert.equal((await refresh(first.body.refreshToken)).status, 401);
    assert.equal((await refresh(second.body.refreshToken)).status, 200, 'the predecessor within the window ends nothing');
  });

  test('the grace is bound to the client: the predecessor from another User-Agent within the window ends the session (issue 39 #10)', async () => {
    const user = await server.createUser();
    const owner = await refresh(user.refreshToken, 'owner-browser');
    assert.equal(owner.status, 200);
    // A thief with a copy of the rotated token, seconds after the owner's refresh, from another client.
    assert.equal((await refresh(user.refreshToken, 'thief-script')).status, 401);
    assert.equal((await refresh(owner.body.refreshToken, 'owner-browser')).status, 401, "the owner's current token is revoked too");
    const warned = server.logs.map((line) => JSON.parse(line)).filter((line) => /used again after its rotation/.test(line.msg));
    assert.ok(warned.some((line) => line.userId === user.user.id));
  });
});
