// Hourly baselines over real HTTP against the gateway simulator: a January of the simulated building's HVAC, whose
// heating is a known 5 kW per kelvin below 15.5 °C (so 5 kWh per heating degree-hour), collected on the hour; the
// slope recovered per hour of the day, the Guideline 14 statistics against a hand computation from the listed hours,
// expected vs actual with CUSUM per hour for the week after.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { HEATING_BASE_C } from '../../src/gateway/simulator/climate.ts';
import { simulatorRig, type SimulatorRig } from '../helpers/rig.ts';
import { dayIntervals } from '../../src/platform/time/calendar.ts';

const HOUR = 3_600_000;
/** The simulated HVAC meter's heating: kW per kelvin below the balance point (src/gateway/simulator/building.ts). */
const HVAC_HEATING_PER_K = 5;
const BASELINE = { from: '2026-01-01', to: '2026-02-01' };
const REPORT = { from: '2026-02-01', to: '2026-02-08' };

describe('an hourly baseline on a simulated January', () => {
  let r: SimulatorRig;
  let hvacId: number;
  const query = (extra: string) =>
    `/api/analysis/baseline/hourly?meterId=${hvacId}&baselineFrom=${BASELINE.from}&baselineTo=${BASELINE.to}&heatingBaseC=${HEATING_BASE_C}&holidays=2026-01-01${extra}`;
  before(async () => {
    r = await simulatorRig({ start: Date.parse('2025-12-31T00:00:00Z') });
    hvacId = (await r.meter({ name: 'HVAC', code: 'meter.hvac.kwh', kind: 'energy', area: 'HVAC' })).id;
    await r.collector.collect();
    // Read on the hour: every hour's energy is then the counter's exact difference.
    await r.run(Date.parse(`${REPORT.to}T00:00:00Z`), HOUR);
  });
  after(() => r?.close());

  test('recovers the heating slope per hour of the day within 2 %, from hours that match the counters', async () => {
    const body = await r.get(query(`&reportFrom=${REPORT.from}&reportTo=${REPORT.to}`));
    assert.equal(body.by, 'hour-of-day');
    assert.equal(body.model.slots.length, 24);
    assert.equal(body.baselineHoursListed, true);
    // One holiday (New Year's Day) is too few for a holiday term (issue 41 item 10): its 24 hours are left out of the fit.
    assert.deepEqual(body.model.holidaysLeftOut, ['2026-01-01']);
    assert.ok(body.model.slots.every((slot: any) => !slot.fitted.includes('holiday') && slot.coefficients.holiday === 0));
    assert.ok(!body.baselineHours.some((hour: any) => hour.dayType === 'holiday'));
    assert.equal(body.baselineHours.length, 31 * 24 - 24 - body.missingBaselineHours);
    assert.ok(body.missingBaselineHours <= 2, `${body.missingBaselineHours} hours missing`);
    // The energy of each hour is the simulated counter's difference over it (the known answer).
    for (const hour of body.baselineHours) {
      const start = Date.parse(hour.start);
      const counted = r.counter('meter.hvac.kwh', start + HOUR) - r.counter('meter.hvac.kwh', start);
      assert.ok(Math.abs(hour.actualKwh - counted) <= counted * 0.001 + 1e-3, `${hour.start}: ${hour.actualKwh} vs ${counted}`);
    }
    // Unoccupied hours (the building's schedule runs 06:00–19:00 on working days) carry no occupancy noise: each within 2 %.
    for (const slot of body.model.slots) {
      assert.ok(slot.fitted.includes('perHdh'), `slot ${slot.slot} fits the heating term`);
      if (slot.slot >= 6 && slot.slot < 19) continue;
      const slope = slot.coefficients.perHdh;
      assert.ok(Math.abs(slope - HVAC_HEATING_PER_K) <= HVAC_HEATING_PER_K * 0.02, `slot ${slot.slot}: ${slope} kWh per degree-hour vs ${HVAC_HEATING_PER_K}`);
    }
    // Occupied hours are not a clean known answer: the simulator makes each working day 90–100 % busy (up to 2.5 kW of
    // HVAC for the whole day), which no regressor explains and which, in this January, runs against the weather: their
    // slopes move together, to 4.75–4.83 (−5 %). Held within 7 %, and all on the same side (one day-level cause).
    const occupied = body.model.slots.filter((s: any) => s.slot >= 8 && s.slot < 17).map((s: any) => s.coefficients.perHdh - HVAC_HEATING_PER_K);
    for (const error of occupied) assert.ok(Math.abs(error) <= HVAC_HEATING_PER_K * 0.07, `occupied slot error ${error}`);
    assert.ok(
      occupied.every((e: number) => Math.sign(e) === Math.sign(occupied[0])),
      `one direction: ${occupied}`,
    );
    assert.equal(body.statistics.pass.all, true, JSON.stringify(body.statistics));
  });

  test('the Guideline 14 statistics match a hand computation over the listed hours', async () => {
    const body = await r.get(query(''));
    const hours = body.baselineHours as { actualKwh: number; expectedKwh: number }[];
    const n = hours.length;
    const p = body.model.slots.reduce((sum: number, slot: any) => sum + slot.fitted.length, 0);
    assert.equal(body.statistics.n, n);
    assert.equal(body.statistics.p, p);
    const mean = hours.reduce((sum, h) => sum + h.actualKwh, 0) / n;
    let ssRes = 0;
    let bias = 0;
    let ssTot = 0;
    for (const h of hours) {
      ssRes += (h.actualKwh - h.expectedKwh) ** 2;
      bias += h.actualKwh - h.expectedKwh;
      ssTot += (h.actualKwh - mean) ** 2;
    }
    const cv = (Math.sqrt(ssRes / (n - p)) / mean) * 100;
    const nmbe = (bias / ((n - p) * mean)) * 100;
    const r2 = 1 - ssRes / ssTot;
    // The listed hours are rounded to 0.1 Wh: the hand figures agree to that.
    assert.ok(Math.abs(body.statistics.cvRmsePercent - cv) <= 0.002, `CV(RMSE) ${body.statistics.cvRmsePercent} vs ${cv}`);
    assert.ok(Math.abs(body.statistics.nmbePercent - nmbe) <= 0.0005, `NMBE ${body.statistics.nmbePercent} vs ${nmbe}`);
    assert.ok(Math.abs(body.statistics.r2 - r2) <= 0.0002, `R² ${body.statistics.r2} vs ${r2}`);
    assert.deepEqual(body.statistics.limits, { cvRmsePercent: 30, nmbePercent: 10, r2: 0.75 });
    assert.equal(body.statistics.pass.cvRmse, cv <= 30);
    assert.equal(body.statistics.pass.nmbe, Math.abs(nmbe) <= 10);
  });

  test('a holiday in the week after, with no holiday term: predicted as the working day of its date, and the guard rails say the term is needed', async () => {
    const body = await r.get(query(`&holidays=2026-02-03&reportFrom=${REPORT.from}&reportTo=${REPORT.to}`));
    assert.deepEqual(body.model.holidaysLeftOut, ['2026-01-01']);
    const holidayHours = body.report.hours.filter((hour: any) => hour.start.startsWith('2026-02-03'));
    assert.equal(holidayHours.length, 24);
    for (const hour of holidayHours) {
      assert.equal(hour.dayType, 'holiday');
      const model = body.model.slots[hour.slot].coefficients;
      // 3 February 2026 is a Tuesday: a working hour (no weekend term), at its degree-hours.
      const working = model.intercept + model.perHdh * hour.hdh + model.perCdh * hour.cdh;
      assert.ok(Math.abs(hour.expectedKwh - working) <= 0.01, `${hour.start}: ${hour.expectedKwh} vs ${working}`);
    }
    assert.ok(body.guardRails.checks.droppedTerms.neededInReport.includes('holiday'), JSON.stringify(body.guardRails.checks.droppedTerms));
    assert.equal(body.report.savingsKwh, null);
  });

  test('expected vs actual and CUSUM per hour for the week after, summed per day', async () => {
    const body = await r.get(query(`&reportFrom=${REPORT.from}&reportTo=${REPORT.to}`));
    const report = body.report;
    assert.equal(report.hoursListed, true);
    assert.equal(report.hours.length, 7 * 24 - report.missingHours);
    let cusum = 0;
    let actual = 0;
    let expected = 0;
    for (const hour of report.hours) {
      cusum += hour.actualKwh - hour.expectedKwh;
      actual += hour.actualKwh;
      expected += hour.expectedKwh;
      assert.ok(Math.abs(hour.cusumKwh - cusum) <= 0.01, `${hour.start}: CUSUM ${hour.cusumKwh} vs ${cusum}`);
      const start = Date.parse(hour.start);
      const counted = r.counter('meter.hvac.kwh', start + HOUR) - r.counter('meter.hvac.kwh', start);
      assert.ok(Math.abs(hour.actualKwh - counted) <= counted * 0.001 + 1e-3);
      // The hour's expected figure is its slot's model at its degree-hours and day type.
      const model = body.model.slots[hour.slot].coefficients;
      const predicted =
        model.intercept +
        model.perHdh * hour.hdh +
        model.perCdh * hour.cdh +
        (hour.dayType === 'weekend' ? model.weekend : 0) +
        (hour.dayType === 'holiday' ? model.holiday : 0);
      assert.ok(Math.abs(hour.expectedKwh - predicted) <= 0.01, `${hour.start}: ${hour.expectedKwh} vs ${predicted}`);
    }
    assert.ok(Math.abs(report.actualKwh - actual) <= 0.05);
    assert.ok(Math.abs(report.expectedKwh - expected) <= 0.05);
    // A month-long baseline is no savings baseline (issue 41 guard rails: a year's span): no figure, the reasons given.
    assert.equal(report.savingsKwh, null);
    assert.match(report.savingsWithheld, /covers \d+ of the 12 calendar months/);
    // Nothing changed in the simulated building: the model predicts the next week within 3 %.
    const offPercent = ((report.expectedKwh - report.actualKwh) / report.expectedKwh) * 100;
    assert.ok(Math.abs(offPercent) < 3, `expected − actual ${offPercent} %`);
    assert.equal(report.days.length, 7);
    assert.ok(Math.abs(report.days.at(-1).cusumKwh - cusum) <= 0.05);
    assert.equal(
      report.days.reduce((sum: number, d: any) => sum + d.hours, 0),
      report.hours.length,
    );
  });

  test('today so far: the hours ended by now, with the gateway temperatures so far, equal the same hours once the day is over', async () => {
    // The service's clock is the simulated one here (fit's now), not the wall clock: nothing depends on the time of day.
    const day = '2026-02-07';
    const fit = (now: number) =>
      r.server.service.deps.analysis.hourlyBaselines.fit(
        {
          target: { meterId: hvacId },
          baselineFrom: BASELINE.from,
          baselineTo: BASELINE.to,
          reportFrom: day,
          reportTo: '2026-02-08',
          temperatureCode: 'temp.outdoor',
          heatingBaseC: HEATING_BASE_C,
          coolingBaseC: 22,
          holidays: ['2026-01-01'],
          by: 'hour-of-day',
        },
        now,
      );
    const now = Date.parse(`${day}T10:40:00Z`);
    const soFar = (await fit(now)).report!;
    const { timezone } = r.server.service.deps.energy.figures.settings();
    const dayStart = dayIntervals(timezone, day).start;
    const ended = Math.floor((now - dayStart) / HOUR);
    assert.ok(ended >= 1, `${ended} hours of ${day} have ended by 10:40 UTC`);
    assert.equal(soFar.hours.length + soFar.missingHours, ended, 'only the hours that have ended are asked');
    assert.ok(soFar.hours.length >= ended - 1, `${soFar.missingHours} of ${ended} hours missing`);
    assert.ok(soFar.hours.every((hour: any) => Date.parse(hour.start) + HOUR <= now));
    const whole = (await fit(Date.parse('2026-02-08T06:00:00Z'))).report!;
    const later = new Map(whole.hours.map((hour: any) => [hour.start, hour]));
    for (const hour of soFar.hours as any[]) {
      const same = later.get(hour.start) as any;
      assert.ok(same, `${hour.start} is in the finished day`);
      assert.equal(hour.actualKwh, same.actualKwh);
      assert.ok(Math.abs(hour.temperatureC - same.temperatureC) < 0.01, `${hour.start}: ${hour.temperatureC} °C so far vs ${same.temperatureC} °C kept`);
      assert.ok(Math.abs(hour.expectedKwh - same.expectedKwh) < 0.01, `${hour.start}: expected ${hour.expectedKwh} vs ${same.expectedKwh}`);
    }
  });

  test('hour-of-week needs more than a month; bad input is a clear 400', async () => {
    const token = r.admin.accessToken;
    const ask = (path: string) => r.server.request('GET', path, { token });
    const week = await ask(query('&by=hour-of-week'));
    assert.equal(week.status, 400, week.text);
    assert.match(week.text, /hour-of-week has \d+ hours with data; at least \d+ are needed/);
    assert.equal((await ask(query('&by=hour-of-month'))).status, 400);
    const long = await ask(`/api/analysis/baseline/hourly?meterId=${hvacId}&baselineFrom=2023-01-01&baselineTo=2025-06-01`);
    assert.equal(long.status, 400);
    assert.match(long.text, /at most 2 years/);
    const early = await ask(query(`&reportFrom=2026-01-20`));
    assert.equal(early.status, 400);
    assert.equal((await ask(`/api/analysis/baseline/hourly?meterId=999999&baselineFrom=${BASELINE.from}&baselineTo=${BASELINE.to}`)).status, 404);
  });
});

