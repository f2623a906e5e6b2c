// The analysis screens show what the API answers, in the fast screen tier (was the first Chromium test of
// analysisMore.test.ts, which keeps the screens' axe run): a baseline's fit statistics, its guard rails with the
// savings withheld and why, expected and actual; a baseline the service refuses says why; monthly EnPIs with a
// driver; an operator's anomaly check with its findings, and a day not yet over refused before asking.
import './dom.ts';
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import type { Answer } from '../../../src/web/app/api/types.ts';
import Anomalies from '../../../src/web/app/screens/Anomalies.tsx';
import Baseline from '../../../src/web/app/screens/Baseline.tsx';
import Enpi from '../../../src/web/app/screens/Enpi.tsx';
import { $, $$, byText, calls, fill, labelled, mount, refuse, stubApi, text, unmount, waitFor } from './screen.ts';

after(unmount);

const en = (value: number, digits: number) => new Intl.NumberFormat('en', { minimumFractionDigits: digits, maximumFractionDigits: digits }).format(value);
const stamp = '2026-01-01T00:00:00.000Z';
const meters: Answer<'/api/meters'> = {
  items: [
    {
      id: 7,
      name: 'Sub-meter 1',
      kind: 'energy',
      commodity: 'electricity',
      role: 'import',
      site: false,
      area: 'Hall',
      code: 'm1',
      enabled: true,
      terms: [],
      createdAt: stamp,
      updatedAt: stamp,
    },
    {
      id: 8,
      name: 'Main power',
      kind: 'power',
      commodity: 'electricity',
      role: 'import',
      site: true,
      area: null,
      code: 'p1',
      enabled: true,
      terms: [],
      createdAt: stamp,
      updatedAt: stamp,
    },
  ],
  page: 1,
  pageSize: 200,
  total: 2,
};
const areas: Answer<'/api/energy/areas'> = {
  areas: [{ id: 1, name: 'Hall', source: 'meters', powerKw: 3, todayKwh: 20, monthKwh: 600, yearKwh: 7000, createdAt: stamp, updatedAt: stamp }],
};
const pass = { pass: false, required: 0.9, share: 0.97 };
const baseline: Answer<'/api/analysis/baseline'> = {
  method: 'ems',
  target: { kind: 'meter', meterId: 7 },
  temperatureCode: 'temp.outdoor',
  temperatureDaysFetched: 0,
  heatingBaseC: 15.5,
  coolingBaseC: 21,
  baselineDays: [],
  changePoint: null,
  missingBaselineDays: ['2026-08-02'],
  partialBaselineDays: [],
  reference: null,
  model: {
    coefficients: { intercept: 101.25, perHdd: 4.5, perCdd: 0, weekend: -30.5, holiday: 0 },
    fitted: ['intercept', 'perHdd', 'weekend'],
    from: '2026-08-01',
    to: '2026-10-28',
    holidaysLeftOut: [],
  },
  statistics: {
    cvRmsePercent: 12.345,
    nmbePercent: 0.0123,
    r2: 0.8765,
    n: 88,
    p: 3,
    limits: { cvRmsePercent: 25, nmbePercent: 0.005, r2: 0.7 },
    pass: { all: false, cvRmse: true, nmbe: false, r2: true },
  },
  guardRails: {
    defensible: false,
    reasons: ['the baseline covers 88 days; 365 are needed', 'a term the report needs was dropped'],
    significant: null,
    uncertainty: null,
    checks: {
      coverage: pass,
      droppedTerms: { dropped: ['perCdd'], neededInReport: ['perCdd'], pass: false },
      fit: { pass: true, cvRmsePercent: 12.3, cvRmseLimitPercent: 25, netBiasPercent: 0.01, netBiasLimitPercent: 0.005 },
      length: { pass: false, spanDays: 88, observedDays: 87, requiredDays: 365, monthsCovered: 3 },
      ranges: null,
    },
  },
  report: {
    from: '2026-10-28',
    to: '2026-11-28',
    expectedKwh: 3456.7,
    actualKwh: 987.65,
    coverage: 1,
    days: [],
    missingDays: [],
    partialDays: [],
    savingsKwh: null,
    savingsPercent: null,
    savingsWithheld: 'the baseline is not defensible',
  },
};

function stubAnalysis() {
  stubApi({
    'GET /api/meters': () => meters,
    'GET /api/energy/areas': () => areas,
    'GET /api/analysis/baseline': ({ params }) =>
      params.query?.baselineTo === '2026-08-07' ? refuse(400, 'Invalid query', [{ path: 'query.baselineTo', message: 'fewer than 14 days' }]) : baseline,
    'GET /api/analysis/drivers': () => ({ items: [{ name: 'units produced', month: '2026-10', value: 1000, unit: 'units' }] }),
    'GET /api/analysis/enpi': () => enpi,
    'POST /api/analysis/anomalies/check': ({ body }) => ({
      findings: [
        { kind: 'night_base_load', target: 'site', day: (body as { day: string }).day, message: 'Night base load high', detail: '4.2 kW against 2.1 kW' },
        { kind: 'weekend_load', target: 'Hall', day: (body as { day: string }).day, message: 'Weekend load', detail: '120 kWh' },
      ],
    }),
  });
}
const month = (m: string, kwh: number, perUnit: number | null) => ({
  month: m,
  kwh,
  kwhPerM2: null,
  hdd: 210.4,
  cdd: 0,
  kwhPerDegreeDay: kwh / 210.4,
  driverValue: perUnit === null ? null : 1000,
  driverUnit: perUnit === null ? null : 'units',
  kwhPerDriverUnit: perUnit,
  partialDays: [],
  siteEnergyKwh: null,
  siteKwhPerM2: null,
  suspectDays: 0,
  temperatureDays: 30,
});
const enpi: Answer<'/api/analysis/enpi'> = {
  driver: 'units produced',
  floorAreaM2: null,
  siteFloorAreaM2: null,
  target: {},
  months: [month('2026-10', 12_345.6, 12.3456), month('2026-11', 456.78, null)],
};

