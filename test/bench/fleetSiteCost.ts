// What fleet sync costs the site box when it writes: the sync_seq triggers (migration 0017) on meter_days writes.
// A collection rewrites each meter's day row; here ROUNDS collections of METERS meters, each one transaction, in three
// modes: triggers dropped (the baseline, run before and after), triggers on but no batch carried the rows (a box not
// joined, or its fleet away: no re-stamping), and triggers on with every row carried by a batch between collections
// (the worst case: live sync as often as collection). Time and WAL bytes per collection (wal_autocheckpoint off, so the
// WAL file's growth is what the collections wrote). Prints figures; asserts nothing.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { closeDatabase, openDatabase } from '../../src/platform/db/client.ts';
import { encodeFlags, encodeValues, KWH_SCALE } from '../../src/metering/intervalCodec.ts';

const METERS = Number(process.env.BENCH_METERS ?? 500);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 60);

function run(mode: 'no triggers' | 'not carried' | 'carried every time' | 'carried every 5th'): { msPerCollection: number; walBytesPerCollection: number } {
  const withTriggers = mode !== 'no triggers';
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ems-bench-sync-'));
  const file = path.join(dir, 'ems.db');
  const db = openDatabase(file);
  const sqlite = db.sqlite;
  if (!withTriggers) for (const name of ['meter_days_sync_insert', 'meter_days_sync_update']) sqlite.exec(`DROP TRIGGER ${name}`);
  const insertMeter = sqlite.prepare("INSERT INTO meters (name, code, kind, created_at, updated_at) VALUES (?, ?, 'energy', '2026-01-01', '2026-01-01')");
  const ids: number[] = [];
  sqlite.transaction(() => {
    for (let m = 0; m < METERS; m++) ids.push(Number(insertMeter.run(`m${m}`, `c${m}`).lastInsertRowid));
  })();
  const upsert = sqlite.prepare(
    `INSERT INTO meter_days (meter_id, day, kwh, flags, total_kwh, cost, carbon_kg) VALUES (?, '2026-11-26', ?, ?, ?, 0, 0)
     ON CONFLICT (day, meter_id) DO UPDATE SET kwh = excluded.kwh, flags = excluded.flags, total_kwh = excluded.total_kwh, cost = excluded.cost`,
  );
  const flags = encodeFlags(new Uint8Array(96));
  const values = new Float64Array(96).fill(Number.NaN);
  // As the sync job does when it builds a batch: everything stamped so far has been carried.
  const markCarried = sqlite.prepare('UPDATE sync_sequence SET sent_through = value WHERE id = 1');
  const collect = (round: number) =>
    sqlite.transaction(() => {
      if (mode === 'carried every time' || (mode === 'carried every 5th' && round % 5 === 0)) markCarried.run();
      values[Math.floor(round / 15) % 96] = round * 0.01;
      const blob = encodeValues(values, KWH_SCALE);
      for (const id of ids) upsert.run(id, blob, flags, round * 0.01);
    })();
  collect(0);
  sqlite.pragma('wal_checkpoint(TRUNCATE)');
  sqlite.pragma('wal_autocheckpoint = 0');
  const started = performance.now();
  for (let round = 1; round <= ROUNDS; round++) collect(round);
  const ms = performance.now() - started;
  const wal = fs.statSync(`${file}-wal`).size;
  closeDatabase(db);
  fs.rmSync(dir, { recursive: true, force: true });
  return { msPerCollection: +(ms / ROUNDS).toFixed(2), walBytesPerCollection: Math.round(wal / ROUNDS) };
}

const without = run('no triggers');
const notCarried = run('not carried');
const withSync = run('carried every time');
const everyFifth = run('carried every 5th');
const again = run('no triggers');
console.log(
  JSON.stringify({
    meters: METERS,
    collections: ROUNDS,
    withoutTriggers: without,
    notJoinedOrFleetAway: notCarried,
    liveSyncEveryCollection: withSync,
    liveSyncEvery5thCollection: everyFifth,
    withoutTriggersAgain: again,
    timeRatio: +(withSync.msPerCollection / ((without.msPerCollection + again.msPerCollection) / 2)).toFixed(2),
    walRatio: +(withSync.walBytesPerCollection / ((without.walBytesPerCollection + again.walBytesPerCollection) / 2)).toFixed(2),
    walMiBPerDayAtOneCollectionPerMinute: +((withSync.walBytesPerCollection * 1440) / 1048576).toFixed(1),
    extraWalMiBPerDay: +(((withSync.walBytesPerCollection - (without.walBytesPerCollection + again.walBytesPerCollection) / 2) * 1440) / 1048576).toFixed(1),
    extraWalMiBPerDaySyncEvery5Min: +(
      ((everyFifth.walBytesPerCollection - (without.walBytesPerCollection + again.walBytesPerCollection) / 2) * 1440) /
      1048576
    ).toFixed(1),
    extraWalMiBPerDayNotJoined: +(
      ((notCarried.walBytesPerCollection - (without.walBytesPerCollection + again.walBytesPerCollection) / 2) * 1440) /
      1048576
    ).toFixed(1),
  }),
);
