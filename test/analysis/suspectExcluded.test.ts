// Suspect intervals stay out of the models (issue 52) over real HTTP against the gateway simulator: a simulated winter
// of the HVAC meter, collected on the hour, then four days of it replaced by a history import of flat zeros (a dead
// logger): the import finds the run; the daily and the hourly baseline and the EnPI leave those days out until a
// person confirms the run; then they count again, zeros and all.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { simulatorRig, type SimulatorRig } from '../helpers/rig.ts';

const HOUR = 3_600_000;
const Q = 15 * 60_000;
const DEAD = ['2026-01-10', '2026-01-11', '2026-01-12', '2026-01-13'];
const BASELINE = { from: '2026-01-01', to: '2026-02-10' };

describe('suspect intervals kept out of baselines and EnPIs', () => {
  let r: SimulatorRig;
  let hvacId: number;
  before(async () => {
    r = await simulatorRig({ start: Date.parse('2025-12-31T00:00:00Z') });
    hvacId = (await r.meter({ name: 'HVAC', code: 'meter.hvac.kwh', kind: 'energy', area: 'HVAC' })).id;
    await r.collector.collect();
    await r.run(Date.parse('2026-02-11T00:00:00Z'), HOUR);
    r.collector.flush();
    const lines = ['meter,start,kwh'];
    for (let t = Date.parse(`${DEAD[0]}T00:00:00Z`); t < Date.parse('2026-01-14T00:00:00Z'); t += Q)
      lines.push(`meter.hvac.kwh,${new Date(t).toISOString()},0`);
    const imported = await r.server.request('POST', '/api/energy/import?replace=true', {
      token: r.admin.accessToken,
      raw: `${lines.join('\n')}\n`,
      headers: { 'content-type': 'text/csv' },
    });
    assert.equal(imported.status, 200, imported.text);
    assert.equal(imported.body.meters[0].suspect.runs, 1, JSON.stringify(imported.body.meters[0].suspect));
  });
  after(() => r?.close());

  const daily = () => r.get(`/api/analysis/baseline?meterId=${hvacId}&baselineFrom=${BASELINE.from}&baselineTo=${BASELINE.to}`);
  // The hours are listed for a baseline of up to a month.
  const hourly = () => r.get(`/api/analysis/baseline/hourly?meterId=${hvacId}&baselineFrom=${BASELINE.from}&baselineTo=2026-01-31`);
  const enpi = () => r.get(`/api/analysis/enpi?meterId=${hvacId}&from=2026-01&to=2026-02`);
  const daysOf = (body: { baselineDays: { day: string }[] }) => new Set(body.baselineDays.map((d) => d.day));
  const hourDays = (body: { baselineHours: { start: string }[] }) => new Set(body.baselineHours.map((h) => h.start.slice(0, 10)));

  test('the dead days are left out until the run is confirmed, then counted', async () => {
    const before = await daily();
    for (const day of DEAD) assert.ok(!daysOf(before).has(day), `${day} is not a baseline day`);
    assert.ok(daysOf(before).has('2026-01-09') && daysOf(before).has('2026-01-14'), JSON.stringify({ days: [...daysOf(before)], missing: before.missingDays }));
    const beforeHourly = await hourly();
    for (const day of DEAD) assert.ok(!hourDays(beforeHourly).has(day), `${day} has no baseline hour`);
    assert.ok(
      hourDays(beforeHourly).has('2026-01-14'),
      JSON.stringify({ listed: beforeHourly.baselineHoursListed, n: beforeHourly.baselineHours?.length, days: [...hourDays(beforeHourly)] }),
    );
    const [january] = (await enpi()).months;
    assert.equal(january.suspectDays, 4);
    assert.equal(january.temperatureDays, 27);

    const [run] = (await r.get(`/api/energy/suspect-runs?meterId=${hvacId}`)).items;
    const confirmed = await r.server.request('POST', `/api/energy/suspect-runs/${run.id}/confirm`, { token: r.admin.accessToken });
    assert.equal(confirmed.status, 200, confirmed.text);

    const after = await daily();
    for (const day of DEAD) assert.ok(daysOf(after).has(day), `${day} counts once confirmed`);
    assert.equal(after.baselineDays.find((d: { day: string }) => d.day === DEAD[0]).actualKwh, 0);
    const afterHourly = await hourly();
    for (const day of DEAD) assert.ok(hourDays(afterHourly).has(day), `${day} has its hours once confirmed`);
    const [confirmedJanuary] = (await enpi()).months;
    assert.equal(confirmedJanuary.suspectDays, 0);
    assert.equal(confirmedJanuary.temperatureDays, 31);
  });
});
