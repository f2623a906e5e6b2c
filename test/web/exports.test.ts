// The exports screen in Chromium against GET /api/exports/energy: ticked meters to CSV (the downloaded bytes are the
// API's for the same query), an area to XLSX (the service's file name, a zip), the service's 400 for a 15-minute range
// too long shown as an alert, a period entered backwards refused before any request; a meter with markup in its name
// shown as text; axe and screenshots in light and dark.
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import { after, before, test } from 'node:test';
import { AREA_NAMES, seedYear, type SeededYear } from '../helpers/seededYear.ts';
import type { TestUser } from '../helpers/server.ts';
import { assertNoProblems, axeViolations, expectCount, expectText, openPage, type Rig, settled, shot, signInThroughForm, startRig } from './rig.ts';

let rig: Rig;
let viewer: TestUser;
let seeded: SeededYear;
const HOSTILE = '<img src=x onerror="document.title=1">Pump & co';
before(async () => {
  rig = await startRig();
  seeded = seedYear(rig.server, 'UTC', { subMeters: 2, days: 3 });
  rig.server.service.deps.energy.meters.create({ name: HOSTILE, code: 'meter.hostile.kwh', kind: 'energy' }, null);
  viewer = await rig.server.createUser({ role: 'viewer', username: 'exporter' });
});
after(() => rig?.close());

const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);

test('ticked meters to CSV are the API bytes; an area to XLSX; a too long 15-minute range and a backwards period explained', async () => {
  const { page, context, problems } = await openPage(rig.browser, `${rig.server.url}/exports`, { colorScheme: 'light' });
  await signInThroughForm(page, 'exporter', viewer.password);
  await settled(page);
  await page.getByRole('heading', { name: 'Export meter data' }).waitFor();

  await page.getByLabel('Meters I choose').check();
  await page.getByLabel('Main incomer').check();
  await page.getByLabel('Sub-meter 2').check();
  await expectCount(page.getByLabel(/Pump & co/), 1, 'the hostile name is a label, as text');
  await expectText(page.locator('fieldset.meters'), /<img src=x onerror=/);
  await page.getByLabel('First day').fill(day(-5));
  await page.getByLabel('Last day (included)').fill(day(-2));
  await page.getByLabel('Resolution').selectOption('hour');
  await page.getByLabel('File type').selectOption('csv');
  await page.getByLabel(/Mark the CSV as UTF-8/).uncheck();
  await shot(page, 'exports-1280x800-light');
  assert.deepEqual((await axeViolations(page)).join('\n'), '', 'axe on exports (light)');
  const [csv] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download' }).click()]);
  const ids = [seeded.siteId, seeded.meterIds[1]].join(',');
  const expected = await rig.server.request(
    'GET',
    `/api/exports/energy?from=${day(-5)}&to=${day(-1)}&meterIds=${ids}&resolution=hour&layout=wide&format=csv&bom=false`,
    {
      token: viewer.accessToken,
    },
  );
  assert.equal(expected.status, 200, expected.text);
  assert.equal(csv.suggestedFilename(), `energy_hour_wide_${day(-5)}_${day(-1)}.csv`);
  const got = await fs.readFile((await csv.path())!, 'utf8');
  assert.equal(got, expected.text);
  assert.equal(got.trim().split('\n').length, 1 + 4 * 24, 'a header and 4 days of hours');
  await page.getByText(`${csv.suggestedFilename()} downloaded.`).waitFor();

  await page.getByLabel('The meters of one area').check();
  await page.getByLabel('Area', { exact: true }).selectOption(AREA_NAMES[1]);
  await page.getByLabel('File type').selectOption('xlsx');
  await page.getByLabel('Layout').selectOption('long');
  const [xlsx] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download' }).click()]);
  assert.equal(xlsx.suggestedFilename(), `energy_hour_long_${day(-5)}_${day(-1)}.xlsx`);
  const bytes = await fs.readFile((await xlsx.path())!);
  assert.equal(bytes.subarray(0, 2).toString('latin1'), 'PK', 'an XLSX is a zip');

  await page.getByLabel('Every meter of the site').check();
  await page.getByLabel('Resolution').selectOption('15min');
  await page.getByLabel('First day').fill('2020-01-01');
  await page.getByRole('button', { name: 'Download' }).click();
  const alert = page.locator('main [role="alert"]:not([hidden])');
  await alert.waitFor();
  const api = await rig.server.request('GET', `/api/exports/energy?from=2020-01-01&to=${day(-1)}&resolution=15min&layout=long&format=xlsx`, {
    token: viewer.accessToken,
  });
  assert.equal(api.status, 400);
  await expectText(alert, new RegExp(`^${api.body.error.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`), "the service's reason");

  await page.getByLabel('First day').fill(day(-1));
  await page.getByLabel('Last day (included)').fill(day(-3));
  await page.getByRole('button', { name: 'Download' }).click();
  await page.getByText('the last day cannot be before the first').waitFor();
  assert.notEqual(await page.title(), '1');
  assertNoProblems(
    problems.filter((p) => !/status of 400/.test(p)),
    'exports',
  );
  await context.close();
});

test('exports in dark: axe clean, screenshot', async () => {
  const { page, context, problems } = await openPage(rig.browser, `${rig.server.url}/exports`, { colorScheme: 'dark' });
  await signInThroughForm(page, 'exporter', viewer.password);
  await settled(page);
  await page.getByLabel('The meters of one area').check();
  await page.getByLabel('Area', { exact: true }).locator('option').nth(1).waitFor({ state: 'attached' });
  assert.deepEqual((await axeViolations(page)).join('\n'), '', 'axe on exports (dark)');
  await shot(page, 'exports-1280x800-dark');
  assertNoProblems(problems, 'exports dark');
  await context.close();
});
