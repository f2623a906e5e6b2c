// Child: bcrypt's ceiling on this machine right now (cost 10, libuv's pool on every core, nothing else running).
// Prints {"hashesPerSec","cpuMsEach"}: the physical limit the login scenario is read against.
import os from 'node:os';
import bcrypt from 'bcrypt';
import { BCRYPT_COST, DUMMY_HASH } from '../../src/access/auth/passwords.ts';

const seconds = Number(process.argv[2] ?? 5);
const parallel = 2 * os.availableParallelism();
let done = 0;
const cpu = process.cpuUsage();
const started = performance.now();
const deadline = started + seconds * 1000;
await Promise.all(
  Array.from({ length: parallel }, async () => {
    while (performance.now() < deadline) {
      await bcrypt.compare('not-the-password', DUMMY_HASH);
      done++;
    }
  }),
);
const elapsed = (performance.now() - started) / 1000;
const used = process.cpuUsage(cpu);
process.stdout.write(
  `${JSON.stringify({ cost: BCRYPT_COST, hashesPerSec: Math.round((done / elapsed) * 10) / 10, cpuMsEach: Math.round((used.user + used.system) / done / 100) / 10 })}\n`,
);
