// The alerts work-list and maintenance in Chromium, checked against the API: the five lists (active, cleared at source
// but not acknowledged, acknowledged, shelved, resolved), acknowledge with a note (and its history), bulk acknowledge,
// shelve with a reason, a maintenance record from an alert, the maintenance form with a date picker (the browser's
// time zone, Europe/Berlin here), and hostile text shown as text on every one of them. A viewer's lists without actions
// are checked in the fast screen tier (test/web/screens/alerts.test.ts).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { TestUser } from '../helpers/server.ts';
import {
  assertNoProblems,
  axeViolations,
  expectCount,
  expectEqual,
  expectText,
  openPage,
  type Rig,
  settled,
  shot,
  signInThroughForm,
  startRig,
} from './rig.ts';

const HOSTILE = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>';

/** A tab's accessible name: its label and, once the counts are in, its count (issue 53). */
const tabName = (label: string) => new RegExp(`^${label}( \\d+)?$`);

let rig: Rig;
let operator: TestUser;
const ids: Record<string, number> = {};

before(async () => {
  rig = await startRig();
  operator = await rig.server.createUser({ role: 'operator', username: 'fm' });
  const token = operator.accessToken;
  const alerts = [
    ['boiler', `Boiler lockout ${HOSTILE}`, 'critical'],
    ['ahu', 'AHU-3 filter pressure high', 'warning'],
    ['chiller', 'Chiller 2 tripped', 'warning'],
    ['server', 'Server room above 27 °C', 'critical'],
    ['pump', 'Pump 4 vibration', 'info'],
    ['old', 'Old warning', 'info'],
  ] as const;
  for (const [key, title, level] of alerts) {
    const created = await rig.server.request('POST', '/api/alerts', {
      token,
      body: { title, level, message: `Call the contractor ${HOSTILE}`, area: 'Plant room' },
    });
    assert.equal(created.status, 201);
    ids[key] = created.body.id;
  }
  rig.server.service.deps.db.sqlite.prepare('UPDATE alerts SET cleared_at = ? WHERE id = ?').run(new Date().toISOString(), ids.server);
  assert.equal(
    (await rig.server.request('POST', `/api/alerts/${ids.pump}/shelve`, { token, body: { durationMin: 120, reason: 'known, parts ordered' } })).status,
    200,
  );
  assert.equal((await rig.server.request('POST', `/api/alerts/${ids.old}/acknowledge`, { token, body: { note: 'seen' } })).status, 200);
});
after(() => rig?.close());

const titles = (page: import('playwright-core').Page) => page.locator('.worklist .title').allTextContents();

