// A day row's `missing` runs make the fleet delete what it stored there (issue 56, round 8), so the fleet bounds them
// before anything is stored: each run on 15-minute boundaries, not empty, and within the row's own day in any time zone
// (a local midnight lies 14 h before to 12 h after the UTC one; a day lasts at most 25 h). A run reaching past that is
// refused whole with 422 naming the field, never a delete of another day's rows. No database: the batch's rules alone.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FleetError } from '../../src/fleet/errors.ts';
import { checkBatch, DEFAULT_INGEST_LIMITS } from '../../src/fleet/ingest.ts';

const NOW = Date.parse('2026-03-12T12:00:00Z');
const batch = (missing: Array<{ from: string; to: string }>) => ({
  sentAt: new Date(NOW).toISOString(),
  after: 10,
  through: 11,
  days: [{ meter: '7', day: '2026-03-10', value: 90, cost: 12.5, carbonKg: 30, seq: 11, missing }],
});
const refusal = (missing: Array<{ from: string; to: string }>) => {
  try {
    checkBatch(batch(missing), DEFAULT_INGEST_LIMITS, NOW);
  } catch (error) {
    assert.ok(error instanceof FleetError, String(error));
    return { code: error.code, status: error.status, message: error.message, details: error.extra.details };
  }
  return undefined;
};

test('runs within the row’s day are taken: UTC, a zone 14 h ahead (starts the evening before), 12 h behind (ends the next day)', () => {
  for (const run of [
    { from: '2026-03-10T03:15:00Z', to: '2026-03-10T04:00:00Z' },
    { from: '2026-03-09T10:00:00Z', to: '2026-03-09T10:15:00Z' },
    { from: '2026-03-11T11:45:00Z', to: '2026-03-11T12:00:00Z' },
  ]) {
    assert.equal(refusal([run]), undefined, `${run.from}–${run.to}`);
  }
  assert.equal(checkBatch(batch([{ from: '2026-03-10T03:15:00Z', to: '2026-03-10T04:00:00Z' }]), DEFAULT_INGEST_LIMITS, NOW).days?.[0]?.missing?.length, 1);
});

test('a run reaching outside the row’s day, empty or backwards is refused 422 naming the field', () => {
  for (const run of [
    { from: '2020-01-01T00:00:00Z', to: '2030-01-01T00:00:00Z' },
    { from: '2026-03-09T09:45:00Z', to: '2026-03-09T10:15:00Z' },
    { from: '2026-03-11T12:45:00Z', to: '2026-03-11T13:15:00Z' },
    { from: '2026-03-10T04:00:00Z', to: '2026-03-10T04:00:00Z' },
    { from: '2026-03-10T05:00:00Z', to: '2026-03-10T04:00:00Z' },
  ]) {
    const refused = refusal([{ from: '2026-03-10T01:00:00Z', to: '2026-03-10T01:15:00Z' }, run]);
    assert.equal(refused?.code, 'out_of_range', `${run.from}–${run.to}`);
    assert.equal(refused?.status, 422);
    assert.deepEqual(refused?.details, { field: '/days/0/missing/1' });
    assert.match(refused!.message, /\/days\/0\/missing\/1 .* is not a run of intervals within 2026-03-10/);
  }
});

test('a run off the 15-minute grid is refused as an invalid batch', () => {
  const refused = refusal([{ from: '2026-03-10T03:10:00Z', to: '2026-03-10T04:00:00Z' }]);
  assert.equal(refused?.code, 'invalid_batch');
  assert.match(refused!.message, /\/days\/0\/missing\/0 .* is not on 15-minute boundaries/);
});
