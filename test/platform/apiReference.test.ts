// The API reference is complete and tells the truth: every operation described with who may call it, every tag
// declared, every JSON body with an example its own schema accepts, statuses derived from what the router does.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { compileBody } from '../../src/platform/http/validation.ts';
import { operationId, TAGS } from '../../src/platform/http/openapi.ts';
import type { AnyRoute } from '../../src/platform/http/route.ts';
import { ERROR_CODES, type ErrorCode } from '../../src/platform/errors.ts';

const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv) => Ajv;

let server: TestServer;
let doc: any;
let routes: AnyRoute[];
before(async () => {
  server = await startTestServer();
  doc = (await server.request('GET', '/documentation/json')).body;
  routes = server.service.routes;
});
after(() => server.close());

const operationOf = (route: AnyRoute) => doc.paths[route.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')][route.method.toLowerCase()];
const jsonBodied = (route: AnyRoute) => route.schemas.body !== undefined && route.bodyType !== 'multipart';

describe('API reference', () => {
  test('every operation has its own description and says who may call it, from its access', () => {
    const lines = { public: '**Public**', viewer: '**Requires role viewer**', operator: '**Requires role operator**', admin: '**Requires role admin**' };
    for (const route of routes) {
      assert.ok(route.description && route.description.trim().length >= 20, `${route.method} ${route.path} has a description`);
      const text: string = operationOf(route).description;
      assert.ok(text.startsWith(route.description!), `${route.method} ${route.path}: the description comes first`);
      assert.ok(text.split('\n\n').at(-1)!.startsWith(lines[route.access]), `${route.method} ${route.path}: the last paragraph is the access line`);
      for (const [access, line] of Object.entries(lines))
        if (access !== route.access) assert.ok(!text.includes(line), `${route.method} ${route.path} names only its own access`);
    }
  });

  test('every tag an operation uses is declared with a description, and every declared tag is used', () => {
    const declared = new Map<string, string>(doc.tags.map((tag: { name: string; description: string }) => [tag.name, tag.description]));
    const used = new Set(routes.flatMap((route) => route.tags));
    for (const tag of used) assert.ok(declared.get(tag), `tag ${tag} declared with a description`);
    for (const tag of declared.keys()) assert.ok(used.has(tag), `declared tag ${tag} is used`);
    assert.deepEqual([...declared.keys()].sort(), Object.keys(TAGS).sort());
  });

  test('every JSON request body has an example that its schema accepts, strictly and as the router reads it', () => {
    // Strict: unknown fields are errors here (a misspelt field in an example would otherwise be silently dropped).
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addFormat('date-time-or-date', /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2}))?$/);
    const bodied = routes.filter(jsonBodied);
    assert.ok(bodied.length >= 40, `${bodied.length} JSON bodies`);
    for (const route of bodied) {
      const name = `${route.method} ${route.path}`;
      assert.notEqual(route.example, undefined, `${name} has an example`);
      const strict = ajv.compile(route.schemas.body!);
      assert.ok(strict(route.example), `${name}: example fits its schema: ${ajv.errorsText(strict.errors)}`);
      const withUnknownFieldsRefused = ajv.compile(refuseUnknown(route.schemas.body) as object);
      assert.ok(
        withUnknownFieldsRefused(route.example),
        `${name}: example has no field its schema does not list: ${ajv.errorsText(withUnknownFieldsRefused.errors)}`,
      );
      assert.equal(compileBody(route.schemas.body!)(structuredClone(route.example)), null, `${name}: the router accepts the example`);
      assert.deepEqual(operationOf(route).requestBody.content['application/json'].example, route.example, `${name}: example served`);
    }
    // An example that breaks its schema is caught: the check above is not vacuous.
    const tariff = routes.find((route) => route.method === 'POST' && route.path === '/api/energy/tariffs')!;
    assert.equal(ajv.compile(tariff.schemas.body!)({ ...(tariff.example as object), validFrom: 'string' }), false);
  });

  test('parameters with a default are optional; request bodies do not claim to refuse unknown fields', () => {
    for (const route of routes) {
      const operation = operationOf(route);
      for (const parameter of operation.parameters) {
        if (parameter.schema.default !== undefined) assert.equal(parameter.required, false, `${route.method} ${route.path} ${parameter.name}`);
      }
      if (jsonBodied(route)) assert.ok(!JSON.stringify(operation.requestBody).includes('"additionalProperties":false'), `${route.method} ${route.path}`);
    }
    const alerts = doc.paths['/api/alerts'].get.parameters;
    assert.equal(alerts.find((p: { name: string }) => p.name === 'page').required, false);
    assert.equal(alerts.find((p: { name: string }) => p.name === 'pageSize').required, false);
  });

  test('statuses the router gives an operation are declared from its access, parameters and body', () => {
    for (const route of routes) {
      const name = `${route.method} ${route.path}`;
      const declared = new Set(Object.keys(operationOf(route).responses).map(Number));
      assert.equal(declared.has(401), route.access !== 'public' || 401 in route.schemas.response, `${name} 401`);
      if (route.access === 'operator' || route.access === 'admin') assert.ok(declared.has(403), `${name} 403`);
      if (route.access === 'viewer' && !(403 in route.schemas.response))
        assert.ok(!declared.has(403), `${name}: a viewer route answers 403 only if it says so`);
      if (route.schemas.params) assert.ok(declared.has(404), `${name} 404`);
      if (jsonBodied(route)) for (const status of [400, 408, 413, 415, 429]) assert.ok(declared.has(status), `${name} ${status}`);
      assert.ok(declared.has(431) && declared.has(503), `${name} 431, 503`);
      assert.equal(declared.has(507), route.method !== 'GET', `${name} 507 for writes`);
      assert.ok(!declared.has(500), `${name}: 500 is never declared`);
    }
    // Every error example carries a code whose catalogue status is the status it is shown under.
    for (const route of routes) {
      for (const [status, declared] of Object.entries<any>(operationOf(route).responses)) {
        const response = declared.$ref ? doc.components.responses[declared.$ref.split('/').pop()] : declared;
        const example = response.content?.['application/json']?.example;
        if (Number(status) >= 400 && example)
          assert.equal(ERROR_CODES[example.code as ErrorCode]?.status, Number(status), `${route.method} ${route.path} ${status} example`);
      }
    }
    const raw = doc.paths['/api/files/{id}/raw'].get.responses;
    assert.ok(raw['206'] && raw['304'] && raw['416'], 'downloads declare 206, 304 and 416');
    assert.ok(raw['200'].content['application/pdf'] && raw['200'].content['application/octet-stream'], 'downloads declare their real types');
    assert.deepEqual(Object.keys(doc.paths['/api/users/{id}/avatar'].get.responses['200'].content), ['image/png', 'image/jpeg', 'image/webp']);
    assert.equal(new Set(routes.map(operationId)).size, routes.length, 'operation ids are unique');
  });
});

function refuseUnknown(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(refuseUnknown);
  if (!schema || typeof schema !== 'object') return schema;
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema))
    copy[key] = key === 'properties' ? Object.fromEntries(Object.entries(value as object).map(([k, v]) => [k, refuseUnknown(v)])) : refuseUnknown(value);
  if (
    (schema as { type?: string }).type === 'object' &&
    (schema as { properties?: unknown }).properties &&
    !(schema as { patternProperties?: unknown }).patternProperties &&
    copy.additionalProperties === undefined
  )
    copy.additionalProperties = false;
  return copy;
}