test('an operator works the list: five lists, acknowledge with a note, history, bulk, shelve, maintenance from an alert', async () => {
  const { page, context, problems } = await openPage(rig.browser, `${rig.server.url}/alerts`);
  let dialogs = 0;
  page.on('dialog', (dialog) => {
    dialogs += 1;
    void dialog.dismiss();
  });
  await signInThroughForm(page, 'fm', operator.password);
  await settled(page);
  // The whole list, not its first row: rows of one answer, but a busy box may paint the list before the last answer.
  await expectEqual(async () => (await titles(page)).sort(), [`Boiler lockout ${HOSTILE}`, 'AHU-3 filter pressure high', 'Chiller 2 tripped'].sort());
  for (const [tab, expected] of [
    ['Cleared, not acknowledged', ['Server room above 27 °C']],
    ['Shelved', ['Pump 4 vibration']],
    ['Acknowledged', ['Old warning']],
  ] as const) {
    await page.getByRole('tab', { name: tabName(tab) }).click();
    await expectEqual(() => titles(page), [...expected], tab);
  }
  await page.getByRole('tab', { name: tabName('Active') }).click();
  await page.locator('.worklist li').nth(2).waitFor();

  // Acknowledge the boiler alert with a note, from the keyboard.
  const boiler = page.locator(`li[data-alert-id="${ids.boiler}"]`);
  await boiler.locator('.title').focus();
  await page.keyboard.press('Enter');
  await boiler.locator('.message').waitFor();
  await expectText(boiler.locator('.message'), `Call the contractor ${HOSTILE}`, 'the message is text');
  await expectCount(page.locator('.worklist img, .worklist script'), 0, 'no element made from the alert text');
  assert.deepEqual((await axeViolations(page)).join('\n'), '', 'axe on the alerts work-list');
  await shot(page, 'alerts-open-1280x800-light');
  await boiler.getByLabel('Note').fill('Reset the burner, watching it');
  await boiler.getByRole('button', { name: 'Acknowledge' }).click();
  await page.getByRole('status').filter({ hasText: 'acknowledged.' }).waitFor();
  const acknowledged = await rig.server.request('GET', `/api/alerts/${ids.boiler}`, { token: operator.accessToken });
  assert.equal(acknowledged.body.status, 'acknowledged');
  assert.equal(acknowledged.body.acknowledgedBy, operator.user.id);
  const notes = await rig.server.request('GET', `/api/alerts/${ids.boiler}/notes`, { token: operator.accessToken });
  assert.deepEqual(
    notes.body.items.map((n: { kind: string; text: string }) => [n.kind, n.text]),
    [['acknowledge', 'Reset the burner, watching it']],
  );
  // Its history, in the acknowledged list.
  await page.getByRole('tab', { name: tabName('Acknowledged') }).click();
  await page.locator(`li[data-alert-id="${ids.boiler}"] .title`).click();
  await page.getByText('fm acknowledged: Reset the burner, watching it').waitFor();

  // Bulk acknowledge of the two left, by their check boxes.
  await page.getByRole('tab', { name: tabName('Active') }).click();
  await page.waitForFunction(() => document.querySelectorAll('.worklist .title').length === 2);
  await page.getByRole('checkbox', { name: 'Select AHU-3 filter pressure high' }).check();
  await page.getByRole('checkbox', { name: 'Select Chiller 2 tripped' }).check();
  await page.getByRole('button', { name: 'Acknowledge selected (2)' }).click();
  await page.getByText('2 acknowledged, 0 skipped.').waitFor();
  for (const key of ['ahu', 'chiller'])
    assert.equal((await rig.server.request('GET', `/api/alerts/${ids[key]}`, { token: operator.accessToken })).body.status, 'acknowledged');

  // Shelve the cleared one with a reason; open a maintenance record from the acknowledged chiller alert.
  await page.getByRole('tab', { name: tabName('Cleared, not acknowledged') }).click();
  await page.locator(`li[data-alert-id="${ids.server}"] .title`).click();
  await page.getByLabel('Shelve for').selectOption('240');
  await page.getByLabel('Note').fill('door was open, closed now');
  await page.getByRole('button', { name: 'Shelve' }).click();
  await page.getByText('shelved.').waitFor();
  const shelved = (await rig.server.request('GET', `/api/alerts/${ids.server}`, { token: operator.accessToken })).body;
  assert.equal(shelved.shelveReason, 'door was open, closed now');
  assert.ok(Math.abs(Date.parse(shelved.shelvedUntil) - Date.now() - 240 * 60_000) < 60_000);
  await page.getByRole('tab', { name: tabName('Acknowledged') }).click();
  await page.locator(`li[data-alert-id="${ids.chiller}"] .title`).click();
  await page.getByRole('button', { name: 'Open a maintenance record' }).click();
  await page.getByText('Maintenance record opened for').waitFor();
  const records = (await rig.server.request('GET', '/api/maintenance', { token: operator.accessToken })).body.items;
  assert.equal(records.filter((r: { alertId: number | null }) => r.alertId === ids.chiller).length, 1);

  assert.equal(dialogs, 0, 'no script from alert text ran');
  assert.equal(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned), undefined);
  assertNoProblems(problems, 'alerts');
  await context.close();
});

