// EMS's baselines and savings on two real buildings' public hourly electricity with the real outdoor temperature
// (test/analysis/data/README.md: Cambridge University Estates buildings, Met Office Bedford station), in-process:
// - building b0, 2018 → 2019: nothing changed (its monthly use within a few % year on year); the source's missing hours
//   (46 in 2018: parts of two days) make partial days. No significant saving may be claimed; partial days are listed and
//   never counted as days (issue 52 item 2); a day without temperature is a missing observation, the same request answers
//   the same twice (issue 52 item 3), and a baseline year missing its first day passes the length rule (item 4).
// - building b52, 2017 → 2019: its use fell by about 45 % from mid-2018 (a change of operation; the source does not
//   say which). EMS's saving must lie inside the 90 % band of an independent change-point fit written here, and the
//   measure API must give the baseline API's figure and band (issue 51 item 5), counted in the site's total.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  annexBUncertainty,
  changePointFit,
  dailyMeanC,
  energyHours,
  partialDays,
  readHourly,
  realRig,
  wholeDaySums,
  type RealRig,
} from '../helpers/realBuildings.ts';

let r: RealRig;
let b0: number;
let b52: number;
const b0Hours = energyHours('cambridge-b0-2018-2019.csv.gz');
const b52Hours = energyHours('cambridge-b52-2017-2019.csv.gz');
const temperatures = readHourly('bedford-2017-2019.csv.gz');
const meanC = dailyMeanC(temperatures);
const GAP_CODE = 'temp.bedford.gap';
/** The day the gap temperature point has no reading for: the baseline's first (the reviewer's case). */
const GAP_DAY = '2018-01-01';

before(async () => {
  r = await realRig();
  b0 = await r.building('Cambridge b0', b0Hours, '2018-01-01', '2020-01-01');
  b52 = await r.building('Cambridge b52', b52Hours, '2017-01-01', '2020-01-01');
  r.temperatures('temp.outdoor', temperatures);
  r.temperatures(GAP_CODE, temperatures, [GAP_DAY]);
});
after(() => r?.close());

const baseline = (meterId: number, from: string, to: string, extra: Record<string, string> = {}) =>
  r.get(`/api/analysis/baseline?${new URLSearchParams({ meterId: String(meterId), baselineFrom: from, baselineTo: to, ...extra })}`);

describe('real building b0: nothing changed, with missing hours', () => {
  test('partial days are listed and never counted; no significant saving on the unchanged year', async (t) => {
    const body = await baseline(b0, '2018-01-01', '2019-01-01', { reportFrom: '2019-01-01', reportTo: '2020-01-01' });
    const partial = partialDays(b0Hours, '2018-01-01', '2019-01-01');
    assert.ok(partial.length >= 2, `the source has partial days in 2018: ${partial}`);
    assert.deepEqual(body.partialBaselineDays, partial);
    const counted = new Set(body.baselineDays.map((d: { day: string }) => d.day));
    for (const day of partial) assert.ok(!counted.has(day), `${day} is partial: not a baseline day`);
    // Every counted day is a whole day of the source, with its whole energy.
    const whole = wholeDaySums(b0Hours, '2018-01-01', '2019-01-01');
    for (const d of body.baselineDays) assert.ok(Math.abs(d.actualKwh - whole.get(d.day)!) < 0.01, `${d.day}: ${d.actualKwh} vs ${whole.get(d.day)}`);
    assert.equal(body.statistics.n, whole.size);
    // The EnPIs are the months' metered sums: the partial days stay in them and are listed beside each month's figure.
    const enpi = await r.get(`/api/analysis/enpi?meterId=${b0}&from=2018-01&to=2019-01`);
    assert.deepEqual(
      enpi.months.flatMap((m: { partialDays: string[] }) => m.partialDays),
      partial,
    );
    const { report, guardRails } = body;
    t.diagnostic(
      `b0 daily: CV(RMSE) ${body.statistics.cvRmsePercent} %, R² ${body.statistics.r2}, n ${body.statistics.n}; 2019: expected ${report.expectedKwh}, actual ${report.actualKwh}, ` +
        `savings ${report.savingsKwh} (${report.savingsPercent} %) ± ${report.uncertainty.at90.kwh} (90 %), significant ${report.significant}; ${guardRails.reasons.join(' ')}`,
    );
    assert.equal(guardRails.checks.length.pass, true, 'a whole calendar year');
    assert.ok(
      !(report.significant && report.savingsKwh > 0),
      `no significant saving on the unchanged year: ${report.savingsKwh} ± ${report.uncertainty.at68.kwh} (68 %)`,
    );
    assert.ok(Math.abs(report.expectedKwh - report.actualKwh) <= report.uncertainty.at90.kwh, 'the unchanged year is inside the 90 % band');
  });

  test('a day without temperature is a missing observation: the same request answers the same, twice, and the year passes the length rule', async () => {
    const query = { temperatureCode: GAP_CODE, reportFrom: '2019-01-01', reportTo: '2019-04-01' };
    const first = await baseline(b0, GAP_DAY, '2019-01-01', query);
    const second = await baseline(b0, GAP_DAY, '2019-01-01', query);
    assert.ok(first.missingBaselineDays.includes(GAP_DAY));
    assert.deepEqual([second.statistics, second.report.expectedKwh], [first.statistics, first.report.expectedKwh]);
    assert.equal(first.guardRails.checks.length.pass, true, `${first.guardRails.reasons.join(' ')}`);
    assert.equal(first.guardRails.checks.length.monthsCovered, 12);
    const hourly = await r.server.request(
      'GET',
      `/api/analysis/baseline/hourly?meterId=${b0}&baselineFrom=${GAP_DAY}&baselineTo=2019-01-01&temperatureCode=${GAP_CODE}`,
      { token: r.admin.accessToken },
    );
    assert.equal(hourly.status, 200, hourly.text);
    // An unknown method is a 400 naming it.
    const unknown = await r.server.request('GET', `/api/analysis/baseline?meterId=${b0}&baselineFrom=2018-01-01&baselineTo=2019-01-01&method=towt`, {
      token: r.admin.accessToken,
    });
    assert.equal(unknown.status, 400, unknown.text);
    assert.match(JSON.stringify(unknown.body.details), /method/);
    // A point with no readings at all is still a clear 400 naming it.
    const none = await r.server.request('GET', `/api/analysis/baseline?meterId=${b0}&baselineFrom=2018-01-01&baselineTo=2018-03-01&temperatureCode=temp.none`, {
      token: r.admin.accessToken,
    });
    assert.equal(none.status, 400, none.text);
    assert.equal(none.body.details[0].path, 'query.temperatureCode');
  });
});

