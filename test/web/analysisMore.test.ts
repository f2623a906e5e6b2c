// Analysis beyond period comparison, in Chromium against the API: a baseline's fit statistics, its guard rails with
// the savings withheld and why, expected / actual / CUSUM as GET /api/analysis/baseline has them; monthly EnPIs with
// a driver as GET /api/analysis/enpi has them; an operator checking a finished day for anomalies sees the findings
// POST /api/analysis/anomalies/check gives; a viewer is told the check needs an operator. Energy: seedYear (about 130
// days); outdoor temperatures stored as the service keeps them (outdoor_days), so no gateway is asked. axe and
// screenshots of the three screens in light and dark.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { seedYear, type SeededYear } from '../helpers/seededYear.ts';
import type { TestUser } from '../helpers/server.ts';
import { assertNoProblems, axeViolations, openPage, type Rig, settled, shot, signInThroughForm, startRig } from './rig.ts';

let rig: Rig;
let operator: TestUser;
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
  operator = await rig.server.createUser({ role: 'operator', username: 'analyst' });
  viewer = await rig.server.createUser({ role: 'viewer', username: 'onlooker' });
});
after(() => rig?.close());

const en = (value: number, digits: number) => new Intl.NumberFormat('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }).format(value);

test('baseline statistics and guard rails, EnPIs with a driver, an anomaly check: the UI shows what the API answers', async () => {
  const { page, context, problems } = await openPage(rig.browser, `${rig.server.url}/analysis`);
  await signInThroughForm(page, 'analyst', operator.password);
  await settled(page);
  await page.getByRole('link', { name: 'Baseline and savings' }).click();
  await page.getByRole('heading', { name: 'Baseline and savings', level: 1 }).waitFor();
  const baseTo = seeded.lastMonth.from;
  await page.getByLabel('For', { exact: true }).selectOption({ label: 'Sub-meter 1' });
  await page.getByLabel('Baseline from').fill(first);
  await page.getByLabel('Baseline to (included)').fill(addDays(baseTo, -1));
  await page.getByLabel('Compare from').fill(baseTo);
  await page.getByLabel('Compare to (included)').fill(addDays(today, -1));
  await page.getByRole('button', { name: 'Fit the baseline' }).click();
  await page.locator('[data-table="statistics"]').waitFor();
  const meterId = seeded.meterIds[0];
  const api = await rig.server.request(
    'GET',
    `/api/analysis/baseline?meterId=${meterId}&baselineFrom=${first}&baselineTo=${baseTo}&reportFrom=${baseTo}&reportTo=${today}`,
    { token: operator.accessToken },
  );
  assert.equal(api.status, 200, api.text);
  const b = api.body;
  assert.equal(await page.locator('[data-stat="cvRmse"] td').first().textContent(), `${en(b.statistics.cvRmsePercent, 1)} %`);
  assert.equal(await page.locator('[data-stat="r2"] td').first().textContent(), en(b.statistics.r2, 3));
  assert.equal(await page.locator('[data-field="expected"]').textContent(), `${en(b.report.expectedKwh, b.report.expectedKwh >= 1000 ? 0 : 1)} kWh`);
  assert.equal(await page.locator('[data-field="actual"]').textContent(), `${en(b.report.actualKwh, b.report.actualKwh >= 1000 ? 0 : 1)} kWh`);
  assert.equal(b.guardRails.defensible, false, 'about 100 baseline days: the length rule withholds the savings');
  assert.equal(await page.locator('[data-field="withheld"]').textContent(), `Withheld: ${b.report.savingsWithheld}`);
  assert.deepEqual(await page.locator('[data-field="reasons"] li').allTextContents(), b.guardRails.reasons);
  assert.ok(b.guardRails.reasons.length > 0);
  assert.equal(await page.locator('[data-field="savings"]').count(), 0, 'no savings figure when withheld');
  assert.deepEqual((await axeViolations(page)).join('\n'), '', 'axe on the baseline');
  await shot(page, 'analysis-baseline-1280x800-light');

  // A baseline the service refuses: its reason in an alert, not a crash.
  await page.getByLabel('Baseline to (included)').fill(addDays(first, 5));
  await page.getByRole('button', { name: 'Fit the baseline' }).click();
  await page.locator('main form [role="alert"]:not([hidden])').waitFor();
  assert.match((await page.locator('main form [role="alert"]').textContent())!, /^Invalid query: /);

  // EnPIs with a driver entered through the API.
  const months = [seeded.lastMonth.from.slice(0, 7), today.slice(0, 7)];
  const put = await rig.server.request('PUT', '/api/analysis/drivers', {
    token: operator.accessToken,
    body: { values: months.map((month, i) => ({ name: 'units produced', month, value: 1000 + 500 * i, unit: 'units' })) },
  });
  assert.equal(put.status, 200, put.text);
  await page.getByRole('link', { name: 'EnPIs' }).click();
  await page.getByRole('heading', { name: 'Energy performance indicators' }).waitFor();
  await settled(page);
  await page.getByLabel('First month').fill(months[0]);
  await page.getByLabel('Last month (included)').fill(months[1]);
  await page.getByLabel('Per unit of').selectOption('units produced');
  await page.getByRole('button', { name: 'Show' }).click();
  await page.locator('[data-table="enpi"]').waitFor();
  const nextMonth = (m: string) =>
    m.endsWith('-12') ? `${Number(m.slice(0, 4)) + 1}-01` : `${m.slice(0, 5)}${String(Number(m.slice(5)) + 1).padStart(2, '0')}`;
  const enpi = (
    await rig.server.request('GET', `/api/analysis/enpi?from=${months[0]}&to=${nextMonth(months[1])}&driver=units%20produced`, { token: operator.accessToken })
  ).body;
  assert.deepEqual(
    await page.locator('[data-table="enpi"] tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-month'))),
    enpi.months.map((m: { month: string }) => m.month),
  );
  for (const m of enpi.months) {
    const row = page.locator(`tr[data-month="${m.month}"]`);
    assert.equal(await row.locator('[data-field="kwh"]').textContent(), en(m.kwh, m.kwh >= 1000 ? 0 : 1));
    assert.equal(await row.locator('[data-field="perDriver"]').textContent(), m.kwhPerDriverUnit === null ? '–' : en(m.kwhPerDriverUnit, 3));
  }
  assert.ok(enpi.months[0].kwhPerDriverUnit > 0);
  assert.deepEqual((await axeViolations(page)).join('\n'), '', 'axe on EnPIs');
  await shot(page, 'analysis-enpi-1280x800-light');

  // An anomaly check of yesterday.
  await page.getByRole('link', { name: 'Anomalies' }).click();
  await page.getByRole('heading', { name: 'Anomalies', level: 1 }).waitFor();
  await page.getByLabel('Day to check').fill(addDays(today, -1));
  await page.getByRole('button', { name: 'Check this day now' }).click();
  const done = page.locator('main [role="status"]');
  await page.waitForFunction(() => document.querySelector('main [role="status"]')?.textContent);
  const check = (await rig.server.request('POST', '/api/analysis/anomalies/check', { token: operator.accessToken, body: { day: addDays(today, -1) } })).body;
  const text = (await done.textContent())!;
  if (check.findings.length === 0) assert.equal(text, `Nothing unusual on ${addDays(today, -1)}.`);
  else {
    assert.equal(text, `${check.findings.length} findings on ${addDays(today, -1)}.`);
    assert.deepEqual(
      await page.locator('.worklist li').evaluateAll((items) => items.map((li) => li.getAttribute('data-kind'))),
      check.findings.map((f: { kind: string }) => f.kind),
    );
  }
  await page.getByLabel('Day to check').fill(today);
  await page.getByRole('button', { name: 'Check this day now' }).click();
  await page.getByText('Choose a day before today.').waitFor();
  assert.deepEqual((await axeViolations(page)).join('\n'), '', 'axe on anomalies');
  await shot(page, 'analysis-anomalies-1280x800-light');
  assertNoProblems(
    problems.filter((p) => !/status of 400/.test(p)),
    'analysis',
  );
  await context.close();
});

