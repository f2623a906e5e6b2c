// Meter days the box deleted whole (a clock step back across midnight, issue 56 round 9): the box's change feed carries
// them (`deletedDays`, from meter_days_dropped, each under the sequence migration 0043's trigger stamps) in bounded
// batches, and the fleet bounds what one batch may name before anything is stored, as it bounds a day row's missing
// runs: at most 1,000 meter days (422 beyond), each day within the range a day row may have, its span [from, to) that
// day in some zone, each sequence within the batch, none twice. The fleet's deletion itself runs against PostgreSQL in clockBackDrop.test.ts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FleetError } from '../../src/fleet/errors.ts';
import { checkBatch, DEFAULT_INGEST_LIMITS, MAX_DELETED_DAYS } from '../../src/fleet/ingest.ts';
import { historyBatch, resequenceAbove, SentIntervals } from '../../src/fleetSync/batch.ts';
import { DROPPED_DAYS_PER_BATCH } from '../../src/fleetSync/droppedDays.ts';
import { forgetAcknowledgedDrops } from '../../src/metering/index.ts';
import { unsentRows } from '../../src/fleetSync/link.ts';
import { testDatabase } from '../helpers/database.ts';

const NOW = Date.parse('2026-03-12T12:00:00Z');
type Deleted = { meter: string; day: string; from: string; to: string; seq: number };
/** A whole UTC day's span. */
const span = (day: string) => ({ from: `${day}T00:00:00.000Z`, to: new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString() });
const batch = (deletedDays: Deleted[], through = 10 + deletedDays.length) => ({ sentAt: new Date(NOW).toISOString(), after: 10, through, deletedDays });
const refusal = (body: unknown) => {
  try {
    checkBatch(body, DEFAULT_INGEST_LIMITS, NOW);
  } catch (error) {
    assert.ok(error instanceof FleetError, String(error));
    return { code: error.code, status: error.status, message: error.message, details: error.extra.details };
  }
  return undefined;
};
const days = (n: number): Deleted[] =>
  Array.from({ length: n }, (_, i) => {
    const day = `2026-03-${i < 500 ? 10 : 11}`;
    return { meter: String(1 + (i % 500)), day, ...span(day), seq: 11 + i };
  });

test('the fleet takes up to 1,000 deleted meter days a batch and refuses more whole with 422 naming the field', () => {
  assert.equal(MAX_DELETED_DAYS, DROPPED_DAYS_PER_BATCH, 'the box never sends more than the fleet takes');
  assert.equal(checkBatch(batch(days(MAX_DELETED_DAYS)), DEFAULT_INGEST_LIMITS, NOW).deletedDays?.length, MAX_DELETED_DAYS);
  const refused = refusal(batch([...days(MAX_DELETED_DAYS), { meter: '1', day: '2026-03-12', ...span('2026-03-12'), seq: 11 + MAX_DELETED_DAYS }]));
  assert.equal(refused?.code, 'out_of_range');
  assert.equal(refused?.status, 422);
  assert.deepEqual(refused?.details, { field: '/deletedDays' });
  assert.match(refused!.message, /\/deletedDays names 1001 meter days, at most 1000/);
});

test('a deleted day older than the fleet keeps, a sequence outside the batch, a day named twice or not a date is refused', () => {
  const old = refusal(batch([{ meter: '1', day: '2010-01-01', ...span('2010-01-01'), seq: 11 }]));
  assert.equal(old?.status, 422);
  assert.deepEqual(old?.details, { field: '/deletedDays/0/day' });
  const outside = refusal(batch([{ meter: '1', day: '2026-03-10', ...span('2026-03-10'), seq: 12 }], 11));
  assert.equal(outside?.code, 'invalid_batch');
  assert.match(outside!.message, /deletedDays\/0 has sequence 12/);
  const twice = refusal(
    batch([
      { meter: '1', day: '2026-03-10', ...span('2026-03-10'), seq: 11 },
      { meter: '1', day: '2026-03-10', ...span('2026-03-10'), seq: 12 },
    ]),
  );
  assert.match(twice!.message, /deletedDays\/1 repeats meter 1 on 2026-03-10/);
  const notADate = refusal(batch([{ meter: '1', day: '10 March', ...span('2026-03-10'), seq: 11 }]));
  assert.equal(notADate?.status, 400);
  assert.match(notADate!.message, /\/deletedDays\/0\/day/);
});

