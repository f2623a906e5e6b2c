// Admin → history import and the suspect runs in Chromium against the API (issue 52): a bad file refused naming its
// line; a dry run shows per meter what would be written (empty cells as missing, the suspect run); an import with its
// progress bar cancelled leaves nothing (the API has nothing of the file; a second dry run shows no overlap), then
// imported to the end with the result. The suspect run: an operator confirms it as real, a viewer reads
// it without the button. axe, light and dark.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { addDays, dayIntervals, siteDay } from '../../src/platform/time/calendar.ts';
import { eventually, type TestUser } from '../helpers/server.ts';
import { noonZone } from '../helpers/siteClock.ts';
import {
  assertNoProblems,
  axeViolations,
  expectAttribute,
  expectCount,
  expectText,
  openPage,
  type Rig,
  settled,
  shot,
  signInThroughForm,
  startRig,
} from './rig.ts';

const Q = 15 * 60_000;
const ZONE = noonZone();
const today = siteDay(ZONE);
const DAYS = Array.from({ length: 14 }, (_, i) => addDays(today, -20 + i));

let rig: Rig;
let admin: TestUser;
let main: { id: number };
let hvac: { id: number };

/** 14 days of the site meter (6 h of zeros on day 10, after a week that read more: a suspect run; one empty cell) and of a sub-meter. */
function portalCsv(): string {
  const lines = ['meter;start;kwh'];
  DAYS.forEach((d, n) => {
    const { start, count } = dayIntervals(ZONE, d);
    for (let i = 0; i < count; i += 1) {
      const at = new Date(start + i * Q).toISOString();
      const flat = n === 10 && i >= 40 && i < 64;
      lines.push(`meter.main.kwh;${at};${n === 5 && i === 7 ? '' : flat ? '0' : '2,5'}`);
      lines.push(`meter.hvac.kwh;${at};0,75`);
    }
  });
  return `${lines.join('\n')}\n`;
}

before(async () => {
  rig = await startRig();
  admin = await rig.server.createUser({ role: 'admin', username: 'import-admin' });
  const zoned = await rig.server.request('PUT', '/api/configs', { token: admin.accessToken, body: { timezone: ZONE } });
  assert.equal(zoned.status, 200, zoned.text);
  const meter = async (body: Record<string, unknown>) => {
    const response = await rig.server.request('POST', '/api/meters', { token: admin.accessToken, body });
    assert.equal(response.status, 201, response.text);
    return response.body;
  };
  main = await meter({ name: 'Main incomer', code: 'meter.main.kwh', kind: 'energy', site: true });
  hvac = await meter({ name: 'HVAC', code: 'meter.hvac.kwh', kind: 'energy', area: 'HVAC' });
});
after(() => rig?.close());

const storedDays = (meterId: number) =>
  rig.server.service.deps.db.sqlite.prepare('SELECT count(*) FROM meter_days WHERE meter_id = ?').pluck().get(meterId) as number;

