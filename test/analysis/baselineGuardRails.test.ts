// Baseline guard rails (issue 41, item 1): a baseline that cannot stand for the reporting period gives no savings
// figure, and says why. The known answer: the simulated building never changes, so its true savings are 0 in every
// period; a January baseline used in July (no cooling day in it, 30 days) must not report any, a year's baseline
// must report ~0 within its G14 uncertainty. The uncertainty formula and the t quantiles are checked by hand.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { simulatorRig, type SimulatorRig, DAY } from '../helpers/rig.ts';
import { baselineGuardRails, bestChangePointModel, lag1Autocorrelation, savingsUncertainty, studentT } from '../../src/analysis/guardRails.ts';

describe('guard-rail arithmetic against hand computations', () => {
  test("Student's t: the table values (two-sided 68 % and 90 %)", () => {
    // Tables: t(0.95, 10) = 1.8125, t(0.95, 30) = 1.6973; t(0.84, 30) = 1.01122 and t(0.84, 361) = 0.99583 by numerical
    // integration of the t density (python, 20,000 steps, bisection); t(0.84, ∞) = z = 0.99446.
    assert.ok(Math.abs(studentT(0.9, 10) - 1.8125) < 0.002, `${studentT(0.9, 10)}`);
    assert.ok(Math.abs(studentT(0.9, 30) - 1.6973) < 0.0005, `${studentT(0.9, 30)}`);
    assert.ok(Math.abs(studentT(0.68, 30) - 1.01122) < 0.0001, `${studentT(0.68, 30)}`);
    assert.ok(Math.abs(studentT(0.68, 361) - 0.99583) < 0.00005, `${studentT(0.68, 361)}`);
    assert.ok(Math.abs(studentT(0.68, 1e9) - 0.99446) < 0.0001, `${studentT(0.68, 1e9)}`);
  });

  test('fractional savings uncertainty: G14 Annex B by hand', () => {
    // n = 365, p = 4, CV 5 %, ρ = 0.5 → n' = 365·0.5/1.5 = 121.667; m = 31; expected 31,000 kWh; savings 3,100 kWh.
    const u = savingsUncertainty({ n: 365, p: 4, cvRmsePercent: 5, rho: 0.5, m: 31, expectedKwh: 31_000, savingsKwh: 3_100 }, 0.68);
    const nEff = (365 * 0.5) / 1.5;
    const hand = studentT(0.68, 361) * 1.26 * 0.05 * 31_000 * Math.sqrt((365 / nEff) * (1 + 2 / nEff) * (1 / 31));
    assert.ok(Math.abs(u.kwh - hand) < 0.001, `${u.kwh} vs ${hand}`);
    assert.ok(Math.abs(hand - 609.97) < 0.05, `hand ${hand}`); // python: t 0.99583 (scipy 0.99583), ΔE 609.97 kWh
    assert.equal(u.fractional, Math.round((hand / 3_100) * 10_000) / 10_000);
    assert.ok(Math.abs(lag1Autocorrelation([1, -1, 1, -1, 1, -1, 1, -1]) - -7 / 8) < 1e-9, 'Σ r_i·r_(i−1) = −7 over Σ r² = 8');
    assert.ok(lag1Autocorrelation([1, 2, 3, 4, 5, 6, 7, 8]) > 0.6);
  });

  test('each rule withholds on its own: short span, thin coverage, dropped term, range, fit', () => {
    const day = (heat: number, cool: number, kwh = 100 + 10 * heat) => ({ heat, cool, dayType: 'working' as const, actualKwh: kwh, expectedKwh: kwh });
    const year = Array.from({ length: 365 }, (_, i) => day(Math.max(0, 10 * Math.cos((i / 365) * 2 * Math.PI)), 0));
    const base = {
      resolution: 'day' as const,
      baselineFrom: '2025-01-01',
      baselineTo: '2026-01-01',
      baseline: year,
      p: 2,
      dropped: ['perCdd', 'weekend', 'holiday'],
      cvRmsePercent: 3,
      nmbePercent: 0,
    };
    const inRange = { days: 10, observations: Array.from({ length: 10 }, (_, i) => ({ ...day(i, 0), actualKwh: 100 })) };
    assert.equal(baselineGuardRails({ ...base, report: inRange }).defensible, true);
    const short = baselineGuardRails({ ...base, baselineTo: '2025-02-01', baseline: year.slice(0, 31), report: inRange });
    assert.equal(short.defensible, false);
    assert.equal(short.checks.length.pass, false);
    const thin = baselineGuardRails({ ...base, baseline: year.slice(0, 200), report: inRange });
    assert.equal(thin.checks.coverage.pass, false);
    const cooling = baselineGuardRails({ ...base, report: { days: 10, observations: inRange.observations.map((o) => ({ ...o, cool: 3 })) } });
    assert.deepEqual(cooling.checks.droppedTerms.neededInReport, ['perCdd']);
    assert.equal(cooling.checks.ranges!.variables[1].outside, 10);
    assert.equal(cooling.defensible, false);
    // 1 day of 10 colder than the baseline ever was (beyond its 10 % slack): 10 % > 5 % allowed.
    const cold = baselineGuardRails({ ...base, report: { days: 10, observations: inRange.observations.map((o, i) => (i === 0 ? { ...o, heat: 12 } : o)) } });
    assert.equal(cold.checks.ranges!.variables[0].outside, 1);
    assert.equal(cold.checks.ranges!.pass, false);
    assert.equal(baselineGuardRails({ ...base, cvRmsePercent: 21, report: inRange }).checks.fit.pass, false, 'CV(RMSE) 21 % > 20 % for < 12 months of savings');
    assert.equal(baselineGuardRails({ ...base, cvRmsePercent: 21, report: { ...inRange, days: 400 } }).checks.fit.pass, true, '25 % for 12–60 months');
  });
});

