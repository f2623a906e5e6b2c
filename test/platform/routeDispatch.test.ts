// The app's router middleware finds a path without parameters by one lookup, and answers exactly as @koa/router
// does: the same route where an earlier pattern also matches the path, the matched route on the context (request
// log, metrics), empty params, HEAD for GET, and everything else (a trailing slash, parameters, another method)
// through @koa/router.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Koa from 'koa';
import { Type } from '@sinclair/typebox';
import { buildRouter, errorRenderer, routeDispatch, unmatchedRoute } from '../../src/platform/http/router.ts';
import { defineRoute } from '../../src/platform/http/route.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { Unauthorized } from '../../src/platform/errors.ts';

const Answer = Type.Object({ route: Type.String(), params: Type.Record(Type.String(), Type.String()) });

describe('route dispatch', () => {
  let base: string;
  let server: ReturnType<Koa['listen']>;
  const seen: { route: unknown; name: unknown; path: string }[] = [];
  before(async () => {
    const route = (method: 'GET' | 'POST', path: string, name: string) =>
      defineRoute({
        method,
        path,
        access: 'public',
        summary: name,
        tags: [],
        schemas: { ...(path.includes(':') ? { params: Type.Object({ id: Type.String() }) } : {}), response: { 200: Answer } },
        handler: ({ params }) => ({ route: name, params: params as Record<string, string> }),
      });
    // '/things/:id' first: @koa/router runs it for /things/stats too (every matched layer in order, the first answers).
    const routes = [
      route('GET', '/things/:id', 'one thing'),
      route('GET', '/things/stats', 'stats'),
      route('GET', '/plain', 'plain'),
      route('POST', '/plain', 'plain post'),
    ];
    const app = new Koa();
    const logger = createLogger('silent');
    // Only the unmatched path asks for a token (every route here is public): no token, 401.
    const auth = {
      authenticate: (): never => {
        throw new Unauthorized();
      },
    };
    app.use(async (ctx, next) => {
      await next();
      seen.push({
        route: (ctx as unknown as { _matchedRoute?: string })._matchedRoute,
        name: (ctx as unknown as { _matchedRouteName?: string })._matchedRouteName,
        path: ctx.path,
      });
    });
    app.use(errorRenderer(logger));
    const router = buildRouter(routes, auth, logger, { timeoutMs: 30_000, pendingPerAddress: 64 });
    app.use(routeDispatch(router));
    app.use(unmatchedRoute(auth, router, routes));
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  after(() => server.close());

  const ask = async (method: string, path: string) => {
    const response = await fetch(`${base}${path}`, { method });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : null, last: seen.at(-1) };
  };

  test('a path without parameters: its route, the matched route on the context, empty params', async () => {
    assert.deepEqual(await ask('GET', '/plain'), {
      status: 200,
      body: { route: 'plain', params: {} },
      last: { route: '/plain', name: 'GET /plain', path: '/plain' },
    });
    assert.deepEqual((await ask('POST', '/plain')).body, { route: 'plain post', params: {} });
    const head = await ask('HEAD', '/plain');
    assert.equal(head.status, 200);
    assert.equal(head.body, null);
  });

  test('where an earlier pattern also matches, the earlier route answers, as @koa/router has it', async () => {
    assert.deepEqual((await ask('GET', '/things/stats')).body, { route: 'one thing', params: { id: 'stats' } });
    assert.deepEqual((await ask('GET', '/things/7')).body, { route: 'one thing', params: { id: '7' } });
  });

  test('a trailing slash, another method or no route at all go through @koa/router and the unmatched answers (401 without a token)', async () => {
    assert.deepEqual((await ask('GET', '/plain/')).body, { route: 'plain', params: {} });
    assert.equal((await ask('DELETE', '/plain')).status, 405);
    assert.equal((await ask('GET', '/nothing')).status, 401);
  });
});
