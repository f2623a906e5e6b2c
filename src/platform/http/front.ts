// The front door: what every request goes through before a route or a page answers it, as one Koa middleware instead
// of seven (client address → request id → request log → request count → error rendering → security headers → CORS),
// then the public pages (staff app, wallboard, reference, /metrics, model files) only for a path outside /api/, and the
// API router for the rest. Each of the seven was an async function awaiting the next (a promise, a closure and a
// Koa getter or two each, on every request); together with the six page middlewares that an /api/ request only
// passed through they were ~17 % of a signed-in request's CPU (issue 44). What each step does and in which order is
// unchanged: the log and the count see the rendered status, an error answer carries the credential paths' no-store
// but not the headers set after the answer (as before), CORS runs inside the security headers. It also opens the
// request turn (the requests of one poll phase share one data_version read, src/platform/db/kept.ts), and writes the
// request line as text (src/platform/logger.ts lineWriter).
import { randomUUID } from 'node:crypto';
import type { Context, Middleware, Next } from 'koa';
import compose from 'koa-compose';
import { plainAddress } from '../config.ts';
import { requestTurn } from '../requestTurn.ts';
import { lineWriter, type Logger } from '../logger.ts';
import { DOCS_PATH } from './docs.ts';
import { knownHeader, setKnownHeader } from './knownHeaders.ts';
import type { AuthUser } from './route.ts';
import { clientIp, isThenable, renderError } from './router.ts';
import { round } from '../numbers.ts';

const REQUEST_ID = knownHeader('X-Request-Id', '00000000-0000-4000-8000-000000000000');
const NO_STORE = knownHeader('Cache-Control', 'no-store');
const NO_CACHE = knownHeader('Pragma', 'no-cache');
const NOSNIFF = knownHeader('X-Content-Type-Options', 'nosniff');
const NO_REFERRER = knownHeader('Referrer-Policy', 'no-referrer');
const FRAME_DENY = knownHeader('X-Frame-Options', 'DENY');

/** Answers that carry or exchange credentials: tokens, codes, the gateway token (RFC 6749 §5.1, RFC 9700). */
const CREDENTIAL_PATHS = /^\/api\/(auth\/|iot\/token$)/;
const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export type FrontDoorOptions = {
  /** EMS_TRUST_PROXY: peers whose X-Forwarded-For is believed. */
  trustProxy: string[];
  logger: Logger;
  /** Called when an answer is STORAGE_FULL (the storage watch notes it). */
  onStorageFull?: () => void;
  /** Counts the answered request (GET /metrics). */
  count?: (method: string, status: number) => void;
  /** EMS_PORTAL_ORIGIN: the dashboard origins CORS answers for. */
  portalOrigins: string[];
  /** Public pages and files, tried in order for a path outside /api/ (each calls next() for what is not its own). */
  pages: Middleware[];
  /** The API: the router and what answers an unmatched path (also reached by a path outside /api/ no page took). */
  api: Middleware[];
};

