// An answer arriving whole (headers and body in one read) past the deadline while the socket never sat idle for the
// timeout: the deadline runs from the call, the socket's idle timer from when it is connected or handed over, so a
// busy event loop (or a slow connect) between the two lets it happen; seen under bench:edge's sped-up clock.
// GatewayClient refuses it as a timeout and the process lives. It used to destroy the request with the error in the
// read that also completed the message: the keep-alive socket went back to the agent without its error listener
// before the error was emitted on it, and the unhandled 'error' ended the process.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { GatewayClient } from '../../src/gateway/client.ts';
import { GatewayTimeout } from '../../src/platform/errors.ts';

let server: net.Server;
let client: GatewayClient;

before(async () => {
  // Raw bytes: the whole answer (headers with the length, and the body) in one write, 80 ms after the request.
  server = net.createServer((socket) => {
    socket.on('data', () => {
      setTimeout(
        () => socket.write('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\nConnection: keep-alive\r\n\r\n{"data":[]}'),
        80,
      );
    });
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  client = new GatewayClient(`http://127.0.0.1:${(server.address() as net.AddressInfo).port}`, 120);
});

after(async () => {
  await client.close();
  await new Promise((resolve) => server.close(resolve));
});

test('a body arriving whole past the deadline is a timeout, again and again, and the process lives', async () => {
  for (let i = 0; i < 5; i += 1) {
    const exchange = client.exchange({ method: 'POST', path: '/codes/values', body: { codes: ['a'] } });
    // The event loop busy for 80 ms after the call: the deadline (120 ms from the call) passes before the answer
    // arrives (~160 ms), while the socket, handed over after the wait, has been idle only 80 ms.
    const busyUntil = performance.now() + 80;
    while (performance.now() < busyUntil);
    await assert.rejects(exchange, (error: unknown) => error instanceof GatewayTimeout, `exchange ${i + 1}`);
  }
  // An 'error' emitted on a socket without a listener would end the process within this wait.
  await new Promise((resolve) => setTimeout(resolve, 300));
});
