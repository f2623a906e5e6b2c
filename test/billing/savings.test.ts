// Verified savings on data with a known saving: a meter that follows the simulator's weather-driven HVAC load, cut by
// 20 % from the day the measure is installed. The baseline (the existing daily model) predicts what it would have
// used; the avoided energy must come out within its stated 90 % uncertainty of the true saving. A non-routine
// adjustment moves it by exactly its energy; a measure whose baseline fails the Guideline 14 limits is refused.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { DAY, simulatorRig, type SimulatorRig } from '../helpers/rig.ts';
import { addDays } from '../../src/platform/time/calendar.ts';
import type { DayRecord } from '../../src/metering/store.ts';

let r: SimulatorRig;
// The baseline spans the winter's conditions the reporting period sees (IPMVP: no extrapolation past them).
const BASE_FROM = '2025-11-01';
const INSTALLED = '2026-01-15';
const REPORT_TO = '2026-02-12';
let ecm: { id: number };
let noise: { id: number };
let trueSaving = 0;

before(async () => {
  r = await simulatorRig({ start: Date.parse('2025-10-20T00:00:00Z') });
  const hvac = await r.meter({ name: 'HVAC', code: 'meter.hvac.kwh', kind: 'energy', area: 'HVAC' });
  await r.collector.collect();
  await r.run(Date.parse(`${REPORT_TO}T12:00:00Z`), 7 * DAY);
  // Collection ends here; these two meters are written directly (their codes are never read).
  ecm = await r.meter({ name: 'AHU after retrofit', code: 'test.ecm.kwh', kind: 'energy', area: 'Retrofit' });
  noise = await r.meter({ name: 'Noisy', code: 'test.noise.kwh', kind: 'energy', area: 'Noise' });
  const { store } = r.server.service.deps.energy;
  const records: DayRecord[] = [];
  let seed = 7;
  const random = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  for (let day = BASE_FROM; day < REPORT_TO; day = addDays(day, 1)) {
    const source = store.load(hvac.id, day);
    const copy = store.load(ecm.id, day);
    const factor = day >= INSTALLED ? 0.8 : 1;
    source.kwh.forEach((value, i) => {
      copy.kwh[i] = value * factor;
      if (day >= INSTALLED && !Number.isNaN(value)) trueSaving += value * 0.2;
    });
    records.push(copy);
    const noisy = store.load(noise.id, day);
    noisy.kwh.fill(random() * 4);
    records.push(noisy);
  }
  store.transaction(() => store.save(records));
});
after(() => r?.close());

test("a measure's avoided energy comes out within its stated uncertainty of the known saving", async () => {
  const token = r.admin.accessToken;
  const created = await r.server.request('POST', '/api/billing/measures', {
    token,
    body: { name: 'AHU fan retrofit', meterId: ecm.id, installedOn: INSTALLED, cost: 5000, baselineFrom: BASE_FROM, baselineTo: INSTALLED },
  });
  assert.equal(created.status, 201, created.text);
  assert.equal(created.body.option, 'B');
  const savings = (await r.server.request('GET', `/api/billing/measures/${created.body.id}/savings?from=${INSTALLED}&to=${REPORT_TO}`, { token })).body;
  const { report } = savings;
  assert.equal(report.days, 28);
  assert.equal(report.daysOutsideBaselineConditions, 0);
  assert.ok(report.uncertaintyKwh > 0);
  assert.ok(
    Math.abs(report.avoidedKwh - trueSaving) <= report.uncertaintyKwh,
    `avoided ${report.avoidedKwh} ± ${report.uncertaintyKwh} kWh, true saving ${trueSaving.toFixed(3)} kWh`,
  );
  // Cost at the period's price; payback = cost ÷ avoided cost per year.
  assert.ok(Math.abs(report.avoidedCost - report.avoidedKwh * report.pricePerKwh) < 0.02);
  assert.ok(Math.abs(report.paybackYears - 5000 / ((report.avoidedCost * 365) / 28)) < 0.02);

  const adjusted = await r.server.request('POST', `/api/billing/measures/${created.body.id}/adjustments`, {
    token,
    body: { from: '2026-02-01', to: '2026-02-08', kwh: 100, reason: 'A second AHU zone added on 1 February' },
  });
  assert.equal(adjusted.status, 200, adjusted.text);
  const after = (await r.server.request('GET', `/api/billing/measures/${created.body.id}/savings?from=${INSTALLED}&to=${REPORT_TO}`, { token })).body.report;
  assert.equal(after.nonRoutineKwh, 100);
  assert.ok(Math.abs(after.avoidedKwh - report.avoidedKwh - 100) < 0.002);
  const early = await r.server.request('POST', `/api/billing/measures/${created.body.id}/adjustments`, {
    token,
    body: { from: '2025-11-05', to: '2025-11-08', kwh: 5, reason: 'inside the baseline' },
  });
  assert.equal(early.status, 400);
});

