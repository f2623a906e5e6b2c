// HTTP client for the upstream IoT gateway: one keep-alive agent of node:http, a deadline per request, JSON in and out.
import http from 'node:http';
import https from 'node:https';
import { performance } from 'node:perf_hooks';
import { BadGateway, GatewayTimeout } from '../platform/errors.ts';

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
/** An idle kept-alive connection is closed after this (sooner when the gateway's Keep-Alive header says so). */
const KEEP_ALIVE_MS = 30_000;

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

/**
 * node:http, not undici: undici parses HTTP with llhttp compiled to WebAssembly, and V8 compiled it with TurboFan on its
 * worker threads at the first gateway call, a 37 MiB peak of compiler memory that malloc then kept (heaptrack, issue
 * 29: the freed memory malloc holds is the whole run-to-run spread of idle RSS). node:http's parser is the same llhttp,
 * built into node. The agent keeps up to MAX_CONNECTIONS connections alive and drops an idle one before the gateway's
 * Keep-Alive timeout (node's agent reads the hint; 30 s without one).
 */
export class GatewayClient {
  readonly baseUrl: string;
  readonly origin: URL;
  private readonly prefix: string;
  /** The host to connect to (an IPv6 address without its URL brackets). */
  private readonly hostname: string;
  private readonly transport: typeof http | typeof https;
  private readonly agent: http.Agent;
  /** Exchanges under way, for close(). */
  private readonly running = new Set<Promise<unknown>>();

  constructor(
    baseUrl: string,
    private readonly timeoutMs: number,
    private readonly onExchange: (outcome: Exchange) => void = () => {},
  ) {
    const url = new URL(baseUrl);
    this.baseUrl = baseUrl;
    this.origin = url;
    this.prefix = url.pathname.replace(/\/+$/, '');
    this.hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
    this.transport = url.protocol === 'https:' ? https : http;
    this.agent = new this.transport.Agent({ keepAlive: true, maxSockets: MAX_CONNECTIONS, timeout: KEEP_ALIVE_MS });
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
    const headers: Record<string, string | number> = { accept: 'application/json' };
    let body: string | undefined;
    if (request.body !== undefined) {
      body = JSON.stringify(request.body);
      headers['content-type'] = 'application/json';
      headers['content-length'] = Buffer.byteLength(body);
    }
    if (request.token) headers.authorization = `Bearer ${request.token}`;

    const sent = this.send(request.method, path, headers, body);
    this.running.add(sent);
    try {
      const { status, raw } = await sent;
      let json: unknown;
      try {
        json = raw.length === 0 && status === 204 ? null : JSON.parse(raw.toString('utf8'));
      } catch {
        // A refusal without a JSON body (a 431 from a Node-based gateway has none) is the gateway answering, not failing:
        // handed on as it is, and the gateway stays reachable in /api/health.
        if (status >= 400 && status < 500) {
          this.onExchange({ ok: true });
          return { status, raw, json: null };
        }
        this.onExchange({ ok: false, error: 'invalid answer' });
        throw new BadGateway('IoT gateway answered with invalid JSON');
      }
      this.onExchange({ ok: true });
      return { status, raw, json };
    } catch (error) {
      if (error instanceof BadGateway) throw error;
      const code = (error as { code?: string }).code;
      if (code === PAST_DEADLINE) {
        this.onExchange({ ok: false, error: 'timeout' });
        throw new GatewayTimeout(`IoT gateway did not answer within ${this.timeoutMs} ms`);
      }
      if (code === TOO_LARGE) {
        this.onExchange({ ok: false, error: 'invalid answer' });
        throw new BadGateway('IoT gateway answer is too large');
      }
      this.onExchange({ ok: false, error: 'unreachable' });
      throw new BadGateway('IoT gateway unreachable');
    } finally {
      this.running.delete(sent);
    }
  }

  /**
   * The status and whole body. The socket's idle timeout (the request's `timeout`) bounds the connect, the wait for
   * the headers and every pause in the body; the deadline, checked on each chunk, a body that keeps trickling.
   */
  private send(method: string, path: string, headers: Record<string, string | number>, body: string | undefined): Promise<{ status: number; raw: Buffer }> {
    // On the monotonic clock, as the socket's timeout: a wall clock stepped (or sped up by libfaketime) does not cut it short.
    const deadline = performance.now() + this.timeoutMs;
    return new Promise((resolve, reject) => {
      let failed: Error | undefined;
      // The reason is given to the promise, never to the socket: destroyed with an error in the read that also
      // completes the message, a keep-alive socket goes back to the agent without its error listener before the error
      // is emitted on it, and an unhandled 'error' ends the process (test/gateway/clientDeadline.test.ts).
      const fail = (error: Error) => {
        if (failed) return;
        failed = error;
        reject(error);
        request.destroy();
      };
      const request = this.transport.request(
        { agent: this.agent, hostname: this.hostname, port: this.origin.port || undefined, method, path, headers, timeout: this.timeoutMs },
        (response) => {
          const declared = Number(response.headers['content-length']);
          if (declared > MAX_ANSWER_BYTES) return fail(failure(TOO_LARGE));
          const chunks: Buffer[] = [];
          let size = 0;
          response.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_ANSWER_BYTES) return fail(failure(TOO_LARGE));
            if (performance.now() > deadline) return fail(failure(PAST_DEADLINE));
            chunks.push(chunk);
          });
          response.once('end', () => resolve({ status: response.statusCode ?? 0, raw: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size) }));
          // A cut connection, or this side's fail(): the first reason given wins.
          response.on('error', (error) => reject(failed ?? error));
        },
      );
      request.once('timeout', () => fail(failure(PAST_DEADLINE)));
      request.on('error', (error) => reject(failed ?? error));
      request.end(body);
    });
  }

  /** Closes idle connections; requests still running get a second to finish. */
  async close(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.allSettled([...this.running]), new Promise((resolve) => (timer = setTimeout(resolve, 1000)))]);
    clearTimeout(timer);
    this.agent.destroy();
  }
}

const TOO_LARGE = 'EMS_GATEWAY_ANSWER_TOO_LARGE';
const PAST_DEADLINE = 'EMS_GATEWAY_PAST_DEADLINE';

function failure(code: string): Error {
  return Object.assign(new Error(code), { code });
}
