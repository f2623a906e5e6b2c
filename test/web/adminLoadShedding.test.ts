// Admin → load shedding in Chromium against the API: two points in priority order with their shed and restore values
// and the safety times (minutes on screen, seconds in the API) saved; a maximum below the minimum refused with the
// service's reason; a row removed and saved off. axe, light and dark.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { TestUser } from '../helpers/server.ts';
import { assertNoProblems, axeViolations, expectText, openPage, type Rig, settled, shot, signInThroughForm, startRig } from './rig.ts';

let rig: Rig;
let admin: TestUser;
before(async () => {
  rig = await startRig();
  admin = await rig.server.createUser({ role: 'admin', username: 'shed-admin' });
});
after(() => rig?.close());

const settings = async () => (await rig.server.request('GET', '/api/analysis/load-shedding', { token: admin.accessToken })).body;

test('points and safety times saved as entered; max below min refused; a row removed', async () => {
  const { page, context, problems } = await openPage(rig.browser, `${rig.server.url}/admin/load-shedding`);
  await signInThroughForm(page, 'shed-admin', admin.password);
  await settled(page);
  await page.getByLabel('Load shedding runs').waitFor();
  await page.getByRole('button', { name: 'Add a point' }).click();
  await page.getByLabel('Gateway point of row 1').fill('ahu1.run');
  await page.getByLabel('Value when shed, row 1').fill('0');
  await page.getByLabel('Value when restored, row 1').fill('1');
  await page.getByRole('button', { name: 'Add a point' }).click();
  await page.getByLabel('Gateway point of row 2').fill('sp.zone1');
  await page.getByLabel('Value when shed, row 2').fill('26');
  await page.getByLabel('Value when restored, row 2').fill('21,5');
  await page.getByLabel('Shed at least (minutes)').fill('10');
  await page.getByLabel('Shed at most (minutes)').fill('5');
  await page.getByRole('button', { name: 'Save load shedding' }).click();
  const alert = page.locator('main > section > [role="alert"]:not([hidden])');
  await alert.waitFor();
  await expectText(alert, /maxShedSec/);
  assert.deepEqual((await settings()).points, [], 'nothing stored');

  await page.getByLabel('Shed at most (minutes)').fill('30');
  await page.getByLabel('Load shedding runs').check();
  await page.getByRole('button', { name: 'Save load shedding' }).click();
  await page.getByText('Saved: load shedding runs.').waitFor();
  const saved = await settings();
  assert.deepEqual(
    {
      enabled: saved.enabled,
      minOffSec: saved.minOffSec,
      maxShedSec: saved.maxShedSec,
      points: saved.points.map((p: any) => [p.code, p.priority, p.shedValue, p.restoreValue]),
    },
    {
      enabled: true,
      minOffSec: 600,
      maxShedSec: 1800,
      points: [
        ['ahu1.run', 1, 0, 1],
        ['sp.zone1', 2, 26, 21.5],
      ],
    },
  );
  await page.locator('tr[data-point="sp.zone1"] [data-field="state"]', { hasText: 'normal' }).waitFor();
  assert.deepEqual((await axeViolations(page)).join('\n'), '', 'axe on load shedding (light)');
  await shot(page, 'admin-load-shedding-1280x800-light');

  await page.getByRole('button', { name: 'Remove row 1' }).click();
  await page.getByLabel('Load shedding runs').uncheck();
  await page.getByRole('button', { name: 'Save load shedding' }).click();
  await page.getByText('Saved: load shedding is off.').waitFor();
  const after = await settings();
  assert.equal(after.enabled, false);
  assert.deepEqual(
    after.points.map((p: { code: string }) => p.code),
    ['sp.zone1'],
  );
  assertNoProblems(
    problems.filter((p) => !/status of 400/.test(p)),
    'load shedding',
  );
  await context.close();
});

test('load shedding in dark', async () => {
  const { page, context, problems } = await openPage(rig.browser, `${rig.server.url}/admin/load-shedding`, { colorScheme: 'dark' });
  await signInThroughForm(page, 'shed-admin', admin.password);
  await settled(page);
  await page.locator('tr[data-point]').first().waitFor();
  assert.deepEqual((await axeViolations(page)).join('\n'), '', 'axe on load shedding (dark)');
  await shot(page, 'admin-load-shedding-1280x800-dark');
  assertNoProblems(problems, 'load shedding dark');
  await context.close();
});
