// Turns route definitions into Koa middleware chains: auth → role → body → validate → handler → response schema.
import { isIP } from 'node:net';
import Router from '@koa/router';
import type { KoaBodyMiddlewareOptions } from 'koa-body';
import type { Context, Middleware, Next } from 'koa';
import {
  AppError,
  BadRequest,
  codeForStatus,
  ERROR_CODES,
  Forbidden,
  MethodNotAllowed,
  NotFound,
  ResponseSchemaError,
  TooManyRequests,
  UnsupportedMediaType,
  type ErrorCode,
  type ErrorDetail,
} from '../errors.ts';
import { plainAddress } from '../config.ts';
import { Reply, roleAtLeast, successStatus, type AnyRoute, type AuthUser } from './route.ts';
import { leanJsonBody } from './jsonBody.ts';
import { knownHeader, setKnownHeader } from './knownHeaders.ts';
import { compileBody, compileParams, compileResponse, type Validator } from './validation.ts';
import type { Logger } from '../logger.ts';
import { retryWhileBusy } from '../busyRetry.ts';

export const JSON_BODY_LIMIT = '1mb';
const JSON_BODY_LIMIT_BYTES = 1024 * 1024;

export type Authenticator = {
  /** The user behind the request's bearer token; throws Unauthorized when there is none or it is invalid. */
  authenticate(ctx: Context): AuthUser;
};

/**
 * koa-body stays for form routes (provider callbacks), loaded on the first such body:
 * with co-body, raw-body, iconv-lite, formidable and zod it is ~6 MiB of resident memory most appliances never use.
 */
function lazyKoaBody(options: Partial<KoaBodyMiddlewareOptions>): Middleware {
  let parser: Promise<Middleware> | undefined;
  return async (ctx, next) => {
    parser ??= import('koa-body').then(({ koaBody }) => koaBody(options) as Middleware);
    return (await parser)(ctx, next);
  };
}

const jsonBody = leanJsonBody(JSON_BODY_LIMIT_BYTES);
const koaFormBody = lazyKoaBody({ json: true, urlencoded: true, text: false, multipart: false, jsonLimit: JSON_BODY_LIMIT, formLimit: '64kb' });
/** Provider callbacks post small forms uncompressed: a compressed one is refused (415) before koa-body could fail on it. */
const formBody: Middleware = async (ctx, next) => {
  const encoding = (ctx.get('content-encoding') || 'identity').trim().toLowerCase();
  if (encoding !== 'identity') throw new UnsupportedMediaType('Send the form uncompressed (no Content-Encoding)');
  return koaFormBody(ctx, next);
};

/** Bodies one client address may be sending at once (JSON and form routes): slow senders cannot pile up connections. */
export const MAX_PENDING_BODIES_PER_ADDRESS = 64;

export type BodyLimits = { timeoutMs: number; pendingPerAddress: number };

/**
 * Reads a JSON (or form) body under two limits the 15-minute upload timeout must not lend to every route: the body has
 * `timeoutMs` to arrive (then 408 and the connection is closed), and one address may have at most `pendingPerAddress`
 * bodies on their way at once (429). A body of another type is 415, not an empty object that fails validation.
 */
function boundedBody(parse: Middleware, accepts: string[], limits: BodyLimits, pending: Map<string, number>): Middleware {
  return async (ctx, next) => {
    // An empty body (Content-Length: 0, as fetch sends for a bare POST) has no type to refuse.
    const hasContent = Number(ctx.get('content-length') || 0) > 0 || ctx.get('transfer-encoding') !== '';
    if (hasContent && ctx.request.is(...accepts) === false) {
      throw new UnsupportedMediaType(`Send the body as ${accepts.includes('urlencoded') ? 'JSON or a form' : 'JSON'} (Content-Type: application/json)`);
    }
    const address = ctx.ip;
    const count = pending.get(address) ?? 0;
    if (count >= limits.pendingPerAddress) throw new TooManyRequests('Too many unfinished requests from this address', 1);
    pending.set(address, count + 1);
    const timer = setTimeout(() => {
      if (ctx.res.headersSent) return ctx.req.destroy();
      ctx.res.writeHead(408, { 'Content-Type': 'application/json; charset=utf-8', Connection: 'close' });
      ctx.res.end(JSON.stringify({ error: 'The request body did not arrive in time', code: 'REQUEST_TIMEOUT' }));
      ctx.req.destroy();
    }, limits.timeoutMs);
    try {
      await parse(ctx, async () => {});
    } finally {
      clearTimeout(timer);
      const left = (pending.get(address) ?? 1) - 1;
      if (left <= 0) pending.delete(address);
      else pending.set(address, left);
    }
    await next();
  };
}

