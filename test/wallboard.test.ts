// The wallboard at / : served by the appliance under a strict CSP, rendered in Chromium from the public payload only,
// updating itself, marked stale while the service is away and recovering when it is back.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startTestServer, type TestServer } from './helpers/server.ts';

const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const shots = fs.mkdtempSync(path.join(os.tmpdir(), 'ems-wallboard-'));

let server: TestServer;
let admin: string;
before(async () => {
  server = await startTestServer();
  admin = (await server.createUser({ role: 'admin' })).accessToken;
  const areas = [
    { name: 'Office', todayKwh: 412.5, monthKwh: 9120.25, yearKwh: 101000, powerKw: 61.3 },
    { name: 'Plant room', todayKwh: 1210.75, monthKwh: 25300.5, yearKwh: 290000, powerKw: 158.4 },
  ];
  assert.equal((await server.request('PUT', '/api/energy/areas', { token: admin, body: { areas } })).status, 200);
  assert.equal((await server.request('PUT', '/api/configs', { token: admin, body: { siteName: 'North Campus', refreshIntervalSec: 5 } })).status, 200);
});
after(() => server?.close());

describe('pages over HTTP', () => {
  test('/ and /wallboard: public HTML under a CSP without inline script or style, ETag and 304', async () => {
    for (const url of ['/', '/wallboard']) {
      const page = await server.request('GET', url);
      assert.equal(page.status, 200);
      assert.match(page.headers.get('content-type')!, /^text\/html/);
      const csp = page.headers.get('content-security-policy')!;
      assert.match(csp, /default-src 'none'/);
      assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
      assert.doesNotMatch(page.text, /<script(?![^>]*\ssrc=)[^>]*>/, 'no inline script');
      assert.doesNotMatch(page.text, /\sstyle=|<style/, 'no inline style');
      const etag = page.headers.get('etag')!;
      assert.ok(etag);
      assert.equal((await server.request('GET', url, { headers: { 'if-none-match': etag } })).status, 304);
    }
  });

  test('assets are gzip-encoded when asked, and every one the page names is served', async () => {
    const page = await server.request('GET', '/');
    const assets = [...page.text.matchAll(/(?:src|href)="(\/[^"]+)"/g)].map((m) => m[1]).filter((href) => href !== '/documentation');
    assert.ok(assets.length >= 5);
    for (const asset of assets) {
      const response = await fetch(server.url + asset, { headers: { 'accept-encoding': 'gzip' } });
      assert.equal(response.status, 200, asset);
      await response.arrayBuffer();
    }
    const raw = await new Promise<{ encoding?: string }>((resolve) => {
      void import('node:http').then(({ get }) => get(`${server.url}/wallboard/assets/uPlot.iife.min.js`, { headers: { 'accept-encoding': 'gzip' } }, (res) => {
        res.resume();
        resolve({ encoding: res.headers['content-encoding'] });
      }));
    });
    assert.equal(raw.encoding, 'gzip');
  });

  test('/favicon.ico is a public icon', async () => {
    const icon = await fetch(`${server.url}/favicon.ico`);
    assert.equal(icon.status, 200);
    assert.equal(icon.headers.get('content-type'), 'image/x-icon');
    const bytes = Buffer.from(await icon.arrayBuffer());
    assert.deepEqual([...bytes.subarray(0, 4)], [0, 0, 1, 0], 'an ICO header');
  });
});