test('a measure whose baseline fails the Guideline 14 limits is refused, naming them', async () => {
  const refused = await r.server.request('POST', '/api/billing/measures', {
    token: r.admin.accessToken,
    body: { name: 'On noise', meterId: noise.id, installedOn: INSTALLED, baselineFrom: BASE_FROM, baselineTo: INSTALLED },
  });
  assert.equal(refused.status, 400, refused.text);
  assert.match(refused.body.error, /fails its guard rails/);
  assert.ok(refused.body.details.some((d: { message: string }) => /CV\(RMSE\) [\d.]+ % is above 20 %/.test(d.message)));
  const list = (await r.server.request('GET', '/api/billing/measures', { token: r.admin.accessToken })).body;
  assert.equal(list.items.length, 1);
  // The site's report sums the registered measures (one here), uncertainties in quadrature.
  const site = (await r.server.request('GET', `/api/billing/measures/savings?from=${INSTALLED}&to=${REPORT_TO}`, { token: r.admin.accessToken })).body;
  const one = (
    await r.server.request('GET', `/api/billing/measures/${list.items[0].id}/savings?from=${INSTALLED}&to=${REPORT_TO}`, { token: r.admin.accessToken })
  ).body;
  assert.deepEqual(
    [site.total.measures, site.total.avoidedKwh, site.total.uncertaintyKwh, site.items[0].error],
    [1, one.report.avoidedKwh, one.report.uncertaintyKwh, null],
  );
  // Its meter deleted, a measure stays Option B and says its savings can no longer be measured.
  assert.equal((await r.server.request('DELETE', `/api/meters/${ecm.id}`, { token: r.admin.accessToken })).status, 204);
  const orphan = await r.server.request('GET', `/api/billing/measures/${list.items[0].id}/savings`, { token: r.admin.accessToken });
  assert.equal(orphan.status, 400);
  assert.match(orphan.body.error, /meter was deleted/);
  assert.equal((await r.server.request('GET', '/api/billing/measures', { token: r.admin.accessToken })).body.items[0].option, 'B');
  const viewer = await r.server.createUser({ role: 'operator' });
  const forbidden = await r.server.request('POST', '/api/billing/measures', {
    token: viewer.accessToken,
    body: { name: 'x', meterId: noise.id, installedOn: INSTALLED, baselineFrom: BASE_FROM, baselineTo: INSTALLED },
  });
  assert.equal(forbidden.status, 403);
});

test('a measure on a meter that does not exist is a 400 naming meterId', async () => {
  const missing = await r.server.request('POST', '/api/billing/measures', {
    token: r.admin.accessToken,
    body: { name: 'Nowhere', meterId: 987654, installedOn: INSTALLED, baselineFrom: BASE_FROM, baselineTo: INSTALLED },
  });
  assert.equal(missing.status, 400, missing.text);
  assert.deepEqual(
    missing.body.details.filter((d: { path: string }) => d.path === 'body.meterId'),
    [{ path: 'body.meterId', message: 'no meter 987654' }],
  );
});
