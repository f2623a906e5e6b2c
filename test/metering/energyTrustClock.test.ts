// A real clock step: the service runs under libfaketime (/usr/bin/faketime's library), its clock moved a day ahead and
// back through a timestamp file while it collects from the built-in simulator (which stamps readings with the same,
// stepped clock). Afterwards no interval lies in the future and every meter counts on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { eventually, tempDir } from '../helpers/server.ts';
import { spawnService } from '../helpers/serviceProcess.ts';
import { testEnv } from '../helpers/testEnv.ts';
import { databasePath } from '../../src/platform/db/client.ts';

const LIBFAKETIME = [
  '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1',
  '/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1',
  '/usr/lib/faketime/libfaketime.so.1',
].find((file) => fs.existsSync(file));

test("the box's clock steps a day ahead and back: no future energy, no frozen meter", { timeout: 420_000 }, async (t) => {
  assert.ok(LIBFAKETIME, 'libfaketime is installed (test/setup/systemPackages.sh)');
  const dataDir = tempDir();
  const clockFile = path.join(dataDir, 'faketime');
  fs.writeFileSync(clockFile, '+0s\n');
  const service = await spawnService(
    dataDir,
    testEnv(dataDir, {
      EMS_COLLECT_INTERVAL: '1s',
      EMS_SIM_METERS: '2',
      LD_PRELOAD: LIBFAKETIME!,
      FAKETIME_TIMESTAMP_FILE: clockFile,
      FAKETIME_CACHE_DURATION: '1',
      // Timers run on the real monotonic clock: only the wall clock steps, as with an NTP correction.
      FAKETIME_DONT_FAKE_MONOTONIC: '1',
    }),
  );
  let stderr = '';
  service.child.stderr.on('data', (chunk) => (stderr += chunk));
  let exit: number | string | null = null;
  void service.exited.then((code) => (exit = code));
  const db = new Database(databasePath(dataDir), { readonly: true, fileMustExist: true });
  t.after(async () => {
    db.close();
    service.child.kill('SIGKILL');
    await service.exited;
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  const main = () =>
    db.prepare("SELECT s.last_at AS lastAt FROM meter_state s JOIN meters m ON m.id = s.meter_id WHERE m.code = 'meter.main.kwh'").get() as
      | { lastAt: number }
      | undefined;
  const lastDay = () => db.prepare('SELECT max(day) FROM meter_days').pluck().get() as string | null;
  const realToday = () => new Date().toISOString().slice(0, 10);
  const tomorrow = () => new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);

  await eventually(async () => main(), 'the first collection', 120_000);
  assert.ok(lastDay()! <= realToday());

  /** What the service saw, for a wait that gives up: its warnings and errors, the meters' states and the days written. */
  const seen = async (error: unknown): Promise<never> => {
    const health = await fetch(`${service.url}/api/health`)
      .then((response) => response.json())
      .catch((failure: Error) => `no answer: ${failure.message}`);
    const warnings = service
      .lines()
      .filter((line) => Number(line.level) >= 40)
      .slice(-15);
    const states = db.prepare('SELECT meter_id, last_at, last_value FROM meter_state').all();
    const days = db.prepare('SELECT day, count(*) AS rows FROM meter_days GROUP BY day ORDER BY day DESC LIMIT 3').all();
    throw new Error(
      `${(error as Error).message}; clock file ${fs.readFileSync(clockFile, 'utf8').trim()}, real today ${realToday()}; ` +
        `collector ${JSON.stringify((health as { collector?: unknown }).collector ?? health)}; meter states ${JSON.stringify(states)}; ` +
        `days ${JSON.stringify(days)}; last warnings ${JSON.stringify(warnings)}; last log lines ${JSON.stringify(service.lines().slice(-5))}; ` +
        `service ${exit === null ? 'running' : `exited (${exit})`}; stderr ${stderr.slice(-1500)}`,
    );
  };

  fs.writeFileSync(clockFile, '+1d\n');
  // Under the stepped clock the simulator's readings are tomorrow's: they are counted as such (the box cannot know).
  await eventually(async () => (lastDay() === tomorrow() ? true : undefined), "the stepped clock's day written", 150_000).catch(seen);

  fs.writeFileSync(clockFile, '+0s\n');
  await eventually(
    async () => (lastDay()! <= realToday() && (main()?.lastAt ?? 0) <= Date.now() + 5 * 60_000 ? true : undefined),
    'the future dropped',
    150_000,
  ).catch(seen);
  const dropped = await service.waitForLog('the clock stepped back: intervals after now dropped, meters ahead of it start again');
  assert.equal(dropped.steppedBack, true);
  // Not frozen: the main meter's last reading moves on with the real clock. The collector holds what it counts in memory
  // until the next 15-minute boundary (edge, issue #29); a graceful stop writes it, so the state is read after one.
  // A meter that was ahead starts again from its next reading: its state row is gone until that reading is written.
  const before = main()?.lastAt ?? 0;
  await new Promise((resolve) => setTimeout(resolve, 5_000));
  service.child.kill('SIGTERM');
  await service.exited;
  assert.ok((main()?.lastAt ?? 0) > before, 'the main meter counting on');
  const future = db.prepare('SELECT count(*) FROM meter_days WHERE day > ?').pluck().get(realToday()) as number;
  assert.equal(future, 0, 'no day row after today');
});
