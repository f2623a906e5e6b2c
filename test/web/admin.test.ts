// An admin's screens in Chromium against the API: the first-run setup (site name, time zone from a list, currency,
// energy price), the mail state while no SMTP is configured and "send me a test mail" saying it was only logged;
// users and roles (add a user, change a role), the nightly backup time, the box's health.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { TestUser } from '../helpers/server.ts';
import { assertNoProblems, axeViolations, expectAttribute, expectText, openPage, type Rig, settled, shot, signInThroughForm, startRig } from './rig.ts';

let rig: Rig;
let admin: TestUser;
before(async () => {
  rig = await startRig();
  admin = await rig.server.createUser({ role: 'admin', username: 'site-admin' });
});
after(() => rig?.close());

test('first-run setup: name, time zone, currency and price saved; mail state and a test mail that went to the log only', async () => {
  const { page, context, problems } = await openPage(rig.browser, `${rig.server.url}/settings?firstRun=1`);
  await signInThroughForm(page, 'site-admin', admin.password);
  await page.getByRole('heading', { name: 'Set up this site' }).waitFor();
  await settled(page);
  await page.getByLabel('Site name').fill('North Campus');
  await page.getByLabel('Time zone').fill('Europe/Berlin');
  await page.getByLabel('Currency').selectOption('CHF');
  await page.getByLabel('Energy price per kWh (CHF)').fill('0,31');
  await page.getByRole('button', { name: 'Save settings' }).click();
  await page.getByText('Settings saved.').waitFor();
  // Applied at once: the header's name, without a reload (issue 53).
  await expectText(page.locator('header [data-field="siteName"]'), 'North Campus');
  const config = (await rig.server.request('GET', '/api/configs', { token: admin.accessToken })).body;
  assert.deepEqual(
    { siteName: config.siteName, timezone: config.timezone, currency: config.currency, electricityPrice: config.electricityPrice },
    { siteName: 'North Campus', timezone: 'Europe/Berlin', currency: 'CHF', electricityPrice: 0.31 },
  );
  await expectText(page.locator('[data-field="mailState"]'), /^No mail server is configured/);
  await page.getByRole('button', { name: 'Send me a test mail' }).click();
  const outcome = page.locator('.mail-check [data-delivery]');
  await outcome.waitFor();
  await expectAttribute(outcome, 'data-delivery', 'logged');
  await expectText(outcome, new RegExp(`^Not sent to ${admin.user.email.replace('.', '\\.')}`));
  assert.deepEqual((await axeViolations(page)).join('\n'), '', 'axe on settings');
  await shot(page, 'settings-first-run-1280x800-light');
  assertNoProblems(problems, 'settings');
  await context.close();
});

test('users and roles, the nightly backup time, the health of the box', async () => {
  const { page, context, problems } = await openPage(rig.browser, `${rig.server.url}/admin`);
  await signInThroughForm(page, 'site-admin', admin.password);
  await settled(page);
  await page.getByLabel('Username', { exact: true }).fill('nightshift');
  await page.getByLabel('Email').fill('night@example.test');
  await page.getByLabel('Password (they can change it)').fill('a-long-enough-one');
  await page.getByLabel('Role', { exact: true }).selectOption('operator');
  await page.getByRole('button', { name: 'Add a user' }).click();
  await page.getByText('nightshift added.').waitFor();
  await page.getByLabel('Role of nightshift').selectOption('admin');
  await page.getByText('nightshift is now admin.').waitFor();
  const login = await rig.server.request('POST', '/api/auth/login', { body: { username: 'nightshift', password: 'a-long-enough-one' } });
  assert.equal(login.body.user.role, 'admin');

  await page.getByLabel(/^At \(the box's time, /).fill('02:15');
  await page.getByLabel('Keep the last N daily backups').fill('14');
  await page.getByRole('button', { name: 'Save backup schedule' }).click();
  await page.getByText('Backup schedule saved.').waitFor();
  const schedule = (await rig.server.request('GET', '/api/system/backup-schedule', { token: admin.accessToken })).body;
  assert.equal(schedule.cron, '15 2 * * *');
  assert.equal(schedule.retention.daily, 14);
  // One clock on the card: the next run in the box's zone, the one the time above is set in, and named.
  const nextRun = new Intl.DateTimeFormat('en-US', { dateStyle: 'medium', timeStyle: 'short', timeZone: schedule.timezone }).format(
    new Date(schedule.nextRunAt),
  );
  await page.locator('[data-field="nextRun"]', { hasText: `${nextRun} (${schedule.timezone})` }).waitFor();
  assert.match(nextRun, /2:15/);

  const health = (await rig.server.request('GET', '/api/health')).body;
  await expectAttribute(page.locator('dl[data-status]'), 'data-status', health.status);
  assert.deepEqual((await axeViolations(page)).join('\n'), '', 'axe on admin');
  await shot(page, 'admin-1280x800-light');
  assertNoProblems(problems, 'admin');
  await context.close();
});
