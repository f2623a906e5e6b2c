// The overview against the API: today's and this month's energy and cost as GET /api/dashboard computes them, in the
// locale's form; areas largest first; a click on an area lists its meters, a meter shows its intervals as a chart for
// a day, week, month or year whose total is the API's series. Meters with 40 days of 15-minute data (seedYear). The
// analysis screen's period comparison is checked in the fast screen tier (test/web/screens/compare.test.ts).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { seedYear } from '../helpers/seededYear.ts';
import type { TestUser } from '../helpers/server.ts';
import { assertNoProblems, axeViolations, expectEqual, expectText, openPage, type Rig, settled, shot, signInThroughForm, startRig } from './rig.ts';

let rig: Rig;
let viewer: TestUser;
before(async () => {
  rig = await startRig();
  seedYear(rig.server, 'UTC', { subMeters: 4, days: 40 });
  viewer = await rig.server.createUser({ role: 'viewer', username: 'looker' });
});
after(() => rig?.close());

const en = (value: number) =>
  new Intl.NumberFormat('en-US', { minimumFractionDigits: value >= 1000 ? 0 : 1, maximumFractionDigits: value >= 1000 ? 0 : 1 }).format(value);
const eur = (value: number) =>
  new Intl.NumberFormat('en-US', { style: 'currency', currency: 'EUR', maximumFractionDigits: value >= 1000 ? 0 : 2 }).format(value);

test('today and this month: energy, cost and the areas as the API has them; drill down to a meter chart', async () => {
  const api = (await rig.server.request('GET', '/api/dashboard')).body;
  const { page, context, problems } = await openPage(rig.browser, `${rig.server.url}/`);
  await signInThroughForm(page, 'looker', viewer.password);
  await settled(page);
  await page.locator('table tbody tr').first().waitFor();
  await expectText(page.locator('[data-figure="today"] .num'), en(api.overview.energyTodayKwh));
  await expectText(page.locator('[data-figure="month"] .num'), en(api.overview.energyMonthKwh));
  await expectText(page.locator('[data-field="costMonth"]'), eur(api.overview.costMonth));
  assert.ok(api.overview.energyMonthKwh > 0, 'the seeded month has energy');
  const expected = [...api.areas].sort((a: any, b: any) => b.todayKwh - a.todayKwh || b.monthKwh - a.monthKwh).map((area: { name: string }) => area.name);
  await expectEqual(
    () => page.locator('tbody tr[data-area]:not([data-area=""])').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-area'))),
    expected,
    'largest first',
  );
  assert.deepEqual((await axeViolations(page)).join('\n'), '', 'axe on the overview');
  await shot(page, 'overview-seeded-1280x800-light');

  const largest = expected[0];
  await page.getByRole('link', { name: largest, exact: true }).click();
  await page.getByRole('heading', { name: `Area ${largest}` }).waitFor();
  await settled(page);
  const meterLink = page.locator('main table a').first();
  const meterName = (await meterLink.textContent())!;
  await meterLink.click();
  await page.getByRole('heading', { name: meterName, level: 1 }).waitFor();
  await page.locator('.chart canvas').waitFor();
  const meterId = Number(new URL(page.url()).pathname.split('/').pop());
  for (const range of ['Week', 'Month'] as const) {
    await page.getByRole('button', { name: range }).click();
    await page.waitForFunction((name) => document.querySelector(`button[aria-pressed="true"]`)?.textContent === name, range);
    await settled(page);
    const days = range === 'Week' ? 7 : 31;
    const resolution = range === 'Week' ? 'hour' : 'day';
    const to = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    const from = new Date(Date.parse(`${to}T00:00:00Z`) - days * 86_400_000).toISOString().slice(0, 10);
    const series = (
      await rig.server.request('GET', `/api/energy/series?meterId=${meterId}&from=${from}&to=${to}&resolution=${resolution}`, { token: viewer.accessToken })
    ).body;
    const total = series.points.reduce((sum: number, p: { kwh: number | null }) => sum + (p.kwh ?? 0), 0);
    await page.getByText(`${en(total)} kWh in ${series.points.length} intervals`).waitFor();
  }
  assert.deepEqual((await axeViolations(page)).join('\n'), '', 'axe on the meter chart');
  await shot(page, 'meter-month-1280x800-light');
  assertNoProblems(problems, 'overview and meter');
  await context.close();
});