describe('real building b52: a change of operation between 2017 and 2019', () => {
  test("EMS's saving lies inside the 90 % band of an independent change-point fit; the measure API gives the baseline API's figure and band", async (t) => {
    const body = await baseline(b52, '2017-01-01', '2018-01-01', { reportFrom: '2019-01-01', reportTo: '2020-01-01' });
    const { report } = body;
    // The independent fit on the same whole days.
    const days = (from: string, to: string) =>
      [...wholeDaySums(b52Hours, from, to)].filter(([day]) => meanC.has(day)).map(([day, kwh]) => ({ day, kwh, meanC: meanC.get(day)! }));
    const fit = changePointFit(days('2017-01-01', '2018-01-01'));
    const reporting = days('2019-01-01', '2020-01-01');
    const expected = reporting.reduce((s, d) => s + fit.predict(d.meanC, [0, 6].includes(new Date(`${d.day}T00:00:00Z`).getUTCDay())), 0);
    const actual = reporting.reduce((s, d) => s + d.kwh, 0);
    const mine = (expected - actual) / expected;
    const band = annexBUncertainty(fit, reporting.length, expected) / expected;
    t.diagnostic(
      `b52: EMS daily ${report.savingsPercent} % ± ${((report.uncertainty.at90.kwh / report.expectedKwh) * 100).toFixed(2)} % of expected (90 %), CV(RMSE) ${body.statistics.cvRmsePercent} %; ` +
        `change-point ${fit.model} (${fit.heatingC}/${fit.coolingC} °C) ${(mine * 100).toFixed(2)} % ± ${(band * 100).toFixed(2)} %, CV(RMSE) ${fit.cvRmsePercent.toFixed(2)} %, ρ ${fit.rho.toFixed(2)}`,
    );
    assert.equal(body.guardRails.defensible, true, body.guardRails.reasons.join(' '));
    assert.equal(report.significant, true);
    assert.ok(
      Math.abs(report.savingsPercent / 100 - mine) <= band,
      `EMS ${report.savingsPercent} % vs ${(mine * 100).toFixed(2)} % ± ${(band * 100).toFixed(2)} %`,
    );

    const token = r.admin.accessToken;
    const created = await r.server.request('POST', '/api/billing/measures', {
      token,
      body: { name: 'b52 change', meterId: b52, installedOn: '2019-01-01', baselineFrom: '2017-01-01', baselineTo: '2018-01-01' },
    });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.baseline.verifiable, true, created.body.baseline.reasons.join(' '));
    const measure = (await r.server.request('GET', `/api/billing/measures/${created.body.id}/savings?from=2019-01-01&to=2020-01-01`, { token })).body;
    assert.deepEqual(
      [measure.report.avoidedKwh, measure.report.uncertaintyKwh, measure.report.significant],
      [report.savingsKwh, report.uncertainty.at90.kwh, true],
      'one engine: the same figure and band',
    );
    // b0's unchanged year as a measure: listed apart, not summed.
    const placebo = await r.server.request('POST', '/api/billing/measures', {
      token,
      body: { name: 'b0 nothing', meterId: b0, installedOn: '2019-01-01', baselineFrom: '2018-01-01', baselineTo: '2019-01-01' },
    });
    assert.equal(placebo.status, 201, placebo.text);
    const site = (await r.server.request('GET', '/api/billing/measures/savings?from=2019-01-01&to=2020-01-01', { token })).body;
    assert.equal(site.total.measures, 1);
    assert.equal(site.total.avoidedKwh, measure.report.avoidedKwh);
    const b0Item = site.items.find((item: { name: string }) => item.name === 'b0 nothing');
    assert.equal(b0Item.counted, false);
    assert.notEqual(b0Item.status, 'significant');
  });
});