test('maintenance: a record from the form with a date picker, in the browser time zone; its text stays text', async () => {
  const context = await rig.browser.newContext({ viewport: { width: 1280, height: 800 }, locale: 'en-US', timezoneId: 'Europe/Berlin' });
  const page = await context.newPage();
  await page.goto(`${rig.server.url}/maintenance`);
  await signInThroughForm(page, 'fm', operator.password);
  await settled(page);
  await page.getByRole('button', { name: 'Add a maintenance record' }).click();
  await page.getByRole('button', { name: 'Save record' }).click();
  await page.getByRole('alert').filter({ hasText: 'Say which equipment.' }).waitFor();
  await page.getByLabel('Equipment').fill('Chiller 2');
  await page.getByLabel('Type').selectOption('inspection');
  await page.getByLabel('Scheduled for').fill('2026-12-03T08:30');
  await page.getByLabel('Assigned to').fill('J. Doe');
  await page.getByLabel('Description').fill(`Quarterly check ${HOSTILE}`);
  await page.getByRole('button', { name: 'Save record' }).click();
  await page.getByText('Maintenance for Chiller 2 saved.').waitFor();
  const record = (await rig.server.request('GET', '/api/maintenance?q=Quarterly', { token: operator.accessToken })).body.items[0];
  assert.equal(record.scheduledAt, '2026-12-03T07:30:00.000Z', '08:30 in Berlin');
  assert.equal(record.type, 'inspection');
  assert.equal(record.description, `Quarterly check ${HOSTILE}`);
  const row = page.locator(`tr[data-maintenance-id="${record.id}"]`);
  await expectText(row, /Quarterly check <img src=x/);
  await expectCount(page.locator('main img, main script'), 0);
  await row.getByLabel('Status of Chiller 2').selectOption('in_progress');
  // The change is one PATCH with nothing on screen to wait for: ask the API until it has it (was 20 × 100 ms, short on a busy box).
  const statusOf = async (path: string) => (await rig.server.request('GET', path, { token: operator.accessToken })).body.status;
  await expectEqual(() => statusOf(`/api/maintenance/${record.id}`), 'in_progress');
  assert.deepEqual((await axeViolations(page)).join('\n'), '', 'axe on maintenance');
  await shot(page, 'maintenance-form-1280x800-light');
  await context.close();
});

test('faults: report one with a date picker, move it, open a maintenance record from it', async () => {
  const context = await rig.browser.newContext({ viewport: { width: 1280, height: 800 }, locale: 'en-US', timezoneId: 'Europe/Berlin' });
  const page = await context.newPage();
  await page.goto(`${rig.server.url}/faults`);
  await signInThroughForm(page, 'fm', operator.password);
  await settled(page);
  await page.getByRole('button', { name: 'Report a fault' }).click();
  await page.getByLabel('Device').fill('Pump 7');
  await page.getByLabel('Severity').selectOption('high');
  await page.getByLabel('Noticed at').fill('2026-11-20T14:05');
  await page.getByLabel('Description').fill(`Leaking seal ${HOSTILE}`);
  await page.getByRole('button', { name: 'Report fault' }).click();
  await page.getByText('Fault on Pump 7 reported.').waitFor();
  const fault = (await rig.server.request('GET', '/api/faults?q=Pump%207', { token: operator.accessToken })).body.items[0];
  assert.deepEqual([fault.severity, fault.reportedAt, fault.description], ['high', '2026-11-20T13:05:00.000Z', `Leaking seal ${HOSTILE}`]);
  const row = page.locator(`tr[data-fault-id="${fault.id}"]`);
  await expectCount(page.locator('main img, main script'), 0);
  await row.getByLabel('Status of Pump 7').selectOption('in_progress');
  await row.getByRole('button', { name: 'Open a maintenance record' }).click();
  await page.getByText('Maintenance record opened for Pump 7.').waitFor();
  // The status's PATCH and the record's POST go out on their own connections: the record's answer says nothing of the
  // PATCH, so ask the API until it has the status.
  await expectEqual(async () => (await rig.server.request('GET', `/api/faults/${fault.id}`, { token: operator.accessToken })).body.status, 'in_progress');
  const records = (await rig.server.request('GET', `/api/maintenance?faultId=${fault.id}`, { token: operator.accessToken })).body.items;
  assert.equal(records.length, 1);
  assert.deepEqual((await axeViolations(page)).join('\n'), '', 'axe on faults');
  await shot(page, 'faults-1280x800-light');
  await context.close();
});
