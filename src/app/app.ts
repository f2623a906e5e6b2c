// createApp(deps): the Koa application without listening, so tests run it in-process on port 0.
import { wallboardPages } from '../screens/index.ts';
import { staffApp } from '../web/index.ts';
import { Metrics } from '../operations/index.ts';
import Koa, { type Middleware } from 'koa';
import type { AppDeps } from './appDeps.ts';
import { TokenExpired, Unauthorized } from '../platform/errors.ts';
import { bearerCredentials } from '../platform/http/bearer.ts';
import { documentationJson, documentationPage } from '../platform/http/docs.ts';
import { buildOpenApi } from '../platform/http/openapi.ts';
import { frontDoor } from '../platform/http/front.ts';
import { buildRouter, routeDispatch, MAX_PENDING_BODIES_PER_ADDRESS, unmatchedRoute, type Authenticator } from '../platform/http/router.ts';
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

export function createApp(deps: AppDeps, extra: { publicMiddleware?: Middleware[] } = {}): Koa {
  const app = new Koa({ proxy: false });
  const routes = allRoutes(deps);
  const auth = bearerAuthenticator(deps);
  const router = buildRouter(routes, auth, deps.logger, { timeoutMs: deps.config.bodyTimeoutMs, pendingPerAddress: MAX_PENDING_BODIES_PER_ADDRESS });

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
  // One middleware: address, request id, log, count, errors, security headers and CORS, then the public pages for a
  // path outside /api/ and the router (src/platform/http/front.ts).
  app.use(
    frontDoor({
      trustProxy: deps.config.trustProxy,
      logger: deps.logger,
      onStorageFull: () => storageWatchOf(deps.db, deps.config.dataDir).noteFull(),
      count: (method, status) => metrics.count(method, status),
      portalOrigins: deps.config.portalOrigins,
      pages: [
        documentationPage(),
        staffApp(deps),
        wallboardPages(),
        metrics.endpoint(),
        documentationJson(() => buildOpenApi(routes, { version })),
        ...(extra.publicMiddleware ?? []),
      ],
      api: [routeDispatch(router), unmatchedRoute(auth, router, routes)],
    }),
  );
  // Errors are rendered by the middleware above; this only keeps Koa from printing them a second time.
  app.silent = true;
  return app;
}