describe('an hourly baseline by hour of the week', () => {
  let r: SimulatorRig;
  before(async () => {
    r = await simulatorRig({ start: Date.parse('2026-01-04T00:00:00Z') });
    await r.meter({ name: 'HVAC', code: 'meter.hvac.kwh', kind: 'energy', area: 'HVAC' });
    await r.collector.collect();
    await r.run(Date.parse('2026-03-01T00:00:00Z'), HOUR);
  });
  after(() => r?.close());

  test('168 models over eight weeks of an area, each night slot recovering the heating slope', async () => {
    const body = await r.get(
      `/api/analysis/baseline/hourly?area=HVAC&by=hour-of-week&baselineFrom=2026-01-05&baselineTo=2026-03-01&heatingBaseC=${HEATING_BASE_C}`,
    );
    assert.equal(body.model.slots.length, 168);
    assert.equal(body.baselineHoursListed, false);
    assert.deepEqual(body.baselineHours, []);
    for (const slot of body.model.slots) {
      assert.equal(slot.fitted.includes('weekend'), false);
      assert.ok(slot.n >= 7, `slot ${slot.slot}: ${slot.n} hours`);
      const hour = slot.slot % 24;
      if (hour >= 6 && hour < 19) continue;
      assert.ok(Math.abs(slot.coefficients.perHdh - HVAC_HEATING_PER_K) <= HVAC_HEATING_PER_K * 0.02, `slot ${slot.slot}: ${slot.coefficients.perHdh}`);
    }
    assert.equal(body.statistics.pass.all, true, JSON.stringify(body.statistics));
    // Monday 03:00 and Saturday 03:00 are different models of the same unoccupied building: the same base load.
    const mondayNight = body.model.slots[3].coefficients.intercept;
    const saturdayNight = body.model.slots[5 * 24 + 3].coefficients.intercept;
    assert.ok(Math.abs(mondayNight - saturdayNight) <= 0.05 * mondayNight, `${mondayNight} vs ${saturdayNight}`);
  });
});
