// Provider sign-in in the staff app through the popup flow of SPEC Authentication 8, against a GitHub-shaped OAuth
// server on 127.0.0.1: the first time the identity is not linked, so the app asks for the EMS account's password and
// links it (bind); the next time the popup's token pair signs the person in at once.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, test } from 'node:test';
import { type FakeGithub, startFakeGithub } from '../helpers/fakeGithub.ts';
import type { TestUser } from '../helpers/server.ts';
import { expectText, openPage, type Rig, settled, startRig } from './rig.ts';

let github: FakeGithub;
let rig: Rig;
let owner: TestUser;

async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as net.AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

before(async () => {
  github = await startFakeGithub();
  // The provider redirects the popup to EMS_PUBLIC_URL, and the popup posts to that origin: it must be this service's.
  const port = await freePort();
  rig = await startRig({ ...github.env, EMS_PORT: String(port), EMS_PUBLIC_URL: `http://127.0.0.1:${port}` });
  owner = await rig.server.createUser({ role: 'operator', username: 'octo-owner' });
  github.signInAs({ id: 4242, login: 'octocat', name: 'Octo Cat', emails: [{ email: 'octocat@users.example', primary: true, verified: true }] });
});
after(async () => {
  await rig?.close();
  await github?.close();
});

test('sign in with GitHub: link to the existing account once, then straight in', async () => {
  const { page, context } = await openPage(rig.browser, `${rig.server.url}/login`);
  await page.getByRole('button', { name: 'Sign in with GitHub' }).click();
  await page.getByText('Your github account is not linked yet.').waitFor();
  await page.locator('input[name="username"]').fill('octo-owner');
  await page.locator('input[name="password"]').fill(owner.password);
  await page.getByRole('button', { name: 'Sign in and link' }).click();
  await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
  const links = (await rig.server.request('GET', `/api/users/${owner.user.id}/oauth-links`, { token: owner.accessToken })).body;
  assert.deepEqual(
    (links.items ?? links).map((link: { provider: string; providerUserId: string }) => [link.provider, link.providerUserId]),
    [['github', '4242']],
  );
  await settled(page);
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  await page.getByRole('button', { name: 'Sign in with GitHub' }).click();
  await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
  await expectText(page.locator('.who'), 'octo-owner');
  await context.close();
});