describe('change-point models recover the building they were generated from', () => {
  // A year of days whose mean temperature runs from −5 to 30 °C; weekends 30 kWh lower.
  const days = (kwh: (t: number) => number) =>
    Array.from({ length: 364 }, (_, i) => {
      const meanC = -5 + 35 * (0.5 - 0.5 * Math.cos((((i * 7) % 364) / 364) * 2 * Math.PI)) + ((i * 13) % 7) * 0.1;
      const dayType = i % 7 >= 5 ? ('weekend' as const) : ('working' as const);
      return { meanC, dayType, actualKwh: kwh(meanC) - (dayType === 'weekend' ? 30 : 0) };
    });
  test('5P: 100 + 8·(12 − T)⁺ + 5·(T − 20)⁺ → 5P at 12 and 20 °C, slopes 8 and 5, weekend −30', () => {
    const m = bestChangePointModel(days((t) => 100 + 8 * Math.max(0, 12 - t) + 5 * Math.max(0, t - 20)))!;
    assert.equal(m.model, '5P');
    assert.deepEqual([m.heatingChangePointC, m.coolingChangePointC], [12, 20]);
    assert.ok(Math.abs(m.coefficients.heatingPerK - 8) < 1e-6 && Math.abs(m.coefficients.coolingPerK - 5) < 1e-6, JSON.stringify(m));
    assert.ok(Math.abs(m.coefficients.weekend + 30) < 1e-6 && Math.abs(m.coefficients.intercept - 100) < 1e-6);
    assert.ok(m.cvRmsePercent < 1e-6);
  });
  test('3P heating: 50 + 6·(15 − T)⁺ → 3PH at 15 °C (4P and 5P add a point and a zero slope: worse by n − p)', () => {
    const m = bestChangePointModel(days((t) => 50 + 6 * Math.max(0, 15 - t) + ((t * 1000) % 3) * 0.01))!;
    assert.equal(m.model, '3PH');
    assert.equal(m.heatingChangePointC, 15);
    assert.ok(Math.abs(m.coefficients.heatingPerK - 6) < 0.01, JSON.stringify(m));
  });
});