function copyOf(value: unknown): Record<string, unknown> {
  return value && typeof value === 'object' ? { ...(value as Record<string, unknown>) } : {};
}

function validated(validator: Validator | undefined, value: unknown, where: string): unknown {
  if (!validator) return {};
  const errors = validator(value);
  if (errors)
    throw new BadRequest(
      `Invalid ${where}`,
      errors.map((detail) => ({ ...detail, path: detail.path === '(root)' ? where : `${where}.${detail.path}` })),
    );
  return value;
}

/** Query strings whose validated value a route keeps, and the longest kept. */
const QUERIES_KEPT = 64;
const QUERY_KEPT_MAX_LENGTH = 512;

/** A copy the handler may change: the object and its arrays (the values are strings, numbers and booleans). */
function queryCopy(value: Record<string, unknown>): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const key in value) {
    const item = value[key];
    copy[key] = Array.isArray(item) ? item.slice() : item;
  }
  return copy;
}

/**
 * The route's query, validated (coerced, defaults filled, unknown fields dropped). What that gives depends on the
 * query string alone, so the value of each recent string is kept per route: a list read page after page sends the same
 * few, and parsing the string (Koa's URLSearchParams) and validating it again was ~6 % of an alerts page's CPU. A
 * refused query is not kept (it throws again, as it did).
 */
function validatedQuery(ctx: Context, validator: Validator, kept: Map<string, Record<string, unknown>>): Record<string, unknown> {
  const text = ctx.querystring;
  const found = kept.get(text);
  if (found) return queryCopy(found);
  const value = validated(validator, copyOf(ctx.query), 'query') as Record<string, unknown>;
  if (text.length <= QUERY_KEPT_MAX_LENGTH) {
    if (kept.size >= QUERIES_KEPT) kept.delete(kept.keys().next().value!);
    kept.set(text, queryCopy(value));
  }
  return value;
}

