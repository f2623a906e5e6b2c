// The fleet service's HTTP face: one route table (method, path, who may call, handler), errors rendered in one place.
// Sites authenticate with their credential, people with a fleet user token; enrolment and health are public.
import http from 'node:http';
import https from 'node:https';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import Koa from 'koa';
import type { Logger } from '../platform/logger.ts';
import { version } from '../platform/packageRoot.ts';
import { fleetStaffApp } from '../web/index.ts';
import { DatabaseClock } from './clock.ts';
import { withAckRequests } from './alertAcks.ts';
import { bearer } from './credentials.ts';
import type { FleetDb } from './db.ts';
import { addUser, siteForCredential, type FleetUser, userForToken } from './enrolment.ts';
import { enrolmentHandlers } from './enrolmentRoutes.ts';
import { FleetError } from './errors.ts';
import { DEFAULT_INGEST_LIMITS, Ingest, type IngestLimits } from './ingest.ts';
import { listQuery } from './listQuery.ts';
import { portfolioHandlers } from './portfolioRoutes.ts';
import { fleetDocumentation } from './openapi.ts';
import { FLEET_ROUTES, type FleetRouteKey } from './routes.ts';
import { peopleHandlers } from './peopleRoutes.ts';
import { siteAdminHandlers } from './siteAdminRoutes.ts';
import { FleetSso, type FleetSsoConfig } from './sso.ts';

/** A batch body may not exceed this (20,000 rows of ~120 bytes of JSON each fit in 4 MiB; 16 leaves room). */
export const MAX_BATCH_BYTES = 16 * 1024 * 1024;
const MAX_JSON_BYTES = 64 * 1024;
/**
 * A live batch (a box's hourly write trimmed, or what it holds: ~1,000 rows for 500 meters) is under this; catch-up batches of whole
 * days are ~1.6 MB. Small batches have LIVE_RESERVE slots of their own above maxConcurrentIngests, so live sites are not
 * turned away (each 429 costs a box its next 30 s tick) while returning sites fill the slots with history.
 */
export const SMALL_BATCH_BYTES = 512 * 1024;
const LIVE_RESERVE = 2;

export { FLEET_ROUTES, type FleetAccess } from './routes.ts';

export type FleetAppOptions = {
  db: FleetDb;
  /** A streaming replica the portfolio is read from (docs/fleet.md "Replica and failover"); absent: the primary. */
  readDb?: FleetDb;
  /** The primary's clock (src/fleet/clock.ts); `now` (tests) overrides it. */
  clock?: DatabaseClock;
  logger: Logger;
  maxConcurrentIngests: number;
  limits?: IngestLimits;
  now?: () => number;
  webDir?: string;
  /** Single sign-on with an OIDC issuer (EMS_FLEET_OIDC_*); absent: passwords and printed tokens only. */
  sso?: FleetSsoConfig | null;
};

async function readJson(req: http.IncomingMessage, limit: number): Promise<unknown> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit) throw new FleetError('batch_too_large', `request refused: ${declared} bytes, at most ${limit}`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new FleetError('batch_too_large', `request refused: more than ${limit} bytes`);
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new FleetError('invalid_batch', 'request refused: the body is not JSON');
  }
}

/**
 * PostgreSQL away or restarting: SQLSTATE class 57 (operator intervention: shutdown, restart) or 08 (connection
 * exception), the socket refused or reset, or node-postgres's own words for a connection that died under a client.
 */
export function databaseUnavailable(error: unknown): boolean {
  const code = String((error as { code?: string }).code ?? '');
  if (/^(57|08)/.test(code) || ['ECONNREFUSED', 'ECONNRESET', 'ENOENT', 'EPIPE', 'ETIMEDOUT'].includes(code)) return true;
  return /Connection terminated|not queryable|connection error|timeout exceeded when trying to connect/i.test(String((error as Error)?.message ?? error));
}

