// The soak's short run (issue 56; `npm run soak:day`, not yet in `npm test`: docs/hardening.md): one simulated day of the soak
// (test/soak/soak.ts) at ×1440, about 70 s of wall time: four gateway faults, two kill -9 restarts (the first with the
// clock 2 h ahead, the second 1 h back), backups, report runs, an import and billing runs; every interval stored once,
// estimated or marked missing against the simulator's counters, integrity_check, no crash in the log, RSS and disk
// writes bounded, every data alert cleared, the backups restorable. The week: `npm run soak`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import { patience } from '../helpers/patience.ts';
import { runSoak } from './soak.ts';

/**
 * A simulated day in 60 s of wall time on a quiet machine (the starts, the checks and the end's last collection come on
 * top), slower on a busy one: ×1440 / patience() (the 1-minute load per core, 1 to 10), at least ×360. At ×1440 a
 * second of the service's is 0.7 ms of wall time, so the servers' own time-outs (the built-in simulator's 20-second
 * header time-out: 14 ms) fire whenever the machine stalls a process that long: at load 17-25 here most collections
 * failed with a 408 from the simulator and the end's checks (alerts cleared, points restored) could not be reached.
 */
const SPEED = Math.max(360, Math.round(1440 / patience()));

test('a simulated day of gateway faults, kills and clock steps: every interval stored once or missing, nothing corrupt, alerts cleared', {
  timeout: 600_000,
}, async (t) => {
  const result = await runSoak({ days: 1, speed: SPEED, seed: 56, collectSec: 60, log: (line) => t.diagnostic(line) });
  // Kept when a check failed: the database and the services' log (service-log.jsonl) are what the failure is read from.
  t.after(() => (result.failures.length ? t.diagnostic(`data dir kept: ${result.dataDir}`) : fs.rmSync(result.dataDir, { recursive: true, force: true })));
  t.diagnostic(
    `×${SPEED} (load ${os.loadavg()[0].toFixed(1)} at the start); wall time ${result.wallSec} s; calls sent again after a 408 or a closed socket: ${result.resent}`,
  );
  for (const line of result.table.split('\n')) t.diagnostic(line);
  assert.deepEqual(result.failures, []);
  const [day] = result.rows;
  assert.equal(result.rows.length, 1);
  // The schedule of seed 56 puts faults and two kills on the day, and every job ran.
  assert.ok(day.kills === 2 && day.faults.split(', ').length >= 3, JSON.stringify(day));
  assert.ok(day.served > 0 && day.stored + day.estimated + day.missing === day.served && day.wrong === 0, JSON.stringify(day));
  assert.ok(day.alertsRaised > 0 && day.alertsCleared === day.alertsRaised, `data alerts raised and cleared: ${JSON.stringify(day)}`);
  assert.match(day.work, /^b[1-9] r[1-9] i[1-9] b[1-9]$/);
});
