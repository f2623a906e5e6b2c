// The service writes what its collector counts hourly (issue 44: disk writes on an edge box), and between the writes
// every reader of day and month figures adds what is held (StoredDays over IntervalStore.heldDays). Checked here on
// the service's own collector against the built-in simulator: while energy is held, every StoredDays figure equals
// what it is once the held records are written, and it differs from the stored rows alone (the merge is what makes
// it current); the cached HTTP figures follow what is held at each 15-minute interval, without a write.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { StoredDays } from '../../src/metering/storedDays.ts';
import { addDays, siteDay } from '../../src/platform/time/calendar.ts';
import { MIN, simulatorRig, type SimulatorRig } from '../helpers/rig.ts';

const HOUR = 60 * MIN;
let r: SimulatorRig;
let ids: string;
let restId: number;
let today: string;

before(async () => {
  // Two minutes into an hour: the 40 minutes below cross two 15-minute boundaries and no write period.
  r = await simulatorRig({ start: Math.floor(Date.now() / HOUR) * HOUR + 2 * MIN, collector: 'service' });
  const main = await r.meter({ name: 'Main', code: 'meter.main.kwh', kind: 'energy', site: true });
  const hvac = await r.meter({ name: 'HVAC', code: 'meter.hvac.kwh', kind: 'energy', area: 'HVAC' });
  const power = await r.meter({ name: 'Incomer power', code: 'meter.main.kw', kind: 'power', area: 'Plant' });
  const rest = await r.meter({
    name: 'Rest',
    kind: 'virtual',
    area: 'Other',
    terms: [
      { meterId: main.id, sign: 1 },
      { meterId: hvac.id, sign: -1 },
    ],
  });
  ids = JSON.stringify([main.id, hvac.id, power.id, rest.id]);
  restId = rest.id;
  today = siteDay(r.server.service.deps.energy.timezone(), new Date(r.clock.now));
});
after(() => r?.close());

/** Every figure StoredDays gives over the last 40 days, with floats rounded to 1e-9 (a sum in another order). */
function figures(days: StoredDays) {
  const from = addDays(today, -40);
  const to = addDays(today, 1);
  const month = today.slice(0, 7);
  const round = (value: unknown): unknown => {
    if (typeof value === 'number') return Math.round(value * 1e9) / 1e9;
    if (Array.isArray(value)) return value.map(round);
    if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, round(v)]));
    return value;
  };
  const byKey = <T>(rows: T[], key: (row: T) => string) => [...rows].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  return round({
    byDay: days.rollupsByDay(ids, from, to),
    byMonth: byKey(days.rollupsByMonth(ids, addDays(today, -40).slice(0, 7), addDays(`${month}-01`, 40).slice(0, 7)), (row) => row.month),
    areaDays: byKey(days.areaRollupsByDays(from, to), (row) => row.area),
    areaMonths: byKey(days.areaRollupsByMonths(month, addDays(`${month}-01`, 40).slice(0, 7)), (row) => row.area),
    peaks: byKey(days.monthPeaks(month), (row) => String(row.meterId)),
    totals: byKey(days.dayTotals(ids, from, to), (row) => `${row[0]}|${row[1]}`),
    count: days.count(ids, from, to),
    perDay: days.metersPerDay(ids, from, to),
    withData: days.daysWithData(ids, from, to),
  });
}

test('while energy is held, every day and month figure is what it is once written, and not what the rows alone say', async () => {
  const { deps } = r.server.service;
  const lastAt = deps.db.sqlite.prepare('SELECT max(last_at) FROM meter_state').pluck();
  // The first collection backfills the week from the gateway's history: written at once.
  await r.collector.collect();
  const written = lastAt.get();
  assert.ok(written, 'the backfill is written at once');

  // 40 minutes, a collection a minute, two 15-minute boundaries crossed: all held, nothing written.
  await r.run(r.clock.now + 40 * MIN);
  assert.equal(lastAt.get(), written, 'nothing is written inside the write period');

  const held = figures(deps.energy.days);
  const rowsAlone = figures(new StoredDays(deps.db, deps.energy.timezone));
  assert.notDeepEqual(held, rowsAlone, 'the held energy moves the figures');

  r.collector.flush();
  assert.ok(Number(lastAt.get()) > Number(written), 'flushed: the held records are written');
  const stored = figures(deps.energy.days);
  assert.deepEqual(held, stored, 'the figures read while held are those read from the written rows');
  assert.deepEqual(figures(new StoredDays(deps.db, deps.energy.timezone)), stored, 'after the write nothing is held');
});

