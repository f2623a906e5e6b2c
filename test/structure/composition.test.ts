// Services are built once when the service starts; building the route table from them writes nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { allRoutes } from '../../src/app/routes.ts';
import { startTestServer } from '../helpers/server.ts';

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

/** What a route table may construct: an answer, an error, or a value of the language's own made for one request. */
const PER_REQUEST =
  /^(?:Reply|Error|[A-Z]\w*Error|AppError|HttpError|BadRequest|TokenExpired|Unauthorized|Forbidden|NotFound|Conflict|PayloadTooLarge|TooManyRequests|MethodNotAllowed|UnsupportedMediaType|BadGateway|GatewayTimeout|ServiceUnavailable|Date|Set|Map|URL|URLSearchParams|Promise|PassThrough|TextEncoder|TextDecoder|Uint8Array|Float64Array|Array|RegExp|Blob)$/;

test('services are built once, in the composition root: no route table constructs a service or a store', async () => {
  const fs = await import('node:fs');
  const path = await import('node:path');
  const src = path.resolve(import.meta.dirname, '../../src');
  const routeFiles = fs.readdirSync(src, { recursive: true, encoding: 'utf8' }).filter((file) => /(^|\/)([a-zA-Z]*Routes|routes)\.ts$/.test(file));
  assert.ok(routeFiles.length >= 15, `found ${routeFiles.length} route files`);
  const offenders: string[] = [];
  for (const file of routeFiles) {
    const text = fs.readFileSync(path.join(src, file), 'utf8');
    // Any object a route table constructs is one the composition root should build once, except answers, errors and
    // the language's own values made per request.
    for (const match of text.matchAll(/new ([A-Z]\w*)\(|create\w*Store\(/g))
      if (!match[1] || !PER_REQUEST.test(match[1])) offenders.push(`${file}: ${match[0]}`);
  }
  assert.deepEqual(offenders, [], 'route tables receive their services from src/app/features.ts');
});

test('the dashboard, the wallboard and the configs routes share one config store: a change shows on the next read of each', async () => {
  const server = await startTestServer();
  try {
    const admin = await server.createUser({ role: 'admin' });
    await server.request('GET', '/api/dashboard');
    await server.request('GET', '/api/wallboard');
    const renamed = await server.request('PUT', '/api/configs', { token: admin.accessToken, body: { siteName: 'Plant North' } });
    assert.equal(renamed.status, 200);
    assert.equal((await server.request('GET', '/api/dashboard')).body.platform.siteName, 'Plant North');
    assert.equal((await server.request('GET', '/api/wallboard')).body.platform.siteName, 'Plant North');
  } finally {
    await server.close();
  }
});
