// The fault-detection rules screen (issue 54) in Chromium against GET /api/fdd/rules and POST …/replay, on the built-in
// simulator with its plant (EMS_SIM_EQUIPMENT=on) and its points mapped as the suggestions say: each rule with its
// source and status ("cannot run: …" where the plant lacks a class), and "try it on history" showing the episodes and
// waste the API answers for the same period, a fan override injected into the plant's past being found.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { TestUser } from '../helpers/server.ts';
import { assertNoProblems, axeViolations, openPage, type Rig, settled, signInThroughForm, startRig } from './rig.ts';

let rig: Rig;
let operator: TestUser;
const DAY = 86_400_000;
const day = (offset: number) => new Date(Date.now() + offset * DAY).toISOString().slice(0, 10);

before(async () => {
  rig = await startRig({ EMS_IOT_BASE_URL: 'sim', EMS_SIM_EQUIPMENT: 'on' });
  operator = await rig.server.createUser({ role: 'operator', username: 'tuner' });
  const admin = await rig.server.createUser({ role: 'admin' });
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

test('rules with source and status; trying the override rule on history shows what the API answers', async () => {
  const rules = (await rig.server.request('GET', '/api/fdd/rules', { token: operator.accessToken })).body;
  const { page, context, problems } = await openPage(rig.browser, `${rig.server.url}/faults/rules`);
  await signInThroughForm(page, 'tuner', operator.password);
  await settled(page);
  await page.getByRole('heading', { name: 'Fault detection rules', level: 1 }).waitFor();
  const rows = page.locator('[data-table="fdd-rules"] tbody tr');
  assert.equal(await rows.count(), rules.length);
  const leak = page.locator('[data-rule="ahu-heating-coil-leak"]');
  assert.match((await leak.textContent())!, /G36 FC#15/);
  assert.match((await leak.textContent())!, /runs on AHU-1/);
  assert.match((await page.locator('[data-rule="meter-night-base-load"]').textContent())!, /cannot run: no Meter equipment is mapped/);
  assert.deepEqual((await axeViolations(page)).join('\n'), '', 'axe on the rules screen');

  await page.getByLabel('Rule', { exact: true }).selectOption({ label: 'Fan running out of the occupancy schedule' });
  await page.getByLabel('From').fill(day(-2));
  await page.getByLabel('To (not included)').fill(day(0));
  await page.getByRole('button', { name: 'Run on history' }).click();
  const result = page.locator('[data-replay="result"]');
  await result.waitFor();
  const api = await rig.server.request('POST', '/api/fdd/rules/ahu-fan-out-of-schedule/replay', {
    token: operator.accessToken,
    body: { from: `${day(-2)}T00:00:00.000Z`, to: `${day(0)}T00:00:00.000Z` },
  });
  assert.equal(api.status, 200, api.text);
  assert.ok(api.body.episodes.length >= 1, JSON.stringify(api.body));
  const kwh = new Intl.NumberFormat('en-US', { minimumFractionDigits: 1, maximumFractionDigits: 1 }).format(api.body.wasteKwh);
  assert.match((await result.textContent())!, new RegExp(`^${api.body.episodes.length} episodes, ${kwh} kWh wasted`));
  assert.equal(await result.locator('li').count(), api.body.episodes.length);
  assert.equal((await rig.server.request('GET', '/api/fdd/episodes', { token: operator.accessToken })).body.length, 0, 'trying writes nothing');
  assertNoProblems(problems, 'fault rules');
  await context.close();
});
