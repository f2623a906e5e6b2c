// The staff app's frame: served by the service (index.html for a browser navigation to / or a client-side route,
// hashed assets cached for a year, a strict CSP with no inline script or style), the security floor unchanged, the
// wallboard's URLs kept, the first screen's JS+CSS ≤ 120 KiB gzipped, language from the browser else the site,
// numbers in the locale's form, light and dark, four screen sizes without sideways scrolling, keyboard navigation.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertNoProblems, expectAttribute, expectText, goInside, openPage, type Rig, shot, signInThroughForm, startRig, VIEWPORTS } from './rig.ts';
import type { TestUser } from '../helpers/server.ts';

let rig: Rig;
let admin: TestUser;
before(async () => {
  rig = await startRig();
  admin = await rig.server.createUser({ role: 'admin', username: 'frame-admin' });
  const token = admin.accessToken;
  assert.equal(
    (
      await rig.server.request('PUT', '/api/energy/areas', {
        token,
        body: { areas: [{ name: 'HVAC', todayKwh: 1234.5, monthKwh: 23456.7, yearKwh: 100000, powerKw: 12.5 }] },
      })
    ).status,
    200,
  );
});
after(() => rig?.close());

const HTML = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };

describe('over HTTP', () => {
  test('/ and client-side routes answer the app under a strict CSP; assets are hashed, gzipped and cached for a year', async () => {
    for (const path of ['/', '/login', '/alerts', '/admin', '/dashboard', '/areas/HVAC']) {
      const page = await rig.server.request('GET', path, { headers: HTML });
      assert.equal(page.status, 200, path);
      assert.match(page.headers.get('content-type')!, /^text\/html/);
      const csp = page.headers.get('content-security-policy')!;
      assert.match(csp, /default-src 'none'/);
      assert.match(csp, /script-src 'self';/);
      assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
      assert.doesNotMatch(page.text, /<script(?![^>]*\ssrc=)[^>]*>/, 'no inline script');
      assert.doesNotMatch(page.text, /\sstyle=|<style/, 'no inline style');
      assert.match(page.text, /data-site-locale="en[^"]*" data-site-timezone="UTC"/);
      assert.equal(page.headers.get('cache-control'), 'no-cache');
      assert.equal((await rig.server.request('GET', path, { headers: { ...HTML, 'if-none-match': page.headers.get('etag')! } })).status, 304);
    }
    const index = await rig.server.request('GET', '/');
    const assets = [...index.text.matchAll(/(?:src|href)="(\/app-assets\/[^"]+)"/g)].map((m) => m[1]);
    assert.ok(assets.length >= 2, 'an entry script and a stylesheet');
    for (const asset of assets) {
      const answer = await fetch(rig.server.url + asset, { headers: { 'accept-encoding': 'gzip' } });
      assert.equal(answer.status, 200, asset);
      assert.equal(answer.headers.get('cache-control'), 'public, max-age=31536000, immutable');
      assert.equal(answer.headers.get('content-encoding'), 'gzip');
      assert.match(asset, /-[A-Za-z0-9_-]{8}\.(js|css)$/, 'content-hashed name');
    }
  });

  test('the site name rides on <html> escaped: a hostile one stays an attribute value', async () => {
    const hostile = '"><script>alert(1)</script><html lang="x';
    assert.equal((await rig.server.request('PUT', '/api/configs', { token: admin.accessToken, body: { siteName: hostile } })).status, 200);
    try {
      const page = await rig.server.request('GET', '/', { headers: HTML });
      assert.doesNotMatch(page.text, /<script>alert/);
      assert.match(page.text, /data-site-name="&quot;&gt;&lt;script&gt;alert\(1\)&lt;\/script&gt;&lt;html lang=&quot;x"/);
      assert.match(page.text, /data-site-currency="EUR"/);
    } finally {
      await rig.server.request('PUT', '/api/configs', { token: admin.accessToken, body: { siteName: 'EMS' } });
    }
  });

  test('the security floor is kept: API paths and non-browser requests answer as before', async () => {
    assert.equal((await rig.server.request('GET', '/api/nope')).status, 401);
    assert.equal((await rig.server.request('GET', '/api/nope', { headers: HTML })).status, 401, 'a browser asking for /api/... gets no page');
    assert.equal((await rig.server.request('GET', '/api/nope', { token: admin.accessToken })).status, 404);
    const json = await rig.server.request('GET', '/login');
    assert.equal(json.status, 401, 'an API client asking for /login gets the JSON 401');
    assert.equal(json.body.code, 'UNAUTHENTICATED');
    assert.equal((await rig.server.request('POST', '/login', { headers: HTML })).status, 401);
    assert.equal((await rig.server.request('GET', '/documentation', { headers: HTML })).status, 200);
    assert.equal((await rig.server.request('GET', '/app-assets/none-12345678.js')).status, 401, 'an unknown asset is not a page');
  });

  test('every documented wallboard URL is still the wallboard, and it links to the sign-in', async () => {
    for (const path of ['/wallboard', '/?rotate=20', '/?area=HVAC', '/?theme=light']) {
      const page = await rig.server.request('GET', path, { headers: HTML });
      assert.equal(page.status, 200, path);
      assert.match(page.text, /wallboard\.js/, `${path} is the wallboard`);
      assert.match(page.text, /href="\/login"/, 'links to the staff sign-in');
    }
  });
});

