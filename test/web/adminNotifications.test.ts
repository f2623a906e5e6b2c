// Admin → notification rules in Chromium against the API: a rule with two levels, an area, two recipients and an
// escalation added through the form (the API has it as entered), paused and removed; an address the service refuses
// shown with its reason; nothing sent without a level. axe, light and dark.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { TestUser } from '../helpers/server.ts';
import { assertNoProblems, axeViolations, expectText, openPage, type Rig, settled, shot, signInThroughForm, startRig } from './rig.ts';

let rig: Rig;
let admin: TestUser;
before(async () => {
  rig = await startRig();
  admin = await rig.server.createUser({ role: 'admin', username: 'rules-admin' });
});
after(() => rig?.close());

const rules = async () => (await rig.server.request('GET', '/api/notification-rules?pageSize=200', { token: admin.accessToken })).body.items;

test('a rule added, paused and removed through the screen; a refused address explained', async () => {
  const { page, context, problems } = await openPage(rig.browser, `${rig.server.url}/admin`);
  await signInThroughForm(page, 'rules-admin', admin.password);
  await settled(page);
  await page.getByRole('link', { name: 'Notification rules' }).click();
  await page.getByRole('heading', { name: 'Notification rules', level: 1 }).waitFor();
  await settled(page);
  await page.getByText('No rule yet').waitFor();

  await page.getByLabel('Rule name').fill('Plant room <urgent>');
  await page.getByLabel('Critical').uncheck();
  await page.getByRole('button', { name: 'Add a rule' }).click();
  await page.getByText('Tick at least one level.').waitFor();
  await page.getByLabel('Critical').check();
  await page.getByLabel('Warning').check();
  await page.getByLabel('Area', { exact: true }).fill('Plant room');
  await page.getByLabel('Mail to').fill('not-an-address');
  await page.getByRole('button', { name: 'Add a rule' }).click();
  // The level warning is still on the screen until the service's answer replaces it.
  const alert = page.locator('main > section > [role="alert"]:not([hidden])').filter({ hasText: /recipients/ });
  await alert.waitFor();
  await expectText(alert, /recipients/);
  assert.equal((await rules()).length, 0);

  await page.getByLabel('Mail to').fill('facilities@example.test\nnight@example.test');
  await page.getByLabel('Escalate after (minutes)').fill('30');
  await page.getByLabel('Escalate to').fill('duty@example.test');
  await page.getByRole('button', { name: 'Add a rule' }).click();
  await page.getByText('Plant room <urgent> added.').waitFor();
  const [rule] = await rules();
  assert.deepEqual(
    [rule.name, rule.levels, rule.area, rule.recipients, rule.escalateAfterMin, rule.escalateTo, rule.enabled],
    ['Plant room <urgent>', ['critical', 'warning'], 'Plant room', ['facilities@example.test', 'night@example.test'], 30, ['duty@example.test'], true],
  );
  const card = page.locator(`li[data-rule="${rule.id}"]`);
  await expectText(card.locator('[data-field="recipients"]'), 'facilities@example.test, night@example.test');
  assert.deepEqual((await axeViolations(page)).join('\n'), '', 'axe on notification rules (light)');
  await shot(page, 'admin-notifications-1280x800-light');

  await card.getByLabel('Active').uncheck();
  await page.getByText('Plant room <urgent> is paused.').waitFor();
  assert.equal((await rules())[0].enabled, false);
  await page.getByRole('button', { name: 'Remove Plant room <urgent>' }).click();
  await page.getByText('Plant room <urgent> removed.').waitFor();
  assert.equal((await rules()).length, 0);
  assertNoProblems(
    problems.filter((p) => !/status of 400/.test(p)),
    'notification rules',
  );
  await context.close();
});

test('notification rules in dark', async () => {
  await rig.server.request('POST', '/api/notification-rules', {
    token: admin.accessToken,
    body: {
      name: 'Critical to facilities',
      levels: ['critical'],
      recipients: ['facilities@example.test'],
      escalateAfterMin: 15,
      escalateTo: ['duty@example.test'],
    },
  });
  const { page, context, problems } = await openPage(rig.browser, `${rig.server.url}/admin/notifications`, { colorScheme: 'dark' });
  await signInThroughForm(page, 'rules-admin', admin.password);
  await settled(page);
  await page.locator('li[data-rule]').first().waitFor();
  assert.deepEqual((await axeViolations(page)).join('\n'), '', 'axe on notification rules (dark)');
  await shot(page, 'admin-notifications-1280x800-dark');
  assertNoProblems(problems, 'notification rules dark');
  await context.close();
});
