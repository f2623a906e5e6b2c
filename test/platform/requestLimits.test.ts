// The request edge: 405 with Allow, 415 for a body of the wrong type, a deadline for JSON bodies, a cap on bodies one
// address may be sending at once, and client addresses read through listed reverse proxies only.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { MAX_PENDING_BODIES_PER_ADDRESS } from '../../src/platform/http/router.ts';

let server: TestServer;
let token: string;
before(async () => {
  server = await startTestServer({ EMS_BODY_TIMEOUT: '1s' });
  token = (await server.createUser({ role: 'operator' })).accessToken;
});
after(() => server.close());

/** Opens a connection and sends a POST whose body stops short: the socket stays open until the server acts. */
function slowBody(url: string, path: string): Promise<{ socket: net.Socket; closed: Promise<string> }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => {
      socket.write(`POST ${path} HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"user`);
      let received = '';
      socket.on('data', (chunk) => (received += chunk));
      const closed = new Promise<string>((done) => socket.on('close', () => done(received)));
      resolve({ socket, closed });
    });
    socket.on('error', reject);
  });
}

describe('methods and media types', () => {
  test('a public path with the wrong method is 405 with Allow, without a token', async () => {
    const response = await server.request('GET', '/api/auth/login');
    assert.equal(response.status, 405);
    assert.equal(response.headers.get('allow'), 'POST');
    assert.equal(response.body.code, 'METHOD_NOT_ALLOWED');
  });

  test('a protected path with the wrong method: 401 without a token, 405 with one', async () => {
    assert.equal((await server.request('DELETE', '/api/alerts')).status, 401);
    const response = await server.request('DELETE', '/api/alerts', { token });
    assert.equal(response.status, 405);
    assert.deepEqual(response.headers.get('allow')!.split(', ').sort(), ['GET', 'POST']);
  });

  test('an unknown path is still 404 with a token', async () => {
    assert.equal((await server.request('GET', '/api/nothing-here', { token })).status, 404);
  });

  test('a form body on a JSON route is 415', async () => {
    const response = await server.request('POST', '/api/auth/login', {
      raw: 'username=a&password=b',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    assert.equal(response.status, 415);
    assert.equal(response.body.code, 'UNSUPPORTED_MEDIA_TYPE');
  });
});

describe('slow bodies', () => {
  test('a JSON body that does not arrive within EMS_BODY_TIMEOUT is answered 408 and the connection closed', async () => {
    const { closed } = await slowBody(server.url, '/api/auth/login');
    const received = await closed;
    assert.match(received, /^HTTP\/1\.1 408/);
    assert.match(received, /REQUEST_TIMEOUT/);
  });

  test(`one address may be sending at most ${MAX_PENDING_BODIES_PER_ADDRESS} bodies at once; the next is 429 until they end`, async () => {
    const own = await startTestServer({ EMS_BODY_TIMEOUT: '60s' });
    try {
      const slow = await Promise.all(Array.from({ length: MAX_PENDING_BODIES_PER_ADDRESS }, () => slowBody(own.url, '/api/auth/login')));
      // The slow requests reach the server in their own time: ask until the cap answers (bounded).
      let capped;
      for (let i = 0; i < 100 && !capped; i += 1) {
        const response = await own.request('POST', '/api/auth/refresh', { body: { refreshToken: 'x' } });
        if (response.status === 429) capped = response;
        else await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.ok(capped, 'a request beyond the cap was refused');
      assert.equal(capped.body.code, 'RATE_LIMITED');
      for (const { socket } of slow) socket.destroy();
      await Promise.all(slow.map(({ closed }) => closed));
      let open;
      for (let i = 0; i < 100 && !open; i += 1) {
        const response = await own.request('POST', '/api/auth/refresh', { body: { refreshToken: 'x' } });
        if (response.status === 401) open = response;
        else await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.ok(open, 'once they ended, requests are read again');
    } finally {
      await own.close();
    }
  });
});

describe('EMS_TRUST_PROXY', () => {
  const sendCode = (target: TestServer, forwardedFor: string, n: number) =>
    target.request('POST', '/api/auth/register/send-code', {
      body: { email: `proxy-${forwardedFor.replace(/[^0-9]/g, '')}-${n}-${process.pid}@example.test` },
      headers: { 'x-forwarded-for': forwardedFor },
    });

  test('behind a listed proxy, per-address limits apply to each forwarded client', async () => {
    const own = await startTestServer({ EMS_TRUST_PROXY: '127.0.0.1,::1' });
    try {
      const first = await Promise.all(Array.from({ length: 25 }, (_, n) => sendCode(own, '10.0.0.1', n)));
      assert.equal(first.filter((r) => r.status === 200).length, 20);
      assert.equal((await sendCode(own, '10.0.0.2', 0)).status, 200, 'another client behind the same proxy is not locked out');
      // A client cannot pick its own address by prepending to the header: the proxy appends the real one.
      assert.equal((await sendCode(own, '10.0.0.9, 10.0.0.1', 99)).status, 429);
    } finally {
      await own.close();
    }
  });

  test('unset, X-Forwarded-For is ignored: the socket peer is the client', async () => {
    const own = await startTestServer();
    try {
      const responses = await Promise.all(Array.from({ length: 25 }, (_, n) => sendCode(own, `10.1.0.${n}`, n)));
      assert.equal(responses.filter((r) => r.status === 200).length, 20);
    } finally {
      await own.close();
    }
  });

  test('a bad address in EMS_TRUST_PROXY stops start-up with a line naming the variable', async () => {
    await assert.rejects(startTestServer({ EMS_TRUST_PROXY: '127.0.0.1,proxy.lan' }), /EMS_TRUST_PROXY: "proxy.lan" is not an IP address/);
  });
});
