// Interval data for the benchmarks, in one place (energy, edge, edgeTasks, analysis, exports and scale seeded it each
// their own way): the site's meters as the built-in simulator names them, days written through the real interval
// store, and a fast path for years of many meters that copies stored days with SQL instead of encoding each again.
import { AuditLog } from '../../src/platform/db/auditTrail.ts';
import { closeDatabase, databasePath, openDatabase, type Db } from '../../src/platform/db/client.ts';
import { addDays, dayIntervals } from '../../src/platform/time/calendar.ts';
import { buildEnergy, type Energy } from '../../src/energy/module.ts';

export type Seeded = { db: Db; energy: Energy; close(): void };

/** The data dir's database with the energy module on it (migrated); close() checkpoints and closes. */
export function openSeeding(dataDir: string): Seeded {
  const db = openDatabase(databasePath(dataDir));
  const energy = buildEnergy(db, new AuditLog(db));
  return { db, energy, close: () => closeDatabase(db) };
}

/** The built-in simulator's counters in its order: the main incomer, three named sub-meters, then tenants. */
const NAMED_SUBS = ['meter.hvac.kwh', 'meter.lighting.kwh', 'meter.it.kwh'];
export function simulatorMeterCode(n: number): string {
  if (n === 0) return 'meter.main.kwh';
  return n <= NAMED_SUBS.length ? NAMED_SUBS[n - 1] : `meter.sub.${String(n - NAMED_SUBS.length).padStart(3, '0')}.kwh`;
}

/**
 * The main incomer (the site meter) and `count - 1` sub-meters in `areas` areas, with the codes of the built-in
 * simulator (src/gateway/simulator/building.ts), so a service started with EMS_SIM_METERS=count-1 collects into them.
 */
export function createSiteMeters({ db, energy }: Seeded, count: number, options: { areas?: number } = {}): number[] {
  const areas = options.areas ?? 10;
  const ids: number[] = [];
  db.sqlite.transaction(() => {
    ids.push(energy.meters.create({ name: 'Main incomer', code: simulatorMeterCode(0), kind: 'energy', site: true }, null).id);
    for (let n = 1; n < count; n += 1)
      ids.push(energy.meters.create({ name: `Meter ${n}`, code: simulatorMeterCode(n), kind: 'energy', area: `Area ${(n % areas) + 1}` }, null).id);
  })();
  return ids;
}

/** The benches' load: a daily curve per meter (the main incomer larger), with 5 % noise unless `noise` is 0. */
export function dailyCurve(m: number, count: number, noise = 0.05): Float64Array {
  const kwh = new Float64Array(count);
  for (let i = 0; i < count; i += 1)
    kwh[i] = (m === 0 ? 45 : 0.5 + (m % 7)) * (1 + 0.3 * Math.sin((i / count) * 2 * Math.PI + m)) * (1 + noise * Math.random());
  return kwh;
}

/**
 * Days `from` (inclusive) to `to` (exclusive) of every meter through the interval store (encoding, prices, rollups),
 * one transaction a day, UTC days. Answers the intervals written.
 */
export function seedDays(
  { db, energy }: Seeded,
  ids: number[],
  from: string,
  to: string,
  curve: (m: number, count: number) => ArrayLike<number> = dailyCurve,
): number {
  let intervals = 0;
  for (let day = from; day < to; day = addDays(day, 1)) {
    const { start, count } = dayIntervals('UTC', day);
    db.sqlite.transaction(() => {
      energy.store.save(
        ids.map((meterId, m) => {
          intervals += count;
          return { meterId, day, start, kwh: Float64Array.from(curve(m, count)), flags: new Uint8Array(count), maxKw: null, stored: null };
        }),
      );
    })();
  }
  return intervals;
}

/**
 * Years of many meters fast: the week before `to` is written through the store, every earlier day from `from` is a
 * copy of the stored day of that week with the same weekday (INSERT … SELECT, 60 days a transaction), and the month
 * rollups are summed from the days. Same encoding, same columns as the store writes; the figures repeat weekly.
 */
export function seedDaysFast(seeded: Seeded, ids: number[], from: string, to: string): { days: number; rows: number } {
  const { db } = seeded;
  const week = addDays(to, -7);
  seedDays(seeded, ids, week < from ? from : week, to);
  const copy = db.sqlite.prepare(
    `INSERT OR REPLACE INTO meter_days (meter_id, day, kwh, flags, max_kw, total_kwh, cost, carbon_kg, peak_kw, peak_index)
     SELECT meter_id, ?, kwh, flags, max_kw, total_kwh, cost, carbon_kg, peak_kw, peak_index FROM meter_days WHERE day = ?`,
  );
  let days = 0;
  let rows = 0;
  const pending: string[] = [];
  const flush = db.sqlite.transaction((list: string[]) => {
    for (const day of list) {
      // The same weekday of the template week (whole weeks apart).
      const back = Math.round((Date.parse(week) - Date.parse(day)) / 86_400_000);
      const template = addDays(week, (7 - (back % 7)) % 7);
      rows += copy.run(day, template).changes;
      days += 1;
    }
  });
  for (let day = from; day < week; day = addDays(day, 1)) {
    pending.push(day);
    if (pending.length === 60) flush(pending.splice(0));
  }
  if (pending.length) flush(pending.splice(0));
  db.sqlite.transaction(() => {
    db.sqlite.exec('DELETE FROM meter_months');
    // The month's peak: SQLite takes the bare columns of an aggregate with max() from the row of the max.
    db.sqlite.exec(
      `INSERT INTO meter_months (meter_id, month, total_kwh, cost, carbon_kg, peak_kw, peak_at)
       SELECT meter_id, substr(day, 1, 7), sum(total_kwh), sum(cost), sum(carbon_kg), max(peak_kw),
              CASE WHEN peak_index IS NULL THEN NULL ELSE unixepoch(day) * 1000 + peak_index * 900000 END
       FROM meter_days GROUP BY meter_id, substr(day, 1, 7)`,
    );
  })();
  return { days: days + 7, rows };
}
