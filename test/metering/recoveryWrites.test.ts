// A recovery is not a write storm (issue 56, item 3): after failed collections (the gateway down), the gap filled from
// the gateway's history is held with the rest and written at the hourly write, not at once; nothing of it is lost, and
// readers see it before the write. Checked on the service's own collector against the built-in simulator.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { siteDay } from '../../src/platform/time/calendar.ts';
import { MIN, simulatorRig, type SimulatorRig } from '../helpers/rig.ts';

const HOUR = 60 * MIN;
let r: SimulatorRig;
let meterId: number;
let hour: number;

before(async () => {
  // Yesterday 10:00 (site zone UTC, the default): the hour and a bit below stay within one day, all in the past.
  hour = Math.floor(Date.now() / (24 * HOUR)) * 24 * HOUR - 14 * HOUR;
  r = await simulatorRig({ start: hour + 2 * MIN, collector: 'service' });
  meterId = (await r.meter({ name: 'Main', code: 'meter.main.kwh', kind: 'energy', site: true })).id;
});
after(() => r?.close());

/** The newest meter state in the database: it moves only when the collector writes (state and day rows together). */
const writtenUpTo = () => r.server.service.deps.db.sqlite.prepare('SELECT max(last_at) FROM meter_state').pluck().get() as number | null;

test('the gap after an outage is held and written at the hourly write, with every interval of it', async () => {
  await r.run(hour + 2 * MIN); // the first reading (and its backfill) is written at once
  await r.run(hour + 20 * MIN);
  const beforeOutage = writtenUpTo();
  assert.ok(beforeOutage !== null && beforeOutage <= hour + 3 * MIN, 'only the first reading was written so far');

  r.sim.building.offline = true;
  await r.run(hour + 35 * MIN);
  assert.equal(r.collector.health().state, 'failing');
  r.sim.building.offline = false;
  const recovered = await r.collector.collect();
  assert.ok(recovered.filled > 0, `the gap was filled from history: ${JSON.stringify(recovered)}`);
  assert.equal(r.collector.health().state, 'ok');
  assert.equal(writtenUpTo(), beforeOutage, 'the recovery wrote nothing: the fill waits for the hourly write');

  // Readers add what is held: the collector's meter state is current, and today's held energy covers the outage.
  const state = r.collector.meterHealth().find((row) => row.meterId === meterId)!;
  assert.equal(Date.parse(state.lastReadingAt!), hour + 35 * MIN);
  const today = siteDay(r.server.service.deps.energy.timezone(), new Date(r.clock.now));
  const held = r.server.service.deps.energy.store.open!.kwh(meterId, today);
  assert.ok(held !== undefined, 'today is held');

  // The next hour's first collection writes it all: the outage's intervals are stored, none missing.
  await r.run(hour + 61 * MIN);
  const written = writtenUpTo()!;
  assert.ok(written >= hour + 60 * MIN, `written at the hourly write: ${new Date(written).toISOString()}`);
  const row = r.server.service.deps.db.sqlite.prepare('SELECT total_kwh AS total FROM meter_days WHERE meter_id = ? AND day = ?').get(meterId, today) as
    | { total: number }
    | undefined;
  assert.ok(row, 'today is stored');
  const rows = r.dayRows(meterId);
  const day = rows.find((candidate) => candidate.day === today)!;
  const dayStart = Date.parse(`${today}T00:00:00Z`);
  const first = Math.floor((hour + 15 * MIN - dayStart) / (15 * MIN));
  const last = Math.floor((hour + 45 * MIN - dayStart) / (15 * MIN));
  for (let index = first; index <= last; index += 1)
    assert.ok(Number.isFinite(day.kwh[index]) && day.kwh[index] > 0, `interval ${index} (the outage) holds energy: ${day.kwh[index]}`);
  // Against the simulator's own counter: what is stored from the hour's start to the last reading is what it counted.
  const fromIndex = Math.floor((hour - dayStart) / (15 * MIN));
  let stored = 0;
  for (let index = fromIndex; index < fromIndex + 4; index += 1) stored += day.kwh[index];
  const truth = r.counter('meter.main.kwh', hour + 60 * MIN) - r.counter('meter.main.kwh', hour);
  assert.ok(Math.abs(stored - truth) <= truth * 0.01 + 0.01, `stored ${stored} kWh for the hour, the counter moved ${truth}`);
});
