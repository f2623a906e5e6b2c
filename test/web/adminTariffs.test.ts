// Admin → tariffs in Chromium against the API: a future electricity version with a peak band added through the form
// (the API has it as entered), a gas version listed with its own price, a version in effect not removable (no button)
// while a future one is removed, numbers refused before any request; gas calorific values added and removed. axe, light
// and dark.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { TestUser } from '../helpers/server.ts';
import { assertNoProblems, axeViolations, expectCount, expectText, openPage, type Rig, settled, shot, signInThroughForm, startRig } from './rig.ts';

let rig: Rig;
let admin: TestUser;
const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
before(async () => {
  rig = await startRig();
  admin = await rig.server.createUser({ role: 'admin', username: 'tariff-admin' });
  const past = await rig.server.request('POST', '/api/energy/tariffs', {
    token: admin.accessToken,
    body: { validFrom: '2025-01-01', price: 0.25, carbonFactor: 0.4, standingChargePerDay: 1.2 },
  });
  assert.equal(past.status, 201, past.text);
  const gas = await rig.server.request('POST', '/api/energy/tariffs', {
    token: admin.accessToken,
    body: { commodity: 'gas', validFrom: '2025-01-01', price: 0.09, carbonFactor: 0.2 },
  });
  assert.equal(gas.status, 201, gas.text);
});
after(() => rig?.close());

const versions = async () => (await rig.server.request('GET', '/api/energy/tariffs?pageSize=200', { token: admin.accessToken })).body.items;

test('a future version with a band written as entered; a future version removed; one in effect kept', async () => {
  const { page, context, problems } = await openPage(rig.browser, `${rig.server.url}/admin/tariffs`);
  await signInThroughForm(page, 'tariff-admin', admin.password);
  await settled(page);
  const before = (await versions()).length;
  await page
    .locator('li[data-tariff]')
    .nth(before - 1)
    .waitFor();
  await expectCount(page.getByRole('button', { name: /^Remove the version/ }), 0, 'versions in effect cannot be removed');

  await page.getByLabel('Applies from', { exact: true }).fill(day(30));
  await page.getByLabel('Price per unit (EUR)').fill('abc');
  await page.getByRole('button', { name: 'Add a tariff version' }).click();
  await page.getByText('must be numbers of 0 or more').waitFor();
  assert.equal((await versions()).length, before, 'nothing sent');

  await page.getByLabel('Price per unit (EUR)').fill('0,21');
  await page.getByLabel('Standing charge per day (EUR)').fill('1.5');
  await page.getByLabel('kg CO₂ per unit').fill('0.35');
  await page.getByLabel('Note', { exact: true }).fill('<i>new</i> contract');
  await page.getByLabel('With a time-of-use band').check();
  await page.getByLabel('Band name').fill('peak');
  await page.getByLabel('Sat', { exact: true }).check();
  await page.getByLabel('From (local time)').fill('07:00');
  await page.getByLabel('To (local time)').fill('21:00');
  await page.getByLabel('Band price per unit (EUR)').fill('0.32');
  await page.getByRole('button', { name: 'Add a tariff version' }).click();
  await page.getByText(`A version from ${day(30)} is added.`).waitFor();
  const added = (await versions()).find((v: { validFrom: string }) => v.validFrom === day(30));
  assert.deepEqual(
    {
      commodity: added.commodity,
      price: added.price,
      standing: added.standingChargePerDay,
      carbon: added.carbonFactor,
      note: added.note,
      bands: added.bands,
    },
    {
      commodity: 'electricity',
      price: 0.21,
      standing: 1.5,
      carbon: 0.35,
      note: '<i>new</i> contract',
      bands: [{ name: 'peak', days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat'], from: '07:00', to: '21:00', price: 0.32 }],
    },
  );
  const card = page.locator(`li[data-tariff="${added.id}"]`);
  await expectText(card.locator('[data-field="price"]'), '0.2100 EUR');
  await expectText(card.locator('table'), /peak.*Mon, Tue, Wed, Thu, Fri, Sat.*07:00–21:00.*0\.3200/);
  await expectCount(page.locator('main i'), 0, 'markup in a note is text');
  assert.deepEqual((await axeViolations(page)).join('\n'), '', 'axe on tariffs (light)');
  await shot(page, 'admin-tariffs-1280x800-light');

  await card.getByRole('button', { name: `Remove the version from ${day(30)}` }).click();
  await page.getByText(`The version from ${day(30)} is removed.`).waitFor();
  assert.equal((await versions()).length, before);
  assertNoProblems(problems, 'admin tariffs');
  await context.close();
});

test('gas calorific values: one added as entered (decimal comma), a zero refused before sending, removed', async () => {
  const { page, context, problems } = await openPage(rig.browser, `${rig.server.url}/admin/tariffs`);
  await signInThroughForm(page, 'tariff-admin', admin.password);
  await settled(page);
  const calorific = async () => (await rig.server.request('GET', '/api/energy/calorific-values?pageSize=200', { token: admin.accessToken })).body.items;
  const before = (await calorific()).length;
  await page.getByLabel('Calorific value applies from').fill(day(40));
  await page.getByLabel('kWh per m³').fill('0');
  await page.getByRole('button', { name: 'Add a calorific value' }).click();
  await page.getByText('kWh per m³ and the correction factor must be numbers above 0.').waitFor();
  assert.equal((await calorific()).length, before);
  await page.getByLabel('kWh per m³').fill('11,2');
  await page.getByLabel('Correction factor').fill('1.02264');
  await page.getByLabel('Note (e.g. the bill)').fill('Bill of March');
  await page.getByRole('button', { name: 'Add a calorific value' }).click();
  await page.getByText(`A calorific value from ${day(40)} is added.`).waitFor();
  const added = (await calorific()).find((v: { validFrom: string }) => v.validFrom === day(40));
  assert.deepEqual([added.kwhPerM3, added.correctionFactor, added.note], [11.2, 1.02264, 'Bill of March']);
  await expectText(page.locator(`tr[data-calorific="${added.id}"] [data-field="kwhPerM3"]`), '11.200');
  await shot(page, 'admin-tariffs-calorific-1280x800-light');
  await page
    .locator(`tr[data-calorific="${added.id}"]`)
    .getByRole('button', { name: `Remove the version from ${day(40)}` })
    .click();
  await page.getByText(`The calorific value from ${day(40)} is removed.`).waitFor();
  assert.equal((await calorific()).length, before);
  assertNoProblems(problems, 'calorific values');
  await context.close();
});

test('tariffs in dark', async () => {
  const { page, context, problems } = await openPage(rig.browser, `${rig.server.url}/admin/tariffs`, { colorScheme: 'dark' });
  await signInThroughForm(page, 'tariff-admin', admin.password);
  await settled(page);
  await page.locator('li[data-tariff]').nth(1).waitFor();
  assert.deepEqual((await axeViolations(page)).join('\n'), '', 'axe on tariffs (dark)');
  await shot(page, 'admin-tariffs-1280x800-dark');
  assertNoProblems(problems, 'admin tariffs dark');
  await context.close();
});
