// The box from the browser (issue 53), in Chromium: an admin takes a backup now, sees it listed, runs the restore drill
// and reads its result, downloads the backup's database; the API and the audit trail agree.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, test } from 'node:test';
import type { TestUser } from '../helpers/server.ts';
import { assertNoProblems, axeViolations, expectText, openPage, type Rig, settled, shot, signInThroughForm, startRig } from './rig.ts';

let rig: Rig;
let admin: TestUser;
before(async () => {
  rig = await startRig();
  admin = await rig.server.createUser({ role: 'admin', username: 'boxadmin' });
});
after(() => rig?.close());

test('backup now, the drill and its result, the list with a download, from the admin screen', async () => {
  const { page, context, problems } = await openPage(rig.browser, `${rig.server.url}/admin`);
  await signInThroughForm(page, 'boxadmin', admin.password);
  await settled(page);
  await page.getByText('No backup yet.').waitFor();
  // The box: its version, HTTPS off, not in a fleet, as GET /api/system/box says.
  const box = (await rig.server.request('GET', '/api/system/box', { token: admin.accessToken })).body;
  await page.locator('[data-section="box"] [data-field="version"]').waitFor();
  await expectText(page.locator('[data-section="box"] [data-field="version"]'), box.version);
  await expectText(page.locator('[data-section="box"] [data-field="https"]'), /^Off: plain HTTP/);
  await expectText(page.locator('[data-section="box"] [data-field="fleet"]'), /^Not joined/);
  await page.getByRole('button', { name: 'Back up now' }).click();
  await page.getByText(/^Backup ems-\d{8}T\d{6}\.\d{3}Z\.db taken/).waitFor({ timeout: 60_000 });
  const listed = (await rig.server.request('GET', '/api/system/backups', { token: admin.accessToken })).body;
  assert.equal(listed.items.length, 1);
  const name = listed.items[0].name as string;
  await page.locator(`tr[data-backup="${name}"]`).waitFor();

  await page.getByRole('button', { name: 'Run the restore drill' }).click();
  const passed = page.getByText(new RegExp(`^Restore drill passed on ${name.replace(/\./g, '\\.')}: \\d+ tables`));
  await passed.waitFor({ timeout: 60_000 });
  const drill = (await rig.server.request('GET', '/api/system/backups', { token: admin.accessToken })).body.drill;
  assert.equal(drill.status, 'ok');
  await expectText(passed, new RegExp(`: ${drill.tables} tables`));

  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: `Download ${name}` }).click()]);
  assert.equal(download.suggestedFilename(), name);
  const file = await download.path();
  assert.equal(fs.readFileSync(file).subarray(0, 15).toString('latin1'), 'SQLite format 3');

  const trail = rig.server.service.deps.db.sqlite.prepare("SELECT action FROM audit_log WHERE resource = 'backup' ORDER BY id").all() as { action: string }[];
  assert.deepEqual(
    trail.map((row) => row.action),
    ['backup.run', 'backup.drill', 'backup.download'],
  );
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    assert.equal((await axeViolations(page)).join('\n'), '', `axe on the admin backups, ${scheme}`);
    await page.locator('[data-section="backup-desk"]').screenshot({ path: `${process.env.WEB_SHOTS ?? '/tmp/web-shots'}/admin-backups-${scheme}.png` });
  }
  await shot(page, 'admin-backups-1280x800-light');
  assertNoProblems(problems, 'admin backups');
  await context.close();
});
