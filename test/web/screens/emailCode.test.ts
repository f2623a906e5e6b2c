// The emailed-code flow (components/EmailCodeFlow.tsx) as the forgotten-password and registration screens use it, in
// the fast screen tier: the address first, the service's refusal shown on the same form, then the code, the screen's
// own fields and the password in one form, sent with the address the code went to; a refused code keeps the form.
import './dom.ts';
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import type { User } from '../../../src/web/app/api/types.ts';
import Forgot from '../../../src/web/app/screens/Forgot.tsx';
import Register from '../../../src/web/app/screens/Register.tsx';
import { user } from '../../../src/web/app/state/session.ts';
import { $, $$, byText, calls, fill, labelled, mount, refuse, stubApi, text, unmount, waitFor } from './screen.ts';

after(unmount);

const person = { id: 7, username: 'newcomer', email: 'new@example.test', role: 'viewer' } as User;
const signedIn = { accessToken: 'a', refreshToken: 'r', user: person };

async function submit(label: string): Promise<void> {
  const button = byText('button[type="submit"]', label);
  assert.ok(button, `no ${label} button`);
  button.click();
}

test('registration: a refused address stays on the first form; the code, username and password go with the address', async () => {
  let refuseAddress = true;
  stubApi({
    'POST /api/auth/register/send-code': () => (refuseAddress ? refuse(400, 'email: must be an e-mail address') : { sent: true }),
    'POST /api/auth/register': ({ body }) => ((body as { code: string }).code === '000000' ? refuse(400, 'the code is wrong or has expired') : signedIn),
  });
  const screen = await mount(Register, {}, 'viewer');
  user.value = null;
  assert.equal(text($('h1', screen)), 'Create an account');
  await fill(labelled('Email'), '  new@example.test ');
  await submit('Email me a code');
  await waitFor(() => text($('.problem', screen)).includes('must be an e-mail address'), 'the refusal');
  assert.equal($$('input[autocomplete="one-time-code"]', screen).length, 0);

  refuseAddress = false;
  await submit('Email me a code');
  const code = await waitFor(() => $$('input[autocomplete="one-time-code"]', screen)[0], 'the code field');
  assert.equal(text($('.done', screen)), 'If new@example.test has an account, a code is on its way.');
  assert.equal(text($('.problem', screen)), '', 'the refusal is gone once the code is sent');
  assert.deepEqual(calls.filter((c) => c.path.endsWith('send-code')).at(-1)?.body, { email: 'new@example.test' });
  // The screen's own field sits between the code and the password.
  const labels = $$('form label', screen).map(text);
  assert.deepEqual(labels, ['Code from the email', 'Username or email', 'Password']);
  assert.equal(code.getAttribute('maxlength'), '6');

  await fill(code, '000000');
  await fill(labelled('Username or email'), ' newcomer ');
  await fill(labelled('Password'), 'a long enough password');
  await submit('Create account');
  await waitFor(() => text($('.problem', screen)).includes('wrong or has expired'), 'the refused code');
  assert.ok($('input[autocomplete="one-time-code"]', screen), 'the second form stays');

  await fill(code, ' 123456 ');
  await submit('Create account');
  await waitFor(() => user.value?.id === 7, 'the new account signed in');
  assert.deepEqual(calls.filter((c) => c.path === '/api/auth/register').at(-1)?.body, {
    email: 'new@example.test',
    username: 'newcomer',
    code: '123456',
    password: 'a long enough password',
  });
});

test('forgotten password: the intro, the new password with the code, then a sign-in with it', async () => {
  stubApi({
    'POST /api/auth/forgot-password/send-code': () => ({ sent: true }),
    'POST /api/auth/forgot-password/reset': () => ({ ok: true }),
    'POST /api/auth/login': () => signedIn,
  });
  const screen = await mount(Forgot, {}, 'viewer');
  user.value = null;
  assert.equal(text($('h1', screen)), 'Reset your password');
  assert.match(text(screen), /6-digit code, valid for 5 minutes/);
  await fill(labelled('Email'), 'fm@example.test');
  await submit('Email me a code');
  await waitFor(() => $$('input[autocomplete="one-time-code"]', screen)[0], 'the code field');
  assert.deepEqual($$('form label', screen).map(text), ['Code from the email', 'New password']);
  assert.ok($('#' + labelled('New password').getAttribute('aria-describedby'), screen), 'the password hint is tied to the field');
  await fill(labelled('Code from the email'), '654321');
  await fill(labelled('New password'), 'another long password');
  await submit('Set new password');
  await waitFor(() => calls.some((c) => c.path === '/api/auth/login'), 'the sign-in with the new password');
  assert.deepEqual(calls.find((c) => c.path === '/api/auth/forgot-password/reset')?.body, {
    email: 'fm@example.test',
    code: '654321',
    newPassword: 'another long password',
  });
  assert.deepEqual(calls.find((c) => c.path === '/api/auth/login')?.body, { username: 'fm@example.test', password: 'another long password' });
  assert.ok(byText('a', 'Sign in', screen), 'the way back to sign-in');
});
