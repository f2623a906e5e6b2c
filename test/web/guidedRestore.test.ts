// The guided restore in Chromium (issue 53): an admin chooses a backup, reads the consequences, confirms; the page
// follows the service as it stops, restores and starts on the same port, then sends everyone to sign in again, and
// the data is the backup's. The service runs in its host (src/app/host.ts), as main.ts runs it.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../helpers/chromium.ts';
import { startHostedServer, type HostedServer } from '../helpers/hostedServer.ts';
import { TEST_PASSWORD } from '../helpers/server.ts';
import { ensureBuilt, expectAttribute, openPage, settled, shot, signInThroughForm } from './rig.ts';

let box: HostedServer;
let browser: Browser;
before(async () => {
  await ensureBuilt();
  [box, browser] = await Promise.all([startHostedServer(), launchChromium()]);
  await box.createUser('restoreadmin', 'admin');
});
after(async () => {
  await browser?.close();
  await box?.close();
});

test('restore a backup from the admin screen: confirm, follow the steps, sign in again on the backup’s data', async () => {
  const token = box.tokenFor('restoreadmin');
  const run = await fetch(`${box.url}/api/system/backups`, { method: 'POST', headers: { authorization: `Bearer ${token}` } }).then((r) => r.json());
  assert.equal(run.status, 'ok');
  await box.createUser('after_backup', 'viewer');

  const { page, context, problems } = await openPage(browser, `${box.url}/admin`);
  await signInThroughForm(page, 'restoreadmin', TEST_PASSWORD);
  await settled(page);
  await page.getByRole('button', { name: `Restore the backup ${run.name}` }).click();
  const panel = page.locator('[data-section="guided-restore"]');
  await panel.getByText('Everyone signs in again afterwards').waitFor();
  const confirm = panel.getByRole('button', { name: 'Restore now' });
  assert.equal(await confirm.isDisabled(), true, 'nothing happens before the consequences are acknowledged');
  await panel.getByLabel('I have read this and want to restore this backup').check();
  await confirm.click();
  await page.locator('[data-section="guided-restore"][data-reached="sign-in"]').waitFor({ timeout: 60_000 });
  await expectAttribute(panel.locator('[data-step="restoring"]'), 'data-state', 'done');
  await shot(page, 'admin-restore-done-1280x800');
  assert.equal(box.host.restarts, 1);
  await page.getByRole('button', { name: 'Sign in again' }).click();
  await signInThroughForm(page, 'restoreadmin', TEST_PASSWORD);
  const users = box.host.service.deps.db.sqlite.prepare('SELECT username FROM users').pluck().all() as string[];
  assert.ok(!users.includes('after_backup'), 'the data is the backup’s');
  // The page's fetches meet a service that is away for a moment: those are expected, nothing else is.
  assert.deepEqual(
    problems.filter((line) => !/Failed to load resource|net::ERR_|EventSource/.test(line)),
    [],
  );
  await context.close();
});
