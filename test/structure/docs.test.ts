// The API reference: OpenAPI 3.1 from the route table, a page that works offline, and (in Chromium) the automatic bearer token.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../helpers/chromium.ts';
import { startTestServer, TEST_PASSWORD, type TestServer } from '../helpers/server.ts';
import { allRoutes } from '../../src/app/routes.ts';

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
    const routes = allRoutes(server.service.deps);
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

describe('reference page in headless Chromium', () => {
  let browser: Browser;
  before(async () => {
    browser = await launchChromium();
  });
  after(() => browser?.close());

  test('works offline and applies the bearer token after /api/auth/login is called from it', async () => {
    const { user } = await server.createUser({ role: 'operator' });
    const context = await browser.newContext();
    const foreign: string[] = [];
    // No internet on the LAN: anything not served by the appliance is refused.
    await context.route('**/*', (route) => {
      const url = new URL(route.request().url());
      if (url.origin === server.url) return route.continue();
      foreign.push(url.href);
      return route.abort();
    });
    const page = await context.newPage();
    // A busy box: swagger-ui takes seconds to read the document, and each click re-renders it.
    page.setDefaultTimeout(120_000);
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(`${server.url}/documentation`);
    await page.waitForSelector('.swagger-ui .info .title', { timeout: 180_000 });
    assert.deepEqual(errors, []);

    // Swagger UI 5.3x renders the operations of a long document as they scroll into view (134 operations here).
    const reveal = async (operationId: string) => {
      const block = page.locator(`#operations-auth-${operationId}`);
      for (let step = 0; step < 200 && (await block.count()) === 0; step += 1) {
        await page.mouse.wheel(0, 400);
        await page.waitForTimeout(50);
      }
      return block;
    };
    const run = async (operationId: string, body?: string) => {
      const block = await reveal(operationId);
      await block.locator('.opblock-summary').click();
      await block.locator('button.try-out__btn').click();
      if (body !== undefined) await block.locator('textarea.body-param__text').fill(body);
      const responsePromise = page.waitForResponse((r) => r.request().method() !== 'OPTIONS' && new URL(r.url()).pathname.startsWith('/api/auth/'));
      await block.locator('button.execute').click();
      const response = await responsePromise;
      return { status: response.status(), authorization: await response.request().headerValue('authorization') };
    };

    const beforeLogin = await run('getApiAuthMe');
    assert.equal(beforeLogin.status, 401);
    const login = await run('postApiAuthLogin', JSON.stringify({ username: user.username, password: TEST_PASSWORD }));
    assert.equal(login.status, 200);
    // The interceptor runs after the network response arrives: wait for it rather than racing it.
    await page.waitForFunction(() => window.localStorage.getItem('ems.accessToken') !== null, undefined, { timeout: 60_000 });
    const stored = await page.evaluate(() => window.localStorage.getItem('ems.accessToken'));
    assert.ok(stored && stored.split('.').length === 3, 'the access token is stored in the browser');

    const me = await reveal('getApiAuthMe');
    const responsePromise = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/auth/me');
    await me.locator('button.execute').click();
    const afterLogin = await responsePromise;
    assert.equal(afterLogin.status(), 200);
    assert.equal(await afterLogin.request().headerValue('authorization'), `Bearer ${stored}`);
    const body = await afterLogin.json();
    assert.equal(body.username, user.username);
    assert.ok(
      foreign.every((href) => href.startsWith('https://fonts.')),
      `unexpected external requests: ${foreign.join(', ')}`,
    );
    await context.close();
  });
});