describe('the unchanged simulated building: a January baseline used in July, and a year baseline', () => {
  let r: SimulatorRig;
  let hvacId: number;
  before(async () => {
    r = await simulatorRig({ start: Date.parse('2025-06-25T00:00:00Z') });
    hvacId = (await r.meter({ name: 'HVAC', code: 'meter.hvac.kwh', kind: 'energy', area: 'HVAC' })).id;
    await r.collector.collect();
    await r.run(Date.parse('2026-08-02T00:00:00Z'), 7 * DAY);
  });
  after(() => r?.close());

  test('January (30 days) → July: no savings figure, the reasons name the length, the dropped cooling term and the range', async (t) => {
    const body = await r.get(
      `/api/analysis/baseline?meterId=${hvacId}&baselineFrom=2026-01-05&baselineTo=2026-02-04&reportFrom=2026-07-01&reportTo=2026-08-01`,
    );
    const { expectedKwh, actualKwh } = body.report;
    t.diagnostic(
      `January baseline in July: statistics ${JSON.stringify(body.statistics)}; expected ${expectedKwh}, actual ${actualKwh}: ` +
        `what was reported before as savings ${Math.round(expectedKwh - actualKwh)} kWh (${Math.round(((expectedKwh - actualKwh) / expectedKwh) * 1000) / 10} %); now ${body.report.savingsKwh}`,
    );
    t.diagnostic(`withheld: ${body.report.savingsWithheld}`);
    t.diagnostic(`change-point model: ${JSON.stringify(body.changePoint)}`);
    // The fit itself passes every statistical test (that was the trap: before, its extrapolation was reported as savings) ...
    assert.equal(body.statistics.pass.cvRmse, true);
    // ... but no number is given for a building that did not change.
    assert.equal(body.report.savingsKwh, null);
    assert.equal(body.report.savingsPercent, null);
    assert.equal(body.guardRails.defensible, false);
    // Withheld: no verdict beside it either (it once said `significant: true` next to a withheld figure).
    assert.equal(body.report.significant, null);
    assert.equal(body.guardRails.checks.length.pass, false);
    assert.deepEqual(body.guardRails.checks.droppedTerms.neededInReport, ['perCdd']);
    assert.equal(body.guardRails.checks.ranges.pass, false);
    assert.match(body.report.savingsWithheld, /12 months/);
    assert.match(body.report.savingsWithheld, /cooling/);
  });

  test('a year (2025-07-01 … 2026-07-01) → July 2026: a savings figure, within its G14 uncertainty of the true 0', async (t) => {
    const body = await r.get(
      `/api/analysis/baseline?meterId=${hvacId}&baselineFrom=2025-07-01&baselineTo=2026-07-01&reportFrom=2026-07-01&reportTo=2026-08-01`,
    );
    const { report, guardRails } = body;
    t.diagnostic(
      `year baseline in July: savings ${report.savingsKwh} kWh (${report.savingsPercent} %), ±${report.uncertainty.at68.kwh} kWh at 68 %, ±${report.uncertainty.at90.kwh} at 90 %; ${JSON.stringify(guardRails.checks)}`,
    );
    assert.equal(guardRails.defensible, true, guardRails.reasons.join(' '));
    assert.equal(typeof report.savingsKwh, 'number');
    assert.equal(report.savingsWithheld, null);
    assert.equal(guardRails.checks.coverage.pass, true);
    assert.ok(guardRails.checks.coverage.share >= 0.95);
    assert.equal(report.coverage, 1);
    // The truth is 0: the figure lies within its 90 % uncertainty, and G14 calls it not demonstrated.
    assert.ok(Math.abs(report.savingsKwh) <= report.uncertainty.at90.kwh, `${report.savingsKwh} ± ${report.uncertainty.at90.kwh}`);
    assert.equal(report.significant, false);
    assert.match(guardRails.reasons.join(' '), /no saving/);
  });
});
