// Success answers carry an example (issue 45 item 14): the most used read routes publish one in their success schema's
// `examples`, and every published example is an answer the server's own response validator accepts as it is (no field
// unknown to the schema, nothing missing, every format and enum right).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openApiDocument, tableOnlyRoutes } from '../../src/app/webApiTypes.ts';
import type { AnyRoute } from '../../src/platform/http/route.ts';
import { successStatus } from '../../src/platform/http/route.ts';
import { compileResponse } from '../../src/platform/http/validation.ts';

const MUST_HAVE = [
  'GET /api/alerts',
  'GET /api/alerts/:id',
  'GET /api/faults',
  'GET /api/faults/:id',
  'GET /api/maintenance',
  'GET /api/maintenance/:id',
  'GET /api/reports/templates',
  'GET /api/reports/plans',
  'GET /api/reports/plans/:id',
  'GET /api/reports/plans/:id/runs',
  'GET /api/reports/runs/:id',
  'GET /api/energy/areas',
  'GET /api/energy/series',
  'GET /api/energy/summary',
  'GET /api/dashboard',
  'GET /api/dashboard/alerts',
  'GET /api/overview/stats',
  'GET /api/overview/energy/weekly',
  'GET /api/health',
  'POST /api/auth/login',
  'GET /api/auth/me',
  'GET /api/alarms/areas',
];

// The route table with stand-in services, as the document is built: only its definitions are read here.
const routes: AnyRoute[] = tableOnlyRoutes();

test('the most used read routes publish an example of their success answer', () => {
  const withExample = new Set(routes.filter((route) => route.responseExample !== undefined).map((route) => `${route.method} ${route.path}`));
  assert.deepEqual(
    MUST_HAVE.filter((route) => !withExample.has(route)),
    [],
  );
  const doc = openApiDocument() as { paths: Record<string, Record<string, { responses: Record<string, any> }>> };
  const published = doc.paths['/api/alerts/{id}']!.get!.responses['200'].content['application/json'].schema.examples;
  assert.equal(published.length, 1);
  assert.equal(published[0].title, 'Server room temperature above 27 °C');
});

test('every example is an answer the response validator accepts unchanged', () => {
  let checked = 0;
  for (const route of routes) {
    if (route.responseExample === undefined) continue;
    const schema = route.schemas.response[successStatus(route)]!;
    const example = structuredClone(route.responseExample);
    const errors = compileResponse(schema)(example);
    assert.equal(errors, null, `${route.method} ${route.path}: ${JSON.stringify(errors)}`);
    // The validator drops fields the schema does not list: an example holding one would be changed by it.
    assert.deepEqual(example, route.responseExample, `${route.method} ${route.path}: the example holds a field its schema does not list`);
    checked += 1;
  }
  assert.ok(checked >= MUST_HAVE.length, `${checked} examples checked`);
});
