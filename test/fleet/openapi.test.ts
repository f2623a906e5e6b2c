// The fleet's OpenAPI document (issue 55 item 5), in process (no database): it is the route table, every operation
// declares the refusals the app gives for its access, path and body, and the staff app's fleet types are generated
// from it (the committed src/web/app/fleet/api.d.ts is what `npm run web:api` writes now).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { buildFleetOpenApi } from '../../src/fleet/openapi.ts';
import { FLEET_ROUTES } from '../../src/fleet/routes.ts';
import { FLEET_SCHEMA_FILE, generateFleetSchemaTypes } from '../../src/fleet/webApiTypes.ts';

test('the document lists every route of the table once, with the statuses its access, path and body give', () => {
  const doc = buildFleetOpenApi({ version: '1.2.3' }) as any;
  const operations = Object.entries<any>(doc.paths).flatMap(([path, item]) =>
    Object.entries<any>(item).map(([method, op]) => ({ key: `${method.toUpperCase()} ${path}`, op })),
  );
  assert.deepEqual(operations.map((o) => o.key).sort(), FLEET_ROUTES.map((r) => `${r.method} ${r.path.replace(/:([a-z]+)/g, '{$1}')}`).sort());
  const statuses = (key: string) => Object.keys(operations.find((o) => o.key === key)!.op.responses).map(Number);
  assert.deepEqual(statuses('GET /api/fleet/health'), [200, 431, 503]);
  assert.deepEqual(statuses('POST /api/fleet/ingest'), [200, 400, 401, 409, 413, 422, 429, 431, 503]);
  assert.deepEqual(statuses('PATCH /api/fleet/sites/{id}'), [204, 400, 401, 403, 404, 413, 431, 503]);
  assert.deepEqual(statuses('GET /api/fleet/sites/{id}/meters'), [200, 401, 404, 431, 503]);
  assert.deepEqual(statuses('POST /api/fleet/sites/{id}/alerts/{alert}/acknowledge'), [202, 401, 403, 404, 409, 431, 503]);
  const ids = operations.map((o) => o.op.operationId);
  assert.equal(new Set(ids).size, ids.length, 'operation ids are unique');
  assert.equal(doc.info.version, '1.2.3');
});

test('the staff app’s fleet types are generated from the document and committed as generated', async () => {
  assert.ok(
    (await generateFleetSchemaTypes()) === fs.readFileSync(FLEET_SCHEMA_FILE, 'utf8'),
    'src/web/app/fleet/api.d.ts is out of date: run npm run web:api and commit it',
  );
});
