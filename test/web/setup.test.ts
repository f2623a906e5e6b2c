// Set-up as Home Assistant does it (issue 53), in Chromium: on the first run the time zone is guessed from the browser
// and said so, the field is searchable (typed, with the zones as suggestions), a name that is no zone is refused
// naming the field, and the saved site name and zone apply to the open app at once, without a reload.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { TestUser } from '../helpers/server.ts';
import { assertNoProblems, axeViolations, expectText, goInside, type Rig, settled, shot, signInThroughForm, startRig } from './rig.ts';

let rig: Rig;
let admin: TestUser;
before(async () => {
  rig = await startRig();
  admin = await rig.server.createUser({ role: 'admin', username: 'setter' });
});
after(() => rig?.close());

test('the zone guessed from the browser, searchable, checked; name and zone applied at once', async () => {
  const context = await rig.browser.newContext({ viewport: { width: 1280, height: 800 }, locale: 'en-US', timezoneId: 'America/Chicago' });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (message) => message.type() === 'error' && problems.push(message.text()));
  page.on('pageerror', (error) => problems.push(String(error)));
  await page.goto(`${rig.server.url}/settings?firstRun=1`);
  await signInThroughForm(page, 'setter', admin.password);
  await page.getByRole('heading', { name: 'Set up this site' }).waitFor();
  await settled(page);
  const zone = page.getByLabel('Time zone');
  await page.waitForFunction(() => (document.querySelector('input[list="zone-list"]') as HTMLInputElement | null)?.value === 'America/Chicago');
  await expectText(page.locator('.field small').filter({ hasText: 'Guessed from this browser' }), /Guessed from this browser/);
  assert.ok((await page.locator('#zone-list option').count()) > 300, 'every zone offered as a suggestion');
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    assert.equal((await axeViolations(page)).join('\n'), '', `axe on the first-run set-up, ${scheme}`);
    await shot(page, `setup-guessed-zone-1280x800-${scheme}`);
  }
  await page.emulateMedia({ colorScheme: 'light' });

  await zone.fill('Mars/Olympus');
  await page.getByRole('button', { name: 'Save settings' }).click();
  await page.getByText('Time zone: "Mars/Olympus" is not a zone name').waitFor();
  assert.equal((await rig.server.request('GET', '/api/configs', { token: admin.accessToken })).body.timezone, 'UTC', 'nothing saved');

  await page.getByLabel('Site name').fill('Harbour Depot');
  await zone.fill('Asia/Tokyo');
  await page.getByRole('button', { name: 'Save settings' }).click();
  await page.getByText('Settings saved.').waitFor();
  await expectText(page.locator('header [data-field="siteName"]'), 'Harbour Depot');
  // The title is set in an effect after the render that shows the name in the header: waited for, not read once.
  await expectText(page.locator('head title'), / · Harbour Depot$/, 'the page title names the site');
  const config = (await rig.server.request('GET', '/api/configs', { token: admin.accessToken })).body;
  assert.equal(config.timezone, 'Asia/Tokyo');
  // The app's dates read the new zone at once (i18n's siteTimeZone, a live binding, and the page's data attribute).
  assert.equal(await page.evaluate(() => document.documentElement.dataset.siteTimezone), 'Asia/Tokyo');
  await goInside(page, '/alerts');
  await expectText(page.locator('header [data-field="siteName"]'), 'Harbour Depot', 'still, on another screen');
  assertNoProblems(problems, 'set-up');
  await context.close();
});
