// A history import while the collector runs, over real HTTP with the gateway simulator: the import's writes and a
// collection's never interleave on a meter's days (a collection that loaded a day before the import wrote it would
// write it back without the imported intervals), and a collection that starts meanwhile waits at most one slice.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { addDays, dayIntervals, siteDay } from '../src/energy/calendar.ts';
import { FLAG_IMPORTED, storedFlags, storedKwh } from '../src/energy/store.ts';
import { startGatewaySimulator, type RunningSimulator } from '../src/iot/simulator/server.ts';
import { noonZone } from './helpers/siteClock.ts';
import { startTestServer, type TestServer, type TestUser } from './helpers/server.ts';

const MIN = 60_000;
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
  let sim: RunningSimulator;
  let server: TestServer;
  let admin: TestUser;
  const clock = { now: Math.floor(Date.now() / MIN) * MIN };

  before(async () => {
    // Forty meters: a first collection backfills a week of each from the gateway's history (hundreds of thousands of
    // readings counted in slices, and as many day rows written), long enough for an import to arrive meanwhile.
    sim = await startGatewaySimulator({ now: () => clock.now, tokenTtlSec: 86_400, subMeters: 40 });
    server = await startTestServer(
      { EMS_IOT_BASE_URL: sim.url, EMS_IOT_USERNAME: 'ems', EMS_IOT_PASSWORD: 'ems-simulator' },
      { collectorNow: () => clock.now },
    );
    admin = await server.createUser({ role: 'admin' });
    const zoned = await server.request('PUT', '/api/configs', { token: admin.accessToken, body: { timezone: ZONE } });
    assert.equal(zoned.status, 200, zoned.text);
  });
  after(async () => {
    await server?.close();
    await sim?.close();
  });

  const meter = async (body: Record<string, unknown>) => {
    const response = await server.request('POST', '/api/meters', { token: admin.accessToken, body });
    assert.equal(response.status, 201, response.text);
    return response.body as { id: number };
  };
  const row = (meterId: number, d: string) => {
    const found = server.service.deps.db.sqlite.prepare('SELECT kwh, flags FROM meter_days WHERE meter_id = ? AND day = ?').get(meterId, d) as
      | { kwh: Buffer; flags: Buffer }
      | undefined;
    assert.ok(found, `a row for meter ${meterId} on ${d}`);
    const kwh = storedKwh(found.kwh);
    return { kwh, flags: storedFlags(found.flags, found.kwh, kwh.length) };
  };

  test('an import posted during a backfilling collection keeps every imported interval, counted once', async () => {
    const { collector } = server.service.deps;
    const codes = ['meter.main.kwh', ...Array.from({ length: 37 }, (_, i) => `meter.sub.${String(i + 1).padStart(3, '0')}.kwh`)];
    const meters = [];
    for (const code of codes) meters.push(await meter({ name: code, code, kind: 'energy', area: 'Tenants' }));
    const target = meters[0];
    const days = [addDays(today, -5), addDays(today, -4), addDays(today, -3)];
    const file = csv('meter.main.kwh', days, 0.125);

    // The first collection (a week's backfill of every meter) is under way when the import arrives.
    const first = collector.collect();
    const imported = server.request('POST', '/api/energy/import?replace=true', {
      token: admin.accessToken,
      raw: file,
      headers: { 'content-type': 'text/csv' },
    });
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

    collector.flush();
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

  test('collections go on during a long import: each waits for one slice, not for the whole file', async () => {
    const { collector } = server.service.deps;
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
    const answer = await server.request('POST', '/api/energy/import', { token: admin.accessToken, raw: file, headers: { 'content-type': 'text/csv' } });
    done = true;
    await collecting;
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.body.rows, 20 * 30 * 96);
    const audit = await server.request('GET', '/api/audit?resource=energy_history', { token: admin.accessToken });
    const at = (action: string) => Date.parse(audit.body.items.find((item: { action: string }) => item.action === action).at);
    const [from, to] = [at('import.start'), at('import')];
    const during = finished.filter((t) => t > from && t < to);
    assert.ok(during.length >= 2, `collections finished while the import wrote (${to - from} ms): ${during.length}`);
    // Every imported day is whole and counted once.
    const totals = server.service.deps.db.sqlite
      .prepare('SELECT meter_id AS meterId, sum(total_kwh) AS kwh FROM meter_days WHERE day >= ? AND day <= ? GROUP BY meter_id ORDER BY meter_id')
      .all(days[0], days[days.length - 1]) as { meterId: number; kwh: number }[];
    assert.equal(totals.length, 20);
    totals.forEach((total, i) => assert.ok(Math.abs(total.kwh - 0.01 * (i + 1) * 96 * 30) < 1e-6, `meter ${total.meterId}: ${total.kwh}`));
  });
});
