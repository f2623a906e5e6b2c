// The front door (src/platform/http/front.ts): one middleware does what seven did — client address, request id, the
// request log, the count, error answers, security headers, CORS — and offers a path to the public pages only outside
// /api/. And a route's validated query, kept per query string, is the same every time and cannot be changed by a
// handler for the next request.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import Koa from 'koa';
import { Type } from '@sinclair/typebox';
import { frontDoor, inOrder } from '../../src/platform/http/front.ts';
import { buildRouter, routeDispatch, unmatchedRoute } from '../../src/platform/http/router.ts';
import { defineRoute } from '../../src/platform/http/route.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { Unauthorized } from '../../src/platform/errors.ts';

describe('front door', () => {
  let base: string;
  let server: ReturnType<Koa['listen']>;
  const lines: Record<string, unknown>[] = [];
  const counted: string[] = [];
  const offeredToPages: string[] = [];
  const handedQueries: unknown[] = [];

  before(async () => {
    const routes = [
      defineRoute({
        method: 'GET',
        path: '/api/things',
        access: 'public',
        summary: 'things',
        tags: [],
        schemas: {
          query: Type.Object({ page: Type.Integer({ minimum: 1, default: 1 }), tag: Type.Optional(Type.Array(Type.String())) }),
          response: { 200: Type.Object({ page: Type.Integer(), tags: Type.Array(Type.String()) }) },
        },
        handler: ({ query }) => {
          handedQueries.push(structuredClone(query));
          const answer = { page: query.page, tags: [...(query.tag ?? [])] };
          // A handler that changes what it was handed must not change the next request's query.
          (query as { page: number }).page = 999;
          query.tag?.push('changed');
          return answer;
        },
      }),
      defineRoute({
        method: 'GET',
        path: '/api/auth/boom',
        access: 'public',
        summary: 'boom',
        tags: [],
        schemas: { response: { 200: Type.Object({}) } },
        handler: () => {
          throw new Error('boom');
        },
      }),
    ];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        for (const text of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(text));
        done();
      },
    });
    const logger = createLogger('info', sink);
    const auth = {
      authenticate: (): never => {
        throw new Unauthorized();
      },
    };
    const router = buildRouter(routes, auth, logger, { timeoutMs: 30_000, pendingPerAddress: 64 });
    const app = new Koa();
    app.silent = true;
    app.use(
      frontDoor({
        trustProxy: [],
        logger,
        count: (method, status) => counted.push(`${method} ${status}`),
        portalOrigins: ['https://portal.example'],
        pages: [
          async (ctx, next) => {
            offeredToPages.push(ctx.path);
            if (ctx.path === '/raw') {
              // A handler that writes the whole response itself (its head is sent before the front door resumes).
              ctx.res.writeHead(200, { 'content-type': 'text/plain' });
              ctx.res.end('written here');
              return;
            }
            if (ctx.path !== '/page') return next();
            ctx.body = 'a page';
          },
        ],
        api: [routeDispatch(router), unmatchedRoute(auth, router, routes)],
      }),
    );
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  after(() => server.close());

  test('an /api/ path never meets the pages; another path does, and falls through to the API when no page takes it', async () => {
    const api = await fetch(`${base}/api/things?page=2`);
    assert.equal(api.status, 200);
    const page = await fetch(`${base}/page`);
    assert.equal(await page.text(), 'a page');
    const unknown = await fetch(`${base}/nowhere`);
    // Not a page, not a route: the API's unmatched answer (401 without a token), as before.
    assert.equal(unknown.status, 401);
    assert.deepEqual(await unknown.json(), { error: 'Authentication required', code: 'UNAUTHENTICATED' });
    assert.deepEqual(offeredToPages, ['/page', '/nowhere']);
  });

  test('every answer carries its request id and the security headers; the log line and the count see the status', async () => {
    const response = await fetch(`${base}/api/things`);
    const id = response.headers.get('x-request-id');
    assert.match(id ?? '', /^[0-9a-f-]{36}$/);
    assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(response.headers.get('referrer-policy'), 'no-referrer');
    assert.equal(response.headers.get('x-frame-options'), 'DENY');
    const line = lines.find((entry) => entry.reqId === id);
    assert.ok(line, 'the request line');
    assert.equal(line.msg, 'request');
    assert.equal(line.status, 200);
    assert.equal(line.route, '/api/things');
    assert.equal(line.ip, '127.0.0.1');
    assert.equal(counted.at(-1), 'GET 200');
  });

  test('an error is answered in the error shape, with no-store on a credential path, logged and counted as 500', async () => {
    const response = await fetch(`${base}/api/auth/boom`);
    assert.equal(response.status, 500);
    assert.deepEqual(await response.json(), { error: 'Internal Server Error', code: 'INTERNAL' });
    assert.equal(response.headers.get('cache-control'), 'no-store');
    assert.equal(response.headers.get('pragma'), 'no-cache');
    const id = response.headers.get('x-request-id');
    assert.ok(lines.some((entry) => entry.reqId === id && entry.msg === 'unhandled error'));
    assert.equal(lines.find((entry) => entry.reqId === id && entry.msg === 'request')?.status, 500);
    assert.equal(counted.at(-1), 'GET 500');
  });

  test('a response written by its handler stays as it was: no error, no header set after it', async () => {
    const response = await fetch(`${base}/raw`);
    assert.equal(response.status, 200);
    assert.equal(await response.text(), 'written here');
    const id = response.headers.get('x-request-id');
    assert.ok(id);
    assert.equal(response.headers.get('x-content-type-options'), null);
    assert.ok(!lines.some((entry) => entry.reqId === id && entry.msg === 'unhandled error'), 'no error logged');
    assert.equal(lines.find((entry) => entry.reqId === id && entry.msg === 'request')?.status, 200);
  });

  test('CORS: a listed origin is allowed, a preflight from another is 403', async () => {
    const allowed = await fetch(`${base}/api/things`, { headers: { origin: 'https://portal.example' } });
    assert.equal(allowed.headers.get('access-control-allow-origin'), 'https://portal.example');
    const preflight = await fetch(`${base}/api/things`, {
      method: 'OPTIONS',
      headers: { origin: 'https://elsewhere.example', 'access-control-request-method': 'GET' },
    });
    assert.equal(preflight.status, 403);
    assert.equal(preflight.headers.get('access-control-allow-origin'), null);
  });

  test('the same query string gives the same validated query every time, whatever the handler did with the last one', async () => {
    handedQueries.length = 0;
    for (let i = 0; i < 3; i++) {
      const response = await fetch(`${base}/api/things?page=3&tag=a&tag=b`);
      assert.deepEqual(await response.json(), { page: 3, tags: ['a', 'b'] });
    }
    const bare = await fetch(`${base}/api/things`);
    assert.deepEqual(await bare.json(), { page: 1, tags: [] });
    assert.deepEqual(handedQueries, [{ page: 3, tag: ['a', 'b'] }, { page: 3, tag: ['a', 'b'] }, { page: 3, tag: ['a', 'b'] }, { page: 1 }]);
    // A refused query is refused every time (nothing kept for it).
    for (let i = 0; i < 2; i++) {
      const refused = await fetch(`${base}/api/things?page=0`);
      assert.equal(refused.status, 400);
      assert.equal((await refused.json()).code, 'VALIDATION');
    }
  });
});

