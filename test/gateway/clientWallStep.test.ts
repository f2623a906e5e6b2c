// The gateway client's deadline runs on the monotonic clock, as its socket time-out does (issue 56): a wall clock that
// steps forward while a call is under way (NTP, an operator) does not cut the call short, and under
// the soak's sped-up wall clock (its monotonic clock left real) the time-out does not shrink to milliseconds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { GatewayClient } from '../../src/gateway/client.ts';

test('the wall clock stepping 1 h forward during a call: the answer arriving 100 ms later is taken, not a time-out', async (t) => {
  // Raw bytes: the headers at once, the body 100 ms later (the deadline is checked on each chunk of the body).
  const server = net.createServer((socket) => {
    socket.on('data', () => {
      socket.write('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\nConnection: close\r\n\r\n');
      setTimeout(() => socket.end('{"data":[]}'), 100);
    });
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const client = new GatewayClient(`http://127.0.0.1:${(server.address() as net.AddressInfo).port}`, 5_000);
  t.after(async () => {
    await client.close();
    await new Promise((resolve) => server.close(resolve));
  });
  const realNow = Date.now;
  const call = client.exchange({ method: 'POST', path: '/codes/values', body: { codes: [] } });
  // The step, once the call is on its way.
  Date.now = () => realNow() + 3_600_000;
  t.after(() => {
    Date.now = realNow;
  });
  const answer = await call;
  Date.now = realNow;
  assert.equal(answer.status, 200);
  assert.deepEqual(answer.json, { data: [] });
});
