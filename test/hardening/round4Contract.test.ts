// Hardening round 4 (issue 39 #4 and the contract findings): a response that fails its own schema is a server fault
// (500 INTERNAL, logged with the route), never a client 400; the writes that could commit such a response no longer do.
import assert from 'node:assert/strict';
import type http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { Type } from '@sinclair/typebox';
import Koa from 'koa';
import { Unauthorized } from '../../src/platform/errors.ts';
import { defineRoute } from '../../src/platform/http/route.ts';
import { buildRouter, errorRenderer, routeDispatch } from '../../src/platform/http/router.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

describe('a response that fails its own schema', () => {
  let server: http.Server;
  let base: string;
  const lines: string[] = [];
  before(async () => {
    const app = new Koa();
    const logger = createLogger('info', {
      write(chunk: string) {
        lines.push(...String(chunk).split('\n').filter(Boolean));
        return true;
      },
    } as unknown as NodeJS.WritableStream);
    const auth = {
      authenticate: (): never => {
        throw new Unauthorized();
      },
    };
    const broken = defineRoute({
      method: 'POST',
      path: '/things',
      access: 'public',
      summary: 'answers a body its schema refuses',
      tags: [],
      schemas: { body: Type.Object({ name: Type.String() }), response: { 201: Type.Object({ name: Type.String({ minLength: 1 }) }) } },
      handler: () => ({ name: '' }),
    });
    app.use(errorRenderer(logger));
    app.use(routeDispatch(buildRouter([broken], auth, logger, { timeoutMs: 30_000, pendingPerAddress: 64 })));
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  test('is answered 500 INTERNAL without detail and logged at error with the route (was 400 VALIDATION)', async () => {
    const answer = await fetch(`${base}/things`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"x"}' });
    assert.equal(answer.status, 500);
    assert.deepEqual(await answer.json(), { error: 'Internal Server Error', code: 'INTERNAL' });
    const logged = lines.map((line) => JSON.parse(line)).find((line) => line.msg === 'response failed its schema');
    assert.ok(logged, lines.join('\n'));
    assert.equal(logged.level, 'error');
    assert.equal(logged.route, 'POST /things');
    assert.equal(logged.status, 201);
    assert.match(JSON.stringify(logged.details), /name/);
  });
});

describe('calorific value versions without a note', () => {
  let server: TestServer;
  let admin: string;
  let viewer: string;
  before(async () => {
    server = await startTestServer();
    admin = (await server.createUser({ role: 'admin' })).accessToken;
    viewer = (await server.createUser({ role: 'viewer' })).accessToken;
  });
  after(() => server.close());

  test('are created 201, listed, read and changed for every role (was: committed, then 400 for the whole list)', async () => {
    const created = await server.request('POST', '/api/energy/calorific-values', { token: admin, body: { validFrom: '2099-04-01', kwhPerM3: 10.95 } });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.note, '');
    for (const token of [admin, viewer]) {
      const list = await server.request('GET', '/api/energy/calorific-values', { token });
      assert.equal(list.status, 200, list.text);
      assert.ok(list.body.items.some((item: { id: number }) => item.id === created.body.id));
      const one = await server.request('GET', `/api/energy/calorific-values/${created.body.id}`, { token });
      assert.equal(one.status, 200, one.text);
    }
    const changed = await server.request('PUT', `/api/energy/calorific-values/${created.body.id}`, { token: admin, body: { kwhPerM3: 11 } });
    assert.equal(changed.status, 200, changed.text);
    assert.equal(changed.body.kwhPerM3, 11);
    assert.ok(!server.logs.some((line) => line.includes('response failed its schema')));
  });

  test('a note with a control or line-separator character is still refused 400', async () => {
    for (const note of ['bad\u0007bell', 'line\u2028sep']) {
      const answer = await server.request('POST', '/api/energy/calorific-values', { token: admin, body: { validFrom: '2099-05-01', kwhPerM3: 10, note } });
      assert.equal(answer.status, 400, `${JSON.stringify(note)}: ${answer.text}`);
    }
  });
});

describe('the document and the service agree (issue 39, contract findings)', () => {
  let server: TestServer;
  let admin: string;
  let doc: any;
  before(async () => {
    server = await startTestServer();
    admin = (await server.createUser({ role: 'admin' })).accessToken;
    doc = (await server.request('GET', '/documentation/json')).body;
  });
  after(() => server.close());

  test('a public path with an empty parameter is 404, which it declares, also with a Basic header (was an undeclared 401)', async () => {
    for (const [method, path] of [
      ['GET', '/api/auth/oauth//authorize'],
      ['GET', '/api/auth/oauth//callback'],
      ['POST', '/api/auth/oauth//callback'],
    ] as const) {
      for (const headers of [{}, { authorization: 'Basic dXNlcjpwYXNz' }, { authorization: 'Bearer' }] as Record<string, string>[]) {
        const answer = await server.request(method, path, { headers });
        assert.equal(answer.status, 404, `${method} ${path} ${JSON.stringify(headers)}: ${answer.text}`);
        assert.equal(answer.body.code, 'NOT_FOUND');
      }
      const template = path.replace('//', '/{provider}/');
      assert.ok(doc.paths[template][method.toLowerCase()].responses['404'], `${method} ${template} declares 404`);
    }
    // A protected route's path with an empty parameter keeps the unknown-path rule: 401 without a token.
    assert.equal((await server.request('POST', '/api/alerts//resolve')).status, 401);
  });

  test('a .gltf model is declared as the JSON document it is; the energy export declares XLSX beside CSV', () => {
    const model = doc.paths['/api/models/{id}/raw'].get.responses['200'].content;
    assert.ok(model['model/gltf+json'], Object.keys(model).join(', '));
    assert.equal(model['model/gltf+json'].schema.type, undefined, 'any JSON, not a string');
    assert.equal(model['model/gltf-binary'].schema.type, 'string');
    const exported = doc.paths['/api/exports/energy'].get.responses['200'].content;
    assert.deepEqual(Object.keys(exported).sort(), ['application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', 'text/csv; charset=utf-8']);
  });

  test("an IoT refusal declares the gateway's fields it relays (success: false on a write's 404)", () => {
    const declared = doc.paths['/api/iot/codes/set'].post.responses['404'].content['application/json'].schema;
    const schema = declared.$ref ? doc.components.schemas[declared.$ref.split('/').pop()] : declared;
    assert.equal(schema.properties.success.type, 'boolean');
    assert.notEqual(schema.additionalProperties, false);
  });

  test('a body is declared required exactly where a missing one is refused', async () => {
    const resolve = doc.paths['/api/alerts/{id}/resolve'].post.requestBody;
    const fromFault = doc.paths['/api/faults/{id}/maintenance'].post.requestBody;
    assert.equal(resolve.required, false);
    assert.equal(fromFault.required, false);
    assert.equal(doc.paths['/api/alerts'].post.requestBody.required, true);
    // And the service: the all-optional write takes no body; the one with required fields refuses it.
    const alert = await server.request('POST', '/api/alerts', { token: admin, body: { title: 'Pump 3 vibration', level: 'warning' } });
    assert.equal(alert.status, 201, alert.text);
    assert.equal((await server.request('POST', `/api/alerts/${alert.body.id}/resolve`, { token: admin })).status, 200);
    assert.equal((await server.request('POST', '/api/alerts', { token: admin })).status, 400);
  });

  test('a report plan named " " (or with a leading space) is refused 400', async () => {
    for (const name of [' ', '  ', ' Monthly', 'Monthly\n']) {
      const answer = await server.request('POST', '/api/reports/plans', {
        token: admin,
        body: { name, templateId: 'weekly-energy', cron: '0 7 * * 1', recipients: ['ops@example.test'] },
      });
      assert.equal(answer.status, 400, `${JSON.stringify(name)}: ${answer.text}`);
      assert.equal(answer.body.details[0].path, 'body.name');
    }
  });
});
