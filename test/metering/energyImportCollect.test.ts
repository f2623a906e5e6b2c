// A history import while the collector runs, over real HTTP with the gateway simulator: the import's writes and a
// collection's never interleave on a meter's days (a collection that loaded a day before the import wrote it would
// write it back without the imported intervals), and a collection that starts meanwhile waits at most one slice.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { addDays, dayIntervals, siteDay } from '../../src/platform/time/calendar.ts';
import { FLAG_IMPORTED } from '../../src/metering/store.ts';
import { MIN, simulatorRig, type SimulatorRig } from '../helpers/rig.ts';
import { noonZone } from '../helpers/siteClock.ts';

const Q = 15 * MIN;
const ZONE = noonZone();
const today = siteDay(ZONE);

/** A CSV of `kwh` in every 15-minute interval of `days` for the meter `code`. */
function csv(code: string, days: string[], kwh: number): string {
  const lines = ['meter,start,kwh'];
  for (const d of days) {
    const { start, count } = dayIntervals(ZONE, d);
    for (let i = 0; i < count; i += 1) lines.push(`${code},${new Date(start + i * Q).toISOString()},${kwh}`);
  }
  return `${lines.join('\n')}\n`;
}

describe('history import beside the collector', () => {
  let r: SimulatorRig;

  before(async () => {
    // Forty meters: a first collection backfills a week of each from the gateway's history (hundreds of thousands of
    // readings counted in slices, and as many day rows written), long enough for an import to arrive meanwhile. The
    // service's own collector: the one whose turns the import takes.
    r = await simulatorRig({ start: Math.floor(Date.now() / MIN) * MIN, collector: 'service', simulator: { subMeters: 40 } });
    const zoned = await r.server.request('PUT', '/api/configs', { token: r.admin.accessToken, body: { timezone: ZONE } });
    assert.equal(zoned.status, 200, zoned.text);
  });
  after(() => r?.close());

  const post = (file: string, query = '') =>
    r.server.request('POST', `/api/energy/import${query}`, { token: r.admin.accessToken, raw: file, headers: { 'content-type': 'text/csv' } });
  const row = (meterId: number, d: string) => {
    const found = r.dayRows(meterId).find((one) => one.day === d);
    assert.ok(found, `a row for meter ${meterId} on ${d}`);
    return found;
  };

  test('an import posted during a backfilling collection keeps every imported interval, counted once', async () => {
    const { collector, clock } = r;
    const codes = ['meter.main.kwh', ...Array.from({ length: 37 }, (_, i) => `meter.sub.${String(i + 1).padStart(3, '0')}.kwh`)];
    const meters = [];
    for (const code of codes) meters.push(await r.meter({ name: code, code, kind: 'energy', area: 'Tenants' }));
    const target = meters[0];
    const days = [addDays(today, -5), addDays(today, -4), addDays(today, -3)];
    const file = csv('meter.main.kwh', days, 0.125);

    // The first collection (a week's backfill of every meter) is under way when the import arrives.
    const first = collector.collect();
    const imported = post(file, '?replace=true');
    // Collections go on meanwhile, a minute of the gateway's clock each.
    let done = false;
    const collecting = (async () => {
      await first;
      while (!done) {
        clock.now += MIN;
        await collector.collect();
      }
    })();
    const answer = await imported;
    done = true;
    await collecting;
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.body.meters[0].meterId, target.id);

    for (const d of days) {
      const stored = row(target.id, d);
      const count = stored.kwh.length;
      assert.deepEqual(Array.from(stored.kwh), Array(count).fill(0.125), `${d}: the imported intervals, neither lost nor added to`);
      assert.ok(
        stored.flags.every((flag) => (flag & FLAG_IMPORTED) !== 0),
        `${d}: every interval imported`,
      );
    }
    // The collector's own backfill of the days around them stays (measured from the gateway's history).
    const before = row(target.id, addDays(today, -2));
    assert.ok(before.kwh.every((kwh) => kwh > 0));
    assert.ok(before.flags.every((flag) => (flag & FLAG_IMPORTED) === 0));
  });

  test("a meter imported before its first collection: the backfill of the gateway's history leaves the imported days as imported", async () => {
    const { collector, clock } = r;
    const code = 'meter.hvac.kwh';
    const meter = await r.meter({ name: code, code, kind: 'energy', area: 'Tenants' });
    const days = [addDays(today, -5), addDays(today, -4)];
    const answer = await post(csv(code, days, 0.125));
    assert.equal(answer.status, 200, answer.text);
    // Its first collection backfills a week from the gateway's history, over the imported days too.
    clock.now += MIN;
    await collector.collect();
    collector.flush();
    for (const d of days) {
      const stored = row(meter.id, d);
      assert.deepEqual(Array.from(stored.kwh), Array(stored.kwh.length).fill(0.125), `${d}: the imported intervals, not added to`);
    }
    // The days around them are the gateway's history, measured.
    const measured = row(meter.id, addDays(today, -3));
    assert.ok(measured.kwh.every((kwh) => kwh > 0));
    assert.ok(measured.flags.every((flag) => (flag & FLAG_IMPORTED) === 0));
  });

  test('collections go on during a long import: each waits for one slice, not for the whole file', async () => {
    const { collector, clock } = r;
    // Thirty days of twenty meters (57,600 rows): written in many slices.
    const days = Array.from({ length: 30 }, (_, i) => addDays(today, -60 + i));
    const codes = Array.from({ length: 20 }, (_, i) => `meter.sub.${String(i + 1).padStart(3, '0')}.kwh`);
    const file = codes.map((code, i) => csv(code, days, 0.01 * (i + 1)).replace(/^meter,start,kwh\n/, i ? '' : 'meter,start,kwh\n')).join('');
    const finished: number[] = [];
    let done = false;
    const collecting = (async () => {
      while (!done) {
        clock.now += MIN;
        await collector.collect();
        finished.push(Date.now());
      }
    })();
    const answer = await post(file);
    done = true;
    await collecting;
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.body.rows, 20 * 30 * 96);
    const audit = await r.get('/api/audit?resource=energy_history');
    const at = (action: string) => Date.parse(audit.items.find((item: { action: string }) => item.action === action).at);
    const [from, to] = [at('import.start'), at('import')];
    const during = finished.filter((t) => t > from && t < to);
    assert.ok(during.length >= 2, `collections finished while the import wrote (${to - from} ms): ${during.length}`);
    // Every imported day is whole and counted once.
    const totals = r.server.service.deps.db.sqlite
      .prepare('SELECT meter_id AS meterId, sum(total_kwh) AS kwh FROM meter_days WHERE day >= ? AND day <= ? GROUP BY meter_id ORDER BY meter_id')
      .all(days[0], days[days.length - 1]) as { meterId: number; kwh: number }[];
    assert.equal(totals.length, 20);
    totals.forEach((total, i) => assert.ok(Math.abs(total.kwh - 0.01 * (i + 1) * 96 * 30) < 1e-6, `meter ${total.meterId}: ${total.kwh}`));
  });
});
