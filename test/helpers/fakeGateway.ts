// A scripted IoT gateway for the proxy tests: issues and expires tokens, records every request, and can answer 401, hang, die or send garbage.
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type RecordedRequest = { method: string; path: string; query: string; headers: http.IncomingHttpHeaders; body: unknown; token: string | null };

/**
 * What a gateway path does instead of its default answer:
 * 'unauthorized' (401 whatever the token), 'hang' (never answers), 'garbage' (200 with broken JSON),
 * 'die' (headers and half a body, then the connection is cut), or a function writing its own answer.
 */
export type Behaviour = 'unauthorized' | 'hang' | 'garbage' | 'die' | ((request: RecordedRequest, res: http.ServerResponse) => void);

export type FakeGateway = {
  url: string;
  username: string;
  password: string;
  /** Every request, token requests included, in arrival order. */
  requests: RecordedRequest[];
  /** Requests to one path. */
  calls(path: string): RecordedRequest[];
  tokenRequests(): number;
  /** Writes the gateway carried out (valid token, default answer). */
  executedWrites: RecordedRequest[];
  /** Lifetime of the tokens it issues from now on. */
  expiresIn: number;
  /** Every token issued so far stops working, as after a gateway restart. */
  revokeTokens(): void;
  /** From now on `path` behaves as told: for the next `times` requests, or for good. */
  script(path: string, behaviour: Behaviour, times?: number): void;
  /** Resolves once `count` requests to `path` have arrived. */
  waitForCalls(path: string, count: number): Promise<void>;
  /** The gateway dies: the port stops listening and open connections are cut. */
  kill(): Promise<void>;
  close(): Promise<void>;
};

export const FIXED_TS = '2024-05-01T12:00:00.000Z';

function json(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function defaultAnswer(request: RecordedRequest, res: http.ServerResponse, gateway: FakeGateway): void {
  const body = (request.body ?? {}) as Record<string, unknown>;
  switch (request.path) {
    case '/codes/values': {
      const codes = request.method === 'POST' ? (body.codes as string[]) : new URLSearchParams(request.query).getAll('codes');
      // `vendor` is not in the documented contract: the proxy must relay it anyway.
      return json(res, 200, { data: codes.map((code) => ({ code, value: 42.5, quality: 'good', ts: FIXED_TS })), vendor: 'fake-gateway' });
    }
    case '/codes/history':
      return json(res, 200, {
        data: [
          { ts: FIXED_TS, value: 1 },
          { ts: '2024-05-01T12:05:00.000Z', value: 2 },
        ],
      });
    case '/codes/set':
    case '/codes/force-set':
      gateway.executedWrites.push(request);
      return json(res, 200, { success: true });
    case '/alarms':
      return json(res, 200, { data: [], total: 0, receivedQuery: request.query });
    case '/alarm-configs':
      return json(res, 200, { data: [{ id: 1, code: 'temp.zone1', condition: 'above', threshold: 26, level: 'warning', enabled: true, message: 'too warm' }] });
    default:
      return json(res, 404, { error: 'no such endpoint' });
  }
}

export async function startFakeGateway(options: { username?: string; password?: string; expiresIn?: number; port?: number } = {}): Promise<FakeGateway> {
  const tokens = new Map<string, number>();
  const scripts = new Map<string, { behaviour: Behaviour; remaining: number }>();
  const sockets = new Set<Socket>();
  const waiters: Array<{ path: string; count: number; resolve: () => void }> = [];
  let issued = 0;

  const gateway: FakeGateway = {
    url: '',
    username: options.username ?? 'svc',
    password: options.password ?? 'svc-secret',
    requests: [],
    calls: (path) => gateway.requests.filter((request) => request.path === path),
    tokenRequests: () => gateway.calls('/auth/token').length,
    executedWrites: [],
    expiresIn: options.expiresIn ?? 3600,
    revokeTokens: () => tokens.clear(),
    script(path, behaviour, times = Infinity) {
      scripts.set(path, { behaviour, remaining: times });
    },
    waitForCalls(path, count) {
      if (gateway.calls(path).length >= count) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ path, count, resolve }));
    },
    async kill() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
    },
    close: () => gateway.kill(),
  };

  function scripted(path: string): Behaviour | undefined {
    const entry = scripts.get(path);
    if (!entry) return undefined;
    entry.remaining -= 1;
    if (entry.remaining <= 0) scripts.delete(path);
    return entry.behaviour;
  }

  function answer(request: RecordedRequest, res: http.ServerResponse): void {
    const behaviour = scripted(request.path);
    if (behaviour === 'unauthorized') return json(res, 401, { error: 'token rejected' });
    if (behaviour === 'hang') return;
    if (behaviour === 'garbage') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"data": [tru');
      return;
    }
    if (behaviour === 'die') {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      res.write('{"data": [');
      setImmediate(() => res.socket?.destroy());
      return;
    }
    if (typeof behaviour === 'function') return behaviour(request, res);

    if (request.path === '/auth/token') {
      const body = request.body as { username?: string; password?: string };
      if (body?.username !== gateway.username || body?.password !== gateway.password) return json(res, 401, { error: 'bad credentials' });
      issued += 1;
      const token = `tok-${issued}`;
      tokens.set(token, Date.now() + gateway.expiresIn * 1000);
      return json(res, 200, { token, expiresIn: gateway.expiresIn });
    }
    const expiresAt = request.token ? tokens.get(request.token) : undefined;
    if (expiresAt === undefined || expiresAt <= Date.now()) return json(res, 401, { error: 'invalid or expired token' });
    defaultAnswer(request, res, gateway);
  }

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = req.url ?? '/';
      const q = url.indexOf('?');
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        body = text;
      }
      const auth = req.headers.authorization;
      const request: RecordedRequest = {
        method: req.method ?? 'GET',
        path: q === -1 ? url : url.slice(0, q),
        query: q === -1 ? '' : url.slice(q + 1),
        headers: req.headers,
        body,
        token: auth?.startsWith('Bearer ') ? auth.slice(7) : null,
      };
      gateway.requests.push(request);
      for (const waiter of [...waiters]) {
        if (gateway.calls(waiter.path).length >= waiter.count) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve();
        }
      }
      answer(request, res);
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  gateway.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return gateway;
}
