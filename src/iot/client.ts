// HTTP client for the upstream IoT gateway: one keep-alive undici Pool, a deadline per request, JSON in and out.
import { createRequire } from 'node:module';
import type { Dispatcher, Pool as UndiciPool } from 'undici';
import { BadGateway, GatewayTimeout } from '../http/errors.ts';

/**
 * Only undici's Pool and its request(), not the package's index: the index loads all of undici (fetch, WebSocket,
 * EventSource, the cache and mock agents; 144 modules) for the one class used here. Importing the service costs
 * 3.2 MiB less V8 heap and 4.3 MiB less RSS this way (issue 29, docs/performance-edge.md). The index attaches
 * request() to Dispatcher.prototype; here it is called on the pool. Both paths are undici 7's (package.json: ^7);
 * test/iot.test.ts and test/hardeningIot.test.ts go through them, test/memoryAtStart.test.ts keeps the index out.
 */
const require = createRequire(import.meta.url);
const Pool = require('undici/lib/dispatcher/pool.js') as typeof UndiciPool;
const poolRequest = require('undici/lib/api/api-request.js') as (this: Dispatcher, options: Dispatcher.RequestOptions) => Promise<Dispatcher.ResponseData>;

/** The gateway paths the service ever calls; anything else is refused before a byte leaves. */
export const GATEWAY_PATHS = [
  '/auth/token',
  '/codes',
  '/codes/values',
  '/codes/history',
  '/codes/set',
  '/codes/force-set',
  '/alarms',
  '/alarm-configs',
] as const;
export type GatewayPath = (typeof GATEWAY_PATHS)[number];
const ALLOWED = new Set<string>(GATEWAY_PATHS);

/** Upper bound on a gateway answer held in memory (a year of 5-minute history is ~6 MB). */
const MAX_ANSWER_BYTES = 32 * 1024 * 1024;
/** Concurrent connections to the gateway: enough for the dashboard, bounded for an embedded gateway. */
const MAX_CONNECTIONS = 64;

export type GatewayRequest = {
  method: 'GET' | 'POST';
  path: GatewayPath;
  /** Already-encoded query string, without the '?'. */
  query?: string;
  body?: unknown;
  token?: string;
};

/** The gateway's status and JSON body: `raw` is the bytes as received (relayed unchanged), `json` the parsed value. */
export type GatewayAnswer = { status: number; raw: Buffer; json: unknown };

/** Reachability as last seen by a request or a probe. */
export type Exchange = { ok: true } | { ok: false; error: 'unreachable' | 'timeout' | 'invalid answer' };

export class GatewayClient {
  readonly baseUrl: string;
  readonly origin: URL;
  private readonly prefix: string;
  private readonly pool: UndiciPool;

  constructor(
    baseUrl: string,
    private readonly timeoutMs: number,
    private readonly onExchange: (outcome: Exchange) => void = () => {},
  ) {
    const url = new URL(baseUrl);
    this.baseUrl = baseUrl;
    this.origin = url;
    this.prefix = url.pathname.replace(/\/+$/, '');
    this.pool = new Pool(url.origin, {
      connections: MAX_CONNECTIONS,
      pipelining: 1,
      connectTimeout: timeoutMs,
      // undici's own timers bound the wait for the headers and every pause in the body: far cheaper than an
      // AbortController per request (~30 µs measured); exchange() adds a deadline for a body that keeps trickling.
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      keepAliveTimeout: 30_000,
    });
  }

  /**
   * One HTTP exchange, never retried here (a write must not run twice).
   * Throws GatewayTimeout past EMS_IOT_TIMEOUT_MS, BadGateway when the gateway is unreachable,
   * drops the connection or answers something that is not JSON.
   */
  async exchange(request: GatewayRequest): Promise<GatewayAnswer> {
    if (!ALLOWED.has(request.path)) throw new Error(`not a gateway path: ${request.path}`);
    // The query string is the client's, already validated; it can never change the path.
    const path = request.query ? `${this.prefix}${request.path}?${request.query}` : this.prefix + request.path;
    const headers: Record<string, string> = { accept: 'application/json' };
    let body: string | undefined;
    if (request.body !== undefined) {
      body = JSON.stringify(request.body);
      headers['content-type'] = 'application/json';
    }
    if (request.token) headers.authorization = `Bearer ${request.token}`;

    const deadline = Date.now() + this.timeoutMs;
    try {
      const response = await poolRequest.call(this.pool, { method: request.method, path, headers, body });
      const raw = await readAnswer(response.body, response.headers['content-length'], deadline);
      let json: unknown;
      try {
        json = raw.length === 0 && response.statusCode === 204 ? null : JSON.parse(raw.toString('utf8'));
      } catch {
        this.onExchange({ ok: false, error: 'invalid answer' });
        throw new BadGateway('IoT gateway answered with invalid JSON');
      }
      this.onExchange({ ok: true });
      return { status: response.statusCode, raw, json };
    } catch (error) {
      if (error instanceof BadGateway) throw error;
      const code = (error as { code?: string }).code;
      if (code === PAST_DEADLINE || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') {
        this.onExchange({ ok: false, error: 'timeout' });
        throw new GatewayTimeout(`IoT gateway did not answer within ${this.timeoutMs} ms`);
      }
      if (code === TOO_LARGE) {
        this.onExchange({ ok: false, error: 'invalid answer' });
        throw new BadGateway('IoT gateway answer is too large');
      }
      this.onExchange({ ok: false, error: 'unreachable' });
      throw new BadGateway('IoT gateway unreachable');
    }
  }

  /** Closes idle connections; requests still running get a second to finish. */
  async close(): Promise<void> {
    const closing = this.pool.close();
    const timer = setTimeout(() => void this.pool.destroy().catch(() => {}), 1000);
    await closing.catch(() => {});
    clearTimeout(timer);
  }
}

const TOO_LARGE = 'EMS_GATEWAY_ANSWER_TOO_LARGE';
const PAST_DEADLINE = 'EMS_GATEWAY_PAST_DEADLINE';

function failure(code: string): Error {
  return Object.assign(new Error(code), { code });
}

/** The whole body, refusing one past MAX_ANSWER_BYTES or still arriving past the deadline. */
function readAnswer(body: Dispatcher.ResponseData['body'], contentLength: string | string[] | undefined, deadline: number): Promise<Buffer> {
  const declared = typeof contentLength === 'string' ? Number(contentLength) : NaN;
  if (declared > MAX_ANSWER_BYTES) {
    body.destroy();
    return Promise.reject(failure(TOO_LARGE));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    body.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_ANSWER_BYTES || Date.now() > deadline) {
        body.destroy();
        reject(failure(size > MAX_ANSWER_BYTES ? TOO_LARGE : PAST_DEADLINE));
        return;
      }
      chunks.push(chunk);
    });
    body.once('end', () => resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size)));
    body.once('error', reject);
  });
}
