// A write prices every day row with the tariff versions. They are read once before its transaction, not once per row:
// a cache is not filled inside a transaction (src/platform/db/kept.ts), and the collector's 15-minute write of 500 day rows read
// every version 500 times, a 62–117 ms block of the event loop (issue 29, bench:edge's collector blocks).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AuditLog } from '../../src/platform/db/auditTrail.ts';
import type { Kept } from '../../src/platform/db/kept.ts';
import { addDays, dayIntervals, siteDay } from '../../src/platform/time/calendar.ts';
import { buildEnergy } from '../../src/energy/module.ts';
import { TimeZoneMove } from '../../src/metering/rezone.ts';
import { outdoorDaysZoneKeyed } from '../../src/analysis/weather.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { testDatabase } from '../helpers/database.ts';

test('a store transaction reads the tariff versions once, however many day rows it prices', () => {
  const db = testDatabase();
  const energy = buildEnergy(db, new AuditLog(db));
  const ids = Array.from({ length: 40 }, (_, i) => energy.meters.create({ name: `Tenant ${i}`, code: `meter.t${i}.kwh`, kind: 'energy' }, null).id);
  const versions = (energy.tariffs as unknown as { versions: Kept<unknown> }).versions;
  const timezone = energy.timezone();
  const day = addDays(siteDay(timezone, new Date()), -2);
  const { start, count } = dayIntervals(timezone, day);
  const rows = () =>
    ids.map((meterId) => ({
      meterId,
      day,
      start,
      kwh: Float32Array.from({ length: count }, () => 1.25),
      flags: new Uint8Array(count),
      maxKw: null,
      stored: null,
    }));

  for (const [n, round] of ['first write', 'after a tariff change'].entries()) {
    const misses = versions.stats.misses;
    energy.store.transaction(() => energy.store.save(rows()));
    assert.equal(versions.stats.misses - misses, 1, `${round}: the versions were read once for ${ids.length} rows`);
    // A new version drops the cache (written on this connection): the next write reads them again, once.
    energy.tariffs.create({ validFrom: addDays(siteDay(timezone, new Date()), 30 + n), price: 0.3, carbonFactor: 0.2 }, { id: null, username: 'tester' });
  }
  // The rows were priced: 40 × 96 intervals of 1.25 kWh at the seeded tariff.
  const priced = db.sqlite.prepare('SELECT count(*) AS n, sum(total_kwh) AS kwh FROM meter_days WHERE day = ? AND cost > 0').get(day) as {
    n: number;
    kwh: number;
  };
  assert.equal(priced.n, ids.length);
  assert.ok(Math.abs(priced.kwh - ids.length * count * 1.25) < 0.01, `${priced.kwh} kWh`);
});

test('a time-zone move reads the tariff versions once, not once per day row it prices again', async () => {
  const db = testDatabase();
  const energy = buildEnergy(db, new AuditLog(db));
  const ids = Array.from({ length: 4 }, (_, i) => energy.meters.create({ name: `Tenant ${i}`, code: `meter.m${i}.kwh`, kind: 'energy' }, null).id);
  let zone = energy.timezone();
  const today = siteDay(zone, new Date());
  for (let back = 1; back <= 20; back += 1) {
    const day = addDays(today, -back);
    const { start, count } = dayIntervals(zone, day);
    energy.store.transaction(() =>
      energy.store.save(
        ids.map((meterId) => ({
          meterId,
          day,
          start,
          kwh: Float32Array.from({ length: count }, () => 1),
          flags: new Uint8Array(count),
          maxKw: null,
          stored: null,
        })),
      ),
    );
  }
  // A new version drops the cache, as any tariff change before a move would.
  energy.tariffs.create({ validFrom: addDays(today, 30), price: 0.3, carbonFactor: 0.2 }, { id: null, username: 'tester' });
  const versions = (energy.tariffs as unknown as { versions: Kept<unknown> }).versions;
  const misses = versions.stats.misses;
  const move = new TimeZoneMove({ db, store: energy.store, timezone: () => zone, logger: createLogger('silent'), zoneKeyed: outdoorDaysZoneKeyed(db) });
  const from = zone;
  await move.change(() => {
    zone = from === 'America/New_York' ? 'Europe/Berlin' : 'America/New_York';
  });
  assert.ok((db.sqlite.prepare('SELECT count(*) FROM meter_days').pluck().get() as number) >= ids.length * 20, 'the days were moved');
  assert.equal(versions.stats.misses - misses, 1, `the versions were read once for ${ids.length} meters × 20 days`);
});