test('the baseline: statistics, guard rails and the withheld savings as the API answers; a refusal says why', async () => {
  stubAnalysis();
  const screen = await mount(Baseline, {}, 'operator');
  await waitFor(() => $$('option', screen).some((o) => text(o) === 'Sub-meter 1'), 'the meters in the target select');
  assert.equal(
    $$('option', screen).some((o) => text(o) === 'Main power'),
    false,
    'a power meter is no target',
  );
  await fill(labelled('For'), 'meter:7');
  byText('button', 'Fit the baseline', screen)!.click();
  await waitFor(() => screen.querySelector('[data-table="statistics"]'), 'the statistics');
  const asked = calls.find((c) => c.path === '/api/analysis/baseline')!;
  assert.equal(asked.params.query?.meterId, 7);
  const s = baseline.statistics;
  assert.equal(text($('[data-stat="cvRmse"] td', screen)), `${en(s.cvRmsePercent, 1)} %`);
  assert.equal(text($('[data-stat="r2"] td', screen)), en(s.r2, 3));
  assert.equal(text($('[data-field="expected"]', screen)), `${en(3456.7, 0)} kWh`);
  assert.equal(text($('[data-field="actual"]', screen)), `${en(987.65, 1)} kWh`);
  assert.equal(text($('[data-field="withheld"]', screen)), 'Withheld: the baseline is not defensible');
  assert.deepEqual($$('[data-field="reasons"] li', screen).map(text), baseline.guardRails.reasons);
  assert.equal($$('[data-field="savings"]', screen).length, 0, 'no savings figure when withheld');
  assert.match(text($('[data-field="coefficients"]', screen)), /Per cooling degree day0\.00 kWh \(not fitted/);

  // A baseline the service refuses: its reason in an alert, not a crash, and the last result gone.
  await fill(labelled('Baseline to (included)'), '2026-08-06');
  byText('button', 'Fit the baseline', screen)!.click();
  const alert = await waitFor(() => screen.querySelector<HTMLElement>('form [role="alert"]:not([hidden])'), 'the refusal');
  assert.equal(text(alert), 'Invalid query: query.baselineTo fewer than 14 days');
  assert.equal($$('[data-table="statistics"]', screen).length, 0);
});

test('EnPIs with a driver: one row per month the API gives, kWh and kWh per unit as it has them', async () => {
  stubAnalysis();
  const screen = await mount(Enpi, {}, 'viewer');
  await waitFor(() => $$('option', screen).some((o) => text(o) === 'units produced'), 'the driver names');
  await fill(labelled('Per unit of'), 'units produced');
  byText('button', 'Show', screen)!.click();
  await waitFor(() => screen.querySelector('[data-table="enpi"]'), 'the EnPI table');
  assert.equal(calls.find((c) => c.path === '/api/analysis/enpi')!.params.query?.driver, 'units produced');
  assert.deepEqual(
    $$('[data-table="enpi"] tbody tr', screen).map((r) => r.dataset.month),
    enpi.months.map((m) => m.month),
  );
  for (const m of enpi.months) {
    const row = $(`tr[data-month="${m.month}"]`, screen);
    assert.equal(text($('[data-field="kwh"]', row)), en(m.kwh, m.kwh >= 1000 ? 0 : 1));
    assert.equal(text($('[data-field="perDriver"]', row)), m.kwhPerDriverUnit === null ? '–' : en(m.kwhPerDriverUnit, 3));
  }
});

test("an operator's anomaly check shows the API's findings; a day not over is refused before asking; a viewer is told it needs an operator", async () => {
  stubAnalysis();
  const screen = await mount(Anomalies, {}, 'operator');
  const day = (labelled('Day to check') as HTMLInputElement).value;
  byText('button', 'Check this day now', screen)!.click();
  const done = await waitFor(() => text(screen.querySelector('[role="status"]')) || null, 'the outcome');
  assert.equal(done, `2 findings on ${day}.`);
  assert.deepEqual(
    $$('.worklist li', screen).map((li) => li.dataset.kind),
    ['night_base_load', 'weekend_load'],
  );
  await fill(labelled('Day to check'), '2999-01-01');
  byText('button', 'Check this day now', screen)!.click();
  await waitFor(() => text(screen.querySelector('form [role="alert"]')) === 'Choose a day before today.', 'the refusal');
  assert.equal(calls.filter((c) => c.path === '/api/analysis/anomalies/check').length, 1, 'the future day never asked');

  const viewer = await mount(Anomalies, {}, 'viewer');
  assert.equal($$('form', viewer).length, 0);
  assert.match(text($('.notice', viewer)), /operator/);
});
