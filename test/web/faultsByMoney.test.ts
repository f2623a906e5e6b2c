// The equipment faults screen (issue 54) in Chromium against the API, as a walk: the faults screen links to it, the
// rows are the API's episodes, an operator marks one "not a fault" with a reason and the API and its fault record say
// so; axe on the screen. The episodes are opened by the context's own Episodes (each with its record in the faults
// resource), as the detector opens them. What the screen shows for a given list (order, amounts), the snooze and its
// early lift, and a viewer's screen without actions are checked in the fast screen tier (test/web/screens/faultsByMoney.test.ts).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { RULE_LIBRARY } from '../../src/faultDetection/library.ts';
import type { TestUser } from '../helpers/server.ts';
import { assertNoProblems, axeViolations, expectCount, expectText, openPage, type Rig, settled, signInThroughForm, startRig } from './rig.ts';

let rig: Rig;
let operator: TestUser;
const HOUR = 3_600_000;

before(async () => {
  rig = await startRig();
  operator = await rig.server.createUser({ role: 'operator', username: 'fixer' });
  const { episodes } = rig.server.service.deps.faultDetection;
  const rule = (id: string) => RULE_LIBRARY.find((r) => r.id === id)!;
  const start = Date.now() - 30 * HOUR;
  // 24 kWh over 30 h (per day: 24 ÷ 1.25 = 19.2 kWh) and 50 kWh over 10 h (a span under a day counts as one: 50 kWh).
  episodes.start(
    rule('ahu-heating-coil-leak'),
    'AHU-1',
    { startedAt: start, lastSeenAt: start + 30 * HOUR, endedAt: null, wasteKwh: 24, heldHours: 30, evidence: { rise: 3.7 } },
    0.3,
  );
  episodes.start(
    rule('ahu-fan-out-of-schedule'),
    'AHU-2',
    { startedAt: start, lastSeenAt: start + 10 * HOUR, endedAt: null, wasteKwh: 50, heldHours: 10, evidence: { sf: 1 } },
    0.3,
  );
});
after(() => rig?.close());

test('faults by money from the faults screen: the API\'s episodes; "not a fault" with a reason from the row, in the API and its fault record', async () => {
  const api = await rig.server.request('GET', '/api/fdd/episodes', { token: operator.accessToken });
  assert.equal(api.status, 200);
  assert.deepEqual(
    api.body.map((e: { ruleId: string }) => e.ruleId),
    ['ahu-fan-out-of-schedule', 'ahu-heating-coil-leak'],
  );
  const { page, context, problems } = await openPage(rig.browser, `${rig.server.url}/faults`);
  await signInThroughForm(page, 'fixer', operator.password);
  await settled(page);
  await page.getByRole('link', { name: 'Equipment faults by money' }).click();
  await page.getByRole('heading', { name: 'Equipment faults by money', level: 1 }).waitFor();
  const rows = page.locator('[data-table="fdd-episodes"] tbody tr');
  await rows.first().waitFor();
  await expectCount(rows, 2);
  for (const [i, episode] of api.body.entries()) await expectText(rows.nth(i), new RegExp(episode.title));
  assert.deepEqual((await axeViolations(page)).join('\n'), '', 'axe on faults by money');
  await rows.nth(1).getByRole('button', { name: 'Not a fault…' }).click();
  await rows.nth(1).getByLabel('Why is it not a fault?').fill('valve replaced yesterday');
  await rows.nth(1).getByRole('button', { name: 'Mark not a fault' }).click();
  await page.getByText('Marked not a fault; the rule counts it.').waitFor();
  await rows.nth(1).getByText('Not a fault: valve replaced yesterday').waitFor();
  const marked = await rig.server.request('GET', '/api/fdd/episodes', { token: operator.accessToken });
  assert.equal(marked.body[1].notAFault.reason, 'valve replaced yesterday');
  assert.equal((await rig.server.request('GET', `/api/faults/${marked.body[1].faultId}`, { token: operator.accessToken })).body.status, 'closed');
  assertNoProblems(problems, 'faults by money');
  await context.close();
});
