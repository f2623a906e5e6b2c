// JSON routes read their bodies without koa-body's layers and answer every edge as before: strict object/array JSON,
// a BOM dropped, __proto__ keys refused however escaped, 1 MiB inclusive (declared or received), empty is {},
// compressed bodies still inflated, bodies of other methods ignored.
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import Koa from 'koa';
import { Type } from '@sinclair/typebox';
import { buildRouter, errorRenderer } from '../../src/platform/http/router.ts';
import { defineRoute } from '../../src/platform/http/route.ts';
import { createLogger } from '../../src/platform/logger.ts';

const Body = Type.Object({ text: Type.Optional(Type.String()), nested: Type.Optional(Type.Object({ inner: Type.Optional(Type.String()) })) });
const Answer = Type.Object({ method: Type.String(), length: Type.Integer(), nested: Type.Boolean() });

describe('JSON request bodies', () => {
  let url: string;
  let server: ReturnType<Koa['listen']>;
  before(async () => {
    const routes = ['POST', 'PUT', 'PATCH', 'DELETE'].map((method) =>
      defineRoute({
        method: method as 'POST',
        path: '/echo',
        access: 'public',
        summary: 'test',
        tags: [],
        schemas: { body: Body, response: { 200: Answer } },
        handler: ({ body }) => ({ method, length: body.text?.length ?? -1, nested: body.nested !== undefined }),
      }),
    );
    const app = new Koa();
    const logger = createLogger('silent');
    app.use(errorRenderer(logger));
    app.use(buildRouter(routes, { authenticate: () => assert.fail('public route') }, logger, { timeoutMs: 30_000, pendingPerAddress: 64 }).routes());
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}/echo`;
  });
  after(() => server.close());

  const send = async (body: string | Buffer, headers: Record<string, string> = {}, method = 'POST') => {
    const response = await fetch(url, {
      method,
      headers: { 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : new Uint8Array(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  test('objects are read; a BOM is dropped; empty is an empty object', async () => {
    assert.deepEqual(await send('{"text":"héllo"}'), { status: 200, body: { method: 'POST', length: 5, nested: false } });
    assert.deepEqual((await send('\uFEFF{"text":"a"}')).body.length, 1);
    assert.deepEqual((await send('')).body, { method: 'POST', length: -1, nested: false });
    assert.equal((await send('{"text":"b"}', {}, 'PATCH')).body.length, 1);
  });

  test('not an object or array, not JSON, or a __proto__ key (escaped too): 400', async () => {
    for (const text of ['"text"', '12', '   ', '{"text":', '{"nested":{"__proto__":{"x":1}}}', '{"\\u005f_proto__":{}}']) {
      const answer = await send(text);
      assert.equal(answer.status, 400, text);
      assert.equal(answer.body.code, 'VALIDATION', text);
    }
  });

  test('1 MiB is read, one byte more is 413, and so is a larger declared length', async () => {
    const exactly = `{"text":"${'a'.repeat(1024 * 1024 - 11)}"}`;
    assert.equal(Buffer.byteLength(exactly), 1024 * 1024);
    assert.equal((await send(exactly)).body.length, 1024 * 1024 - 11);
    const over = await send(`{"text":"${'a'.repeat(1024 * 1024 - 10)}"}`);
    assert.deepEqual(over, { status: 413, body: { error: 'request entity too large', code: 'PAYLOAD_TOO_LARGE' } });
  });

  test('a gzip body is still inflated; a body sent with DELETE is ignored', async () => {
    assert.equal((await send(zlib.gzipSync('{"text":"zipped"}'), { 'content-encoding': 'gzip' })).body.length, 6);
    assert.deepEqual((await send('{"text":"ignored"}', {}, 'DELETE')).body, { method: 'DELETE', length: -1, nested: false });
  });
});
