// The fault-detection screens (issue 54) in Chromium against the API, on the built-in simulator with its plant
// (EMS_SIM_EQUIPMENT=on) and its points mapped as the suggestions say: the mapping screen (a unit contradicting its class
// refused on its row, a forgotten code confirmed from its suggestion), the equipment view and a fault's evidence chart,
// each figure checked against the API, axe-clean light and dark; an admin switching a rule off and on from the rules
// screen, checked through the API, axe on that screen. What the rules screen shows for a given list (source, status,
// state, hits), "try it on history" and an operator's screen without switches are checked in the fast screen tier
// (test/web/screens/faultRules.test.ts); the replay itself in test/faultDetection/faultDetection.test.ts.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { TestUser } from '../helpers/server.ts';
import {
  assertNoProblems,
  axeViolations,
  expectCount,
  expectEqual,
  expectText,
  goInside,
  openPage,
  type Rig,
  settled,
  signInThroughForm,
  startRig,
} from './rig.ts';

let rig: Rig;
let admin: TestUser;
const DAY = 86_400_000;
const day = (offset: number) => new Date(Date.now() + offset * DAY).toISOString().slice(0, 10);

before(async () => {
  rig = await startRig({ EMS_IOT_BASE_URL: 'sim', EMS_SIM_EQUIPMENT: 'on' });
  admin = await rig.server.createUser({ role: 'admin', username: 'mapper' });
  const suggestions = (await rig.server.request('GET', '/api/fdd/points/suggestions', { token: admin.accessToken })).body;
  const lines = suggestions
    .filter((s: { code: string; brickClass: string | null }) => s.brickClass && /^(ahu1|vav\d|chiller1|hw)\./.test(s.code))
    .map((s: { code: string; equipment: string; equipmentType: string; brickClass: string; unit: string }) =>
      [s.code, s.equipment, s.equipmentType, s.brickClass, s.unit].join(','),
    );
  const imported = await rig.server.request('POST', '/api/fdd/points/import', {
    token: admin.accessToken,
    raw: ['code,equipment,equipmentType,brickClass,unit', ...lines].join('\n'),
    headers: { 'content-type': 'text/csv' },
  });
  assert.equal(imported.status, 200, imported.text);
  // The fan ran all of yesterday, schedule or not (seeded into the simulated plant's past).
  const yesterday = Date.parse(`${day(-1)}T00:00:00Z`);
  rig.server.service.deps.iot.simulator!.building.plant!.inject({ kind: 'schedule-override', from: yesterday, to: yesterday + DAY });
});
after(() => rig?.close());