test('dry run, an import cancelled (nothing left), the import to the end with its result', async () => {
  const collector = rig.server.service.deps.collector;
  const { page, context, problems } = await openPage(rig.browser, `${rig.server.url}/admin/import`);
  await signInThroughForm(page, 'import-admin', admin.password);
  await settled(page);
  const file = page.getByLabel('CSV file');

  await file.setInputFiles({
    name: 'bad.csv',
    mimeType: 'text/csv',
    buffer: Buffer.from('meter,start,kwh\nmeter.main.kwh,2025-01-06T00:00:00Z,1\nmeter.main.kwh,yesterday,1\n'),
  });
  await page.getByRole('button', { name: 'Check the file (dry run)' }).click();
  await page.locator('[data-refusal]').getByText('line 3').waitFor();

  const csv = portalCsv();
  await file.setInputFiles({ name: 'portal.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
  await page.getByRole('button', { name: 'Check the file (dry run)' }).click();
  const dry = page.locator('[data-section="dry-run"]');
  await dry.locator(`tr[data-meter="${main.id}"]`).waitFor();
  const mainRow = dry.locator(`tr[data-meter="${main.id}"]`);
  const cells = DAYS.reduce((sum, d) => sum + dayIntervals(ZONE, d).count, 0);
  await expectText(mainRow.locator('[data-field="new"]'), (cells - 1).toLocaleString('en-US'));
  await expectText(mainRow.locator('[data-field="missing"]'), /^1 \(1 empty cells\)$/);
  await expectText(mainRow.locator('[data-field="suspect"]'), '1');
  await dry.locator(`[data-suspects="${main.id}"] li`).getByText('6.0 h of 0.000 kWh').waitFor();
  assert.equal(storedDays(main.id), 0, 'a dry run writes nothing');
  assert.deepEqual((await axeViolations(page)).join('\n'), '', 'axe on the dry run (light)');

  // The collector's turn held: the job's first slice waits, so the progress bar and the cancel are there to be used
  // whatever the machine's speed (a cancel after written slices: test/metering/importJobs.test.ts).
  let release!: () => void;
  const held = collector.exclusive(() => new Promise<void>((resolve) => (release = resolve)));
  await page.getByRole('button', { name: 'Import', exact: true }).click();
  await page.getByText('Writing: 0 %').waitFor();
  await expectAttribute(page.locator('progress#import-progress'), 'value', '0');
  await page.getByRole('button', { name: 'Cancel the import' }).click();
  await page.getByText(/^Cancelling/).waitFor();
  const cancelling = (await rig.server.request('GET', '/api/energy/import/jobs/1', { token: admin.accessToken })).body;
  assert.equal(cancelling.state, 'cancelling', 'the API has the cancel');
  release();
  await held;
  await page
    .locator('[data-section="job"][data-state="cancelled"]')
    .getByText(/nothing of the file is stored/)
    .waitFor();
  assert.equal(storedDays(main.id), 0, 'nothing of the file left');
  assert.equal(storedDays(hvac.id), 0);

  await page.getByRole('button', { name: 'Check the file (dry run)' }).click();
  await dry.locator(`tr[data-meter="${main.id}"] [data-field="overlapping"]`).getByText('0', { exact: true }).waitFor();
  await page.getByRole('button', { name: 'Import', exact: true }).click();
  const result = page.locator('[data-section="job"][data-state="done"]');
  await result.getByText('Imported:').waitFor();
  await expectText(result.locator(`tr[data-meter="${hvac.id}"] [data-field="new"]`), cells.toLocaleString('en-US'));
  assert.equal(storedDays(main.id), DAYS.length);
  await page.getByRole('button', { name: 'Switch to dark theme' }).click();
  assert.deepEqual((await axeViolations(page)).join('\n'), '', 'axe on the result (dark)');
  await shot(page, 'admin-import-1280x800-dark');
  // The bad file's 400 is the browser's own console line for a refused request (the screen shows the refusal).
  const refused = problems.findIndex((p) => /status of 400/.test(p));
  assert.ok(refused >= 0);
  problems.splice(refused, 1);
  assertNoProblems(problems, 'history import');
  await context.close();
});

test('the suspect run: read-only for a viewer, confirmed as real by an operator', async () => {
  const runs = async () => (await rig.server.request('GET', `/api/energy/suspect-runs?meterId=${main.id}`, { token: admin.accessToken })).body.items;
  const [run] = await eventually(async () => ((await runs()).length ? runs() : undefined), 'the imported suspect run');
  assert.equal(run.confirmedAt, null);
  const viewer = await rig.server.createUser({ role: 'viewer', username: 'suspect-viewer' });
  const seen = await openPage(rig.browser, `${rig.server.url}/suspect-runs`);
  await signInThroughForm(seen.page, 'suspect-viewer', viewer.password);
  await settled(seen.page);
  await seen.page.locator(`tr[data-run="${run.id}"]`).getByText('suspect (an operator can confirm it)').waitFor();
  await expectCount(seen.page.getByRole('button', { name: /^Confirm as real/ }), 0);
  await seen.context.close();

  const operator = await rig.server.createUser({ role: 'operator', username: 'suspect-operator' });
  const { page, context, problems } = await openPage(rig.browser, `${rig.server.url}/meters/${main.id}`, { colorScheme: 'dark' });
  await signInThroughForm(page, 'suspect-operator', operator.password);
  await settled(page);
  const button = page.locator(`tr[data-run="${run.id}"]`).getByRole('button', { name: /^Confirm as real: Main incomer from/ });
  await button.waitFor();
  assert.deepEqual((await axeViolations(page)).join('\n'), '', 'axe on the meter with its suspect run (dark)');
  await button.click();
  await page.getByText(/is confirmed: its intervals count as measured/).waitFor();
  const [after] = await runs();
  assert.ok(after.confirmedAt, 'confirmed through the API');
  assertNoProblems(problems, 'suspect runs');
  await context.close();
});
