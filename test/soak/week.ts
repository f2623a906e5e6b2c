// `npm run soak`: a simulated week of faults in about an hour (test/soak/soak.ts), synced to a fleet throughout.
// SOAK_DAYS (7), SOAK_SPEED (168), SOAK_SEED (56), SOAK_COLLECT_SEC (60) change it; SOAK_FLEET=off leaves the fleet out. Prints each event, then the summary table; exits 1 on any failure.
import Database from 'better-sqlite3';
import path from 'node:path';
import { checkIntervals, runSoak } from './soak.ts';

// SOAK_RECHECK=<data dir of a run>: the interval check alone, again, on what a run left (SOAK_DAYS days from its start).
if (process.env.SOAK_RECHECK) {
  const db = new Database(path.join(process.env.SOAK_RECHECK, 'ems.db'), { readonly: true });
  const start = Date.parse('2026-11-02T00:00:00Z');
  const failures: string[] = [];
  const counts = checkIntervals(db, start, start + Number(process.env.SOAK_DAYS ?? 7) * 86_400_000, (text) => failures.push(text));
  for (const [day, row] of counts) console.log(day, JSON.stringify(row));
  for (const failure of failures) console.log(`- ${failure}`);
  process.exit(failures.length ? 1 : 0);
}

const days = Number(process.env.SOAK_DAYS ?? 7);
const speed = Number(process.env.SOAK_SPEED ?? 168);
const result = await runSoak({
  days,
  speed,
  seed: Number(process.env.SOAK_SEED ?? 56),
  collectSec: Number(process.env.SOAK_COLLECT_SEC ?? 60),
  fleet: process.env.SOAK_FLEET !== 'off',
  log: (line) => console.log(line),
});
console.log(`\n${days} simulated day(s) at ×${speed} in ${Math.round(result.wallSec / 60)} min ${result.wallSec % 60} s of wall time\n`);
console.log(result.table);
if (result.failures.length) {
  console.log(`\n${result.failures.length} failure(s):`);
  for (const failure of result.failures) console.log(`- ${failure}`);
  process.exitCode = 1;
} else console.log('\nAll checks passed.');
if (result.fleet) console.log(`the fleet equal to the box on ${result.fleet.completeDays} complete meter days, ${result.fleet.intervals} intervals`);
console.log(`data dir: ${result.dataDir}; calls sent again after a 408 or a closed socket: ${result.resent}`);
