// Demand on partial data (issue 41, item 2): a site with two incomers, one of which misses an interval (and has
// no data in earlier months), must not lose the other's demand. The known answer is built by hand: incomer A draws
// 10 kWh every quarter hour (40 kW) for 12 months, except one quarter hour of 65.975 kWh (263.9 kW) in the last
// whole month; incomer B is metered on that day only, 5 kWh a quarter hour, and misses exactly the peak's interval.
// So the month's site peak is 263.9 kW (A alone, B missing: incomplete), every earlier month's 40 kW (A alone),
// the 12-month average (11 × 40 + 263.9) ÷ 12 = 58.658 kW. Before: 60 kW (the day's other intervals, A + B), and the
// earlier months "no data".
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { addDays, dayIntervals, INTERVAL_MS } from '../../src/platform/time/calendar.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { lastWholeMonth } from '../helpers/seededYear.ts';
import { previousMonth } from '../../src/analysis/demandCharges.ts';
import type { DayRecord } from '../../src/metering/store.ts';

const PEAK_KWH = 65.975; // 263.9 kW
describe('site demand with a missing interval on one of two incomers', () => {
  let server: TestServer;
  let token: string;
  const month = lastWholeMonth('UTC');
  const peakDay = addDays(month.from, 13);
  const peakAt = dayIntervals('UTC', peakDay).start + 32 * INTERVAL_MS; // 08:00Z
  const months: string[] = [month.from.slice(0, 7)];
  while (months.length < 12) months.unshift(previousMonth(months[0]));
  before(async () => {
    server = await startTestServer();
    token = (await server.createUser({ role: 'admin' })).accessToken;
    const { energy, db } = server.service.deps;
    const a = energy.meters.create({ name: 'Incomer A', code: 'meter.a.kwh', kind: 'energy', site: true }, null).id;
    const b = energy.meters.create({ name: 'Incomer B', code: 'meter.b.kwh', kind: 'energy', site: true }, null).id;
    // A PV array: its output is no demand, it must not be listed among the demand peaks.
    const pv = energy.meters.create({ name: 'PV', code: 'meter.pv.kwh', kind: 'energy', commodity: 'electricity', role: 'generation' }, null).id;
    // A grid-export meter: what leaves the site is no demand either.
    const exported = energy.meters.create({ name: 'Export', code: 'meter.export.kwh', kind: 'energy', commodity: 'electricity', role: 'export' }, null).id;
    for (let day = `${months[0]}-01`; day < month.to; day = addDays(day, 1)) {
      const { start, count } = dayIntervals('UTC', day);
      const rows: DayRecord[] = [];
      const kwhA = new Float32Array(count).fill(10);
      if (day === peakDay) kwhA[32] = PEAK_KWH;
      rows.push({ meterId: a, day, start, kwh: kwhA, flags: new Uint8Array(count), maxKw: null });
      if (day === peakDay) {
        rows.push({ meterId: pv, day, start, kwh: new Float32Array(count).fill(20), flags: new Uint8Array(count), maxKw: null });
        rows.push({ meterId: exported, day, start, kwh: new Float32Array(count).fill(300), flags: new Uint8Array(count), maxKw: null });
        const kwhB = new Float32Array(count).fill(5);
        kwhB[32] = Number.NaN; // the missing interval
        const flags = new Uint8Array(count);
        rows.push({ meterId: b, day, start, kwh: kwhB, flags, maxKw: null });
      }
      db.sqlite.transaction(() => energy.store.save(rows))();
    }
  });
  after(() => server?.close());

  const get = async (path: string) => {
    const response = await server.request('GET', path, { token });
    assert.equal(response.status, 200, response.text);
    return response.body;
  };

  test("the month's site peak is incomer A's 263.9 kW, marked incomplete; the demand charge says it rests on incomplete data", async (t) => {
    const peaks = await get(`/api/energy/peaks?month=${months[11]}`);
    t.diagnostic(`site peak ${JSON.stringify(peaks.site)}`);
    assert.ok(Math.abs(peaks.site.kw - PEAK_KWH * 4) < 0.001, `${peaks.site.kw}`);
    assert.equal(Date.parse(peaks.site.at), peakAt);
    assert.equal(peaks.site.complete, false);
    assert.equal(peaks.site.metersAtPeak, 1);
    assert.equal(peaks.site.meters, 2);
    assert.deepEqual(peaks.meters.map((m: any) => m.name).sort(), ['Incomer A', 'Incomer B'], 'the PV array and the export meter are no demand peaks');
    // The intervals that lack B: all of the month's but the peak day's 95 (A has them, B not) and the missing one.
    const intervals = ((Date.parse(`${month.to}T00:00:00Z`) - Date.parse(`${month.from}T00:00:00Z`)) / INTERVAL_MS) | 0;
    assert.equal(peaks.site.incompleteIntervals, intervals - 95);

    const charge = await get(`/api/analysis/demand-charges?month=${months[11]}`);
    t.diagnostic(`billed ${charge.billedKw} kW (${charge.version.basis}), rolling average ${charge.rollingAverageKw} kW; note: ${charge.dataNote}`);
    assert.ok(Math.abs(charge.peak.kw - 263.9) < 0.001);
    assert.ok(Math.abs(charge.billedKw - Math.max(charge.version.minimumKw, 263.9)) < 0.001);
    // Every earlier month: A's 40 kW; the average of 12: (11 × 40 + 263.9) ÷ 12.
    assert.deepEqual(
      charge.monthlyPeaks.map((p: any) => p.kw),
      [...Array(11).fill(40), 263.9],
    );
    assert.ok(Math.abs(charge.rollingAverageKw - (11 * 40 + 263.9) / 12) < 0.001, `${charge.rollingAverageKw}`);
    assert.equal(charge.complete, false);
    assert.match(charge.dataNote, /Incomplete data/);
    assert.match(charge.dataNote, /the peak among them/);
  });

  test("the energy totals still add what exists: the peak day's kWh = A's 96 intervals + B's 95", async () => {
    const summary = await get(`/api/energy/summary?from=${peakDay}&to=${addDays(peakDay, 1)}`);
    assert.ok(Math.abs(summary.totalKwh - (95 * 10 + PEAK_KWH + 95 * 5)) < 0.01, `${summary.totalKwh}`);
  });
});
