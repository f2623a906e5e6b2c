// Admin → notification rules in the fast screen tier (written before the screen was split into parts, issue 57 item 3,
// to hold its behaviour; Chromium's adminNotifications.test.ts keeps the journey through the real API): the rules GET
// /api/notification-rules gives with levels, area, recipients and escalation; a rule paused from its row; a new rule
// without an address refused before asking, then sent with its addresses split and its escalation.
import './dom.ts';
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import type { Answer } from '../../../src/web/app/api/types.ts';
import AdminNotifications from '../../../src/web/app/screens/AdminNotifications.tsx';
import { $, $$, byText, calls, fill, labelled, mount, rendered, stubApi, text, unmount, waitFor } from './screen.ts';

after(unmount);

type Rule = Answer<'/api/notification-rules'>['items'][number];
const rule = {
  id: 4,
  name: 'Plant room',
  levels: ['critical', 'warning'],
  area: 'Plant',
  recipients: ['fm@example.test', 'boss@example.test'],
  escalateAfterMin: 30,
  escalateTo: ['duty@example.test'],
  enabled: true,
  updatedAt: '2026-01-01T00:00:00.000Z',
} as unknown as Rule;

test('the rules as listed, one paused from its row, a new rule refused without an address and then sent as typed', async () => {
  stubApi({
    'GET /api/notification-rules': () => ({ items: [rule], page: 1, pageSize: 200, total: 1 }),
    'PUT /api/notification-rules/{id}': (call) => ({ ...rule, ...(call.body as object) }),
    'POST /api/notification-rules': (call) => ({ ...rule, id: 5, name: (call.body as { name: string }).name }),
  });
  const screen = await mount(AdminNotifications, {}, 'admin');
  await waitFor(() => $$('li[data-rule="4"]', screen).length === 1, 'the rule');
  assert.deepEqual($$('li[data-rule="4"] .badge', screen).map(text), ['Critical', 'Warning']);
  assert.equal(text($('li[data-rule="4"] [data-field="recipients"]', screen)), 'fm@example.test, boss@example.test');
  assert.match(text($('li[data-rule="4"]', screen)), /after 30 min: duty@example\.test/);

  $('li[data-rule="4"] input[type="checkbox"]', screen).click();
  await waitFor(() => text($('p.done', screen)) === 'Plant room is paused.', 'the rule paused');
  assert.deepEqual(calls.find((c) => c.method === 'PUT')!.body, { enabled: false });

  await fill(labelled('Rule name'), 'Night shift');
  byText('button', 'Add a rule', screen)!.click();
  await waitFor(() => text($('p.problem', screen)) === 'Enter at least one address to mail.', 'no address refused');
  await fill(labelled('Mail to'), 'a@example.test,\nb@example.test');
  await fill(labelled('Escalate after (minutes)'), '15');
  await fill(labelled('Escalate to'), 'c@example.test');
  byText('label.check', 'Warning', screen)!.querySelector('input')!.click();
  await rendered();
  byText('button', 'Add a rule', screen)!.click();
  await waitFor(() => text($('p.done', screen)) === 'Night shift added.', 'the rule added');
  assert.deepEqual(calls.find((c) => c.method === 'POST')!.body, {
    name: 'Night shift',
    levels: ['critical', 'warning'],
    recipients: ['a@example.test', 'b@example.test'],
    escalateAfterMin: 15,
    escalateTo: ['c@example.test'],
  });
  assert.equal((labelled('Rule name') as HTMLInputElement).value, '');
});
