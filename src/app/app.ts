// createApp(deps): the Koa application without listening, so tests run it in-process on port 0.
import { wallboardPages } from '../screens/index.ts';
import { staffApp } from '../web/index.ts';
import { Metrics } from '../operations/index.ts';
import Koa, { type Middleware } from 'koa';
import type { AppDeps } from './appDeps.ts';
import { TokenExpired, Unauthorized } from '../platform/errors.ts';
import { bearerCredentials } from '../platform/http/bearer.ts';
import { DOCS_PATH, documentationJson, documentationPage } from '../platform/http/docs.ts';
import { buildOpenApi } from '../platform/http/openapi.ts';
import {
  buildRouter,
  routeDispatch,
  clientAddress,
  errorRenderer,
  MAX_PENDING_BODIES_PER_ADDRESS,
  requestId,
  requestLog,
  unmatchedRoute,
  type Authenticator,
} from '../platform/http/router.ts';
import { version } from '../platform/packageRoot.ts';
import { allRoutes } from './routes.ts';
import { storageWatchOf } from '../platform/db/storageWatch.ts';

function bearerAuthenticator(deps: AppDeps): Authenticator {
  return {
    authenticate(ctx) {
      const header = ctx.get('authorization');
      const token = bearerCredentials(header);
      // An access token is a JWT: base64url parts joined by dots.
      if (!token || !/^[A-Za-z0-9\-_.]+$/.test(token))
        throw new Unauthorized(header ? 'Malformed Authorization header: expected "Bearer <accessToken>"' : 'Authentication required');
      const user = deps.auth.checkAccessToken(token);
      // Expired: a refresh can help, so it has its own code; invalid (forged, another key, a deleted user): sign in.
      if (user === 'expired') throw new TokenExpired();
      if (!user) throw new Unauthorized('Invalid access token');
      return user;
    },
  };
}

/** Answers that carry or exchange credentials: tokens, codes, the gateway token (RFC 6749 §5.1, RFC 9700). */
const CREDENTIAL_PATHS = /^\/api\/(auth\/|iot\/token$)/;

function securityHeaders(): Middleware {
  return async (ctx, next) => {
    // A shared cache or the browser's disk must never keep a token answer; set first so error answers carry it too.
    if (CREDENTIAL_PATHS.test(ctx.path)) {
      ctx.set('Cache-Control', 'no-store');
      ctx.set('Pragma', 'no-cache');
    }
    await next();
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Referrer-Policy', 'no-referrer');
    if (!ctx.path.startsWith(DOCS_PATH)) ctx.set('X-Frame-Options', 'DENY');
  };
}

/**
 * CORS for the configured dashboard origins (EMS_PORTAL_ORIGIN, a list); nothing for any other. A preflight from any
 * other origin gets a CORS answer too: 403 without Access-Control-Allow-Origin (the browser then refuses the request),
 * not the router's "405 OPTIONS is not allowed".
 */
function portalCors(origins: string[]): Middleware {
  const allowed = new Set(origins);
  return async (ctx, next) => {
    const origin = ctx.get('Origin');
    const preflight = ctx.method === 'OPTIONS' && origin !== '' && ctx.get('Access-Control-Request-Method') !== '';
    if (!allowed.has(origin)) {
      if (!preflight) return next();
      ctx.vary('Origin');
      ctx.status = 403;
      ctx.body = { error: `CORS: the origin ${origin.slice(0, 200)} is not allowed (EMS_PORTAL_ORIGIN lists the dashboard's origins)`, code: 'FORBIDDEN' };
      return;
    }
    ctx.set('Access-Control-Allow-Origin', origin);
    ctx.vary('Origin');
    if (preflight) {
      ctx.set('Access-Control-Allow-Methods', 'GET, POST, PUT, PATCH, DELETE');
      ctx.set('Access-Control-Allow-Headers', 'Authorization, Content-Type');
      ctx.set('Access-Control-Max-Age', '600');
      ctx.status = 204;
      return;
    }
    ctx.set('Access-Control-Expose-Headers', 'Retry-After, X-Request-Id, Content-Disposition, ETag');
    await next();
  };
}

export function createApp(deps: AppDeps, extra: { publicMiddleware?: Middleware[] } = {}): Koa {
  const app = new Koa({ proxy: false });
  const routes = allRoutes(deps);
  const auth = bearerAuthenticator(deps);
  const router = buildRouter(routes, auth, deps.logger, { timeoutMs: deps.config.bodyTimeoutMs, pendingPerAddress: MAX_PENDING_BODIES_PER_ADDRESS });

  app.use(clientAddress(deps.config.trustProxy));
  app.use(requestId());
  app.use(requestLog(deps.logger));
  const metrics = new Metrics({
    db: deps.db,
    token: deps.config.metricsToken,
    collector: deps.collector,
    gateway: deps.iot,
    backups: deps.backups,
    meters: deps.energy.meters,
    figures: deps.energy.figures,
    startedAt: deps.startedAt,
    jobs: deps.jobs,
  });
  app.use(metrics.counter());
  app.use(errorRenderer(deps.logger, () => storageWatchOf(deps.db, deps.config.dataDir).noteFull()));
  app.use(securityHeaders());
  app.use(portalCors(deps.config.portalOrigins));
  app.use(documentationPage());
  app.use(staffApp(deps));
  app.use(wallboardPages());
  app.use(metrics.endpoint());
  app.use(documentationJson(() => buildOpenApi(routes, { version })));
  for (const middleware of extra.publicMiddleware ?? []) app.use(middleware);
  app.use(routeDispatch(router));
  app.use(unmatchedRoute(auth, router, routes));
  // Errors are rendered by the middleware above; this only keeps Koa from printing them a second time.
  app.silent = true;
  return app;
}