describe('in Chromium', () => {
  test('the first screen (sign-in, then the overview) loads at most 120 KiB of JS and CSS, gzipped, with no CSP violation', async () => {
    const { page, problems, context } = await openPage(rig.browser, `${rig.server.url}/`);
    const bytes: Record<string, number> = {};
    page.on('response', (response) => {
      if (/\.(js|css)$/.test(response.url())) bytes[new URL(response.url()).pathname] = Number(response.headers()['content-length']);
    });
    await page.reload();
    await signInThroughForm(page, 'frame-admin', admin.password);
    await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
    const total = Object.values(bytes).reduce((a, b) => a + b, 0);
    console.log(`first screen JS+CSS: ${(total / 1024).toFixed(1)} KiB gzipped in ${Object.keys(bytes).length} files`);
    assert.ok(total > 0 && total <= 120 * 1024, `${total} B`);
    assert.ok(!Object.keys(bytes).some((file) => /Meter|Alerts|Maintenance/.test(file)), `other screens load when opened: ${Object.keys(bytes)}`);
    assertNoProblems(problems, 'overview');
    await context.close();
  });

  test('language: the browser first, else the site; numbers in the locale form', async () => {
    const german = await openPage(rig.browser, `${rig.server.url}/`, { locale: 'de-DE' });
    await german.page.getByRole('heading', { name: 'Anmelden' }).waitFor();
    await signInThroughForm(german.page, 'frame-admin', admin.password);
    await german.page.getByRole('heading', { name: 'Übersicht', level: 1 }).waitFor();
    assert.equal(await german.page.getAttribute('html', 'lang'), 'de');
    await expectText(german.page.locator('tr[data-area="HVAC"] td').first(), '1.235');
    await german.context.close();
    assert.equal((await rig.server.request('PUT', '/api/configs', { token: admin.accessToken, body: { locale: 'fr-FR' } })).status, 200);
    try {
      const japanese = await openPage(rig.browser, `${rig.server.url}/`, { locale: 'ja-JP' });
      await japanese.page.getByRole('heading', { name: 'Connexion' }).waitFor();
      assert.equal(await japanese.page.getAttribute('html', 'lang'), 'fr');
      await japanese.context.close();
      const spanish = await openPage(rig.browser, `${rig.server.url}/login`, { locale: 'es-ES' });
      await spanish.page.getByRole('heading', { name: 'Iniciar sesión' }).waitFor();
      await spanish.context.close();
    } finally {
      await rig.server.request('PUT', '/api/configs', { token: admin.accessToken, body: { locale: 'en' } });
    }
  });

  test('light and dark: the system choice, and the toggle is kept across a reload', async () => {
    const { page, context } = await openPage(rig.browser, `${rig.server.url}/login`, { colorScheme: 'dark' });
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    assert.equal(await page.getAttribute('html', 'data-theme'), 'dark');
    const background = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    const dark = await background();
    await page.getByRole('button', { name: 'Switch to light theme' }).click();
    assert.equal(await page.getAttribute('html', 'data-theme'), 'light');
    assert.notEqual(await background(), dark);
    await page.reload();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    assert.equal(await page.getAttribute('html', 'data-theme'), 'light');
    await context.close();
  });

  test('four screen sizes, light and dark: nothing scrolls sideways; phone and tablet fold the navigation into a menu', async () => {
    for (const colorScheme of ['light', 'dark'] as const) {
      const { page, context, problems } = await openPage(rig.browser, `${rig.server.url}/`, { colorScheme });
      await signInThroughForm(page, 'frame-admin', admin.password);
      for (const size of VIEWPORTS) {
        await page.setViewportSize(size);
        for (const path of ['/', '/alerts', '/maintenance', '/settings']) {
          await goInside(page, path);
          const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
          assert.ok(overflow <= 0, `${path} at ${size.width}×${size.height} ${colorScheme}: ${overflow}px sideways`);
          await shot(page, `${path === '/' ? 'overview' : path.slice(1)}-${size.width}x${size.height}-${colorScheme}`);
        }
        const menu = page.getByRole('button', { name: 'Menu' });
        assert.equal(await menu.isVisible(), size.width < 1000, `menu button at ${size.width}`);
        if (size.width < 1000) {
          assert.equal(await page.getByRole('link', { name: 'Alerts' }).isVisible(), false);
          await menu.click();
          await page.getByRole('link', { name: 'Alerts' }).click();
          await page.getByRole('heading', { name: 'Alerts', level: 1 }).waitFor();
        }
      }
      assertNoProblems(problems, colorScheme);
      await context.close();
    }
  });

  test('keyboard: skip link first, then the navigation; Enter follows a link and focus lands on the new screen', async () => {
    const { page, context } = await openPage(rig.browser, `${rig.server.url}/`);
    await signInThroughForm(page, 'frame-admin', admin.password);
    await page.reload();
    await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Skip to content');
    let found = false;
    for (let i = 0; i < 8 && !found; i += 1) {
      await page.keyboard.press('Tab');
      found = (await page.evaluate(() => document.activeElement?.textContent)) === 'Alerts';
    }
    assert.ok(found, 'Alerts is reachable by Tab');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Alerts', level: 1 }).waitFor();
    assert.equal(new URL(page.url()).pathname, '/alerts');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'main');
    await expectAttribute(page.getByRole('link', { name: 'Alerts' }), 'aria-current', 'page');
    await context.close();
  });
});
