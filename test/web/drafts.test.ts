// Nothing typed is lost (issue 53), in Chromium: a maintenance record typed while the same account signs in on
// another device survives the sign-out, the sign-in page says why, and the form offers it back after signing in
// again; an unreachable service is a plain message that retries by itself, with the time of the last good data.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { TestUser } from '../helpers/server.ts';
import {
  axeViolations,
  expectCount,
  expectEqual,
  expectText,
  expectValue,
  goInside,
  openPage,
  type Rig,
  settled,
  shot,
  signInThroughForm,
  startRig,
} from './rig.ts';

let rig: Rig;
let operator: TestUser;
before(async () => {
  // Short tokens: the first device finds out about the other sign-in at its next refresh, within seconds.
  rig = await startRig({ EMS_ACCESS_TOKEN_TTL: '4s' });
  operator = await rig.server.createUser({ role: 'operator', username: 'twodevices' });
});
after(() => rig?.close());

test('signed in on another device: the page says so, the typed record is kept and offered back after signing in', async () => {
  const { page, context, problems } = await openPage(rig.browser, `${rig.server.url}/maintenance`);
  await signInThroughForm(page, 'twodevices', operator.password);
  await settled(page);
  await page.getByRole('button', { name: 'Add a maintenance record' }).click();
  await page.getByLabel('Equipment').fill('Chiller 2 condenser');
  await page.getByLabel('Description').fill('Clean the condenser coil, check the fan belts');

  // The "phone": the same account signs in through the API; one session per user ends the browser's.
  const phone = await rig.server.request('POST', '/api/auth/login', { body: { username: 'twodevices', password: operator.password } });
  assert.equal(phone.status, 200);
  // Nobody clicks: the tab finds out at its next refresh (its live stream ends with the access token) and says so.
  await page.locator('[data-notice="session-ended"]').waitFor({ timeout: 30_000 });
  await expectText(page.locator('[data-notice="session-ended"]'), /signed in on another device/);
  const stored = rig.server.service.deps.db.sqlite.prepare('SELECT count(*) AS n FROM maintenance WHERE equipment = ?').get('Chiller 2 condenser') as {
    n: number;
  };
  assert.equal(stored.n, 0, 'nothing saved yet');
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    assert.equal((await axeViolations(page)).join('\n'), '', `axe on the signed-out page, ${scheme}`);
    await shot(page, `session-ended-1280x800-${scheme}`);
  }
  await page.emulateMedia({ colorScheme: 'light' });

  await signInThroughForm(page, 'twodevices', operator.password);
  await settled(page);
  await page.locator('[data-notice="draft-restored"]').waitFor();
  await expectValue(page.getByLabel('Equipment'), 'Chiller 2 condenser');
  await expectValue(page.getByLabel('Description'), 'Clean the condenser coil, check the fan belts');
  assert.equal((await axeViolations(page)).join('\n'), '', 'axe on the restored form');
  await shot(page, 'draft-restored-1280x800-light');
  await page.getByRole('button', { name: 'Save record' }).click();
  await page.getByRole('rowheader', { name: 'Chiller 2 condenser' }).waitFor();
  const saved = rig.server.service.deps.db.sqlite.prepare('SELECT description FROM maintenance WHERE equipment = ?').all('Chiller 2 condenser') as {
    description: string;
  }[];
  assert.deepEqual(saved, [{ description: 'Clean the condenser coil, check the fan belts' }]);
  // Saved: the draft is gone; a new form starts empty.
  await expectEqual(() => page.evaluate(() => sessionStorage.getItem('ems.draft.maintenance.new')), null);
  // The session-ended refusal is the only console error (the refresh's 401 and the save's 401 are logged by the browser).
  assert.ok(
    problems.every((p) => /401/.test(p)),
    problems.join('\n'),
  );
  await context.close();
});

test('the faults form and the tenant form keep their drafts through a sign-in elsewhere', async () => {
  const admin = await rig.server.createUser({ role: 'admin', username: 'deskadmin' });
  const { page, context } = await openPage(rig.browser, `${rig.server.url}/faults`);
  await signInThroughForm(page, 'deskadmin', admin.password);
  await settled(page);
  await page.getByRole('button', { name: 'Report a fault' }).click();
  const fault = page.getByRole('form', { name: 'Report a fault' });
  await fault.getByLabel('Device').fill('AHU 3 supply fan');
  await fault.getByLabel('Description').fill('Belt squeals at start');
  await page.waitForFunction(() => sessionStorage.getItem('ems.draft.faults.new')?.includes('Belt squeals at start'));
  await goInside(page, '/billing/tenants');
  const tenant = page.locator('form[aria-labelledby="add-tenant-heading"]');
  await tenant.getByLabel('Name', { exact: true }).fill('Bakery Müller');
  await tenant.getByLabel('Floor area (m²)').fill('120');
  await page.waitForFunction(() => sessionStorage.getItem('ems.draft.billing.tenant.new')?.includes('"area":"120"'));

  const phone = await rig.server.request('POST', '/api/auth/login', { body: { username: 'deskadmin', password: admin.password } });
  assert.equal(phone.status, 200);
  await page.locator('[data-notice="session-ended"]').waitFor({ timeout: 30_000 });
  await signInThroughForm(page, 'deskadmin', admin.password);
  await settled(page);
  await tenant.locator('[data-notice="draft-restored"]').waitFor();
  await expectValue(tenant.getByLabel('Name', { exact: true }), 'Bakery Müller');
  await tenant.getByRole('button', { name: 'Add' }).click();
  await page
    .getByRole('cell', { name: 'Bakery Müller' })
    .or(page.getByRole('rowheader', { name: 'Bakery Müller' }))
    .first()
    .waitFor();
  await expectEqual(() => page.evaluate(() => sessionStorage.getItem('ems.draft.billing.tenant.new')), null, 'added: the draft is gone');

  await goInside(page, '/faults');
  await fault.locator('[data-notice="draft-restored"]').waitFor();
  await expectValue(fault.getByLabel('Device'), 'AHU 3 supply fan');
  await expectValue(fault.getByLabel('Description'), 'Belt squeals at start');
  await fault.getByRole('button', { name: 'Report fault' }).click();
  await page.getByText('AHU 3 supply fan').first().waitFor();
  const saved = rig.server.service.deps.db.sqlite.prepare('SELECT description FROM faults WHERE device = ?').all('AHU 3 supply fan');
  assert.deepEqual(saved, [{ description: 'Belt squeals at start' }]);
  await expectEqual(() => page.evaluate(() => sessionStorage.getItem('ems.draft.faults.new')), null);
  await context.close();
});

