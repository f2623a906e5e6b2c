// The fault-detection rules screen (issue 54) in the fast screen tier (was the first Chromium test of faultRules.test.ts
// and the operator's half of its third; Chromium keeps the admin's switch through the real API, the mapping, the
// equipment view and axe): each rule as GET /api/fdd/rules gives it (source, what it runs on or why it cannot run,
// on/off/paused, hits, the "not a fault" rate); "try it on history" sends the rule and the days chosen and shows the
// episodes and waste POST …/replay answers, a backwards period refused before sending; an admin's switch sends the
// opposite state (on for a paused rule) and the row follows the list; an operator gets no switch, a viewer no replay.
import './dom.ts';
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import type { Answer } from '../../../src/web/app/api/types.ts';
import FaultRules from '../../../src/web/app/screens/FaultRules.tsx';
import { $, $$, byText, type Call, calls, fill, labelled, mount, refuse, stubApi, text, unmount, waitFor } from './screen.ts';

after(unmount);

type Rule = Answer<'/api/fdd/rules'>[number];
type Replay = Answer<'/api/fdd/rules/{id}/replay', 'post'>;

function rule(id: string, title: string, scheme: string, ref: string, status: string[], extra: Partial<Rule> = {}): Rule {
  const equipmentType = 'AHU' as const;
  return {
    id,
    title,
    version: 2,
    equipmentType,
    source: { scheme, ref },
    status,
    enabled: true,
    paused: null,
    hits: 12,
    notAFault: 3,
    notAFaultRate: 0.25,
    definition: {
      id,
      title,
      version: 2,
      description: title,
      equipmentType,
      mode: 'any',
      persistenceMinutes: 30,
      severity: 'medium',
      source: { scheme: 'G36', ref },
      inputs: {},
      condition: true,
      waste: { kw: 0, method: 'none' },
    },
    ...extra,
  };
}

/** The service's rules; a switch changes `enabled` (and lifts a pause) as the service does. */
function stubRules(replay?: (call: Call) => unknown) {
  const rules = [
    rule('ahu-heating-coil-leak', 'Heating coil valve leaking', 'G36', 'FC#15', ['runs on AHU-1']),
    rule('ahu-fan-out-of-schedule', 'Fan running out of the occupancy schedule', 'EMS', 'schedule', ['runs on AHU-1, AHU-2'], {
      paused: { at: '2026-11-28T02:00:00.000Z', reason: 'flood of 40 faults in an hour' },
    }),
    rule('meter-night-base-load', 'Night base load', 'EMS', 'night', ['cannot run: no Meter equipment is mapped'], {
      hits: 0,
      notAFault: 0,
      notAFaultRate: null,
    }),
  ];
  stubApi({
    'GET /api/fdd/rules': () => structuredClone(rules),
    'PUT /api/fdd/rules/{id}/switch': (call) => {
      const found = rules.find((r) => r.id === call.params.path?.id)!;
      found.enabled = (call.body as { enabled: boolean }).enabled;
      if (found.enabled) found.paused = null;
      return found;
    },
    'POST /api/fdd/rules/{id}/replay': replay ?? (() => assert.fail('no replay expected')),
  });
  return rules;
}

const row = (screen: HTMLElement, id: string) => $(`[data-rule="${id}"]`, screen);
const cells = (screen: HTMLElement, id: string) => $$('td', row(screen, id)).map(text);

test('each rule with its source, what it runs on, its state, hits and not-a-fault rate; an operator gets no switch', async () => {
  stubRules();
  const screen = await mount(FaultRules, {}, 'operator');
  await waitFor(() => $$('[data-table="fdd-rules"] tbody tr', screen).length === 3, 'the three rules');
  assert.deepEqual(
    $$('[data-table="fdd-rules"] tbody tr', screen).map((r) => r.dataset.rule),
    ['ahu-heating-coil-leak', 'ahu-fan-out-of-schedule', 'meter-night-base-load'],
  );
  assert.deepEqual(cells(screen, 'ahu-heating-coil-leak').slice(1), ['G36 FC#15', 'runs on AHU-1', '12', '25%']);
  assert.match(cells(screen, 'ahu-heating-coil-leak')[0], /^Heating coil valve leaking\s*ahu-heating-coil-leak v2 · on$/, 'on, and no switch');
  assert.match(cells(screen, 'ahu-fan-out-of-schedule')[0], /v2 · paused: flood of 40 faults in an hour$/);
  assert.deepEqual(cells(screen, 'meter-night-base-load').slice(2), ['cannot run: no Meter equipment is mapped', '0', '–']);
  assert.equal($$('[data-table="fdd-rules"] button', screen).length, 0, 'no switch for an operator');
});