describe('inOrder (the API chain of the front door)', () => {
  const ctx = {} as Koa.Context;

  test('runs the middleware in order and hands back what the first returns, a plain value as it is', async () => {
    const seen: string[] = [];
    const chain = inOrder([
      (_ctx, next) => {
        seen.push('a');
        return next().then(() => seen.push('a after'));
      },
      (_ctx, next) => {
        seen.push('b');
        return next();
      },
    ]);
    await chain(ctx);
    assert.deepEqual(seen, ['a', 'b', 'a after']);
    assert.equal(inOrder([() => 'plain'])(ctx), 'plain', 'a synchronous answer is not wrapped in a promise');
    assert.equal(inOrder([])(ctx), undefined);
  });

  test('a synchronous throw of the first reaches the caller as a throw, of a later one as the rejection of next()', async () => {
    assert.throws(
      () =>
        inOrder([
          () => {
            throw new Unauthorized('first');
          },
        ])(ctx),
      /first/,
    );
    const caught = await (inOrder([
      (_ctx, next) => next().catch((error: Error) => error.message),
      () => {
        throw new Error('second');
      },
    ])(ctx) as Promise<string>);
    assert.equal(caught, 'second');
  });

  test('next() called twice is refused, as koa-compose refuses it', async () => {
    const chain = inOrder([
      async (_ctx, next) => {
        await next();
        await next();
      },
      () => undefined,
    ]);
    await assert.rejects(chain(ctx) as Promise<void>, /next\(\) called multiple times/);
  });
});
