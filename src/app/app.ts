// createApp(parts): the Koa application without listening, so tests run it in-process on port 0.
import type { AuthService } from '../access/index.ts';
import type { Metrics } from '../operations/index.ts';
import { wallboardPages } from '../screens/index.ts';
import type { ConfigStore } from '../site/index.ts';
import { staffApp } from '../web/index.ts';
import Koa, { type Middleware } from 'koa';
import type { Config } from '../platform/config.ts';
import type { Db } from '../platform/db/client.ts';
import type { AnyRoute } from '../platform/http/route.ts';
import type { Logger } from '../platform/logger.ts';
import { TokenExpired, Unauthorized } from '../platform/errors.ts';
import { bearerCredentials } from '../platform/http/bearer.ts';
import { documentationJson, documentationPage } from '../platform/http/docs.ts';
import { buildOpenApi } from '../platform/http/openapi.ts';
import { frontDoor } from '../platform/http/front.ts';
import { buildRouter, routeDispatch, MAX_PENDING_BODIES_PER_ADDRESS, unmatchedRoute, type Authenticator } from '../platform/http/router.ts';
import { version } from '../platform/packageRoot.ts';
import { storageWatchOf } from '../platform/db/storageWatch.ts';

/** What the application is made of: the route table (the modules' routes in their published order) and the front door's parts. */
export type AppParts = {
  routes: AnyRoute[];
  /** Checks the access token of a signed-in route. */
  auth: Pick<AuthService, 'checkAccessToken'>;
  config: Config;
  logger: Logger;
  db: Db;
  /** The request counters and GET /metrics (the operations module builds it). */
  metrics: Metrics;
  /** The site's settings the staff app's page carries. */
  configs: Pick<ConfigStore, 'platform'>;
};

function bearerAuthenticator({ auth }: Pick<AppParts, 'auth'>): Authenticator {
  return {
    authenticate(ctx) {
      const header = ctx.get('authorization');
      const token = bearerCredentials(header);
      // An access token is a JWT: base64url parts joined by dots.
      if (!token || !/^[A-Za-z0-9\-_.]+$/.test(token))
        throw new Unauthorized(header ? 'Malformed Authorization header: expected "Bearer <accessToken>"' : 'Authentication required');
      const user = auth.checkAccessToken(token);
      // Expired: a refresh can help, so it has its own code; invalid (forged, another key, a deleted user): sign in.
      if (user === 'expired') throw new TokenExpired();
      if (!user) throw new Unauthorized('Invalid access token');
      return user;
    },
  };
}

export function createApp(parts: AppParts, extra: { publicMiddleware?: Middleware[] } = {}): Koa {
  const { routes, config, logger, db, metrics } = parts;
  const app = new Koa({ proxy: false });
  const auth = bearerAuthenticator(parts);
  const router = buildRouter(routes, auth, logger, { timeoutMs: config.bodyTimeoutMs, pendingPerAddress: MAX_PENDING_BODIES_PER_ADDRESS });
  // One middleware: address, request id, log, count, errors, security headers and CORS, then the public pages for a
  // path outside /api/ and the router (src/platform/http/front.ts).
  app.use(
    frontDoor({
      trustProxy: config.trustProxy,
      logger,
      onStorageFull: () => storageWatchOf(db, config.dataDir).noteFull(),
      count: (method, status) => metrics.count(method, status),
      portalOrigins: config.portalOrigins,
      pages: [
        documentationPage(),
        staffApp(parts),
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
