// Billing, read-only, in Chromium against the API: tenants, the period's run with each statement's total as the API
// has it, and a statement's PDF and XLSX downloaded (their bytes are a PDF and a zip). A tenant name with markup is
// shown as text. Data: seedYear's meters (about 40 days), two tenants, a run computed by an admin through the API.
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import { after, before, test } from 'node:test';
import { seedYear, type SeededYear } from '../helpers/seededYear.ts';
import type { TestUser } from '../helpers/server.ts';
import { assertNoProblems, axeViolations, expectCount, expectText, openPage, type Rig, settled, shot, signInThroughForm, startRig } from './rig.ts';

let rig: Rig;
let admin: TestUser;
let viewer: TestUser;
let seeded: SeededYear;
let runId: number;
const HOSTILE = '<script>x()</script> Bakery & Co';
before(async () => {
  rig = await startRig();
  seeded = seedYear(rig.server, 'UTC', { subMeters: 2, days: 5 });
  admin = await rig.server.createUser({ role: 'admin', username: 'bill-admin' });
  viewer = await rig.server.createUser({ role: 'viewer', username: 'bill-viewer' });
  const call = async (method: string, path: string, body?: unknown) => {
    const answer = await rig.server.request(method, path, { token: admin.accessToken, body });
    assert.ok(answer.status < 300, `${method} ${path}: ${answer.status} ${answer.text}`);
    return answer.body;
  };
  const t1 = (await call('POST', '/api/billing/tenants', { name: HOSTILE, contactEmail: 'bakery@tenant.test', floorAreaM2: 120 })).id;
  const t2 = (await call('POST', '/api/billing/tenants', { name: 'Office Two', floorAreaM2: 80 })).id;
  await call('PUT', `/api/billing/allocations/${seeded.meterIds[0]}`, { method: 'percent', shares: [{ tenantId: t1, value: 100 }] });
  await call('PUT', `/api/billing/allocations/${seeded.meterIds[1]}`, { method: 'percent', shares: [{ tenantId: t2, value: 80 }], landlordValue: 20 });
  const period = await call('POST', '/api/billing/periods', { name: 'Last month', from: seeded.lastMonth.from, to: seeded.lastMonth.to });
  runId = (await call('POST', `/api/billing/periods/${period.id}/runs`)).id;
});
after(() => rig?.close());

test("the period's run and statements as the API has them; a statement's PDF and XLSX downloaded", async () => {
  const { page, context, problems } = await openPage(rig.browser, `${rig.server.url}/billing`);
  await signInThroughForm(page, 'bill-viewer', viewer.password);
  await settled(page);
  await page.locator(`[data-run="${runId}"]`).waitFor();
  const run = (await rig.server.request('GET', `/api/billing/runs/${runId}`, { token: viewer.accessToken })).body;
  assert.ok(run.statements.length === 2);
  for (const s of run.statements) {
    // A statement is read to the cent, however large.
    const expected = new Intl.NumberFormat('en-US', { style: 'currency', currency: run.summary.currency, minimumFractionDigits: 2 }).format(s.totalCents / 100);
    await expectText(page.locator(`tr[data-statement="${s.id}"] [data-field="total"]`), expected, s.tenantName);
  }
  await expectCount(page.locator('main script'), 0);
  await page.locator('tr[data-tenant]', { hasText: HOSTILE }).waitFor();
  const bakery = run.statements.find((s: { tenantName: string }) => s.tenantName === HOSTILE);
  const [pdf] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: `PDF for ${HOSTILE}` }).click()]);
  assert.equal((await fs.readFile((await pdf.path())!)).subarray(0, 5).toString('latin1'), '%PDF-');
  const [xlsx] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: `XLSX for ${HOSTILE}` }).click()]);
  assert.equal((await fs.readFile((await xlsx.path())!)).subarray(0, 2).toString('latin1'), 'PK');
  assert.ok(bakery.totalCents > 0);
  assert.deepEqual((await axeViolations(page)).join('\n'), '', 'axe on billing (light)');
  await shot(page, 'billing-1280x800-light');
  assertNoProblems(problems, 'billing');
  await context.close();
});

test('billing in dark', async () => {
  const { page, context, problems } = await openPage(rig.browser, `${rig.server.url}/billing`, { colorScheme: 'dark' });
  await signInThroughForm(page, 'bill-viewer', viewer.password);
  await settled(page);
  await page.locator(`[data-run="${runId}"]`).waitFor();
  assert.deepEqual((await axeViolations(page)).join('\n'), '', 'axe on billing (dark)');
  await shot(page, 'billing-1280x800-dark');
  assertNoProblems(problems, 'billing dark');
  await context.close();
});
