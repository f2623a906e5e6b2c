// Grandfather-father-son retention as a pure choice over backup times, in a fixed time zone.
process.env.TZ = 'UTC';
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { backupsToKeep, DEFAULT_RETENTION } from '../../src/operations/backup/retention.ts';

/** One backup a day at 03:30 from `from` to `to` (inclusive), named by its day. */
function nightly(from: string, to: string): Array<{ name: string; createdAt: string }> {
  const out = [];
  for (let day = new Date(`${from}T03:30:00.000Z`); day <= new Date(`${to}T03:30:00.000Z`); day = new Date(day.getTime() + 86_400_000)) {
    out.push({ name: day.toISOString().slice(0, 10), createdAt: day.toISOString() });
  }
  return out;
}

const kept = (set: Set<string>) => [...set].sort();

describe('backup retention', () => {
  test('nightly backups for two years keep 7 daily, 4 weekly and 6 monthly (14 in all, as the days overlap)', () => {
    const backups = nightly('2025-01-01', '2026-11-23');
    const keep = backupsToKeep(backups, DEFAULT_RETENTION, Date.parse('2026-11-23T04:00:00Z'));
    assert.deepEqual(kept(keep), [
      // monthly: the newest of June to October (November's is today's)
      '2026-06-30',
      '2026-07-31',
      '2026-08-31',
      '2026-09-30',
      '2026-10-31',
      // weekly: Sundays ending ISO weeks 45 and 46 (weeks 47 and 48 are covered by the daily ones)
      '2026-11-08',
      '2026-11-15',
      // daily: the last 7 days
      '2026-11-17',
      '2026-11-18',
      '2026-11-19',
      '2026-11-20',
      '2026-11-21',
      '2026-11-22',
      '2026-11-23',
    ]);
  });

  test('ISO weeks cross the new year: Monday 29 December 2025 belongs to week 1 of 2026', () => {
    const backups = ['2025-12-28', '2025-12-29', '2026-01-02'].map((day) => ({ name: day, createdAt: `${day}T12:00:00.000Z` }));
    const keep = backupsToKeep(backups, { daily: 0, weekly: 2, monthly: 0 }, Date.parse('2026-03-01T00:00:00Z'));
    assert.deepEqual(kept(keep), ['2025-12-28', '2026-01-02']);
  });

  test('every backup of the last 24 hours stays; older ones thin out to the newest of their day', () => {
    const times = ['2026-11-20T09:00:00Z', '2026-11-20T15:00:00Z', '2026-11-22T08:00:00Z', '2026-11-22T20:00:00Z', '2026-11-23T07:00:00Z'];
    const backups = times.map((at) => ({ name: at, createdAt: new Date(at).toISOString() }));
    const keep = backupsToKeep(backups, { daily: 7, weekly: 0, monthly: 0 }, Date.parse('2026-11-23T10:00:00Z'));
    // 11-22T20:00 and 11-23T07:00 are within 24 h; 11-22T08:00 is 26 h old and the day's newest is 20:00; 11-20: its newest.
    assert.deepEqual(kept(keep), ['2026-11-20T15:00:00Z', '2026-11-22T20:00:00Z', '2026-11-23T07:00:00Z']);
  });

  test('the newest backup is always kept, even by a policy of zeros and long after it was taken', () => {
    const backups = nightly('2020-01-01', '2020-01-05');
    assert.deepEqual(kept(backupsToKeep(backups, { daily: 0, weekly: 0, monthly: 0 }, Date.parse('2026-01-01T00:00:00Z'))), ['2020-01-05']);
    assert.deepEqual(kept(backupsToKeep([], DEFAULT_RETENTION)), []);
  });
});
