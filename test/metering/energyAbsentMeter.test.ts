// A meter the gateway does not report (a point removed or renamed on the gateway) is asked for its history at every
// collection. That alone must not write the day rows every minute: the service holds what it counted and writes it
// hourly (edge, issues 29 and 44), and only a gap actually filled from history is written at once.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { MIN, misbehavingRig, simulatorRig, type SimulatorRig } from '../helpers/rig.ts';

const QUARTER = 15 * MIN;
const HOUR = 60 * MIN;
let r: SimulatorRig;

before(async () => {
  // A minute into an hour: three more collections stay inside it.
  r = await simulatorRig({ start: Math.floor(Date.now() / HOUR) * HOUR + MIN, collector: 'service' });
});
after(() => r?.close());

test('a meter the gateway stopped reporting does not turn the hourly write into one a minute', async () => {
  const main = await r.meter({ name: 'Main', code: 'meter.main.kwh', kind: 'energy', site: true });
  await r.meter({ name: 'Removed on the gateway', code: 'meter.removed.kwh', kind: 'energy' });
  const written = r.server.service.deps.db.sqlite.prepare('SELECT last_at FROM meter_state WHERE meter_id = ?').pluck();

  // The first collection backfills the week from the gateway's history: written at once.
  await r.collector.collect();
  const first = written.get(main.id);
  assert.ok(first, 'the backfill is written at once');

  // Inside the same hour: counted and held, nothing written, though the removed meter's history is asked for (and
  // missing) every time.
  for (let i = 0; i < 3; i += 1) {
    r.clock.now += MIN;
    const counts = await r.collector.collect();
    assert.equal(counts.readings, 1, 'the main meter is read; the removed one is not reported');
    assert.equal(written.get(main.id), first, `collection ${i + 2}: held, not written`);
  }

  // A new 15-minute interval inside the hour writes nothing; the first collection of the next hour writes what was held.
  // (A collection a minute: a longer step is a gap, filled from history and written at once.)
  await r.run(Math.floor(r.clock.now / QUARTER) * QUARTER + QUARTER + 5_000);
  assert.equal(written.get(main.id), first, 'a 15-minute boundary inside the hour: held, not written');
  await r.run(Math.floor(r.clock.now / HOUR) * HOUR + HOUR + 5_000);
  assert.ok(Number(written.get(main.id)) > Number(first), 'written at the hour');
});

test('a meter the gateway does not report and keeps no history for is asked for its history once per 15 minutes, not every collection', async (t) => {
  const bad = await misbehavingRig({ start: Math.floor(Date.now() / QUARTER) * QUARTER + MIN });
  t.after(() => bad.close());
  bad.gateway.points.set('meter.present.kwh', { value: 100 });
  await bad.meter({ name: 'Present', code: 'meter.present.kwh', kind: 'energy' });
  await bad.meter({ name: 'Gone', code: 'meter.gone.kwh', kind: 'energy' });
  const asked = () => bad.gateway.counts.get('/codes/history') ?? 0;

  await bad.collector.collect();
  const first = asked();
  assert.ok(first > 0, 'each new meter is asked for its history (in pieces of the backfill span)');
  for (let i = 1; i <= 10; i += 1) {
    bad.clock.now += MIN;
    bad.gateway.points.set('meter.present.kwh', { value: 100 + i });
    await bad.collector.collect();
  }
  assert.equal(asked(), first, 'ten more collections ask nothing: the present meter has no gap, the gone one is waited for');
  bad.clock.now += 5 * MIN;
  bad.gateway.points.set('meter.present.kwh', { value: 111 });
  await bad.collector.collect();
  const again = asked();
  assert.ok(again > first, 'the gone meter is asked again after 15 minutes');

  // When it is reported again, it is read at once.
  bad.clock.now += MIN;
  bad.gateway.points.set('meter.gone.kwh', { value: 5 });
  bad.gateway.points.set('meter.present.kwh', { value: 112 });
  await bad.collector.collect();
  assert.ok(asked() > again, 'a meter reported again is asked for the history of its gap at once');
});
