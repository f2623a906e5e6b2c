// Issue 44: which write of today's energy reaches ≤ 10 MiB/day at 500 meters. The WAL bytes a day of each design
// appends, on the same store (migrations as shipped, 500 meters, 20 days stored, month rollups of whole days), in one
// run: the baseline is the 15-minute write of every meter's today row (the write before this hourly one).
//   rows every 15 min  – today's rows and the meter states, 96 writes a day (before)
//   rows hourly        – the same write 24 times a day (now: EDGE_WRITE_MS)
//   appended records   – the design the last round named: each 15-minute interval as a record per meter (key day,
//                        interval, meter; kWh, demand, flags, cost, carbon), the open interval's record rewritten at
//                        the next write, and the meter states; 96 writes a day, folded into the day rows once a day
// WAL bytes only: the checkpoint copies each page once more (at most doubling any figure). Prints; asserts nothing.
// `node --import tsx test/bench/writeDesigns.ts` (BENCH_WRITE_METERS, default 500).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AuditLog } from '../../src/platform/db/auditTrail.ts';
import { closeDatabase, databasePath, openDatabase } from '../../src/platform/db/client.ts';
import { buildEnergy } from '../../src/energy/module.ts';
import { addDays } from '../../src/platform/time/calendar.ts';

const METERS = Number(process.env.BENCH_WRITE_METERS ?? 500);
const DAYS = 20;
const TODAY = addDays('2026-03-01', DAYS - 1);
const SAMPLES = 8;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ems-bench-writes-'));
const db = openDatabase(databasePath(dir), { autoCheckpoint: false });
const sqlite = db.sqlite;
const energy = buildEnergy(db, new AuditLog(db));
const ids: number[] = [];
sqlite.transaction(() => {
  for (let m = 0; m < METERS; m += 1) ids.push(energy.meters.create({ name: `M${m}`, code: `meter.b${m}.kwh`, kind: 'energy', area: `A${m % 8}` }, null).id);
})();
const value = (m: number, i: number) => 0.2 + (m % 13) * 0.01 + ((i * 7 + m) % 11) * 0.003;
/** Every meter's row of `day` holding its intervals before `upTo`, as the collector's write stores it. */
const writeRows = (day: string, upTo: number) => {
  for (const [m, id] of ids.entries()) {
    const record = energy.store.load(id, day);
    for (let i = 0; i < upTo; i += 1) record.kwh[i] = value(m, i);
    energy.store.save([record]);
  }
};
for (let d = 0; d < DAYS - 1; d += 1) energy.store.transaction(() => writeRows(addDays('2026-03-01', d), 96));
energy.store.transaction(() => writeRows(TODAY, 48));
energy.store.foldBefore(TODAY);
// raw SQL: the meter states' upsert, as the collector writes it
const upsertState = sqlite.prepare(
  `INSERT INTO meter_state (meter_id, last_at, last_value, demand_kw) VALUES (?, ?, ?, ?)
   ON CONFLICT (meter_id) DO UPDATE SET last_at = excluded.last_at, last_value = excluded.last_value, demand_kw = excluded.demand_kw`,
);
let clock = 1.7e12;
const writeStates = () => {
  clock += 900_000;
  for (const [m, id] of ids.entries()) upsertState.run(id, clock, clock / 1e6 + m, 1.234 + m);
};
sqlite.transaction(writeStates)();
// The appended records (a bench-only table: the design was measured, not built).
sqlite.exec(`CREATE TABLE bench_interval_records (day TEXT NOT NULL, idx INTEGER NOT NULL, meter_id INTEGER NOT NULL, kwh INTEGER,
  max_w INTEGER, flags INTEGER NOT NULL DEFAULT 0, cost REAL NOT NULL, carbon_kg REAL NOT NULL, PRIMARY KEY (day, idx, meter_id)) WITHOUT ROWID`);
// raw SQL: a record per meter and interval, the open interval's rewritten (ON CONFLICT … excluded)
const upsertRecord = sqlite.prepare(
  `INSERT INTO bench_interval_records (day, idx, meter_id, kwh, flags, cost, carbon_kg) VALUES (?, ?, ?, ?, 0, ?, ?)
   ON CONFLICT DO UPDATE SET kwh = excluded.kwh, cost = excluded.cost, carbon_kg = excluded.carbon_kg`,
);
sqlite.transaction(() => {
  for (let i = 0; i < 48; i += 1)
    for (const [m, id] of ids.entries()) upsertRecord.run(TODAY, i, id, Math.round(value(m, i) * 1e4), value(m, i) * 0.3, value(m, i) * 0.2);
})();

const walBytes = () => fs.statSync(`${databasePath(dir)}-wal`).size;
/** Mean WAL bytes of one write, SAMPLES writes from interval `from` on, the WAL emptied before each. */
const perWrite = (write: (interval: number) => void, from: number): number => {
  let sum = 0;
  for (let k = 0; k < SAMPLES; k += 1) {
    sqlite.pragma('wal_checkpoint(TRUNCATE)');
    energy.store.transaction(() => write(from + k));
    sum += walBytes();
  }
  return sum / SAMPLES;
};
const rows = perWrite((interval) => {
  writeStates();
  writeRows(TODAY, interval + 1);
}, 48);
const records = perWrite((interval) => {
  writeStates();
  for (const [m, id] of ids.entries()) {
    upsertRecord.run(TODAY, interval, id, Math.round(value(m, interval) * 1e4), value(m, interval) * 0.3, value(m, interval) * 0.2);
    upsertRecord.run(TODAY, interval + 1, id, Math.round(value(m, interval) * 1e3), value(m, interval) * 0.03, value(m, interval) * 0.02);
  }
}, 48);
const states = perWrite(() => writeStates(), 0);
// The records' daily fold: the day's records deleted once their day rows are written (the rows' write counted above).
sqlite.pragma('wal_checkpoint(TRUNCATE)');
sqlite.transaction(() => sqlite.prepare('DELETE FROM bench_interval_records WHERE day = ?').run(TODAY))();
const recordsDrop = walBytes();

const MiB = 1024 * 1024;
const day = (bytes: number) => bytes / MiB;
const baseline = 96 * rows;
const designs = [
  { name: 'rows every 15 min (before)', perDay: baseline, note: `96 × ${(rows / 1024).toFixed(1)} KiB` },
  { name: 'rows hourly (now)', perDay: 24 * rows, note: `24 × ${(rows / 1024).toFixed(1)} KiB` },
  {
    name: 'appended records',
    perDay: 96 * records + rows + recordsDrop,
    note: `96 × ${(records / 1024).toFixed(1)} KiB + the daily fold (${(rows / 1024).toFixed(1)} KiB of rows, ${(recordsDrop / 1024).toFixed(1)} KiB to drop the records)`,
  },
];
console.log(`write designs, ${METERS} meters, ${DAYS} days stored: WAL MiB a day (mean of ${SAMPLES} writes at midday), ratio to the 15-minute rows`);
for (const design of designs)
  console.log(
    `  ${design.name.padEnd(28)} ${day(design.perDay).toFixed(2).padStart(6)} MiB/day  ratio ${(design.perDay / baseline).toFixed(2)}  (${design.note})`,
  );
console.log(`  of which the meter states alone: ${(states / 1024).toFixed(1)} KiB a write`);
console.log('  (the checkpoint copies each WAL page into the database once more: disk bytes ≤ twice these)');
closeDatabase(db);
fs.rmSync(dir, { recursive: true, force: true });
