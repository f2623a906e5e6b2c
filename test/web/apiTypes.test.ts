// The app's API types are generated from the service's own OpenAPI document (npm run web:api); the committed file
// must equal a fresh generation, so a route whose shape changed fails here, and the app's typecheck (npm run
// typecheck) then fails wherever the app uses it.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { generateSchemaTypes, openApiDocument, SCHEMA_FILE } from '../../src/app/webApiTypes.ts';
import { startTestServer } from '../helpers/server.ts';

test('the committed API types equal a fresh generation from the route table', async () => {
  const fresh = await generateSchemaTypes();
  assert.ok(fresh === fs.readFileSync(SCHEMA_FILE, 'utf8'), 'src/web/app/api/schema.d.ts is out of date: run npm run web:api and commit it');
  assert.match(fresh, /"\/api\/auth\/login": \{/);
});

test('the document built without a server is the one the service serves (paths and operations)', async () => {
  const server = await startTestServer();
  try {
    const served = (await server.request('GET', '/documentation/json')).body as { paths: Record<string, Record<string, { operationId: string }>> };
    const built = openApiDocument() as { paths: typeof served.paths };
    const operations = (doc: typeof served) =>
      Object.entries(doc.paths)
        .flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => `${method} ${path} ${op.operationId}`))
        .sort();
    assert.deepEqual(operations(built), operations(served));
    assert.deepEqual(JSON.stringify(built.paths), JSON.stringify(served.paths));
  } finally {
    await server.close();
  }
});
