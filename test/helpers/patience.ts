// How long a test may wait for something on this machine: deadlines scale with the load, so a busy box is slow, not red.
import os from 'node:os';

/**
 * How much longer than on an idle machine a wait may take: the 1-minute load per core (at least 1, at most 10), or
 * EMS_TEST_PATIENCE when set. A deadline is only there to stop a broken test from hanging, so it scales with the load.
 */
export function patience(): number {
  const set = Number(process.env.EMS_TEST_PATIENCE);
  if (Number.isFinite(set) && set > 0) return set;
  return Math.min(10, Math.max(1, os.loadavg()[0] / os.cpus().length));
}
