// What the month rollups of whole days (issue 44) save per 15-minute write: the WAL bytes one write of today's day
// rows of 500 meters appends, with the month rows moved by every write (before: a store with no meter_fold row) and
// with today open (now: after the collector's fold), on the same store in the same run. Also the fold itself (once a
// day) and the first fold after the upgrade. `node --import tsx test/bench/monthFold.ts` (BENCH_FOLD_METERS, default 500).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AuditLog } from '../../src/platform/db/auditTrail.ts';
import { closeDatabase, databasePath, openDatabase } from '../../src/platform/db/client.ts';
import { buildEnergy } from '../../src/energy/module.ts';
import { addDays } from '../../src/platform/time/calendar.ts';

const METERS = Number(process.env.BENCH_FOLD_METERS ?? 500);
const DAYS = 20;
const TODAY = addDays('2026-03-01', DAYS - 1);
const WRITES = 8;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ems-bench-fold-'));
const db = openDatabase(databasePath(dir), { autoCheckpoint: false });
const energy = buildEnergy(db, new AuditLog(db));
const ids: number[] = [];
db.sqlite.transaction(() => {
  for (let m = 0; m < METERS; m += 1) ids.push(energy.meters.create({ name: `M${m}`, code: `meter.b${m}.kwh`, kind: 'energy', area: `A${m % 8}` }, null).id);
})();
// DAYS days, today up to its interval `upTo`: what the store holds at a 15-minute write of today.
const write = (day: string, upTo: number) =>
  energy.store.transaction(() => {
    for (const [m, id] of ids.entries()) {
      const record = energy.store.load(id, day);
      for (let i = 0; i < upTo; i += 1) record.kwh[i] = 0.2 + (m % 13) * 0.01 + ((i * 7 + m) % 11) * 0.003;
      energy.store.save([record]);
    }
  });
for (let d = 0; d < DAYS - 1; d += 1) write(addDays('2026-03-01', d), 96);
write(TODAY, 40);
const walBytes = () => fs.statSync(`${databasePath(dir)}-wal`).size;
/** WAL bytes of each of WRITES 15-minute writes of today, the WAL emptied before each. */
const perWrite = (from: number): number[] =>
  Array.from({ length: WRITES }, (_, k) => {
    db.sqlite.pragma('wal_checkpoint(TRUNCATE)');
    write(TODAY, from + k);
    return walBytes();
  });
const mean = (values: number[]) => values.reduce((sum, v) => sum + v, 0) / values.length;
const KiB = 1024;
const MiB = 1024 * 1024;

const before = perWrite(41);
db.sqlite.pragma('wal_checkpoint(TRUNCATE)');
let started = performance.now();
energy.store.foldBefore(TODAY);
const firstFoldMs = performance.now() - started;
const firstFoldBytes = walBytes();
const now = perWrite(41 + WRITES);
// The day is done: the fold adds it to its month (once a day).
db.sqlite.pragma('wal_checkpoint(TRUNCATE)');
started = performance.now();
energy.store.foldBefore(addDays(TODAY, 1));
const foldMs = performance.now() - started;
const foldBytes = walBytes();

const b = mean(before);
const n = mean(now);
console.log(`month rollups of whole days, ${METERS} meters, ${DAYS} days stored, WAL bytes of one 15-minute write of today (mean of ${WRITES})`);
console.log(`  before (months moved by every write): ${(b / KiB).toFixed(1)} KiB a write = ${((b * 96) / MiB).toFixed(2)} MiB/day of WAL`);
console.log(
  `  now (today open, folded once a day):  ${(n / KiB).toFixed(1)} KiB a write = ${((n * 96) / MiB).toFixed(2)} MiB/day of WAL (ratio ${(n / b).toFixed(2)})`,
);
console.log(
  `  the daily fold: ${(foldBytes / KiB).toFixed(1)} KiB of WAL, ${foldMs.toFixed(1)} ms; the first fold after the upgrade: ${(firstFoldBytes / KiB).toFixed(1)} KiB, ${firstFoldMs.toFixed(1)} ms`,
);
console.log('  (the checkpoint copies each WAL page into the database once more: the disk bytes are about twice the WAL bytes)');
closeDatabase(db);
fs.rmSync(dir, { recursive: true, force: true });