function routeChain(route: AnyRoute, auth: Authenticator, logger: Logger, bodies: { json: Middleware; form: Middleware }): Middleware[] {
  const params = route.schemas.params ? compileParams(route.schemas.params) : undefined;
  const query = route.schemas.query ? compileParams(route.schemas.query) : undefined;
  const body = route.schemas.body ? compileBody(route.schemas.body) : undefined;
  const responses = new Map<number, Validator>(Object.entries(route.schemas.response).map(([status, schema]) => [Number(status), compileResponse(schema)]));
  const defaultStatus = successStatus(route);
  const bodyType = route.bodyType ?? (route.schemas.body ? 'json' : undefined);
  /**
   * For reusesBody routes: the objects answered (while someone still holds them) and their validated JSON, as the
   * bytes sent: Koa then takes the length from the buffer instead of measuring the text, and Node writes it as it is
   * instead of encoding it again for every answer (an alerts page is ~10 KB).
   */
  const reused = new WeakMap<object, Buffer>();
  /** The route's validated queries by their text (see validatedQuery). */
  const queries = new Map<string, Record<string, unknown>>();

  const admit = (ctx: Context) => {
    if (route.readOnly) ctx.state.readOnly = true;
    if (route.access !== 'public') {
      const user = auth.authenticate(ctx);
      ctx.state.user = user;
      if (!roleAtLeast(user.role, route.access)) throw new Forbidden();
    }
  };

  // Not an async function: a handler that answers synchronously (every read of a kept page) is answered in the same
  // run, without the two promise turns an await of a plain value and the async function's own promise cost.
  const answer = (ctx: Context): void | Promise<void> => {
    const request = {
      // Only what the route declares is read (a route without a query schema gets {} and Koa never parses the query).
      params: params ? validated(params, copyOf(ctx.params), 'params') : {},
      query: query ? validatedQuery(ctx, query, queries) : {},
      body: bodyType === 'multipart' ? {} : validated(body, ctx.request.body ?? {}, 'body'),
      user: (ctx.state.user as AuthUser | undefined) ?? null,
      requestId: ctx.state.requestId as string,
      ctx,
    };
    // A write that meets another process's lock is tried again with the event loop free (db/client.ts), not waited for
    // inside the statement; a streamed (multipart or raw) body cannot be read twice.
    const result =
      READ_METHODS.has(route.method) || bodyType === 'multipart' || route.rawBody
        ? route.handler(request as never)
        : retryWhileBusy(() => route.handler(request as never));
    if (isThenable(result)) return Promise.resolve(result).then((value) => send(ctx, value));
    send(ctx, result);
  };

  const send = (ctx: Context, result: unknown): void => {
    if (route.raw) return;

    // A plain value is the default status without headers (no Reply made for it).
    const replied = result instanceof Reply;
    const reply = replied ? result : { status: defaultStatus, body: result, headers: NO_HEADERS };
    const reusedJson =
      route.reusesBody && reply.status === defaultStatus && typeof reply.body === 'object' && reply.body !== null ? reused.get(reply.body) : undefined;
    if (reusedJson !== undefined && (!replied || Object.keys(reply.headers).length === 0)) {
      ctx.status = reply.status;
      // Set before the body: Koa would otherwise type a buffer application/octet-stream.
      setKnownHeader(ctx.res, JSON_CONTENT_TYPE);
      ctx.body = reusedJson;
      return;
    }
    const validator = responses.get(reply.status);
    if (!validator) {
      logger.error({ route: `${route.method} ${route.path}`, status: reply.status }, 'handler answered with a status that has no response schema');
      throw new Error('undeclared response status');
    }
    const errors = validator(reply.body);
    if (errors) {
      // The request passed its schema and the handler ran (a write is committed by now): a response that fails its own
      // schema is the server's fault, never the client's. 500 INTERNAL without detail; the log names the route and fields.
      logger.error({ route: `${route.method} ${route.path}`, status: reply.status, details: errors }, 'response failed its schema');
      throw new ResponseSchemaError();
    }
    if (replied) for (const [name, value] of Object.entries(reply.headers)) ctx.set(name, value);
    ctx.status = reply.status;
    ctx.body = reply.status === 204 ? null : reply.body;
    if (route.reusesBody && reply.status === defaultStatus && typeof reply.body === 'object' && reply.body !== null) {
      const json = Buffer.from(JSON.stringify(reply.body));
      reused.set(reply.body, json);
      setKnownHeader(ctx.res, JSON_CONTENT_TYPE);
      ctx.body = json;
    }
  };

  // A route without a body to read is one middleware (auth, then the handler); one with a body reads it in between.
  if (bodyType !== 'json' && bodyType !== 'form') {
    return [
      (ctx: Context) => {
        admit(ctx);
        return answer(ctx);
      },
    ];
  }
  return [
    (ctx: Context, next: Next) => {
      admit(ctx);
      return next();
    },
    bodyType === 'json' ? bodies.json : bodies.form,
    answer,
  ];
}

export function buildRouter(routes: AnyRoute[], auth: Authenticator, logger: Logger, limits: BodyLimits): Router {
  const router = new Router({ sensitive: true });
  const pending = new Map<string, number>();
  const bodies = {
    json: boundedBody(jsonBody, ['json', '+json'], limits, pending),
    form: boundedBody(formBody, ['json', '+json', 'urlencoded'], limits, pending),
  };
  const seen = new Set<string>();
  for (const route of routes) {
    const key = `${route.method} ${route.path}`;
    if (seen.has(key)) throw new Error(`route declared twice: ${key}`);
    seen.add(key);
    router.register(route.path, [route.method], routeChain(route, auth, logger, bodies), { name: key });
  }
  return router;
}

