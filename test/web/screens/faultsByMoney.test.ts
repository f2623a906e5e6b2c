// The equipment faults screen (faults by money, issue 54) in the fast screen tier (was most of the Chromium test in
// faultsByMoney.test.ts, which keeps the walk from the faults screen, a "not a fault" through the real API and axe):
// the rows in the order GET /api/fdd/episodes gives them with its amounts; "not a fault" sends the reason typed and
// the row then says why; a snooze sends the instant of the local time typed, and "Lift the snooze" sends the DELETE
// and goes; a viewer is offered none of these actions. The stub keeps the episodes as the service would after each call.
import './dom.ts';
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import type { Answer } from '../../../src/web/app/api/types.ts';
import FaultsByMoney from '../../../src/web/app/screens/FaultsByMoney.tsx';
import { $$, byText, type Call, calls, fill, labelled, mount, stubApi, text, unmount, waitFor } from './screen.ts';

after(unmount);

type Episode = Answer<'/api/fdd/episodes'>[number];
const HOUR = 3_600_000;
const start = Date.parse('2026-11-27T06:00:00.000Z');
function episode(id: number, ruleId: string, title: string, equipment: string, wasteMoneyPerDay: number, wasteKwhPerDay: number): Episode {
  return {
    id,
    ruleId,
    ruleVersion: 2,
    title,
    equipment,
    currency: 'EUR',
    startedAt: new Date(start).toISOString(),
    lastSeenAt: new Date(start + 30 * HOUR).toISOString(),
    endedAt: null,
    evidence: { rise: 3.7 },
    faultId: id + 100,
    method: 'heat balance',
    notAFault: null,
    snoozed: null,
    wasteKwh: wasteKwhPerDay * 1.25,
    wasteKwhPerDay,
    wasteMoneyPerDay,
  };
}

/** The service's list (highest money first, as it ranks them) and its answers to the three actions, kept in `list`. */
function stubEpisodes() {
  // The API's order, which is not the ids' order: the screen must keep it.
  const list = [
    episode(7, 'ahu-fan-out-of-schedule', 'Fan running out of the occupancy schedule', 'AHU-2', 1234.5, 50),
    episode(3, 'ahu-heating-coil-leak', 'Heating coil valve leaking', 'AHU-1', 5.76, 19.2),
  ];
  const of = (call: Call) => list.find((e) => e.id === call.params.path?.id)!;
  stubApi({
    'GET /api/fdd/episodes': () => structuredClone(list),
    'POST /api/fdd/episodes/{id}/not-a-fault': (call) => {
      of(call).notAFault = { at: new Date().toISOString(), reason: (call.body as { reason: string }).reason };
      return of(call);
    },
    'POST /api/fdd/episodes/{id}/snooze': (call) => {
      const body = call.body as { until: string; reason?: string };
      of(call).snoozed = { by: 'operator', until: body.until, reason: body.reason ?? null };
      return of(call);
    },
    'DELETE /api/fdd/episodes/{id}/snooze': (call) => {
      of(call).snoozed = null;
      return of(call);
    },
  });
  return list;
}

const money = (value: number) =>
  new Intl.NumberFormat('en-US', { style: 'currency', currency: 'EUR', maximumFractionDigits: value >= 1000 ? 0 : 2 }).format(value);
const rows = (screen: HTMLElement) => $$('[data-table="fdd-episodes"] tbody tr', screen);
const row = (screen: HTMLElement, id: number) => rows(screen).find((r) => r.dataset.episode === String(id))!;

test("the API's order and amounts; not a fault with its reason; a snooze sent as an instant and lifted early", async () => {
  const list = stubEpisodes();
  const screen = await mount(FaultsByMoney, {}, 'operator');
  await waitFor(() => rows(screen).length === 2, 'the two episodes');
  assert.deepEqual(
    rows(screen).map((r) => r.dataset.episode),
    ['7', '3'],
  );
  for (const [i, e] of list.entries()) {
    const shown = text(rows(screen)[i]);
    assert.ok(shown.includes(e.title), shown);
    assert.ok(shown.includes(e.equipment), shown);
    assert.ok(shown.includes(money(e.wasteMoneyPerDay)), `${shown} has ${money(e.wasteMoneyPerDay)}`);
  }
  assert.equal(text(rows(screen)[0].querySelector('td')), '€1,235', 'a thousand and more in whole units');
  assert.equal(text(rows(screen)[1].querySelector('td')), '€5.76');
  assert.equal(text(rows(screen)[1].querySelectorAll('td')[1]), '19.2');
  assert.equal(row(screen, 3).querySelector('a')?.getAttribute('href'), '/faults/equipment/AHU-1?episode=3');

  // Not a fault, with the reason typed: the call carries it, the row then says why and offers nothing more.
  byText('button', 'Not a fault…', row(screen, 3))!.click();
  await fill(await waitFor(() => $$('input', row(screen, 3))[0], 'the reason field'), 'valve replaced yesterday');
  assert.equal(labelled('Why is it not a fault?'), $$('input', row(screen, 3))[0]);
  byText('button', 'Mark not a fault', row(screen, 3))!.click();
  await waitFor(() => text(screen).includes('Marked not a fault; the rule counts it.'), 'the notice');
  await waitFor(() => text(row(screen, 3)).includes('Not a fault: valve replaced yesterday'), "the row's reason");
  const dismissed = calls.filter((c) => c.method === 'POST' && c.path === '/api/fdd/episodes/{id}/not-a-fault');
  assert.deepEqual(
    dismissed.map((c) => [c.params.path?.id, c.body]),
    [[3, { reason: 'valve replaced yesterday' }]],
  );
  assert.equal(byText('button', 'Snooze…', row(screen, 3)), undefined);

  // Snooze the first until tomorrow 08:00 local time: the API gets that instant; then lift it from the row.
  const tomorrow = new Date(Date.now() + 24 * HOUR);
  const local = `${tomorrow.getFullYear()}-${String(tomorrow.getMonth() + 1).padStart(2, '0')}-${String(tomorrow.getDate()).padStart(2, '0')}T08:00`;
  byText('button', 'Snooze…', row(screen, 7))!.click();
  await fill(await waitFor(() => row(screen, 7).querySelector<HTMLElement>('input[type="datetime-local"]'), 'the snooze field'), local);
  byText('button', 'Snooze', row(screen, 7))!.click();
  await waitFor(() => text(screen).includes('Snoozed: until then'), 'the snooze notice');
  const snoozed = calls.filter((c) => c.path === '/api/fdd/episodes/{id}/snooze');
  assert.deepEqual(
    snoozed.map((c) => [c.method, c.params.path?.id, c.body]),
    [['POST', 7, { until: new Date(local).toISOString() }]],
  );
  const lift = await waitFor(() => byText('button', 'Lift the snooze', row(screen, 7)), 'the lift button');
  lift.click();
  await waitFor(() => text(screen).includes('Snooze lifted'), 'the lift notice');
  await waitFor(() => !byText('button', 'Lift the snooze', row(screen, 7)), 'the lift button gone');
  assert.deepEqual(
    calls.filter((c) => c.method === 'DELETE').map((c) => [c.path, c.params.path?.id]),
    [['/api/fdd/episodes/{id}/snooze', 7]],
  );
  assert.equal(list[0].snoozed, null);
});

test('a viewer reads the list and is offered no action', async () => {
  stubEpisodes();
  const screen = await mount(FaultsByMoney, {}, 'viewer');
  await waitFor(() => rows(screen).length === 2, 'the two episodes');
  assert.equal($$('button', screen).length, 0);
  assert.equal($$('thead th', screen).length, 6, 'no action column');
});
