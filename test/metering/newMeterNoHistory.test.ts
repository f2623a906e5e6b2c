// Energy at the edges of collection (issue 41, item 9): a new meter whose point has no history on the gateway (a 404
// from codes/history) starts with its first reading instead of waiting 5 collections and losing them; and the
// 15-minute series include what the collector holds in memory for a day that has no stored row yet. Known answer:
// the counter rises 0.5 kWh a minute from 100 at 23:56 to 103 at 00:02, so 2 kWh before midnight, 1 kWh after.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addDays, siteDay } from '../../src/platform/time/calendar.ts';
import { MIN, misbehavingRig } from '../helpers/rig.ts';

test('a point without history (404) counts from its first reading; the new day held in memory is in the 15-minute series', async (t) => {
  const today = siteDay('UTC', new Date());
  const yesterday = addDays(today, -1);
  const r = await misbehavingRig({ start: Date.parse(`${yesterday}T23:56:00Z`) });
  t.after(() => r.close());
  const code = 'meter.new.kwh';
  const meter = await r.meter({ name: 'New meter', code, kind: 'energy' });
  r.gateway.historyStatus = 404;
  for (let k = 0; k <= 6; k += 1) {
    r.gateway.set(code, { value: 100 + 0.5 * k });
    await r.collector.collect();
    if (k === 0) assert.ok((await r.meterState(meter.id))?.lastReadingAt, 'started on its first reading');
    r.clock.now += MIN;
  }
  const series = (await r.get(`/api/energy/series?meterId=${meter.id}&from=${yesterday}&to=${addDays(today, 1)}&resolution=15min`)).points;
  const sum = series.reduce((a: number, p: any) => a + (p.kwh ?? 0), 0);
  const midnight = series.find((p: any) => p.start === `${today}T00:00:00.000Z`);
  t.diagnostic(`series total ${sum} kWh; 23:45 ${series.find((p: any) => p.start === `${yesterday}T23:45:00.000Z`)?.kwh}, 00:00 ${midnight?.kwh}`);
  assert.ok(Math.abs(sum - 3) < 0.001, `3 kWh from the first reading, got ${sum}`);
  assert.ok(Math.abs(midnight.kwh - 1) < 0.001, `1 kWh held in memory after midnight, got ${midnight?.kwh}`);
  const stored = r.server.service.deps.db.sqlite.prepare('SELECT count(*) FROM meter_days WHERE meter_id = ? AND day = ?').pluck().get(meter.id, today);
  assert.equal(stored, 0, 'the new day has no stored row yet: the series read it from memory');
});