/**
 * The router as the app's middleware, with a path without parameters that no other route matches found by one Map
 * lookup: @koa/router tests every route's pattern in turn (~200) and composes the matched chain anew per request,
 * ~6 % of a signed-in request's CPU at 2,000 meters (a V8 profile of /api/auth/me at 50 connections). Everything
 * else (parameters, a trailing slash, a method the path lacks) goes through @koa/router as before, and the context
 * carries what @koa/router sets (the matched route for the request log and metrics, empty params).
 */
export function routeDispatch(router: Router): Middleware {
  const dispatch = router.routes() as unknown as Middleware;
  /** By method, then path: no key string is built per request. */
  const direct = new Map<string, Map<string, { path: string; name: string | undefined; matched: unknown[]; chain: Middleware[] }>>();
  for (const layer of router.stack) {
    if (layer.paramNames.length > 0 || typeof layer.path !== 'string' || /[:*(?]/.test(layer.path)) continue;
    for (const method of layer.methods) {
      const found = router.match(layer.path, method);
      // Only where @koa/router would run this layer alone (an earlier route's pattern could match the path too).
      if (found.pathAndMethod.length !== 1 || found.pathAndMethod[0] !== layer) continue;
      if (!direct.has(method)) direct.set(method, new Map());
      direct.get(method)!.set(layer.path, {
        path: layer.path,
        name: layer.name ?? undefined,
        matched: found.path,
        chain: layer.stack as unknown as Middleware[],
      });
    }
  }
  return (ctx, next) => {
    const route = direct.get(ctx.method)?.get(ctx.path);
    if (!route) return dispatch(ctx, next);
    const routed = ctx as Context & Record<string, unknown>;
    routed.router = router;
    routed.matched = route.matched;
    routed.routeMatched = true;
    routed.captures = [];
    const params = {};
    routed.params = params;
    (ctx.request as unknown as { params: object }).params = params;
    routed.routerPath = route.path;
    routed.routerName = route.name;
    routed._matchedRoute = route.path;
    if (route.name) routed._matchedRouteName = route.name;
    if (route.chain.length === 1) return route.chain[0](ctx, next);
    const step = (i: number): Promise<unknown> => (i === route.chain.length ? next() : Promise.resolve(route.chain[i](ctx, () => step(i + 1))));
    return step(0);
  };
}

/**
 * Runs after the router: a path no route matched is 401 without a valid token and 404 with one. A path that exists
 * with other methods is 405 with Allow — after the same token check, unless every route on that path is public.
 */
export function unmatchedRoute(auth: Authenticator, router: Router, routes: AnyRoute[]): Middleware {
  const accessOf = new Map(routes.map((route) => [`${route.method} ${route.path}`, route.access]));
  const publicWithEmptyParameter = (path: string, method: string): boolean => {
    const segments = path.split('/');
    if (!segments.slice(1, -1).includes('')) return false;
    const filled = segments.map((segment, i) => (segment === '' && i > 0 && i < segments.length - 1 ? '_' : segment)).join('/');
    const layers = router.match(filled, method).pathAndMethod.filter((layer) => layer.methods.length > 0);
    return layers.length > 0 && layers.every((layer) => accessOf.get(`${method} ${layer.path}`) === 'public');
  };
  return async (ctx) => {
    if (ctx.body !== undefined || ctx.status !== 404) return;
    const layers = router.match(ctx.path, ctx.method).path.filter((layer) => layer.methods.length > 0);
    const allowed = [...new Set(layers.flatMap((layer) => layer.methods.filter((method) => method !== 'HEAD')))];
    const allPublic = layers.every((layer) => layer.methods.every((method) => method === 'HEAD' || accessOf.get(`${method} ${layer.path}`) === 'public'));
    // A public route's path with an empty parameter (/api/auth/oauth//authorize) names no record of that route: 404,
    // as the route itself would answer, not the 401 of an unknown path (which that public operation does not declare).
    if (allowed.length === 0 && publicWithEmptyParameter(ctx.path, ctx.method)) throw new NotFound(`No route for ${ctx.method} ${ctx.path}`);
    if (allowed.length === 0 || !allPublic) auth.authenticate(ctx);
    if (allowed.length > 0) throw new MethodNotAllowed(ctx.method, ctx.path, allowed);
    throw new NotFound(`No route for ${ctx.method} ${ctx.path}`);
  };
}

/** The socket's peer, or — only when that peer is a listed reverse proxy — the nearest forwarded address that is not one. */
export function clientIp(ctx: Context, proxies: ReadonlySet<string>): string {
  const peer = plainAddress(ctx.req.socket.remoteAddress ?? '');
  let client = peer;
  if (proxies.has(peer)) {
    const forwarded = (ctx.get('X-Forwarded-For') || '')
      .split(',')
      .map((item) => plainAddress(item.trim()))
      .filter((item) => isIP(item) !== 0);
    while (forwarded.length > 0 && proxies.has(client)) client = forwarded.pop()!;
  }
  return client;
}

function storageError(error: unknown): boolean {
  const code = (error as { code?: string }).code;
  return code === 'SQLITE_FULL' || code === 'ENOSPC' || code === 'EDQUOT';
}

/** Renders every error as { error, code, details? }; 5xx bodies never carry a stack, SQL or message text. */
export function errorRenderer(logger: Logger, onStorageFull: () => void = () => {}): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      renderError(ctx, error, logger, onStorageFull);
    }
  };
}

