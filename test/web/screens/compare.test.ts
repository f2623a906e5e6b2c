// The analysis screen's period comparison in the fast screen tier (was the second Chromium test of overview.test.ts;
// its axe run is in analysisMore.test.ts's walk): this month against the previous one and a year earlier as
// GET /api/analysis/compare gives them, the weather-normalised change or the service's reason for giving none, the
// week asked for when chosen, and the month's demand charge as GET /api/analysis/demand-charges has it.
import './dom.ts';
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import type { Answer } from '../../../src/web/app/api/types.ts';
import Analysis from '../../../src/web/app/screens/Analysis.tsx';
import { $, byText, calls, mount, stubApi, text, unmount, waitFor } from './screen.ts';

after(unmount);

const eur = (value: number) => new Intl.NumberFormat('en', { style: 'currency', currency: 'EUR', maximumFractionDigits: value >= 1000 ? 0 : 2 }).format(value);
type Compare = Answer<'/api/analysis/compare'>;
const en = (value: number) =>
  new Intl.NumberFormat('en', { minimumFractionDigits: value >= 1000 ? 0 : 1, maximumFractionDigits: value >= 1000 ? 0 : 1 }).format(value);

const span = (from: string, to: string, kwh: number) => ({
  from,
  to,
  through: to,
  kwh,
  cost: kwh * 0.25,
  carbonKg: kwh * 0.4,
  coverage: 1,
  complete: true,
  partial: false,
  missingDays: [],
});
function comparison(period: string, kwh: [number, number, number], weather: Compare['weatherNormalised']): Compare {
  return {
    period,
    currency: 'EUR',
    timezone: 'Europe/Berlin',
    target: { kind: 'site', meters: 3 },
    current: span('2026-11-01', '2026-12-01', kwh[0]),
    previous: span('2026-10-01', '2026-11-01', kwh[1]),
    lastYear: span('2025-11-01', '2025-12-01', kwh[2]),
    change: {
      previous: { kwh: kwh[0] - kwh[1], cost: null, percent: ((kwh[0] - kwh[1]) / kwh[1]) * 100 },
      lastYear: { kwh: kwh[0] - kwh[2], cost: null, percent: ((kwh[0] - kwh[2]) / kwh[2]) * 100 },
    },
    weatherNormalised: weather,
  };
}
type Weather = NonNullable<Compare['weatherNormalised']>;
const withheld = (reason: string): Weather => ({
  adjustedPreviousKwh: null,
  current: null,
  previous: null,
  kwh: null,
  percent: null,
  method: 'ems',
  model: null,
  withheld: reason,
});
const demand: Answer<'/api/analysis/demand-charges'> = {
  month: '2026-11',
  currency: 'EUR',
  billedKw: 84.5,
  complete: false,
  running: true,
  dataNote: null,
  demandCharge: 1098.5,
  energyCost: 4321.25,
  totalCost: 5419.75,
  rollingAverageKw: null,
  monthlyPeaks: [],
  peak: { at: '2026-11-12T10:15:00.000Z', kw: 84.5, complete: true, incompleteIntervals: 0, meters: 3, metersAtPeak: 3 },
  version: { id: 1, basis: 'monthly_peak', demandChargePerKw: 13, minimumKw: 0, validFrom: '2026-01-01' },
};

test("the month against the previous one and a year earlier: the API's kWh, the weather-normalised change or why none; the week on asking", async () => {
  const month = comparison('month', [12_345.4, 11_000.6, 987.65], withheld('the model covers 40 days; 12 months are needed'));
  const week = comparison('week', [2_001, 1_876.5, 543.21], {
    ...withheld(''),
    withheld: null,
    kwh: -120.5,
    adjustedPreviousKwh: 1_997,
    percent: -6.04,
  });
  stubApi({
    'GET /api/analysis/compare': ({ params }) => (params.query?.period === 'week' ? week : month),
    'GET /api/analysis/demand-charges': () => demand,
  });
  const screen = await mount(Analysis, {}, 'viewer');
  await waitFor(() => screen.querySelector('tr[data-row="analysis.current"]'), 'the comparison');
  const kwh = (row: string) => text($(`tr[data-row="${row}"] [data-field="kwh"]`, screen));
  assert.deepEqual(
    ['analysis.current', 'analysis.previous', 'analysis.lastYear'].map(kwh),
    [month.current.kwh, month.previous.kwh, month.lastYear.kwh].map(en),
  );
  assert.equal(text($('[data-field="weatherNormalised"]', screen)), 'No weather-normalised change: the model covers 40 days; 12 months are needed');
  const charges = await waitFor(() => screen.querySelector<HTMLElement>('[aria-labelledby="demand-heading"]'), 'the demand charge');
  assert.match(text(charges), /84\.5 kW/);
  assert.ok(text(charges).includes(`Demand charge${eur(demand.demandCharge)}`), text(charges));
  assert.ok(text(charges).includes(`Energy and demand${eur(demand.totalCost)}`), text(charges));

  byText('button', 'This week', screen)!.click();
  await waitFor(() => kwh('analysis.previous') === en(week.previous.kwh), "the week's figures");
  assert.deepEqual(
    calls.filter((c) => c.path === '/api/analysis/compare').map((c) => c.params.query?.period),
    ['month', 'week'],
  );
  assert.equal($('button[aria-pressed="true"]', screen).textContent, 'This week');
  const pct = new Intl.NumberFormat('en', { style: 'percent', maximumFractionDigits: 1, signDisplay: 'exceptZero' }).format(-6.04 / 100);
  assert.ok(
    text($('[data-field="weatherNormalised"]', screen)).startsWith(`Weather-normalised against the previous month: ${pct} (${en(-120.5)} kWh;`),
    text($('[data-field="weatherNormalised"]', screen)),
  );
  assert.match(text($('[data-field="weatherNormalised"]', screen)), /: 1,997 kWh\)$/);
});