test("an admin's switch sends the opposite state, on for a paused rule, and the row follows; a refusal is shown", async () => {
  const rules = stubRules();
  const screen = await mount(FaultRules, {}, 'admin');
  await waitFor(() => $$('[data-table="fdd-rules"] tbody tr', screen).length === 3, 'the three rules');
  byText('button', 'Switch off', row(screen, 'ahu-heating-coil-leak'))!.click();
  await waitFor(() => /v2 · off/.test(cells(screen, 'ahu-heating-coil-leak')[0]), 'the rule off');
  assert.ok(byText('button', 'Switch on', row(screen, 'ahu-heating-coil-leak')));
  byText('button', 'Switch on', row(screen, 'ahu-fan-out-of-schedule'))!.click();
  await waitFor(() => /v2 · on Switch off$/.test(cells(screen, 'ahu-fan-out-of-schedule')[0]), 'the pause lifted');
  assert.deepEqual(
    calls.filter((c) => c.method === 'PUT').map((c) => [c.params.path?.id, c.body]),
    [
      ['ahu-heating-coil-leak', { enabled: false }],
      ['ahu-fan-out-of-schedule', { enabled: true }],
    ],
  );
  stubApi({ 'GET /api/fdd/rules': () => rules, 'PUT /api/fdd/rules/{id}/switch': () => refuse(409, 'the rule library is being updated') });
  byText('button', 'Switch off', row(screen, 'ahu-fan-out-of-schedule'))!.click();
  await waitFor(() => text(screen).includes('the rule library is being updated'), 'the refusal');
});

test('trying a rule on history: the rule and days sent, the episodes and waste shown; a backwards period refused before sending', async () => {
  const answer: Replay = {
    ruleId: 'ahu-fan-out-of-schedule',
    ruleVersion: 2,
    from: '2026-11-26T00:00:00.000Z',
    to: '2026-11-28T00:00:00.000Z',
    currency: 'EUR',
    wasteKwh: 43.25,
    wasteMoney: 12.98,
    cannotRun: ['VAV-9: no airflow point mapped'],
    episodes: [
      { equipment: 'AHU-1', startedAt: '2026-11-27T00:00:00.000Z', lastSeenAt: '2026-11-27T23:45:00.000Z', endedAt: null, wasteKwh: 40, wasteMoney: 12 },
      {
        equipment: 'AHU-2',
        startedAt: '2026-11-27T20:00:00.000Z',
        lastSeenAt: '2026-11-27T21:00:00.000Z',
        endedAt: '2026-11-27T21:15:00.000Z',
        wasteKwh: 3.25,
        wasteMoney: 0.98,
      },
    ],
  } as Replay;
  stubRules(() => answer);
  const screen = await mount(FaultRules, {}, 'operator');
  await waitFor(() => $$('[data-table="fdd-rules"] tbody tr', screen).length === 3, 'the rules');
  await fill(labelled('Rule'), 'ahu-fan-out-of-schedule');
  await fill(labelled('From'), '2026-11-28');
  await fill(labelled('To (not included)'), '2026-11-26');
  byText('button', 'Run on history', screen)!.click();
  await waitFor(() => text(screen).includes('The first day must come before the last.'), 'the refusal');
  assert.equal(calls.filter((c) => c.method === 'POST').length, 0, 'nothing sent');

  await fill(labelled('From'), '2026-11-26');
  await fill(labelled('To (not included)'), '2026-11-28');
  byText('button', 'Run on history', screen)!.click();
  const result = await waitFor(() => screen.querySelector<HTMLElement>('[data-replay="result"]'), 'the result');
  assert.deepEqual(
    calls.filter((c) => c.method === 'POST').map((c) => [c.params.path?.id, c.body]),
    [['ahu-fan-out-of-schedule', { from: '2026-11-26T00:00:00.000Z', to: '2026-11-28T00:00:00.000Z' }]],
  );
  assert.match(text(result), /^2 episodes, 43\.3 kWh wasted \(€12\.98\)/);
  assert.match(text(result), /VAV-9: no airflow point mapped/);
  assert.deepEqual(
    $$('li', result).map((li) => text($('strong', li))),
    ['AHU-1', 'AHU-2'],
  );
  assert.match(text($$('li', result)[1]), /3\.3 kWh\s*· €0\.98$/);
});

test('a viewer is told that trying a rule needs an operator, and has no form', async () => {
  stubRules();
  const screen = await mount(FaultRules, {}, 'viewer');
  await waitFor(() => $$('[data-table="fdd-rules"] tbody tr', screen).length === 3, 'the rules');
  assert.ok(text(screen).includes('Running a rule on history needs an operator.'));
  assert.equal($$('form', screen).length, 0);
});
