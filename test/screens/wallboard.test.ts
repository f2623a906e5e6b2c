// The wallboard at / : served by the appliance under a strict CSP, rendered in Chromium from GET /api/wallboard only.
// At five screen sizes with 5 and 60 areas and six-digit figures nothing is clipped, overlapping or off-screen
// (measured from element boxes); the figures are the API's; an area view charts that area; an unknown area says so;
// stale or failing data is shown as such — the service stopped, or a gateway answering 503 to every read.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import type http from 'node:http';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, ElementHandle, Page } from 'playwright-core';
import { addDays, siteDay } from '../../src/platform/time/calendar.ts';
import { launchChromium } from '../helpers/chromium.ts';
import { startFakeGateway, type FakeGateway, type RecordedRequest } from '../helpers/fakeGateway.ts';
import { eventually, startTestServer, type TestServer } from '../helpers/server.ts';
import { layoutProblems } from '../helpers/wallboardLayout.ts';

/** Screenshots are for people to look at; they stay out of the repository. */
const shots = process.env.WALLBOARD_SHOTS ?? '/work/notes/wallboard-shots';
fs.mkdirSync(shots, { recursive: true });

const VIEWPORTS = [
  { width: 390, height: 844 },
  { width: 768, height: 1024 },
  { width: 1280, height: 720 },
  { width: 1920, height: 1080 },
  { width: 3840, height: 2160 },
];
const PERSONAL = 'call Jane Doe on 0123 456';

/** n areas whose site totals are six-digit figures; the largest area alone is six digits too. */
function areaSet(n: number) {
  return Array.from({ length: n }, (_, i) => {
    const big = i === 0;
    const name = i % 7 === 3 ? `Building ${i} east wing ventilation and heat recovery` : `Area ${String(i).padStart(2, '0')}`;
    const todayKwh = big ? 100234.5 : Math.round((23222.2 / (n - 1)) * (1 + ((i * 37) % 11) / 10) * 10) / 10;
    const monthKwh = big ? 654321.9 : Math.round(todayKwh * 9.7 * 10) / 10;
    return { name, todayKwh, monthKwh, yearKwh: monthKwh * 11, powerKw: big ? 3210.4 : Math.round(todayKwh / 9) / 10 };
  });
}

let server: TestServer;
let admin: string;
before(async () => {
  server = await startTestServer();
  admin = (await server.createUser({ role: 'admin' })).accessToken;
  assert.equal((await server.request('PUT', '/api/configs', { token: admin, body: { siteName: 'North Campus', refreshIntervalSec: 5 } })).status, 200);
  const now = Date.now();
  for (const [title, level, minutesAgo] of [
    ['Chiller 2 tripped on high pressure', 'critical', 95],
    ['Boiler lockout', 'critical', 3 * 24 * 60 + 125],
    ['AHU-3 filter differential pressure high', 'warning', 20],
    ['Supply air temperature deviation in the east wing', 'warning', 600],
  ] as const) {
    const created = await server.request('POST', '/api/alerts', {
      token: admin,
      body: { title, level, message: PERSONAL, area: 'Area 01', occurredAt: new Date(now - minutesAgo * 60_000).toISOString() },
    });
    assert.equal(created.status, 201);
  }
});
after(() => server?.close());

/** Replaces the area cards and gives the six days before today figures too (as earlier PUTs would have recorded). */
async function useAreas(n: number): Promise<void> {
  const areas = areaSet(n);
  assert.equal((await server.request('PUT', '/api/energy/areas', { token: admin, body: { areas } })).status, 200);
  const today = siteDay('UTC');
  const total = areas.reduce((sum, area) => sum + area.todayKwh, 0);
  const upsert = server.service.deps.db.sqlite.prepare(
    'INSERT INTO energy_daily (day, area, kwh) VALUES (?, ?, ?) ON CONFLICT(day, area) DO UPDATE SET kwh = excluded.kwh',
  );
  for (let back = 1; back <= 6; back += 1) {
    const factor = 0.7 + ((back * 13) % 7) / 10;
    upsert.run(addDays(today, -back), 'total', Math.round(total * factor * 10) / 10);
    for (const area of areas) upsert.run(addDays(today, -back), area.name, Math.round(area.todayKwh * factor * 10) / 10);
  }
}

