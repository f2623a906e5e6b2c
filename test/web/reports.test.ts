// Reports in Chromium against the API: a monthly PDF report from the template list with the schedule in words
// (the app writes "0 7 1 * *"), send now, and the outcome as it is: "not sent, only written to the log" without SMTP,
// the run's files downloadable; the same wording in the run history.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { TestUser } from '../helpers/server.ts';
import { assertNoProblems, axeViolations, expectAttribute, expectText, openPage, type Rig, settled, shot, signInThroughForm, startRig } from './rig.ts';

let rig: Rig;
let operator: TestUser;
before(async () => {
  rig = await startRig({ EMS_REPORT_MAIL_RETRY: 'none' });
  operator = await rig.server.createUser({ role: 'operator', username: 'reporter' });
});
after(() => rig?.close());

test('schedule a monthly PDF report in words, send it now, see that it was only logged, download its files', async () => {
  const { page, context, problems } = await openPage(rig.browser, `${rig.server.url}/reports`);
  await signInThroughForm(page, 'reporter', operator.password);
  await settled(page);
  await page.getByRole('button', { name: 'Schedule a report' }).click();
  const templates = (await rig.server.request('GET', '/api/reports/templates', { token: operator.accessToken })).body.items;
  await page.getByLabel('Report', { exact: true }).selectOption({ label: templates[0].name });
  await page.getByLabel('Name', { exact: true }).fill('Monthly energy for the FM');
  await page.getByLabel('Repeat', { exact: true }).selectOption('month');
  await page.getByLabel('Day of the month').selectOption('1');
  await page.getByLabel('At', { exact: true }).fill('07:00');
  await expectText(page.locator('[data-field="schedulePreview"]'), 'Monthly on day 1 at 07:00');
  await page.getByLabel('Recipients', { exact: true }).fill('fm@example.test, boss@example.test');
  await page.getByLabel('Format', { exact: true }).selectOption('pdf');
  await page.getByRole('button', { name: 'Save schedule' }).click();
  await page.getByText('Report “Monthly energy for the FM” scheduled.').waitFor();
  const plan = (await rig.server.request('GET', '/api/reports/plans', { token: operator.accessToken })).body.items[0];
  assert.deepEqual(
    { cron: plan.cron, format: plan.format, recipients: plan.recipients, templateId: plan.templateId },
    { cron: '0 7 1 * *', format: 'pdf', recipients: ['fm@example.test', 'boss@example.test'], templateId: templates[0].id },
  );
  const card = page.locator(`[data-plan-id="${plan.id}"]`);
  await expectText(card.locator('[data-field="schedule"]'), 'Monthly on day 1 at 07:00');

  await card.getByRole('button', { name: 'Send now' }).click();
  const outcome = card.locator('[data-delivery]');
  await outcome.waitFor({ timeout: 60_000 });
  await expectAttribute(outcome, 'data-delivery', 'logged');
  await expectText(outcome, /^Not sent: no mail server is configured/);
  const run = (await rig.server.request('GET', `/api/reports/plans/${plan.id}/runs`, { token: operator.accessToken })).body.items[0];
  assert.equal(run.delivery, 'logged');
  const row = card.locator(`tr[data-run-id="${run.id}"]`);
  await row.waitFor();
  await expectText(row, /Not sent/);
  const pdf = run.files.find((file: { name: string }) => file.name.endsWith('.pdf'));
  assert.ok(pdf, 'a PDF among the files');
  const [download] = await Promise.all([page.waitForEvent('download'), row.getByRole('button', { name: pdf.name }).click()]);
  assert.equal(download.suggestedFilename(), pdf.name);
  const bytes = await (await import('node:fs/promises')).readFile((await download.path())!);
  assert.equal(bytes.subarray(0, 5).toString(), '%PDF-');
  assert.deepEqual((await axeViolations(page)).join('\n'), '', 'axe on reports');
  await shot(page, 'reports-1280x800-light');
  assertNoProblems(problems, 'reports');
  await context.close();
});

test('in German the templates are German, and the template follows the period chosen under Repeat', async () => {
  const { page, context, problems } = await openPage(rig.browser, `${rig.server.url}/reports`, { locale: 'de-DE' });
  await signInThroughForm(page, 'reporter', operator.password);
  await settled(page);
  await page.getByRole('button', { name: 'Bericht planen' }).click();
  const report = page.getByLabel('Bericht', { exact: true });
  const chosen = () => report.evaluate((select: HTMLSelectElement) => select.selectedOptions[0].textContent);
  assert.equal(await chosen(), 'Energie und Kosten des Monats', 'every month starts on the monthly report');
  await expectText(page.locator('form [id$="-hint"]').first(), /vorigen Kalendermonat/);
  await page.getByLabel('Wiederholen', { exact: true }).selectOption('week');
  assert.equal(await chosen(), 'Energie der Woche');
  await page.getByLabel('Wiederholen', { exact: true }).selectOption('day');
  assert.equal(await chosen(), 'Monat bis heute');
  await report.selectOption({ label: 'Fällige Wartung' });
  await page.getByLabel('Wiederholen', { exact: true }).selectOption('month');
  assert.equal(await chosen(), 'Fällige Wartung', 'a template about something else stays');
  assertNoProblems(problems, 'reports in German');
  await context.close();
});
