// The test helpers on a busy machine (issue 56, item 6): a request on a pooled socket the server has just closed is
// sent again when it is idempotent, never when it is not; waits scale with the load instead of fixed budgets.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { fetchRetryingReset, isResetSocket, patience } from '../helpers/server.ts';

// A server that resets the connection on the first request to each path and answers every later one: what a request
// meets when it is sent on a pooled socket that the service is closing (its 5 s keep-alive ran out while the test
// process was busy elsewhere): "fetch failed", cause "read ECONNRESET" (shared/reviews/newcomer-and-box.md, section 3).
let server: http.Server;
let url: string;
const arrivals = new Map<string, number>();

before(async () => {
  server = http.createServer((request, response) => {
    const count = (arrivals.get(request.url!) ?? 0) + 1;
    arrivals.set(request.url!, count);
    if (count === 1) {
      (request.socket as Socket).resetAndDestroy();
      return;
    }
    request.resume();
    request.on('end', () => response.end('ok'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

const failure = (pending: Promise<unknown>) =>
  pending.then(
    () => undefined,
    (error: unknown) => error,
  );

test('a plain fetch meeting a reset socket fails (the harness problem the retry answers)', async () => {
  const failed = await failure(fetch(`${url}/plain`));
  assert.ok(failed, 'the request fails');
  assert.ok(isResetSocket(failed), `a reset socket: ${String((failed as { cause?: unknown }).cause)}`);
});

test('an idempotent request is sent again on a fresh connection and answers', async () => {
  for (const method of ['GET', 'PUT', 'DELETE']) {
    const answer = await fetchRetryingReset(`${url}/again-${method}`, { method });
    assert.equal(answer.status, 200, method);
    assert.equal(await answer.text(), 'ok');
    assert.equal(arrivals.get(`/again-${method}`), 2, `${method}: reset once, answered the second time`);
  }
});

test('a POST is never sent twice: the reset reaches the test', async () => {
  const failed = await failure(fetchRetryingReset(`${url}/post`, { method: 'POST', body: 'once' }));
  assert.ok(failed && isResetSocket(failed), 'the POST fails with the reset');
  assert.equal(arrivals.get('/post'), 1, 'the server saw the POST once');
});

test('patience: EMS_TEST_PATIENCE when set, else the load per core within 1 to 10', () => {
  const saved = process.env.EMS_TEST_PATIENCE;
  try {
    process.env.EMS_TEST_PATIENCE = '4';
    assert.equal(patience(), 4);
    delete process.env.EMS_TEST_PATIENCE;
    const scale = patience();
    assert.ok(scale >= 1 && scale <= 10, String(scale));
  } finally {
    if (saved === undefined) delete process.env.EMS_TEST_PATIENCE;
    else process.env.EMS_TEST_PATIENCE = saved;
  }
});
