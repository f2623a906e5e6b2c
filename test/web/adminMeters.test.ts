// Admin → meters and areas in Chromium against the API: an area given to a meter, a meter no longer read, a meter
// renamed, a meter added by hand (its name markup shown as text), a point already metered refused with the service's
// 409 reason; the areas list follows. A viewer opening the screen is told it is not allowed. axe, light and dark.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { TestUser } from '../helpers/server.ts';
import {
  assertNoProblems,
  axeViolations,
  expectCount,
  expectText,
  expectValue,
  openPage,
  type Rig,
  settled,
  shot,
  signInThroughForm,
  startRig,
} from './rig.ts';

let rig: Rig;
let admin: TestUser;
let viewer: TestUser;
let main: number;
let sub: number;
const HOSTILE = '<b onmouseover="x()">Chiller</b> & co';
before(async () => {
  rig = await startRig();
  const { meters } = rig.server.service.deps.energy;
  main = meters.create({ name: 'Main incomer', code: 'meter.main.kwh', kind: 'energy', site: true }, null).id;
  sub = meters.create({ name: 'Sub-meter 1', code: 'meter.sub.1.kwh', kind: 'energy', area: 'Offices' }, null).id;
  admin = await rig.server.createUser({ role: 'admin', username: 'meter-admin' });
  viewer = await rig.server.createUser({ role: 'viewer', username: 'meter-viewer' });
});
after(() => rig?.close());

const meter = async (id: number) => (await rig.server.request('GET', `/api/meters/${id}`, { token: admin.accessToken })).body;

test('area, read flag, name and a new meter written through the screen; a duplicate point refused with the reason', async () => {
  const { page, context, problems } = await openPage(rig.browser, `${rig.server.url}/admin`);
  await signInThroughForm(page, 'meter-admin', admin.password);
  await settled(page);
  await page.getByRole('link', { name: 'Meters and areas' }).click();
  await page.getByRole('heading', { name: 'Meters and areas', level: 1 }).waitFor();
  await settled(page);
  await page.getByLabel('Area of Sub-meter 1').fill('Workshop');
  await page.getByLabel('Area of Sub-meter 1').press('Tab');
  await page.getByText('Sub-meter 1 saved.').waitFor();
  assert.equal((await meter(sub)).area, 'Workshop');
  await page.locator('tr[data-area="Workshop"]').waitFor();

  await page.getByLabel('Main incomer is read by the collector').uncheck();
  await page.getByText('Main incomer saved.').waitFor();
  assert.equal((await meter(main)).enabled, false);
  const nameField = page.getByLabel(/^Name of (Main|Grid) incomer$/);
  await nameField.fill('Grid incomer');
  // The row may re-render (and relabel) under the field while the box is busy: the locator follows either name.
  await nameField.press('Enter');
  await page.getByText('Grid incomer saved.').waitFor();
  assert.equal((await meter(main)).name, 'Grid incomer');

  await page.getByLabel('Name', { exact: true }).fill(HOSTILE);
  await page.getByLabel('Gateway point').fill('meter.chiller.kwh');
  await page.getByLabel('Area', { exact: true }).fill('Workshop');
  await page.getByRole('button', { name: 'Add a meter' }).click();
  await page.getByText(`${HOSTILE} added; its history is read at the next collection.`).waitFor();
  const list = (await rig.server.request('GET', '/api/meters', { token: admin.accessToken })).body.items;
  const added = list.find((m: { code: string }) => m.code === 'meter.chiller.kwh');
  assert.deepEqual([added.name, added.area, added.kind, added.commodity, added.site], [HOSTILE, 'Workshop', 'energy', 'electricity', false]);
  await expectValue(page.getByLabel(`Name of ${HOSTILE}`), HOSTILE);
  await expectCount(page.locator('main b'), 0, 'markup in a name is not rendered');

  await page.getByLabel('Name', { exact: true }).fill('Second chiller');
  await page.getByLabel('Gateway point').fill('meter.chiller.kwh');
  await page.getByRole('button', { name: 'Add a meter' }).click();
  const alert = page.locator('main > section > [role="alert"]:not([hidden])');
  await alert.waitFor();
  const again = await rig.server.request('POST', '/api/meters', {
    token: admin.accessToken,
    body: { name: 'Third', code: 'meter.chiller.kwh', kind: 'energy' },
  });
  assert.equal(again.status, 409);
  await expectText(alert, again.body.error);
  assert.equal(list.length, (await rig.server.request('GET', '/api/meters', { token: admin.accessToken })).body.items.length);

  assert.deepEqual((await axeViolations(page)).join('\n'), '', 'axe on meters (light)');
  await shot(page, 'admin-meters-1280x800-light');
  assertNoProblems(
    problems.filter((p) => !/status of 409/.test(p)),
    'admin meters',
  );
  await context.close();
});

test('dark theme and a viewer', async () => {
  const dark = await openPage(rig.browser, `${rig.server.url}/admin/meters`, { colorScheme: 'dark' });
  await signInThroughForm(dark.page, 'meter-admin', admin.password);
  await settled(dark.page);
  await dark.page.locator('tbody tr[data-meter]').first().waitFor();
  assert.deepEqual((await axeViolations(dark.page)).join('\n'), '', 'axe on meters (dark)');
  await shot(dark.page, 'admin-meters-1280x800-dark');
  assertNoProblems(dark.problems, 'admin meters dark');
  await dark.context.close();

  const { page, context } = await openPage(rig.browser, `${rig.server.url}/admin/meters`);
  await signInThroughForm(page, 'meter-viewer', viewer.password);
  await page.getByRole('heading', { name: 'Not allowed' }).waitFor();
  await expectCount(page.getByLabel('Gateway point'), 0);
  await context.close();
});