export function frontDoor(options: FrontDoorOptions): Middleware {
  const proxies = new Set(options.trustProxy);
  const allowed = new Set(options.portalOrigins);
  const onStorageFull = options.onStorageFull ?? (() => {});
  const count = options.count ?? (() => {});
  // The request line holds only the fields below (never a body, header or query string), so it skips the redaction
  // pass the service logger runs on every line, and pino's serialiser: it is built as text (requestMembers).
  const log = lineWriter(options.logger, 'request');
  const api = inOrder(options.api);
  const pages = compose([...options.pages, (ctx: Context) => api(ctx)]);
  /** A promise, or (an API route answered synchronously) a plain value. */
  const answer = (ctx: Context, path: string): unknown => (path.startsWith('/api/') ? api(ctx) : pages(ctx));

  /** CORS for the configured dashboard origins; false when the request was answered here (a preflight). */
  const cors = (ctx: Context): boolean => {
    // (ctx.get without Koa's delegation and switch: the same header, '' when absent.)
    const origin = ctx.req.headers.origin ?? '';
    if (origin === '' && !allowed.has('')) return true;
    const preflight = ctx.method === 'OPTIONS' && origin !== '' && ctx.get('Access-Control-Request-Method') !== '';
    if (!allowed.has(origin)) {
      if (!preflight) return true;
      // A preflight from any other origin gets a CORS answer too: 403 without Access-Control-Allow-Origin (the browser
      // then refuses the request), not the router's "405 OPTIONS is not allowed".
      ctx.vary('Origin');
      ctx.status = 403;
      ctx.body = { error: `CORS: the origin ${origin.slice(0, 200)} is not allowed (EMS_PORTAL_ORIGIN lists the dashboard's origins)`, code: 'FORBIDDEN' };
      return false;
    }
    ctx.set('Access-Control-Allow-Origin', origin);
    ctx.vary('Origin');
    if (preflight) {
      ctx.set('Access-Control-Allow-Methods', 'GET, POST, PUT, PATCH, DELETE');
      ctx.set('Access-Control-Allow-Headers', 'Authorization, Content-Type');
      ctx.set('Access-Control-Max-Age', '600');
      ctx.status = 204;
      return false;
    }
    ctx.set('Access-Control-Expose-Headers', 'Retry-After, X-Request-Id, Content-Disposition, ETag');
    return true;
  };

  return async (ctx: Context, _next: Next) => {
    // Requests of one poll phase share one data_version read per connection (src/platform/db/kept.ts).
    requestTurn();
    const res = ctx.res;
    // The client's address, once, for everything after it (limits, logs).
    ctx.request.ip = proxies.size === 0 ? plainAddress(ctx.req.socket.remoteAddress ?? '') : clientIp(ctx, proxies);
    const requestId = randomUUID();
    ctx.state.requestId = requestId;
    // (randomUUID: hex digits and dashes, nothing setHeader would refuse.)
    setKnownHeader(res, REQUEST_ID, requestId);
    const started = performance.now();
    // Read once here (Koa's ctx.path and ctx.method are getters behind a delegate each); nothing below rewrites them.
    const path = ctx.path;
    const method = ctx.req.method ?? '';
    try {
      try {
        // A shared cache or the browser's disk must never keep a token answer; set first so error answers carry it too.
        if (path.startsWith('/api/') && CREDENTIAL_PATHS.test(path)) {
          setKnownHeader(res, NO_STORE);
          setKnownHeader(res, NO_CACHE);
        }
        if (cors(ctx)) {
          // Awaited only when there is something to wait for: a kept page answered synchronously takes no promise turn.
          const answered = answer(ctx, path);
          if (isThenable(answered)) await answered;
        }
        // (Koa's ctx.set skips a sent head; so does this: a handler that wrote the response itself has sent it.)
        if (!res.headersSent) {
          setKnownHeader(res, NOSNIFF);
          setKnownHeader(res, NO_REFERRER);
          if (!path.startsWith(DOCS_PATH)) setKnownHeader(res, FRAME_DENY);
        }
      } catch (error) {
        renderError(ctx, error, options.logger, onStorageFull);
      }
    } finally {
      // (ctx.status is res.statusCode behind Koa's delegate.)
      const status = res.statusCode;
      count(method, status);
      // A write the service could not carry out is worth a warning (journalctl -p warning); a failed read is not.
      log(
        status >= 500 && !READ_METHODS.has(method) && ctx.state.readOnly !== true ? 'warn' : 'info',
        requestMembers(ctx, requestId, started, method, path, status),
      );
    }
  };
}

/**
 * Middleware run in order as koa-compose runs them (next() at most once each), except that what the first one returns
 * is handed back as it is: a route that answered synchronously needs no promise (koa-compose wraps every step in
 * Promise.resolve and binds a next function per step).
 */
export function inOrder(middleware: Middleware[]): (ctx: Context) => unknown {
  const run = (ctx: Context, i: number): unknown => {
    const step = middleware[i];
    if (step === undefined) return undefined;
    let called = false;
    return step(ctx, () => {
      if (called) return Promise.reject(new Error('next() called multiple times'));
      called = true;
      try {
        return Promise.resolve(run(ctx, i + 1));
      } catch (error) {
        return Promise.reject(error);
      }
    });
  };
  return (ctx) => run(ctx, 0);
}

/** JSON text of a string (method, route, path, address); the request id, a UUID, needs no escaping. */
const quoted = JSON.stringify;

/** The routes' patterns as JSON text: one of the route table's few hundred, quoted once each. */
const quotedRoutes = new Map<string, string>();
function quotedRoute(route: string): string {
  let text = quotedRoutes.get(route);
  if (text === undefined) {
    text = quoted(route);
    // Patterns come from the route table, but a bound costs nothing should something else ever set one.
    if (quotedRoutes.size < 1024) quotedRoutes.set(route, text);
  }
  return text;
}

/**
 * The request line's fields as JSON members: reqId, method, route (the matched pattern or null), path, status,
 * durationMs (to 0.01 ms), userId (or null) and ip (the client as trustProxy resolved it).
 */
export function requestMembers(ctx: Context, requestId: string, started: number, method: string, path: string, status: number): string {
  const durationMs = round(performance.now() - started, 2);
  const route = (ctx as { _matchedRoute?: string })._matchedRoute;
  const userId = (ctx.state.user as AuthUser | undefined)?.id;
  return `"reqId":"${requestId}","method":${quoted(method)},"route":${route === undefined ? 'null' : quotedRoute(route)},"path":${quoted(path)},"status":${status},"durationMs":${durationMs},"userId":${userId ?? 'null'},"ip":${quoted(ctx.request.ip)}`;
}
