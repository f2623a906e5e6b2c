// Services are built once when the service starts; building the route table from them writes nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { allRoutes } from '../src/routes.ts';
import { startTestServer } from './helpers/server.ts';

test('the route table is built from the started services without a database write', async () => {
  const server = await startTestServer();
  try {
    const { deps } = server.service;
    const changes = deps.db.sqlite.prepare('SELECT total_changes()').pluck();
    const fault = await server.createUser({ role: 'operator' });
    await server.request('POST', '/api/faults', { token: fault.accessToken, body: { device: 'pump', severity: 'low' } });
    const before = changes.get();
    const routes = allRoutes(deps);
    assert.ok(routes.length > 50);
    assert.equal(changes.get(), before, 'no write while the route table is built');
    // A route table built again serves the same service objects: a write through the API is seen by deps.faults.
    assert.equal(deps.faults.stats().total, 1);
  } finally {
    await server.close();
  }
});
