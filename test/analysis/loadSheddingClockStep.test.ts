// A real clock step and a real crash (issue 39, items 1 and 2): the service runs under libfaketime 3 h ahead, a point is
// shed, the service is killed (kill -9) and started again on the real clock, with the collector off. The point it left
// shed is 3 h "in the future": the step is logged, the times clamped, and the point restored once its minimum off time
// has passed (counted on the monotonic clock), not 3 h later, and not only once a collection runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { databasePath } from '../../src/platform/db/client.ts';
import { INTERVAL_MS } from '../../src/platform/time/calendar.ts';
import { startBadGateway } from '../helpers/badGateway.ts';
import { eventually, tempDir } from '../helpers/server.ts';
import { signInAdmin, spawnService } from '../helpers/serviceProcess.ts';
import { testEnv } from '../helpers/testEnv.ts';

const LIBFAKETIME = [
  '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1',
  '/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1',
  '/usr/lib/faketime/libfaketime.so.1',
].find((file) => fs.existsSync(file));

const HOURS_3 = 3 * 3_600_000;

test('killed while a point is shed on a clock 3 h ahead, restarted on the real clock: restored after its minimum off time, the step logged', {
  timeout: 300_000,
}, async (t) => {
  assert.ok(LIBFAKETIME, 'libfaketime is installed (test/setup/systemPackages.sh)');
  const gateway = await startBadGateway();
  t.after(() => gateway.close());
  gateway.set('ahu1.run', { value: 1 });
  const dataDir = tempDir();
  t.after(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const clockFile = path.join(dataDir, 'faketime');
  fs.writeFileSync(clockFile, '+3h\n');
  const env = testEnv(dataDir, {
    EMS_IOT_BASE_URL: gateway.url,
    EMS_IOT_USERNAME: gateway.username,
    EMS_IOT_PASSWORD: gateway.password,
    LD_PRELOAD: LIBFAKETIME!,
    FAKETIME_TIMESTAMP_FILE: clockFile,
    FAKETIME_CACHE_DURATION: '1',
    // Timers run on the real monotonic clock: only the wall clock steps, as with an NTP correction.
    FAKETIME_DONT_FAKE_MONOTONIC: '1',
  });

  const first = await spawnService(dataDir, env);
  t.after(() => first.child.kill('SIGKILL'));
  const token = await signInAdmin(first.url, dataDir);
  const put = await fetch(`${first.url}/api/analysis/load-shedding`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ enabled: true, minOffSec: 10, maxShedSec: 3600, points: [{ code: 'ahu1.run', priority: 1, shedValue: 0, restoreValue: 1 }] }),
  });
  assert.equal(put.status, 200, await put.text());
  // Shed as this run leaves it: the gateway holds the shed value, the row its shed time on the run's (3 h ahead) clock.
  const shedAt = Date.now() + HOURS_3;
  const db = new Database(databasePath(dataDir));
  db.prepare("UPDATE load_shed_points SET shed_at = ?, shed_window = ? WHERE code = 'ahu1.run'").run(shedAt, Math.floor(shedAt / INTERVAL_MS) * INTERVAL_MS);
  db.close();
  gateway.set('ahu1.run', { value: 0 });
  first.child.kill('SIGKILL');
  await first.exited;
  assert.equal(gateway.points.get('ahu1.run')?.value, 0, 'a crash restores nothing');

  fs.writeFileSync(clockFile, '+0s\n');
  const second = await spawnService(dataDir, env);
  const restartedAt = Date.now();
  t.after(() => second.child.kill('SIGKILL'));
  await eventually(async () => (gateway.points.get('ahu1.run')?.value === 1 ? true : undefined), 'ahu1.run restored after the restart', 120_000);
  const took = Date.now() - restartedAt;
  const restored = await second.waitForLog('load restored');
  assert.equal(restored.reason, 'left shed by an earlier run of the service');
  const lines = second.lines();
  const left = lines.find((line) => line.msg === 'load shedding: points left shed by an earlier run are restored once their minimum off time has passed');
  assert.ok(left, 'the points left shed are logged at start');
  const step = lines.find((line) => line.msg === 'the clock stepped back: load-shedding times ahead of now clamped to now');
  assert.ok(step, 'the clock step is logged');
  assert.equal(step.code, 'ahu1.run');
  // Counted from the start (the line taking the points over), on the real clock both lines were written by.
  const rested = Date.parse(String(restored.time)) - Date.parse(String(left.time));
  t.diagnostic(`restored ${(rested / 1000).toFixed(1)} s after the restart took it over (minOffSec 10); its stored shed time was 3 h ahead of the clock`);
  assert.ok(rested >= 9_900, `not before its minimum off time (${rested} ms)`);
  assert.ok(took < 60_000, `restored within a minute of the restart, not 3 h later (${took} ms)`);
  second.child.kill('SIGTERM');
  await second.exited;
});
