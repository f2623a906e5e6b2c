// The one new-password field (components/Field.tsx NewPasswordField) where a password is chosen: the account screen,
// the emailed-code flow (emailCode.test.ts sends through it) and the set-up link. Each is a labelled password field
// the browser may fill with a generated password, required, its rules tied to it, and what is typed is what is sent.
import './dom.ts';
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import Account from '../../../src/web/app/screens/Account.tsx';
import FirstSignIn from '../../../src/web/app/screens/FirstSignIn.tsx';
import { $$, byText, calls, fill, labelled, mount, stubApi, text, unmount, waitFor } from './screen.ts';

after(unmount);

/** The field's rules as the person hears them with it: the element its aria-describedby names. */
const describedBy = (input: HTMLElement) => text(document.getElementById(input.getAttribute('aria-describedby') ?? '') ?? undefined);

function assertNewPassword(input: HTMLElement, rules: string): void {
  assert.equal(input.tagName, 'INPUT');
  assert.equal(input.getAttribute('type'), 'password');
  assert.equal(input.getAttribute('autocomplete'), 'new-password');
  assert.ok(input.hasAttribute('required'), 'required');
  assert.equal(describedBy(input), rules);
}

test('account: the new password is a new-password field with the rules, and what is typed is sent', async () => {
  stubApi({ 'PUT /api/users/{id}/password': () => ({}) });
  const screen = await mount(Account, { params: [] }, 'viewer');
  const input = labelled('New password');
  assertNewPassword(input, 'At least 8 characters.');
  await fill(labelled('Current password'), 'old password 1');
  await fill(input, 'a new long password');
  await fill(labelled('New password again'), 'a new long password');
  byText('button[type="submit"]', 'Save password')?.click();
  await waitFor(() => $$('.done', screen).some((done) => text(done) === 'Password changed.'), 'the change confirmed');
  assert.deepEqual(calls.at(-1)?.body, { currentPassword: 'old password 1', newPassword: 'a new long password' });
  assert.equal((input as HTMLInputElement).value, '', 'emptied once changed');
});

test('set-up link: the same field under its own label, hint and form name', async () => {
  stubApi({});
  await mount(FirstSignIn, { params: [] }, 'viewer');
  const input = labelled('New password for admin');
  assertNewPassword(input, 'At least 8 characters.');
  assert.equal(input.getAttribute('name'), 'new-password');
});