test('a deliberate sign-out clears the drafts of the tab', async () => {
  const { page, context } = await openPage(rig.browser, `${rig.server.url}/maintenance`);
  await signInThroughForm(page, 'twodevices', operator.password);
  await settled(page);
  await page.getByRole('button', { name: 'Add a maintenance record' }).click();
  await page.getByLabel('Equipment').fill('Boiler 1');
  // The draft holding what was typed, not any draft (the form may store one as it opens).
  await page.waitForFunction(() => sessionStorage.getItem('ems.draft.maintenance.new')?.includes('Boiler 1'));
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.locator('input[name="username"]').waitFor();
  await expectEqual(() => page.evaluate(() => sessionStorage.getItem('ems.draft.maintenance.new')), null);
  await expectCount(page.locator('[data-notice="session-ended"]'), 0, 'signed out here: no "signed out elsewhere" notice');
  await context.close();
});

test('the service unreachable: a plain message with the time of the last good data, retried by itself', async () => {
  const { page, context, problems } = await openPage(rig.browser, `${rig.server.url}/`);
  await signInThroughForm(page, 'twodevices', operator.password);
  await settled(page);
  await page.route('**/api/**', (route) => route.abort('connectionrefused'));
  await goInside(page, '/alerts').catch(() => undefined);
  const problem = page.locator('.problem[role="alert"]:not([hidden])').first();
  await problem.waitFor({ timeout: 20_000 });
  const text = (await problem.textContent())!;
  assert.match(text, /The box is not answering; the figures shown are from \d{1,2}:\d{2}:\d{2}/);
  assert.doesNotMatch(await page.locator('main').textContent().then(String), /TypeError|Failed to fetch/);
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    assert.equal((await axeViolations(page)).join('\n'), '', `axe with the box unreachable, ${scheme}`);
    await shot(page, `unreachable-1280x800-${scheme}`);
  }
  // Back: the screen fills by itself, no click.
  await page.unroute('**/api/**');
  await page.locator('[role="tablist"]').waitFor();
  await page.waitForFunction(() => !document.querySelector('.problem[role="alert"]:not([hidden])'), undefined, { timeout: 40_000 });
  assert.ok(
    problems.every((p) => /ERR_CONNECTION_REFUSED|Failed to load resource/.test(p)),
    problems.join('\n'),
  );
  await context.close();
});

test('an alert’s note typed and not sent is kept for the tab: after a reload its alert opens with the note, acknowledging sends it', async () => {
  const noter = await rig.server.createUser({ role: 'operator', username: 'noter' });
  const created = await rig.server.request('POST', '/api/alerts', {
    token: noter.accessToken,
    body: { title: 'Cold store door open', level: 'warning', message: 'Door contact open for 10 minutes' },
  });
  assert.equal(created.status, 201, created.text);
  const { page, context } = await openPage(rig.browser, `${rig.server.url}/alerts`);
  await signInThroughForm(page, 'noter', noter.password);
  await page.getByRole('button', { name: 'Cold store door open' }).click();
  await page.getByLabel('Note').fill('Door closed by the night porter, seal worn');
  await page.waitForFunction((key) => sessionStorage.getItem(key)?.includes('seal worn'), `ems.draft.alert.note.${created.body.id}`);
  await page.reload();
  await page.locator('[data-notice="draft-restored"]').waitFor();
  await expectValue(page.getByLabel('Note'), 'Door closed by the night porter, seal worn');
  await page.getByRole('button', { name: 'Acknowledge', exact: true }).click();
  await page.locator('[data-notice="draft-restored"]').waitFor({ state: 'detached' });
  // A fresh token (these expire in 4 s here): another operator reads the alert's history.
  const reader = await rig.server.createUser({ role: 'operator', username: 'reader' });
  const notes = await rig.server.request('GET', `/api/alerts/${created.body.id}/notes`, { token: reader.accessToken });
  assert.ok(
    notes.body.items.some((n: { text: string | null }) => n.text === 'Door closed by the night porter, seal worn'),
    JSON.stringify(notes.body),
  );
  await expectEqual(() => page.evaluate((key) => sessionStorage.getItem(key), `ems.draft.alert.note.${created.body.id}`), null, 'sent: the draft is gone');
  await context.close();
});