test('a tariff from today, set while energy is held: the figures re-price the stored part and the held one alike', async () => {
  const { deps } = r.server.service;
  await r.collector.collect();
  const before = figures(deps.energy.days) as { byDay: Array<{ day: string; cost: number }> };
  const created = await r.server.request('POST', '/api/energy/tariffs', {
    token: r.admin.accessToken,
    body: { validFrom: today, price: 0.5, carbonFactor: 0.4, standingChargePerDay: 1 },
  });
  assert.equal(created.status, 201, created.text);
  const held = figures(deps.energy.days) as { byDay: Array<{ day: string; cost: number }> };
  const cost = (f: typeof held) => f.byDay.find((row) => row.day === today)!.cost;
  assert.notEqual(cost(held), cost(before), "today's cost follows the new price");
  r.collector.flush();
  assert.deepEqual(held, figures(deps.energy.days), 'as the written rows give them');
});

test('the cached HTTP figures follow what is held at each new 15-minute interval, without a write', async () => {
  const { deps } = r.server.service;
  const lastAt = deps.db.sqlite.prepare('SELECT max(last_at) FROM meter_state').pluck();
  const summary = async () => {
    const body = await r.get(`/api/energy/summary?from=${today}&to=${addDays(today, 1)}`);
    return JSON.stringify(body);
  };
  // Still inside the hour (the first test ended 42 minutes into it): the next quarter starts within 15 minutes.
  const quarter = 15 * MIN;
  const nextQuarter = Math.floor(r.clock.now / quarter) * quarter + quarter;
  assert.ok(nextQuarter % HOUR !== 0, 'the next 15-minute boundary is not a write');
  await r.run(nextQuarter - MIN);
  const written = lastAt.get();
  const before = await summary();
  assert.equal(await summary(), before, 'answered from the cache within the interval');
  await r.run(nextQuarter + MIN);
  assert.equal(lastAt.get(), written, 'the 15-minute boundary wrote nothing');
  const after = await summary();
  assert.notEqual(after, before, 'a new 15-minute interval: the figures move with what is held');
  r.collector.flush();
  assert.equal(await summary(), after, 'and they are what the written rows give');
});

test("a virtual meter's held intervals are its terms' held ones: its series while held is what the write stores", async () => {
  // Everything written first (alone, the first collection's backfill), then five minutes that stay inside the hour.
  const { deps } = r.server.service;
  const lastAt = deps.db.sqlite.prepare('SELECT max(last_at) FROM meter_state').pluck();
  await r.collector.collect();
  r.collector.flush();
  if ((r.clock.now % HOUR) + 6 * MIN >= HOUR) await r.run(Math.ceil(r.clock.now / HOUR) * HOUR + MIN);
  r.collector.flush();
  const written = lastAt.get();
  await r.run(r.clock.now + 5 * MIN);
  assert.equal(lastAt.get(), written, 'held, not written');
  const tomorrow = addDays(today, 1);
  const series = async () => r.get(`/api/energy/series?meterId=${restId}&from=${today}&to=${tomorrow}&resolution=15min`);
  const csv = async () => {
    const answer = await r.server.request('GET', `/api/energy/export.csv?meterId=${restId}&from=${today}&to=${tomorrow}`, { token: r.admin.accessToken });
    assert.equal(answer.status, 200, answer.text);
    return answer.text;
  };
  const [heldSeries, heldCsv] = [await series(), await csv()];
  r.collector.flush();
  assert.ok(Number(lastAt.get()) > Number(written), 'flushed');
  assert.deepEqual(await series(), heldSeries, 'the series read while held is the written one');
  assert.equal(await csv(), heldCsv, 'and so is the CSV export');
});