test('mapping, equipment view and evidence chart show what the API answers; axe light and dark', async () => {
  const token = admin.accessToken;
  const get = async (path: string) => {
    const answer = await rig.server.request('GET', path, { token });
    assert.equal(answer.status, 200, answer.text);
    return answer.body;
  };
  // A code forgotten, to be confirmed again from its suggestion.
  assert.equal((await rig.server.request('DELETE', '/api/fdd/points/ahu1.rat', { token })).status, 204);
  const { page, context, problems } = await openPage(rig.browser, `${rig.server.url}/admin/fdd-mapping`);
  await signInThroughForm(page, 'mapper', admin.password);
  await settled(page);
  await page.getByRole('heading', { name: 'Point mapping for fault detection', level: 1 }).waitFor();
  await page.locator('[data-code="ahu1.rat"]').waitFor();
  await expectText(page.locator('[data-code="ahu1.rat"]'), /suggested/);
  await page.getByLabel('Unit ahu1.sat', { exact: true }).fill('kW');
  await page.getByLabel('Select ahu1.rat', { exact: true }).check();
  await page.getByRole('button', { name: 'Confirm 2 selected' }).click();
  await page.locator('[data-code="ahu1.sat"] [role="alert"]').waitFor();
  await expectText(page.locator('[data-code="ahu1.sat"] [role="alert"]'), /unit .*temperature/);
  const points = await get('/api/fdd/points');
  assert.equal(points.find((p: { code: string }) => p.code === 'ahu1.sat').unit, '°C', 'the refused row wrote nothing');
  const rat = points.find((p: { code: string }) => p.code === 'ahu1.rat');
  assert.deepEqual([rat.equipment, rat.brickClass, rat.unit], ['AHU-1', 'Return_Air_Temperature_Sensor', '°C']);
  assert.deepEqual((await axeViolations(page)).join('\n'), '', 'axe on the mapping screen');

  // A fault of last night's override (the plant's past holds it), as the detector would have written it.
  const { episodes, ruleBook } = rig.server.service.deps.faultDetection;
  const night = Date.parse(`${day(-1)}T20:00:00Z`);
  const id = episodes.start(
    ruleBook.get('ahu-fan-out-of-schedule'),
    'AHU-1',
    { startedAt: night, lastSeenAt: night + 3 * 3_600_000, endedAt: null, wasteKwh: 12, heldHours: 3, evidence: { sf: 1 } },
    0.25,
  );
  const unit = await get('/api/fdd/equipment/AHU-1');
  const evidence = await get(`/api/fdd/episodes/${id}/evidence`);
  for (const scheme of ['light', 'dark'] as const) {
    const dark = scheme === 'dark' ? await openPage(rig.browser, `${rig.server.url}/login`, { colorScheme: 'dark' }) : null;
    const view = dark?.page ?? page;
    if (dark) await signInThroughForm(view, 'mapper', admin.password);
    await goInside(view, `/faults/equipment/AHU-1?episode=${id}`);
    await view.getByRole('heading', { name: 'Equipment AHU-1', level: 1 }).waitFor();
    // The heading comes from the address at once; the points table once the equipment's answer is in.
    await view
      .locator('[data-table="fdd-points"] tbody tr')
      .nth(unit.points.length - 1)
      .waitFor();
    await expectEqual(
      () => view.locator('[data-table="fdd-points"] tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-point'))),
      unit.points.map((p: { code: string }) => p.code),
    );
    await expectCount(view.locator('[data-table="fdd-equipment-episodes"] tbody tr'), unit.episodes.length);
    await view.locator(`[data-evidence="${id}"] canvas`).first().waitFor();
    const table = view.locator('[data-table="fdd-evidence"]');
    await expectEqual(
      async () => (await table.locator('thead th').allTextContents()).slice(1),
      evidence.series.map((s: { name: string; unit: string }) => `${s.name} (${s.unit || '–'})`),
    );
    const times = new Set(evidence.series.flatMap((s: { at: string[] }) => s.at));
    await expectCount(table.locator('tbody tr'), times.size);
    const first = evidence.series[0];
    const formatted = new Intl.NumberFormat('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 }).format(first.value[0]);
    await expectText(table.locator('tbody tr').first().locator('td').nth(1), new RegExp(`^\\s*${formatted.replace(/[.]/g, '\\.')}\\s*$`));
    assert.deepEqual((await axeViolations(view)).join('\n'), '', `axe on the equipment view (${scheme})`);
    if (dark) {
      assertNoProblems(dark.problems, 'equipment view (dark)');
      await dark.context.close();
    }
  }
  // The one 400 is the refused row's answer, meant.
  assert.equal(problems.filter((p) => /status of 400/.test(p)).length, 1);
  assertNoProblems(
    problems.filter((p) => !/status of 400/.test(p)),
    'mapping and equipment',
  );
  await context.close();
});

test('an admin switches a rule off and on again from its row, the API following; axe on the rules screen', async () => {
  const ruleOf = async () =>
    (await rig.server.request('GET', '/api/fdd/rules', { token: admin.accessToken })).body.find((r: { id: string }) => r.id === 'chiller-short-cycling');
  assert.equal((await ruleOf()).enabled, true);
  const { page, context, problems } = await openPage(rig.browser, `${rig.server.url}/faults/rules`);
  await signInThroughForm(page, 'mapper', admin.password);
  await settled(page);
  await page.locator('[data-table="fdd-rules"] tbody tr').first().waitFor();
  assert.deepEqual((await axeViolations(page)).join('\n'), '', 'axe on the rules screen');
  const row = page.locator('[data-rule="chiller-short-cycling"]');
  await row.getByRole('button', { name: 'Switch off' }).click();
  await row.getByRole('button', { name: 'Switch on' }).waitFor();
  await expectText(row, /v\d+ · off/);
  assert.equal((await ruleOf()).enabled, false);
  await row.getByRole('button', { name: 'Switch on' }).click();
  await row.getByRole('button', { name: 'Switch off' }).waitFor();
  assert.equal((await ruleOf()).enabled, true);
  assertNoProblems(problems, 'rule switch');
  await context.close();
});
