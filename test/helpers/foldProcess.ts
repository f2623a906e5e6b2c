// A child process for the fold's power-cut tests (test/metering/monthFold.test.ts): opens the database file the test
// made and folds the month rollups up to a day, then waits to be killed. `hold`: the fold runs inside an open
// transaction that is never committed (a kill there is a power cut after the fold's last write, before its commit);
// `run`: the fold commits as the collector's does, and the kill lands wherever the test's timer puts it.
import { AuditLog } from '../../src/platform/db/auditTrail.ts';
import { openDatabase } from '../../src/platform/db/client.ts';
import { buildEnergy } from '../../src/energy/module.ts';

const [file, mode, today] = process.argv.slice(2);
const db = openDatabase(file);
const energy = buildEnergy(db, new AuditLog(db));
process.stdout.write('folding\n');
if (mode === 'hold') {
  db.sqlite.exec('BEGIN IMMEDIATE');
  energy.store.foldBefore(today);
  process.stdout.write('written, not committed\n');
} else {
  const started = performance.now();
  energy.store.foldBefore(today);
  process.stdout.write(`committed\n${Math.round(performance.now() - started)} ms\n`);
}
setInterval(() => {}, 60_000);