describe('in Chromium', () => {
  let browser: Browser;
  const outside: string[] = [];
  const problems: string[] = [];
  before(async () => {
    browser = await chromium.launch({
      executablePath: chromiumPath,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  });
  after(() => browser?.close());

  async function open(url: string, viewport = { width: 1920, height: 1080 }): Promise<Page> {
    const page = await browser.newPage({ viewport });
    const origin = new URL(server.url).origin;
    await page.route('**/*', (route) => {
      const requested = route.request().url();
      if (requested.startsWith(origin)) return route.continue();
      outside.push(requested);
      return route.abort();
    });
    page.on('console', (message) => message.type() === 'error' && problems.push(message.text()));
    page.on('pageerror', (error) => problems.push(error.message));
    await page.goto(url);
    await page.waitForSelector('[data-field="powerKw"][data-value]');
    return page;
  }

  const value = (page: Page, field: string) => page.getAttribute(`[data-field="${field}"]`, 'data-value');

  test('shows the same figures as /api/dashboard, draws the weekly chart, at 1920×1080 and 768×1024', async () => {
    const page = await open(`${server.url}/`);
    const payload = (await server.request('GET', '/api/dashboard')).body;
    assert.equal(Number(await value(page, 'powerKw')), payload.overview.powerKw);
    assert.equal(Number(await value(page, 'todayKwh')), payload.overview.energyTodayKwh);
    assert.equal(Number(await value(page, 'monthKwh')), payload.overview.energyMonthKwh);
    assert.equal(Number(await value(page, 'todayCost')), payload.overview.costToday);
    assert.equal(Number(await value(page, 'activeAlerts')), payload.overview.activeAlerts);
    assert.equal(await page.textContent('[data-field="siteName"]'), 'North Campus');
    assert.match((await page.textContent('[data-field="powerKw"]'))!, /219[.,]7/);
    const cards = await page.$$eval('.area', (nodes) => nodes.map((node) => [node.getAttribute('data-area'), Number(node.querySelector('.now')!.getAttribute('data-value'))]));
    assert.deepEqual(cards, payload.areas.map((area: { name: string; powerKw: number }) => [area.name, area.powerKw]));
    assert.deepEqual(JSON.parse((await page.getAttribute('.chart', 'data-values'))!), payload.weeklyEnergy.days.map((day: { kwh: number }) => day.kwh));
    await page.waitForSelector('.chart canvas');
    await page.screenshot({ path: path.join(shots, 'wallboard-1920x1080.png') });
    await page.setViewportSize({ width: 768, height: 1024 });
    await page.screenshot({ path: path.join(shots, 'wallboard-768x1024.png'), fullPage: true });
    await page.close();
    assert.deepEqual(outside, [], 'no request leaves the box');
    assert.deepEqual(problems, [], 'no console error or CSP violation');
    console.log(`# screenshots in ${shots}`);
  });

  test('?area= narrows the page to one area', async () => {
    const page = await open(`${server.url}/wallboard?area=${encodeURIComponent('Plant room')}`);
    assert.equal(Number(await value(page, 'powerKw')), 158.4);
    assert.equal(Number(await value(page, 'todayKwh')), 1210.75);
    assert.equal(await page.$$eval('.area', (nodes) => nodes.length), 1);
    await page.close();
  });

  test('updates itself when the figures change, with no reload', async () => {
    const page = await open(`${server.url}/`);
    await page.evaluate(() => ((window as unknown as { marker: number }).marker = 42));
    const created = await server.request('POST', '/api/alerts', { token: admin, body: { title: 'Chiller trip', level: 'critical' } });
    assert.equal(created.status, 201);
    await page.waitForSelector('[data-field="alerts.critical"][data-value="1"]', { timeout: 20_000 });
    assert.equal(await page.evaluate(() => (window as unknown as { marker: number }).marker), 42, 'the same document, not a reload');
    await page.close();
  });

  test('shows "stale since" while the service is away, keeps the figures, and recovers when it is back', async () => {
    const page = await open(`${server.url}/`);
    const before = await value(page, 'powerKw');
    const { port } = new URL(server.url);
    const dataDir = server.dataDir;
    await server.service.close();
    await page.waitForSelector('.stale:not([hidden])', { timeout: 20_000 });
    assert.match((await page.textContent('.stale'))!, /since .* service cannot be reached/);
    assert.equal(await value(page, 'powerKw'), before, 'the last good figures stay');
    await page.screenshot({ path: path.join(shots, 'wallboard-stale.png') });
    server = await startTestServer({ EMS_DATA_DIR: dataDir, EMS_PORT: port });
    await page.waitForSelector('.stale', { state: 'hidden', timeout: 20_000 });
    await page.close();
  });
});