test('dark: the three screens for a viewer (no anomaly check offered), axe clean', async () => {
  const { page, context, problems } = await openPage(rig.browser, `${rig.server.url}/analysis/anomalies`, { colorScheme: 'dark' });
  await signInThroughForm(page, 'onlooker', viewer.password);
  await settled(page);
  await page.getByText('Checking a day now needs the operator role.').waitFor();
  assert.equal(await page.getByRole('button', { name: 'Check this day now' }).count(), 0);
  assert.deepEqual((await axeViolations(page)).join('\n'), '', 'axe on anomalies (dark)');
  await shot(page, 'analysis-anomalies-1280x800-dark');
  await page.getByRole('link', { name: 'Baseline and savings' }).click();
  await settled(page);
  await page.getByRole('button', { name: 'Fit the baseline' }).click();
  await page.locator('main form [role="alert"]:not([hidden]), [data-table="statistics"]').first().waitFor();
  assert.deepEqual((await axeViolations(page)).join('\n'), '', 'axe on the baseline (dark)');
  await shot(page, 'analysis-baseline-1280x800-dark');
  await page.getByRole('link', { name: 'EnPIs' }).click();
  await settled(page);
  await page.getByRole('button', { name: 'Show' }).click();
  await page.locator('[data-table="enpi"], main form [role="alert"]:not([hidden])').first().waitFor();
  assert.deepEqual((await axeViolations(page)).join('\n'), '', 'axe on EnPIs (dark)');
  await shot(page, 'analysis-enpi-1280x800-dark');
  assertNoProblems(
    problems.filter((p) => !/status of (400|502)/.test(p)),
    'analysis dark',
  );
  await context.close();
});