/** The answer to an error thrown below the front door (errorRenderer and frontDoor). */
export function renderError(ctx: Context, error: unknown, logger: Logger, onStorageFull: () => void): void {
  /** Set only where it is not the catalogue's status for the code. */
  let status: number | undefined;
  let code: ErrorCode;
  let message: string;
  let details: ErrorDetail[] | undefined;
  if (error instanceof AppError) {
    ({ code, message, details } = error);
    for (const [name, value] of Object.entries(error.headers ?? {})) ctx.set(name, value);
  } else if (storageError(error)) {
    code = 'STORAGE_FULL';
    message = 'Storage is full: free disk space on the appliance';
    onStorageFull();
    logger.error({ err: error, reqId: ctx.state.requestId }, 'storage full');
  } else {
    const err = error as { status?: number; statusCode?: number; expose?: boolean; message?: string; code?: string };
    const candidate = err.status ?? err.statusCode;
    if (candidate && candidate >= 400 && candidate < 500) {
      // A framework 4xx (body parser, router) keeps its status; the code follows from it.
      status = candidate;
      code = codeForStatus(candidate);
      message = err.expose && err.message ? err.message : httpMessage(candidate);
    } else if ((err.code ?? '').startsWith('SQLITE_BUSY')) {
      code = 'UNAVAILABLE';
      message = 'The database is busy, try again';
      ctx.set('Retry-After', '1');
    } else {
      code = 'INTERNAL';
      message = 'Internal Server Error';
      logger.error({ err: error, reqId: ctx.state.requestId, method: ctx.method, path: ctx.path }, 'unhandled error');
    }
  }
  ctx.status = status ?? ERROR_CODES[code].status;
  ctx.body = details ? { error: message, code, details } : { error: message, code };
}

function httpMessage(status: number): string {
  if (status === 413) return 'Payload too large';
  if (status === 415) return 'Unsupported media type';
  return 'Bad request';
}

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** What `await` would wait for. */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return value !== null && (typeof value === 'object' || typeof value === 'function') && typeof (value as { then?: unknown }).then === 'function';
}

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});
/** What Koa's `ctx.type = 'application/json'` sets, without the mime-types lookup per answer. */
const JSON_CONTENT_TYPE = knownHeader('Content-Type', 'application/json; charset=utf-8');
