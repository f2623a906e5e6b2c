// The API reference: OpenAPI 3.1 from the route table, a page that works offline, and (in Chromium) the automatic bearer token.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(() => server.close());

describe('OpenAPI document', () => {
  test('lists every route with its access, parameters and response schemas', async () => {
    const response = await server.request('GET', '/documentation/json');
    assert.equal(response.status, 200);
    const doc = response.body;
    assert.equal(doc.openapi, '3.1.0');
    const routes = server.service.routes;
    for (const route of routes) {
      const path = route.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
      const operation = doc.paths[path]?.[route.method.toLowerCase()];
      assert.ok(operation, `${route.method} ${route.path} documented`);
      assert.equal(operation['x-access'], route.access);
      assert.deepEqual(operation.security, route.access === 'public' ? [] : [{ bearerAuth: [] }]);
      const success = Object.keys(operation.responses).find((code) => code.startsWith('2'));
      assert.ok(success, `${route.path} has a success response`);
      if (route.schemas.body && route.bodyType !== 'multipart') assert.ok(operation.requestBody.content['application/json'].schema);
    }
    const login = doc.paths['/api/auth/login'].post;
    assert.deepEqual(login.requestBody.content['application/json'].schema.required.sort(), ['password', 'username']);
    assert.ok(login.responses['200'].content['application/json'].schema.properties.refreshToken);
  });
});

describe('reference page', () => {
  test('is public and loads only local assets', async () => {
    const page = await server.request('GET', '/documentation');
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /text\/html/);
    assert.match(page.headers.get('content-security-policy') ?? '', /default-src 'self'/);
    const scripts = [...page.text.matchAll(/<script src="([^"]+)"/g)].map((m) => m[1]);
    const styles = [...page.text.matchAll(/<link rel="stylesheet" href="([^"]+)"/g)].map((m) => m[1]);
    assert.equal(scripts.length, 2);
    for (const asset of [...scripts, ...styles.filter((href) => !href.startsWith('https://fonts.'))]) {
      assert.ok(asset.startsWith('/documentation/assets/'), asset);
      const response = await server.request('GET', asset);
      assert.equal(response.status, 200, asset);
      assert.ok(response.text.length > 1000);
    }
    assert.equal(
      (await server.request('GET', '/documentation/assets/0.0.0/swagger-ui-bundle.js')).status,
      401,
      'unknown asset paths fall through to the auth rule',
    );
  });
});

// The reference page in headless Chromium (offline, sign-in from the page, the token applied, refreshed once on a 401, a
// prefilled write example not sent) is test/platform/documentationPage.test.ts.