test('a deleted day’s span must be its own day in some zone: on 15-minute boundaries, at most 25 h, within the day (422 naming it)', () => {
  // A zone 14 h ahead (the day starts the evening before) and one 12 h behind (it ends the next day) are taken.
  for (const [from, to] of [
    ['2026-03-09T10:00:00Z', '2026-03-10T10:00:00Z'],
    ['2026-03-10T12:00:00Z', '2026-03-11T12:00:00Z'],
  ])
    assert.equal(refusal(batch([{ meter: '1', day: '2026-03-10', from, to, seq: 11 }])), undefined, `${from}–${to}`);
  for (const [from, to] of [
    ['2026-03-09T00:00:00Z', '2026-03-12T00:00:00Z'],
    ['2026-03-10T00:00:00Z', '2026-03-11T02:00:00Z'],
    ['2026-03-11T00:00:00Z', '2026-03-10T00:00:00Z'],
    ['2026-03-12T00:00:00Z', '2026-03-12T12:00:00Z'],
  ]) {
    const refused = refusal(
      batch(
        [
          { meter: '1', day: '2026-03-10', ...span('2026-03-10'), seq: 11 },
          { meter: '2', day: '2026-03-10', from, to, seq: 12 },
        ],
        12,
      ),
    );
    assert.equal(refused?.status, 422, `${from}–${to}`);
    assert.deepEqual(refused?.details, { field: '/deletedDays/1' });
  }
  const off = refusal(batch([{ meter: '1', day: '2026-03-10', from: '2026-03-10T00:05:00Z', to: '2026-03-11T00:00:00Z', seq: 11 }]));
  assert.match(off!.message, /\/deletedDays\/0 .* is not on 15-minute boundaries/);
});

test('the box sends its dropped days above the cursor in bounded, contiguous batches; re-stamped above a fleet cursor; forgotten once acknowledged long ago', () => {
  const db = testDatabase();
  const drop = db.sqlite.prepare('INSERT OR REPLACE INTO meter_days_dropped (meter_id, day) VALUES (?, ?)');
  const start = (db.sqlite.prepare('SELECT value FROM sync_sequence WHERE id = 1').get() as { value: number }).value;
  db.sqlite.transaction(() => {
    for (let i = 0; i < DROPPED_DAYS_PER_BATCH + 5; i++) drop.run(1 + (i % 600), i < 600 ? '2026-03-11' : '2026-03-12');
  })();
  assert.equal(unsentRows(db, start), DROPPED_DAYS_PER_BATCH + 5, 'each drop waits to be sent');
  const sent = new SentIntervals();
  const first = historyBatch(db, start, new Date(NOW), undefined, sent);
  assert.equal(first.deletedDays?.length, DROPPED_DAYS_PER_BATCH);
  assert.equal(first.through, start + DROPPED_DAYS_PER_BATCH, 'the batch ends at its last drop');
  assert.deepEqual(first.deletedDays?.[0], { meter: '1', day: '2026-03-11', ...span('2026-03-11'), seq: start + 1 });
  sent.commit();
  // What the fleet holds of a dropped day is nothing: counted again, all of it goes.
  assert.equal(sent.get('1', '2026-03-11')?.values.length, 0);
  const second = historyBatch(db, first.through, new Date(NOW), undefined, sent);
  assert.equal(second.deletedDays?.length, 5);
  assert.equal(second.through, start + DROPPED_DAYS_PER_BATCH + 5);
  // Dropped again, a day takes a new sequence.
  drop.run(1, '2026-03-11');
  assert.deepEqual(historyBatch(db, second.through, new Date(NOW)).deletedDays, [
    { meter: '1', day: '2026-03-11', ...span('2026-03-11'), seq: second.through + 1 },
  ]);
  // The box went back (an older backup) below a fleet at 5,000: the drops above the box's cursor move above it.
  assert.equal(resequenceAbove(db, second.through, 5_000), 1);
  assert.deepEqual(historyBatch(db, 5_000, new Date(NOW)).deletedDays, [{ meter: '1', day: '2026-03-11', ...span('2026-03-11'), seq: 5_001 }]);
  forgetAcknowledgedDrops(db, 5_001, 100);
  assert.equal((db.sqlite.prepare('SELECT count(*) AS n FROM meter_days_dropped').get() as { n: number }).n, 100, 'the newest 100 kept');
});
