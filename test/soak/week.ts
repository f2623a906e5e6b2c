// `npm run soak`: a simulated week of faults in about an hour (test/soak/soak.ts). SOAK_DAYS (7), SOAK_SPEED (168),
// SOAK_SEED (56), SOAK_COLLECT_SEC (60) change it. Prints each event, then the summary table; exits 1 on any failure.
import { runSoak } from './soak.ts';

const days = Number(process.env.SOAK_DAYS ?? 7);
const speed = Number(process.env.SOAK_SPEED ?? 168);
const result = await runSoak({
  days,
  speed,
  seed: Number(process.env.SOAK_SEED ?? 56),
  collectSec: Number(process.env.SOAK_COLLECT_SEC ?? 60),
  log: (line) => console.log(line),
});
console.log(`\n${days} simulated day(s) at ×${speed} in ${Math.round(result.wallSec / 60)} min ${result.wallSec % 60} s of wall time\n`);
console.log(result.table);
if (result.failures.length) {
  console.log(`\n${result.failures.length} failure(s):`);
  for (const failure of result.failures) console.log(`- ${failure}`);
  process.exitCode = 1;
} else console.log('\nAll checks passed.');
console.log(`data dir: ${result.dataDir}; calls sent again after a 408 or a closed socket: ${result.resent}`);
