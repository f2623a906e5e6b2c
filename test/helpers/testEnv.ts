// The service's environment for a test, in a module that loads nothing of the app: an in-process server
// (`testConfig` in server.ts) and a service a test spawns (`spawnService(dataDir, testEnv(dataDir, …))`) start from the
// same settings. `test/structure/testDatabases.test.ts` fails a test that writes them out again.

/**
 * The data dir, port 0 on 127.0.0.1, `info` logs; gateway alarms are not polled and meters not collected unless a test
 * asks (`env` overrides): the simulator's alarms would otherwise appear among its alerts, and its building's meters
 * would replace the area cards a test sets.
 */
export function testEnv(dataDir: string, env: Record<string, string> = {}): Record<string, string> {
  return {
    EMS_DATA_DIR: dataDir,
    EMS_PORT: '0',
    EMS_HOST: '127.0.0.1',
    EMS_LOG_LEVEL: 'info',
    EMS_ALARM_POLL_INTERVAL: 'off',
    EMS_COLLECT_INTERVAL: 'off',
    ...env,
  };
}

/**
 * The collection and the alarm poll at the service's own defaults (installer/ems.env; `testDatabases.test.ts` checks
 * they are): for a spawned service whose test needs them running (`spawnService(dataDir, { ...LOOPS_AS_INSTALLED, … })`).
 */
export const LOOPS_AS_INSTALLED: Record<string, string> = { EMS_COLLECT_INTERVAL: '60s', EMS_ALARM_POLL_INTERVAL: '15s' };
