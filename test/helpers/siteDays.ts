// A box's meter days the fleet acknowledged, read from the box's own SQLite, and the check that the fleet holds exactly
// them: every complete day's total, cost and carbon equal, every interval there with its value, none doubled or
// invented. The same comparison as test/fleet/siteSync.test.ts, shared by the failover drill.
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import type pg from 'pg';
import { storedFlags, storedKwh } from '../../src/metering/store.ts';
import { databasePath } from '../../src/platform/db/client.ts';
import { dayIntervals } from '../../src/platform/time/calendar.ts';

export type SiteDay = {
  meterId: number;
  day: string;
  totalKwh: number;
  cost: number;
  carbonKg: number;
  syncSeq: number;
  from: number;
  to: number;
  intervals: Map<number, number>;
};

/** The site's meter days the fleet has acknowledged (sequence up to the cursor), decoded, in one read snapshot. */
export function acknowledgedDays(dataDir: string): { cursor: number; days: SiteDay[]; unsent: number } {
  const db = new Database(databasePath(dataDir), { readonly: true, fileMustExist: true });
  try {
    return db.transaction(() => {
      const link = db.prepare('SELECT cursor FROM fleet_link WHERE id = 1').get() as { cursor: number } | undefined;
      const cursor = link?.cursor ?? 0;
      const timezone = (db.prepare('SELECT timezone FROM platform_config').get() as { timezone: string }).timezone;
      const rows = db
        .prepare(
          'SELECT meter_id AS meterId, day, kwh, flags, total_kwh AS totalKwh, cost, carbon_kg AS carbonKg, sync_seq AS syncSeq FROM meter_days WHERE sync_seq <= ?',
        )
        .all(cursor) as Array<Omit<SiteDay, 'intervals' | 'from' | 'to'> & { kwh: Buffer; flags: Buffer }>;
      const unsent = (db.prepare('SELECT count(*) AS n FROM meter_days WHERE sync_seq > ?').get(cursor) as { n: number }).n;
      const days = rows.map(({ kwh, flags, ...row }) => {
        const { start, count } = dayIntervals(timezone, row.day);
        const values = storedKwh(kwh);
        storedFlags(flags, kwh, count);
        const intervals = new Map<number, number>();
        for (let i = 0; i < Math.min(count, values.length); i++) if (!Number.isNaN(values[i]!)) intervals.set(start + i * 900_000, values[i]!);
        return { ...row, from: start, to: start + count * 900_000, intervals };
      });
      return { cursor, days, unsent };
    })();
  } finally {
    db.close();
  }
}

/** A day whose row the collector may still hold counting for (it writes hourly): the day of now, or one ended < 65 min ago. */
export function liveDay(day: SiteDay): boolean {
  return day.to > Date.now() - 65 * 60_000;
}

/**
 * Every acknowledged site day is at the fleet: a complete day with the same total, cost (to the cent and exactly),
 * carbon and intervals (no more, no fewer); a day the collector still holds with at least every interval of its row.
 */
export async function assertFleetHolds(sql: pg.Pool, siteId: string, days: SiteDay[]): Promise<{ completeDays: number; intervals: number }> {
  const fleetIntervals = await sql.query<{ meter_key: string; start: Date; value: number }>(
    'select meter_key, start, value from intervals where site_id = $1',
    [siteId],
  );
  const byKey = new Map(fleetIntervals.rows.map((r) => [`${r.meter_key}|${r.start.getTime()}`, r.value]));
  const rollups = await sql.query<{ meter_key: string; day: string; value: number; cost: number; carbon_kg: number }>(
    'select meter_key, day::text as day, value, cost, carbon_kg from day_rollups where site_id = $1',
    [siteId],
  );
  const rollupOf = new Map(rollups.rows.map((r) => [`${r.meter_key}|${r.day}`, r]));
  let compared = 0;
  let completeDays = 0;
  for (const day of days) {
    const rollup = rollupOf.get(`${day.meterId}|${day.day}`);
    assert.ok(rollup, `meter ${day.meterId} ${day.day} has its day rollup at the fleet`);
    const stored = fleetIntervals.rows.filter((r) => r.meter_key === String(day.meterId) && r.start.getTime() >= day.from && r.start.getTime() < day.to).length;
    if (liveDay(day)) {
      for (const start of day.intervals.keys())
        assert.ok(byKey.has(`${day.meterId}|${start}`), `meter ${day.meterId} interval ${new Date(start).toISOString()} at the fleet`);
      assert.ok(stored >= day.intervals.size, `meter ${day.meterId} ${day.day}: the fleet holds at least the row's intervals`);
      continue;
    }
    completeDays++;
    assert.equal(rollup.value, day.totalKwh, `meter ${day.meterId} ${day.day} total`);
    assert.equal(Math.round(rollup.cost * 100), Math.round(day.cost * 100), `meter ${day.meterId} ${day.day} cost to the cent`);
    assert.equal(rollup.cost, day.cost, `meter ${day.meterId} ${day.day} cost`);
    assert.equal(rollup.carbon_kg, day.carbonKg);
    for (const [start, value] of day.intervals) {
      assert.equal(byKey.get(`${day.meterId}|${start}`), value, `meter ${day.meterId} interval ${new Date(start).toISOString()}`);
      compared++;
    }
    assert.equal(stored, day.intervals.size, `meter ${day.meterId} ${day.day}: the fleet holds as many intervals as the site`);
  }
  return { completeDays, intervals: compared };
}
