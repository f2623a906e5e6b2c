// /documentation as staff use it until the staff app exists: a filter over the operations, the token refreshed once
// (single-flight) when it expires or a call gets a 401, and a write whose body is still the prefilled example not sent.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { rotateStoredSecret } from '../../src/access/auth/signingKeys.ts';
import { launchChromium } from '../helpers/chromium.ts';
import { startTestServer, TEST_PASSWORD, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let browser: Browser;
before(async () => {
  // 60 s tokens: longer than the 30 s before expiry at which the page refreshes by itself, so a 401 comes from the server.
  server = await startTestServer({ EMS_ACCESS_TOKEN_TTL: '60s' });
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await server?.close();
});

async function openReference(): Promise<{ page: Page; refreshes: () => number; problems: string[] }> {
  const context = await browser.newContext();
  await context.route('**/*', (route) => (new URL(route.request().url()).origin === server.url ? route.continue() : route.abort()));
  const page = await context.newPage();
  // A busy box: swagger-ui takes seconds to read the document, and each click re-renders.
  page.setDefaultTimeout(120_000);
  // tsx names functions through a __name helper the page does not have: page.evaluate bodies run there.
  await page.addInitScript({ content: 'window.__name = (f) => f;' });
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(error.message));
  let refreshes = 0;
  page.on('request', (request) => {
    if (new URL(request.url()).pathname === '/api/auth/refresh') refreshes++;
  });
  await page.goto(`${server.url}/documentation`);
  await page.waitForSelector('.opblock', { timeout: 180_000 });
  return { page, refreshes: () => refreshes, problems };
}

/** Swagger UI renders the operations of a long document as they scroll into view. */
async function reveal(page: Page, tag: string, operationId: string) {
  const block = page.locator(`#operations-${tag}-${operationId}`);
  for (let step = 0; step < 300 && (await block.count()) === 0; step += 1) {
    await page.mouse.wheel(0, 400);
    await page.waitForTimeout(30);
  }
  return block;
}

async function tryOut(page: Page, tag: string, operationId: string, body?: string) {
  const block = await reveal(page, tag, operationId);
  await block.locator('.opblock-summary').click();
  await block.locator('button.try-out__btn').click();
  if (body !== undefined) await block.locator('textarea.body-param__text').fill(body);
  return block;
}

test('a filter box narrows the operations to a tag', async () => {
  const { page, problems } = await openReference();
  const filter = page.locator('input.operation-filter-input');
  assert.equal(await filter.count(), 1);
  assert.equal(await page.getAttribute('.opblock-tag', 'data-tag'), 'system', 'the first tag before filtering');
  await filter.fill('maintenance');
  await page.waitForFunction(() => [...document.querySelectorAll('.opblock-tag')].some((tag) => tag.getAttribute('data-tag') === 'maintenance'));
  const shown = await page.$$eval('.opblock-tag', (tags) => tags.map((tag) => tag.getAttribute('data-tag')));
  assert.ok(shown.includes('maintenance') && !shown.includes('energy') && shown.length <= 3, shown.join(', '));
  assert.deepEqual(problems, []);
  await page.context().close();
});

test('signed in on the page: a 401 after the signing secret changed is refreshed once and the call repeated; parallel 401s share it', async () => {
  const { user } = await server.createUser({ role: 'operator' });
  const { page, refreshes, problems } = await openReference();
  const login = await tryOut(page, 'auth', 'postApiAuthLogin', JSON.stringify({ username: user.username, password: TEST_PASSWORD }));
  const signedIn = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/auth/login');
  await login.locator('button.execute').click();
  assert.equal((await signedIn).status(), 200);
  await page.waitForFunction(() => window.localStorage.getItem('ems.refreshToken') !== null);
  const first = await page.evaluate(() => window.localStorage.getItem('ems.accessToken'));

  // Every access token issued so far is now refused (as after `emsctl secret rotate`).
  rotateStoredSecret(server.service.deps.db);
  await page.waitForTimeout(1100);
  const me = await tryOut(page, 'auth', 'getApiAuthMe');
  const answered = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/auth/me' && r.status() === 200);
  await me.locator('button.execute').click();
  const retried = await answered;
  assert.equal(await retried.request().headerValue('authorization'), `Bearer ${await page.evaluate(() => window.localStorage.getItem('ems.accessToken'))}`);
  // The repeated call's answer is what the page shows.
  await me.locator('.live-responses-table').getByText(`"username": "${user.username}"`).first().waitFor();
  await page.screenshot({ path: path.join(os.tmpdir(), 'ems-shots', 'reference-refreshed.png') });
  assert.equal(refreshes(), 1);
  assert.notEqual(await page.evaluate(() => window.localStorage.getItem('ems.accessToken')), first);

  // Three calls that all get a 401 at once: one refresh between them (a second would present a used refresh token).
  rotateStoredSecret(server.service.deps.db);
  await page.waitForTimeout(1100);
  const statuses = await page.evaluate(async () => {
    const interceptors = (window as any).ui.getConfigs();
    const call = async () => {
      const request = await interceptors.requestInterceptor({ url: `${location.origin}/api/auth/me`, method: 'GET', headers: {} });
      const res = await fetch(request.url, { headers: request.headers });
      const response = { ok: res.ok, url: res.url, status: res.status, method: 'GET', text: await res.text() };
      return (await interceptors.responseInterceptor(response)).status;
    };
    return Promise.all([call(), call(), call()]);
  });
  assert.deepEqual(statuses, [200, 200, 200]);
  assert.equal(refreshes(), 2);
  assert.deepEqual(problems, []);
  await page.context().close();
});

test('Execute on a write whose body is still the prefilled example sends nothing and says why', async () => {
  const { accessToken } = await server.createUser({ role: 'operator' });
  const { page } = await openReference();
  await page.evaluate((token) => window.localStorage.setItem('ems.accessToken', token), accessToken);
  const before = (await server.request('GET', '/api/maintenance', { token: accessToken })).body.total;
  const sent: string[] = [];
  page.on('request', (request) => {
    if (request.method() === 'POST' && new URL(request.url()).pathname === '/api/maintenance') sent.push(request.url());
  });
  const block = await tryOut(page, 'maintenance', 'postApiMaintenance');
  await block.locator('button.execute').click();
  await block.locator('.responses-wrapper').getByText('is still the prefilled EXAMPLE').first().waitFor();
  await page.screenshot({ path: path.join(os.tmpdir(), 'ems-shots', 'reference-example-refused.png') });
  assert.deepEqual(sent, []);
  assert.equal((await server.request('GET', '/api/maintenance', { token: accessToken })).body.total, before);

  // Edited, it is sent.
  const example = JSON.parse(await block.locator('textarea.body-param__text').inputValue());
  await block.locator('textarea.body-param__text').fill(JSON.stringify({ ...example, description: 'Replace the filter of AHU-1' }));
  const created = page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/api/maintenance');
  await block.locator('button.execute').click();
  assert.equal((await created).status(), 201);
  await page.context().close();
});