describe('pages over HTTP', () => {
  test('/wallboard and / with a wallboard parameter: public HTML under a CSP without inline script or style, ETag and 304', async () => {
    for (const url of ['/?rotate=10', '/wallboard']) {
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

  test('assets are gzip-encoded when asked, every one the page names is served, and a first visit stays under 50 KB', async () => {
    const page = await server.request('GET', '/wallboard');
    const assets = [...page.text.matchAll(/(?:src|href)="(\/[^"]+)"/g)]
      .map((m) => m[1])
      .filter((href) => !['/documentation', '/wallboard', '/login'].includes(href));
    assert.ok(assets.length >= 3);
    const { get } = await import('node:http');
    const gzipped = (url: string) =>
      new Promise<{ status: number; encoding?: string; bytes: number }>((resolve, reject) => {
        get(server.url + url, { headers: { 'accept-encoding': 'gzip' } }, (res) => {
          let bytes = 0;
          res.on('data', (chunk: Buffer) => (bytes += chunk.length));
          res.on('end', () => resolve({ status: res.statusCode!, encoding: res.headers['content-encoding'], bytes }));
        }).on('error', reject);
      });
    let total = 0;
    for (const url of ['/wallboard', ...assets, '/api/wallboard']) {
      const answer = await gzipped(url);
      assert.equal(answer.status, 200, url);
      total += answer.bytes;
    }
    assert.equal((await gzipped('/wallboard/assets/wallboard.js')).encoding, 'gzip');
    // Bodies only; the bench counts headers too (npm run bench:wallboard).
    assert.ok(total < 50_000, `first visit ${total} B`);
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
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    assert.deepEqual(outside, [], 'no request leaves the box');
    assert.deepEqual(problems, [], 'no console error or CSP violation');
  });

  async function open(url: string, viewport = { width: 1920, height: 1080 }, ready = '[data-field="powerKw"][data-value]'): Promise<Page> {
    const page = await browser.newPage({ viewport });
    // tsx names functions through a __name helper the page does not have: layoutProblems runs there.
    await page.addInitScript({ content: 'window.__name = (f) => f;' });
    const origin = new URL(url).origin;
    await page.route('**/*', (route) => {
      const requested = route.request().url();
      if (requested.startsWith(origin)) return route.continue();
      outside.push(requested);
      return route.abort();
    });
    // A failed fetch while a test stops the service on purpose is logged by Chromium as a console error: not a fault.
    page.on(
      'console',
      (message) => message.type() === 'error' && !/ERR_CONNECTION_REFUSED|Failed to load resource/.test(message.text()) && problems.push(message.text()),
    );
    page.on('pageerror', (error) => problems.push(error.message));
    await page.goto(url);
    await page.waitForSelector(ready);
    return page;
  }

  async function resize(page: Page, viewport: { width: number; height: number }): Promise<void> {
    await page.setViewportSize(viewport);
    await page.waitForFunction((size) => document.body.dataset.layoutFor === size, `${viewport.width}x${viewport.height}`);
  }

  const value = (page: Page, field: string) => page.getAttribute(`[data-field="${field}"]`, 'data-value');

  /** Everything the page shows against the payload it was built from, as the API answers it now. */
  async function sameFiguresAsApi(page: Page, apiPath: string): Promise<any> {
    const payload = (await server.request('GET', apiPath)).body;
    for (const [field, expected] of [
      ['powerKw', payload.figures.powerKw],
      ['todayKwh', payload.figures.todayKwh],
      ['monthKwh', payload.figures.monthKwh],
    ] as const) {
      assert.equal(Number(await value(page, field)), expected, field);
      const shown = Number((await page.textContent(`[data-field="${field}"]`))!.replace(/[^\d.]/g, ''));
      assert.ok(Math.abs(shown - expected) <= 0.5, `${field} shows ${shown} for ${expected}`);
    }
    assert.deepEqual(
      JSON.parse((await page.getAttribute('.chart', 'data-values'))!),
      payload.weeklyEnergy.days.map((day: { kwh: number }) => day.kwh),
    );
    assert.deepEqual(
      await page.$$eval('.bar-col', (nodes) => nodes.map((node) => (node.getAttribute('data-value') === '' ? null : Number(node.getAttribute('data-value'))))),
      payload.weeklyEnergy.days.map((day: { kwh: number | null }) => day.kwh),
    );
    // A day with no data says so instead of drawing a zero.
    const shown = await page.$$eval('.bar-value', (nodes) => nodes.map((node) => node.textContent));
    payload.weeklyEnergy.days.forEach((day: { kwh: number | null }, i: number) => {
      if (day.kwh === null) assert.equal(shown[i], 'No data');
      else assert.notEqual(shown[i], 'No data');
    });
    const titles = await page.$$eval('.alert .title', (nodes) => nodes.map((node) => node.textContent));
    assert.ok(titles.length >= 1);
    assert.deepEqual(
      titles,
      payload.alerts.active.slice(0, titles.length).map((alert: { title: string }) => alert.title),
    );
    return payload;
  }

  test('5 and 60 areas at 390×844, 768×1024, 1280×720, 1920×1080 and 3840×2160: the API figures, nothing clipped, overlapping or off-screen', async () => {
    let page: Page | undefined;
    for (const count of [5, 60]) {
      await useAreas(count);
      if (!page) page = await open(`${server.url}/wallboard`);
      else await page.reload();
      await page.waitForSelector(`[data-field="todayKwh"][data-value]`);
      for (const viewport of VIEWPORTS) {
        await resize(page, viewport);
        const payload = await sameFiguresAsApi(page, '/api/wallboard');
        // The largest areas in order, and one row summing exactly the rest.
        const rows: (string | number | null)[][] = await page.$$eval('.area[data-area]', (nodes) =>
          nodes.map((node) => [node.getAttribute('data-area'), Number(node.getAttribute('data-today')), Number(node.getAttribute('data-power'))]),
        );
        assert.ok(rows.length >= Math.min(count, 3), `${rows.length} area rows at ${viewport.width}×${viewport.height}`);
        assert.deepEqual(
          rows,
          payload.areas.slice(0, rows.length).map((area: any) => [area.name, area.todayKwh, area.powerKw]),
        );
        const rest: { todayKwh: number }[] = payload.areas.slice(rows.length);
        const restRow: ElementHandle | null = await page.$('.area.rest');
        if (rest.length) {
          assert.ok(restRow, 'a row for the rest');
          assert.equal(Number(await restRow.getAttribute('data-rest-count')), rest.length);
          const restToday = rest.reduce((sum, area) => sum + area.todayKwh, 0);
          assert.ok(Math.abs(Number(await restRow.getAttribute('data-today')) - restToday) < 1e-6);
        } else assert.equal(restRow, null);
        // Every screen from 700 px wide is one screen (landscape or portrait); a phone scrolls, downwards only.
        const oneScreen = viewport.width >= 700;
        const found: string[] = await page.evaluate(layoutProblems, oneScreen);
        const file = path.join(shots, `areas${count}-${viewport.width}x${viewport.height}.png`);
        await page.screenshot({ path: file, fullPage: !oneScreen });
        assert.deepEqual(found, [], `${count} areas at ${viewport.width}×${viewport.height} (${file})`);
      }
    }
    assert.doesNotMatch((await page!.textContent('body')) ?? '', /Jane|0123/, 'no alert message text');
    await page!.close();
  });

  test('?area= charts that area with its own figures; an unknown area is said to be unknown', async () => {
    await useAreas(5);
    const page = await open(`${server.url}/wallboard?area=${encodeURIComponent('Area 01')}`);
    assert.equal(await page.textContent('[data-field="scope"]'), 'Area 01');
    const payload = await sameFiguresAsApi(page, '/api/wallboard?area=Area%2001');
    const site = (await server.request('GET', '/api/wallboard')).body;
    assert.notDeepEqual(payload.weeklyEnergy.days, site.weeklyEnergy.days, 'the area, not the site');
    assert.equal(await page.isVisible('.areas-panel'), false);
    assert.deepEqual(await page.evaluate(layoutProblems, true), []);
    await page.screenshot({ path: path.join(shots, 'area-1920x1080.png') });

    await page.goto(`${server.url}/wallboard?area=Area%2077`);
    await page.waitForSelector('.notice:not([hidden])');
    assert.equal(await page.textContent('[data-field="noticeTitle"]'), 'No area called “Area 77”');
    const known = (await page.textContent('[data-field="noticeText"]'))!;
    for (const name of ['Area 00', 'Area 01', 'Area 04']) assert.ok(known.includes(name), known);
    assert.equal(await page.isVisible('main'), false, 'no figures that could pass for the area');
    await page.setViewportSize({ width: 390, height: 844 });
    assert.deepEqual(await page.evaluate(layoutProblems, false), []);
    await page.screenshot({ path: path.join(shots, 'unknown-area-390x844.png') });
    await page.close();
  });

  test('?theme=light: the same layout on a bright background, nothing clipped or overlapping', async () => {
    const page = await open(`${server.url}/?theme=light`, { width: 1280, height: 720 });
    assert.equal(await page.evaluate(() => document.documentElement.className), 'theme-light');
    assert.deepEqual(await page.evaluate(layoutProblems, true), []);
    await page.screenshot({ path: path.join(shots, 'light-1280x720.png') });
    await page.close();
  });

  test("how long an alert has been active is written in the site's language and units", async () => {
    const since = async (page: Page) => page.$eval('.alert[data-level="critical"]:has(.title:text-is("Boiler lockout")) .meta', (node) => node.textContent);
    const english = await open(`${server.url}/wallboard`);
    // Raised 3 days, 2 hours and 5 minutes ago.
    assert.equal(await since(english), 'Area 01 · for 3 days 2 hr');
    await english.close();
    assert.equal((await server.request('PUT', '/api/configs', { token: admin, body: { locale: 'de-DE' } })).status, 200);
    try {
      const german = await open(`${server.url}/wallboard`);
      assert.equal(await since(german), 'Area 01 · seit 3 Tg. 2 Std.');
      await german.close();
    } finally {
      assert.equal((await server.request('PUT', '/api/configs', { token: admin, body: { locale: 'en-US' } })).status, 200);
    }
  });

  test('a gateway alarm that cleared at the source reads "cleared at the source <time>, waiting for acknowledgement", not how long it has been active', async () => {
    const raised = Date.now() - (2 * 24 * 60 + 13 * 60) * 60_000;
    const clearedAt = new Date(raised + 30 * 60_000).toISOString();
    const created = await server.request('POST', '/api/alerts', {
      token: admin,
      body: { title: 'Server room temperature above 27 °C', level: 'critical', message: PERSONAL, area: 'Area 01', occurredAt: new Date(raised).toISOString() },
    });
    assert.equal(created.status, 201);
    const sqlite = server.service.deps.db.sqlite;
    sqlite.prepare('UPDATE alerts SET cleared_at = ? WHERE id = ?').run(clearedAt, created.body.id);
    try {
      const payload = (await server.request('GET', '/api/wallboard')).body;
      const listed = payload.alerts.active.find((alert: { title: string }) => alert.title === 'Server room temperature above 27 °C');
      assert.equal(listed.clearedAt, clearedAt);
      assert.ok(
        payload.alerts.active
          .filter((alert: { clearedAt: string | null }) => alert !== listed)
          .every((alert: { clearedAt: string | null }) => alert.clearedAt === null),
      );
      const page = await open(`${server.url}/wallboard`);
      const meta = await page.$eval('.alert[data-cleared] .meta', (node) => node.textContent);
      const time = new Intl.DateTimeFormat('en-US', { timeZone: 'UTC', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' }).format(
        new Date(clearedAt),
      );
      assert.equal(meta, `Area 01 · cleared at the source ${time}, waiting for acknowledgement`);
      assert.equal(await page.$eval('.alert:has(.title:text-is("Boiler lockout")) .meta', (node) => node.textContent), 'Area 01 · for 3 days 2 hr');
      await page.screenshot({ path: path.join(shots, 'cleared-alarm-1280x720.png') });
      await page.close();
    } finally {
      sqlite.prepare('DELETE FROM alerts WHERE id = ?').run(created.body.id);
    }
  });

  test('?rotate= moves between the site and each area by itself', async () => {
    const page = await open(`${server.url}/?rotate=3`);
    assert.equal(await page.textContent('[data-field="scope"]'), '');
    assert.match((await page.textContent('[data-field="rotation"]'))!, /view 1 of 6/);
    await page.waitForFunction(() => document.querySelector('[data-field="scope"]')!.textContent === 'Area 00', undefined, { timeout: 20_000 });
    assert.match((await page.textContent('[data-field="rotation"]'))!, /view 2 of 6/);
    assert.equal(Number(await value(page, 'todayKwh')), 100234.5);
    await page.close();
  });

  test('updates itself when the figures change, with no reload', async () => {
    const page = await open(`${server.url}/wallboard`);
    await page.evaluate(() => ((window as unknown as { marker: number }).marker = 42));
    const before = Number(await value(page, 'alerts.critical'));
    const created = await server.request('POST', '/api/alerts', { token: admin, body: { title: 'Chiller 1 trip', level: 'critical' } });
    assert.equal(created.status, 201);
    await page.waitForSelector(`[data-field="alerts.critical"][data-value="${before + 1}"]`, { timeout: 20_000 });
    assert.ok(await page.$('.alert[data-level="critical"]'));
    assert.equal(await page.evaluate(() => (window as unknown as { marker: number }).marker), 42, 'the same document, not a reload');
    await page.close();
  });

  test('shows "stale since" while the service is away, keeps the figures, and recovers when it is back', async () => {
    const page = await open(`${server.url}/wallboard`);
    const before = await value(page, 'powerKw');
    const { port } = new URL(server.url);
    const dataDir = server.dataDir;
    await server.service.close();
    await page.waitForSelector('.banner:not([hidden])', { timeout: 20_000 });
    assert.match((await page.textContent('.banner'))!, /Stale.*since .* service cannot be reached/);
    // Since the time of the figures on screen, the same time the header shows them "Updated" at.
    const updated = (await page.textContent('[data-field="updated"]'))!.replace('Updated ', '');
    assert.ok((await page.textContent('.banner'))!.includes(`since ${updated}`), 'since the figures on screen');
    assert.equal(await value(page, 'powerKw'), before, 'the last good figures stay');
    await page.screenshot({ path: path.join(shots, 'service-stopped-1920x1080.png') });
    server = await startTestServer({ EMS_DATA_DIR: dataDir, EMS_PORT: port });
    await page.waitForSelector('.banner', { state: 'hidden', timeout: 20_000 });
    await page.close();
  });

  describe('a gateway that answers 503 to every read', () => {
    let gateway: FakeGateway;
    let metered: TestServer;
    let broken = false;
    let kwh = 5000;
    before(async () => {
      gateway = await startFakeGateway();
      gateway.script('/codes/values', (request: RecordedRequest, res: http.ServerResponse) => {
        kwh += 0.25;
        const codes = (request.body as { codes: string[] }).codes;
        const body = broken
          ? '{"error":"service unavailable"}'
          : JSON.stringify({ data: codes.map((code) => ({ code, value: kwh, quality: 'good', ts: new Date().toISOString() })) });
        res.writeHead(broken ? 503 : 200, { 'content-type': 'application/json' });
        res.end(body);
      });
      metered = await startTestServer({
        EMS_IOT_BASE_URL: gateway.url,
        EMS_IOT_USERNAME: gateway.username,
        EMS_IOT_PASSWORD: gateway.password,
        EMS_COLLECT_INTERVAL: '2s',
      });
      const token = (await metered.createUser({ role: 'admin' })).accessToken;
      assert.equal(
        (await metered.request('POST', '/api/meters', { token, body: { name: 'Main', code: 'meter.main.kwh', kind: 'energy', site: true } })).status,
        201,
      );
      assert.equal((await metered.request('PUT', '/api/configs', { token, body: { refreshIntervalSec: 5 } })).status, 200);
      await eventually(async () => ((await metered.request('GET', '/api/wallboard')).body.dataState.lastGoodAt ? true : undefined), 'a good collection');
    });
    after(async () => {
      await metered?.close();
      await gateway?.close();
    });

    test('the page says the figures are not updating and the gateway is failing, then clears by itself', async () => {
      const page = await open(`${metered.url}/wallboard`);
      assert.equal(await page.getAttribute('body', 'data-state'), 'live');
      assert.equal(await page.textContent('[data-field="gateway"]'), 'Gateway online');
      broken = true;
      await page.waitForSelector('body[data-state="failing"]', { timeout: 20_000 });
      assert.match((await page.textContent('.banner'))!, /Not updating.*since .* the IoT gateway answers, but the meter readings fail/);
      assert.equal(await page.textContent('[data-field="gateway"]'), 'Gateway failing');
      assert.deepEqual(await page.evaluate(layoutProblems, true), []);
      await page.screenshot({ path: path.join(shots, 'gateway-503-1920x1080.png') });
      await resize(page, { width: 390, height: 844 });
      assert.deepEqual(await page.evaluate(layoutProblems, false), []);
      await page.screenshot({ path: path.join(shots, 'gateway-503-390x844.png'), fullPage: true });
      broken = false;
      await page.waitForSelector('body[data-state="live"]', { timeout: 20_000 });
      assert.equal(await page.isVisible('.banner'), false);
      await page.close();
    });
  });
});
