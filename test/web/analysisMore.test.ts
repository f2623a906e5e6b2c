// The analysis screens (baseline, EnPIs, anomalies) in Chromium against a seeded service (seedYear, about 100 days,
// outdoor temperatures stored as the service keeps them, so no gateway is asked): a viewer walks the three, told the
// anomaly check needs an operator, the four analysis screens axe-clean with screenshots in light and dark. That each screen shows what the API
// answers (statistics, guard rails, EnPIs with a driver, findings, refusals) is checked in the fast screen tier,
// test/web/screens/analysis.test.ts.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { seedYear, type SeededYear } from '../helpers/seededYear.ts';
import type { TestUser } from '../helpers/server.ts';
import { assertNoProblems, axeViolations, expectCount, openPage, type Rig, settled, shot, signInThroughForm, startRig } from './rig.ts';

let rig: Rig;
let viewer: TestUser;
let seeded: SeededYear;
const addDays = (day: string, n: number) => new Date(Date.parse(`${day}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);
const today = new Date().toISOString().slice(0, 10);
let first: string;

before(async () => {
  rig = await startRig();
  seeded = seedYear(rig.server, 'UTC', { subMeters: 2, days: 100 });
  first = addDays(seeded.lastMonth.from, -100);
  const insert = rig.server.service.deps.db.sqlite.prepare('INSERT INTO outdoor_days (code, day, hourly_c, samples) VALUES (?, ?, ?, ?)');
  rig.server.service.deps.db.sqlite.transaction(() => {
    for (let day = first, i = 0; day <= today; day = addDays(day, 1), i += 1) {
      const hourly = new Float32Array(24).map((_, h) => 8 + 9 * Math.sin((2 * Math.PI * i) / 47) + 3 * Math.sin((2 * Math.PI * (h - 9)) / 24));
      insert.run('temp.outdoor', day, Buffer.from(hourly.buffer), 240);
    }
  })();
  viewer = await rig.server.createUser({ role: 'viewer', username: 'onlooker' });
});
after(() => rig?.close());

for (const colorScheme of ['light', 'dark'] as const) {
  test(`${colorScheme}: the four analysis screens for a viewer (no anomaly check offered), axe clean`, async () => {
    const { page, context, problems } = await openPage(rig.browser, `${rig.server.url}/analysis/anomalies`, { colorScheme });
    await signInThroughForm(page, 'onlooker', viewer.password);
    await settled(page);
    await page.getByText('Checking a day now needs the operator role.').waitFor();
    await expectCount(page.getByRole('button', { name: 'Check this day now' }), 0);
    assert.deepEqual((await axeViolations(page)).join('\n'), '', `axe on anomalies (${colorScheme})`);
    await shot(page, `analysis-anomalies-1280x800-${colorScheme}`);
    await page.getByRole('link', { name: 'Compare periods' }).click();
    await page.locator('tr[data-row="analysis.current"]').waitFor();
    await settled(page);
    assert.deepEqual((await axeViolations(page)).join('\n'), '', `axe on the comparison (${colorScheme})`);
    await shot(page, `analysis-1280x800-${colorScheme}`);
    await page.getByRole('link', { name: 'Baseline and savings' }).click();
    await settled(page);
    await page.getByRole('button', { name: 'Fit the baseline' }).click();
    await page.locator('main form [role="alert"]:not([hidden]), [data-table="statistics"]').first().waitFor();
    assert.deepEqual((await axeViolations(page)).join('\n'), '', `axe on the baseline (${colorScheme})`);
    await shot(page, `analysis-baseline-1280x800-${colorScheme}`);
    await page.getByRole('link', { name: 'EnPIs' }).click();
    await settled(page);
    await page.getByRole('button', { name: 'Show' }).click();
    await page.locator('[data-table="enpi"], main form [role="alert"]:not([hidden])').first().waitFor();
    assert.deepEqual((await axeViolations(page)).join('\n'), '', `axe on EnPIs (${colorScheme})`);
    await shot(page, `analysis-enpi-1280x800-${colorScheme}`);
    assertNoProblems(
      problems.filter((p) => !/status of (400|502)/.test(p)),
      `analysis ${colorScheme}`,
    );
    await context.close();
  });
}