export function createFleetApp(options: FleetAppOptions): Koa {
  const { db, logger } = options;
  const pool = db.pool;
  // Portfolio reads (health, EUI, meters, alerts, exports) go to the replica when one is configured; writes to the primary.
  const readPool = options.readDb?.pool ?? pool;
  const clock = options.clock ?? new DatabaseClock(pool);
  const now = async () => options.now?.() ?? (await clock.now());
  const ingest = new Ingest(pool, options.limits ?? DEFAULT_INGEST_LIMITS, now);
  let ingesting = 0;
  const app = new Koa();
  const router = new Router();

  app.use(async (ctx, next) => {
    // The box's security headers (src/platform/http/front.ts) on every answer, refusals included; API answers are
    // never cached (they carry a site's figures or a credential).
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.set('X-Frame-Options', 'DENY');
    if (ctx.path.startsWith('/api/')) ctx.set('Cache-Control', 'no-store');
    try {
      await next();
    } catch (error) {
      if (error instanceof FleetError) {
        ctx.status = error.status;
        ctx.body = { error: error.message, code: error.code, ...(error.extra.details ? { details: error.extra.details } : {}) };
        if (error.extra.retryAfterSec) ctx.set('Retry-After', String(error.extra.retryAfterSec));
        return;
      }
      // PostgreSQL away (restart, failover): the site keeps its rows and tries again.
      if (databaseUnavailable(error)) {
        logger.warn({ err: error }, 'fleet database unavailable');
        ctx.status = 503;
        ctx.set('Retry-After', '5');
        ctx.body = { error: 'the fleet database is unavailable; try again', code: 'unavailable' };
        return;
      }
      logger.error({ err: error, path: ctx.path }, 'fleet request failed');
      ctx.status = 500;
      ctx.body = { error: 'Internal Server Error', code: 'internal' };
    }
  });

  const asUser = async (ctx: Koa.Context, role: 'viewer' | 'admin'): Promise<FleetUser> => {
    const user = await userForToken(pool, bearer(ctx.get('authorization')));
    if (role === 'admin' && user.role !== 'admin') throw new FleetError('forbidden', 'this needs a fleet admin');
    return user;
  };
  /** A site the route names, within the caller's sites: another site reads as no site at all (404), as for a viewer. */
  const siteInScope = (user: FleetUser, id: string | undefined): string => {
    if (!id || !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(id)) throw new FleetError('not_found', 'no such site');
    if (user.sites !== null && !user.sites.includes(id)) throw new FleetError('not_found', 'no such site');
    return id;
  };

  // Every route with who may call it (FLEET_ROUTES lists the same, for the role test): a route outside this table is
  // not served. `site` = a site credential; `viewer`/`admin` = a fleet user, limited to their sites; `fleet-admin` = an
  // admin of every site (a user limited to sites cannot make a new one).
  const handlers: Record<FleetRouteKey, (ctx: Koa.Context, user: FleetUser | undefined) => Promise<void>> = {
    ...siteAdminHandlers({ pool, logger, readBody: (ctx) => readJson(ctx.req, MAX_JSON_BYTES), siteInScope, pageOf: (query) => listQuery(query, [], 50) }),
    ...peopleHandlers({
      pool,
      logger,
      sso: options.sso ? new FleetSso(options.sso, pool, logger) : null,
      readBody: (ctx) => readJson(ctx.req, MAX_JSON_BYTES),
    }),
    ...enrolmentHandlers({ pool, logger, readBody: (ctx) => readJson(ctx.req, MAX_JSON_BYTES) }),
    ...portfolioHandlers({ pool, readPool, now, fileDate: () => options.now?.() ?? Date.now(), siteInScope, listQuery }),
    'GET /api/fleet/health': async (ctx) => {
      await pool.query('select 1');
      ctx.body = { status: 'ok', version };
    },
    'POST /api/fleet/ingest': async (ctx) => {
      const siteId = await siteForCredential(pool, bearer(ctx.get('authorization')));
      const declared = Number(ctx.get('content-length') || Number.POSITIVE_INFINITY);
      const slots = options.maxConcurrentIngests + (declared <= SMALL_BATCH_BYTES ? LIVE_RESERVE : 0);
      if (ingesting >= slots) throw new FleetError('busy', 'the fleet is busy storing other batches', { retryAfterSec: 2 });
      ingesting++;
      try {
        const batch = await ingest.check(await readJson(ctx.req, MAX_BATCH_BYTES));
        ctx.body = await withAckRequests(pool, await ingest.store(siteId, batch, slots));
      } catch (error) {
        if (error instanceof FleetError && error.code !== 'busy') logger.warn({ siteId, code: error.code, reason: error.message }, 'batch refused');
        throw error;
      } finally {
        ingesting--;
      }
    },
  };
  for (const route of FLEET_ROUTES) {
    const handler = handlers[route.key];
    const method = route.method.toLowerCase() as 'get' | 'post' | 'patch';
    router[method](route.path, async (ctx) => {
      let user: FleetUser | undefined;
      if (route.access === 'viewer' || route.access === 'admin' || route.access === 'fleet-admin') {
        user = await asUser(ctx, route.access === 'viewer' ? 'viewer' : 'admin');
        if (route.access === 'fleet-admin' && user.sites !== null) throw new FleetError('forbidden', 'this needs a fleet admin of every site');
      }
      await handler(ctx, user);
    });
  }

  // The staff app in fleet mode: index.html for a browser navigation outside /api, the built assets (dist/web).
  app.use(fleetDocumentation());
  app.use(fleetStaffApp(options.webDir));
  app.use(router.routes());
  app.use(router.allowedMethods());
  app.use((ctx) => {
    ctx.status = 404;
    ctx.body = { error: 'no such route', code: 'not_found' };
  });
  return app;
}

export { addUser };

/** Idle connections stay open this long: a box's next send (5 minutes later) reuses its TLS connection. */
export const FLEET_KEEP_ALIVE_MS = 6 * 60_000;

/** Listens on host:port (port 0: any free port), over HTTPS when a certificate is given. */
export async function listenFleet(
  app: Koa,
  options: { host: string; port: number; tls: { certFile: string; keyFile: string } | null },
): Promise<{ server: http.Server; url: string }> {
  const handler = app.callback();
  const server = options.tls
    ? https.createServer({ cert: fs.readFileSync(options.tls.certFile), key: fs.readFileSync(options.tls.keyFile) }, handler)
    : http.createServer(handler);
  server.headersTimeout = 20_000;
  server.requestTimeout = 120_000;
  // Longer than a box's sync interval (5 min): each box keeps one connection between its sends (issue 55).
  server.keepAliveTimeout = FLEET_KEEP_ALIVE_MS;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return { server, url: `${options.tls ? 'https' : 'http'}://${options.host}:${port}` };
}