describe('reference methods (CalTRACK daily and hourly) on the same real data', () => {
  for (const method of ['caltrack-daily', 'caltrack-hourly'] as const) {
    test(`${method}: the change of b52 inside the independent fit's band, no significant saving on b0's unchanged year, G14 statistics`, async (t) => {
      const change = await baseline(b52, '2017-01-01', '2018-01-01', { reportFrom: '2019-01-01', reportTo: '2020-01-01', method });
      const same = await baseline(b0, '2018-01-01', '2019-01-01', { reportFrom: '2019-01-01', reportTo: '2020-01-01', method });
      const ems = await baseline(b52, '2017-01-01', '2018-01-01', { reportFrom: '2019-01-01', reportTo: '2020-01-01' });
      for (const body of [change, same]) {
        assert.equal(body.method, method);
        assert.ok(body.reference.model.length > 0);
        assert.ok(body.statistics.n > (method === 'caltrack-hourly' ? 8000 : 300), `n ${body.statistics.n}`);
        assert.ok(body.statistics.cvRmsePercent > 0 && Math.abs(body.statistics.nmbePercent) < 0.5, JSON.stringify(body.statistics));
      }
      const days = [...wholeDaySums(b52Hours, '2017-01-01', '2018-01-01')]
        .filter(([day]) => meanC.has(day))
        .map(([day, kwh]) => ({ day, kwh, meanC: meanC.get(day)! }));
      const fit = changePointFit(days);
      const band = annexBUncertainty(fit, change.report.days.length, change.report.expectedKwh) / change.report.expectedKwh;
      t.diagnostic(
        `${method}: b52 ${change.report.savingsPercent} % (EMS ${ems.report.savingsPercent} %), CV(RMSE) ${change.statistics.cvRmsePercent} %, R² ${change.statistics.r2}, ${JSON.stringify(change.reference)}; ` +
          `b0 ${same.report.expectedKwh - same.report.actualKwh} kWh ± ${same.report.uncertainty.at90.kwh} (90 %), significant ${same.report.significant}, CV(RMSE) ${same.statistics.cvRmsePercent} %`,
      );
      assert.equal(change.guardRails.defensible, true, change.guardRails.reasons.join(' '));
      assert.equal(change.report.significant, true);
      assert.ok(
        Math.abs(change.report.savingsPercent - ems.report.savingsPercent) / 100 <= band,
        `${change.report.savingsPercent} % vs EMS ${ems.report.savingsPercent} % ± ${band * 100} %`,
      );
      assert.ok(!(same.report.significant && same.report.expectedKwh > same.report.actualKwh), 'no significant saving on the unchanged year');
      // The measure API with the same method gives the same figure and band.
      const token = r.admin.accessToken;
      const created = await r.server.request('POST', '/api/billing/measures', {
        token,
        body: { name: `b52 ${method}`, meterId: b52, installedOn: '2019-01-01', baselineFrom: '2017-01-01', baselineTo: '2018-01-01', method },
      });
      assert.equal(created.status, 201, created.text);
      assert.equal(created.body.method, method);
      const measure = (await r.server.request('GET', `/api/billing/measures/${created.body.id}/savings?from=2019-01-01&to=2020-01-01`, { token })).body;
      assert.deepEqual([measure.report.avoidedKwh, measure.report.uncertaintyKwh], [change.report.savingsKwh, change.report.uncertainty.at90.kwh]);
    });
  }
});
