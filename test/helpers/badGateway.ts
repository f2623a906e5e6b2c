// A misbehaving IoT gateway for the energy-trust tests, over real HTTP: the test sets each point's value, timestamp and
// quality, the gateway's clock, the status it answers reads with, its history and its point catalogue.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type BadPoint = {
  value: number | null;
  /** The timestamp sent with the value; default: the gateway's clock. A string is sent as given (e.g. '9999-01-01T00:00:00Z'). */
  ts?: number | string;
  quality?: string;
};

export type BadGateway = {
  url: string;
  username: string;
  password: string;
  /** The gateway's own clock (ms); default: the real one. */
  now: () => number;
  points: Map<string, BadPoint>;
  /** codes/history readings per code (ms, value); filtered to the asked (start, end] like a real gateway. */
  history: Map<string, { at: number; value: number }[]>;
  /** The status every codes/values and codes/history read answers with, instead of 200 (e.g. 503). */
  readStatus: number | null;
  /** The status codes/history alone answers with, instead of 200 (a gateway whose history store is slow or down). */
  historyStatus: number | null;
  /** How long codes/history takes to answer (ms; default 0). */
  historyDelayMs: number;
  /** The most codes/history requests it had in hand at once. */
  maxHistoryInFlight: number;
  /** The status codes/set answers with instead of carrying out the write (e.g. 503: a gateway refusing writes). */
  writeStatus: number | null;
  /** With writeStatus: answered without a body and with `Connection: close`, as a Node server's own 408 is. */
  writeBare: boolean;
  /** GET /codes: the catalogue, or null for a gateway without one (404). */
  catalogue: { code: string; name: string; unit?: string; kind: string }[] | null;
  /** Requests per path. */
  counts: Map<string, number>;
  /** The request line (path and query string) of every request, in order. */
  requested: string[];
  /** The status every request after the token answers with, with an empty body (as a Node server's 431 has). */
  bareStatus: number | null;
  set(code: string, point: BadPoint): void;
  close(): Promise<void>;
};

export async function startBadGateway(): Promise<BadGateway> {
  const gateway: BadGateway = {
    url: '',
    username: 'svc',
    password: 'svc-secret',
    now: () => Date.now(),
    points: new Map(),
    history: new Map(),
    readStatus: null,
    historyStatus: null,
    writeStatus: null,
    writeBare: false,
    historyDelayMs: 0,
    maxHistoryInFlight: 0,
    catalogue: null,
    counts: new Map(),
    requested: [],
    bareStatus: null,
    set(code, point) {
      gateway.points.set(code, point);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  let historyInFlight = 0;
  const send = (res: http.ServerResponse, status: number, body: unknown) => {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = (req.url ?? '/').split('?')[0];
      gateway.counts.set(path, (gateway.counts.get(path) ?? 0) + 1);
      gateway.requested.push(req.url ?? '/');
      let body: Record<string, unknown> = {};
      try {
        body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : {};
      } catch {
        return send(res, 400, { error: 'bad json' });
      }
      if (path === '/auth/token') {
        if (body.username !== gateway.username || body.password !== gateway.password) return send(res, 401, { error: 'bad credentials' });
        return send(res, 200, { token: 'bad-gateway-token', expiresIn: 10 * 365 * 86_400 });
      }
      if (req.headers.authorization !== 'Bearer bad-gateway-token') return send(res, 401, { error: 'invalid token' });
      if (gateway.bareStatus !== null) {
        res.writeHead(gateway.bareStatus, { connection: 'close', 'content-length': 0 });
        return res.end();
      }
      if (path === '/alarms') return send(res, 200, { data: [], total: 0 });
      if (path === '/codes') return gateway.catalogue ? send(res, 200, { data: gateway.catalogue }) : send(res, 404, { error: 'no catalogue' });
      if ((path === '/codes/values' || path === '/codes/history') && gateway.readStatus !== null)
        return send(res, gateway.readStatus, { error: 'service unavailable' });
      if (path === '/codes/history' && gateway.historyStatus !== null) return send(res, gateway.historyStatus, { error: 'history unavailable' });
      if (path === '/codes/values') {
        const codes = Array.isArray(body.codes) ? (body.codes as string[]) : [];
        const data = codes
          .filter((code) => gateway.points.has(code))
          .map((code) => {
            const point = gateway.points.get(code)!;
            const ts = typeof point.ts === 'string' ? point.ts : new Date(point.ts ?? gateway.now()).toISOString();
            return { code, value: point.value, quality: point.quality ?? 'good', ts };
          });
        return send(res, 200, { data });
      }
      if (path === '/codes/set') {
        if (gateway.writeStatus !== null && gateway.writeBare) {
          res.writeHead(gateway.writeStatus, { connection: 'close', 'content-length': 0 });
          return res.end();
        }
        if (gateway.writeStatus !== null) return send(res, gateway.writeStatus, { error: 'write refused' });
        // A point written holds the value (and keeps its timestamp and quality settings), as on a real gateway.
        if (typeof body.code !== 'string' || typeof body.value !== 'number') return send(res, 400, { error: 'code and value required' });
        gateway.set(body.code, { ...(gateway.points.get(body.code) ?? {}), value: body.value });
        return send(res, 200, { success: true });
      }
      if (path === '/codes/history') {
        const start = Date.parse(String(body.start));
        const end = Date.parse(String(body.end));
        const rows = (gateway.history.get(String(body.code)) ?? []).filter((row) => row.at > start && row.at <= end);
        historyInFlight += 1;
        gateway.maxHistoryInFlight = Math.max(gateway.maxHistoryInFlight, historyInFlight);
        setTimeout(() => {
          historyInFlight -= 1;
          send(res, 200, { data: rows.map((row) => ({ ts: new Date(row.at).toISOString(), value: row.value })) });
        }, gateway.historyDelayMs);
        return;
      }
      send(res, 404, { error: 'no such endpoint' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  gateway.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return gateway;
}
