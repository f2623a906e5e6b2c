// Backups: the schedule API, scheduled runs, retention, the copy's integrity, overlap, and restore through the real emsctl.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { acquireLock, BACKUP_LOCK_FILE, SERVICE_LOCK_FILE } from '../../src/operations/backup/locks.ts';
import { backupsDir, listBackups } from '../../src/operations/backup/archive.ts';
import { runCli } from '../helpers/cli.ts';
import { spawnService } from '../helpers/serviceProcess.ts';
import { eventually, startTestServer, tempDir, type TestServer } from '../helpers/server.ts';

const SCHEDULE = '/api/system/backup-schedule';

async function adminServer(env: Record<string, string> = {}) {
  const server = await startTestServer(env);
  const admin = await server.createUser({ role: 'admin' });
  return { server, token: admin.accessToken };
}

function readRows<T>(file: string, sql: string): T[] {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare(sql).all() as T[];
  } finally {
    db.close();
  }
}

const cleanups: Array<() => unknown> = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

describe('backup schedule API', () => {
  test('backups are on by default: nightly at 03:30, 7 daily, 4 weekly, 6 monthly; PUT changes it and records an audit entry', async (t) => {
    const { server, token } = await adminServer();
    t.after(() => server.close());

    const initial = await server.request('GET', SCHEDULE, { token });
    assert.equal(initial.status, 200);
    assert.deepEqual(
      {
        enabled: initial.body.enabled,
        cron: initial.body.cron,
        retention: initial.body.retention,
        lastRunAt: initial.body.lastRunAt,
        target: initial.body.target,
        drill: initial.body.drill,
      },
      { enabled: true, cron: '30 3 * * *', retention: { daily: 7, weekly: 4, monthly: 6 }, lastRunAt: null, target: null, drill: null },
    );
    const firstRun = new Date(initial.body.nextRunAt);
    assert.deepEqual([firstRun.getHours(), firstRun.getMinutes()], [3, 30]);
    assert.ok(firstRun.getTime() - Date.now() <= 86_400_000, 'the first backup is due within a day');
    assert.ok(server.logs.some((line) => line.includes('backups switched on by default')));

    const put = await server.request('PUT', SCHEDULE, { token, body: { enabled: true, cron: '30 2 * * *', retention: { weekly: 8 }, lastStatus: 'ignored' } });
    assert.equal(put.status, 200);
    assert.equal(put.body.enabled, true);
    assert.equal(put.body.cron, '30 2 * * *');
    assert.deepEqual(put.body.retention, { daily: 7, weekly: 8, monthly: 6 });
    assert.equal(put.body.lastStatus, null, 'read-only fields are not writable');
    const next = new Date(put.body.nextRunAt);
    assert.equal(next.getMinutes(), 30);
    assert.equal(next.getHours(), 2);

    // The earlier keep-N form still works: a plain number is the daily count.
    const partial = await server.request('PUT', SCHEDULE, { token, body: { retention: 4 } });
    assert.equal(partial.status, 200);
    assert.equal(partial.body.cron, '30 2 * * *', 'fields left out keep their value');
    assert.deepEqual(partial.body.retention, { daily: 4, weekly: 8, monthly: 6 });

    const audit = server.service.deps.db.sqlite.prepare("SELECT after FROM audit_log WHERE resource = 'backup_schedule' ORDER BY id").pluck().all() as string[];
    assert.deepEqual(JSON.parse(audit.at(-1)!), { enabled: true, cron: '30 2 * * *', retention: { daily: 4, weekly: 8, monthly: 6 } });
    // What a version before this one reads: the daily count is its keep-N.
    assert.equal(server.service.deps.db.sqlite.prepare('SELECT retention FROM backup_schedule').pluck().get(), 4);

    const disabled = await server.request('PUT', SCHEDULE, { token, body: { enabled: false } });
    assert.equal(disabled.body.nextRunAt, null);
  });

  test('the default applies once, to a schedule nobody set: a schedule set before is kept, and so is one switched off', { timeout: 60_000 }, async () => {
    const dataDir = tempDir();
    cleanups.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    // A box of an earlier version whose admin set an hourly keep-24 schedule and switched it off: as it was stored then.
    const first = await startTestServer({ EMS_DATA_DIR: dataDir });
    const { sqlite } = first.service.deps.db;
    sqlite.prepare("DELETE FROM app_settings WHERE key LIKE 'backup.%'").run();
    sqlite.prepare("UPDATE backup_schedule SET enabled = 0, cron = '0 * * * *', retention = 24").run();
    sqlite.prepare("INSERT INTO audit_log (at, action, resource, resource_id) VALUES (?, 'update', 'backup_schedule', '1')").run(new Date().toISOString());
    await first.service.close();

    const second = await startTestServer({ EMS_DATA_DIR: dataDir });
    const admin = await second.createUser({ role: 'admin' });
    const kept = (await second.request('GET', SCHEDULE, { token: admin.accessToken })).body;
    assert.deepEqual(
      { enabled: kept.enabled, cron: kept.cron, retention: kept.retention },
      { enabled: false, cron: '0 * * * *', retention: { daily: 24, weekly: 4, monthly: 6 } },
    );
    assert.ok(!second.logs.some((line) => line.includes('backups switched on by default')));
    await second.service.close();

    // A seeded schedule is switched on at the first start; an admin who then switches it off is not overruled later.
    const fresh = tempDir();
    cleanups.push(() => fs.rmSync(fresh, { recursive: true, force: true }));
    const third = await startTestServer({ EMS_DATA_DIR: fresh });
    const owner = await third.createUser({ role: 'admin' });
    assert.equal((await third.request('PUT', SCHEDULE, { token: owner.accessToken, body: { enabled: false } })).status, 200);
    await third.service.close();
    const fourth = await startTestServer({ EMS_DATA_DIR: fresh });
    cleanups.push(() => fourth.close());
    assert.equal((await fourth.request('GET', SCHEDULE, { token: owner.accessToken })).body.enabled, false);
  });

  test('a bad cron expression or retention is a 400 and changes nothing', async (t) => {
    const { server, token } = await adminServer();
    t.after(() => server.close());
    for (const body of [
      { cron: 'not a cron' },
      { cron: '61 * * * *' },
      { cron: '* * * * * * *' },
      { cron: '' },
      { retention: 0 },
      { retention: 1.5 },
      { retention: {} },
      { retention: { daily: 0 } },
      { retention: { weekly: -1 } },
      { retention: { monthly: 1001 } },
      { retention: { daily: 'seven' } },
      { retention: '7' + 'x' },
      { enabled: 'yes' },
    ]) {
      const response = await server.request('PUT', SCHEDULE, { token, body });
      assert.equal(response.status, 400, JSON.stringify(body));
      assert.equal(typeof response.body.error, 'string');
    }
    const bad = await server.request('PUT', SCHEDULE, { token, body: { enabled: false, cron: '0 25 * * *' } });
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.body.details, [{ path: 'body.cron', message: 'must be a valid cron expression (5 or 6 fields, e.g. "30 3 * * *")' }]);
    const unchanged = await server.request('GET', SCHEDULE, { token });
    assert.equal(unchanged.body.enabled, true);
    assert.equal(unchanged.body.cron, '30 3 * * *');
    assert.deepEqual(unchanged.body.retention, { daily: 7, weekly: 4, monthly: 6 });
  });

  test('admin only: 401 without a token, 403 for viewer and operator', async (t) => {
    const { server } = await adminServer();
    t.after(() => server.close());
    assert.equal((await server.request('GET', SCHEDULE)).status, 401);
    assert.equal((await server.request('PUT', SCHEDULE, { body: { retention: 2 } })).status, 401);
    for (const role of ['viewer', 'operator'] as const) {
      const { accessToken } = await server.createUser({ role });
      assert.equal((await server.request('GET', SCHEDULE, { token: accessToken })).status, 403);
      assert.equal((await server.request('PUT', SCHEDULE, { token: accessToken, body: { retention: 2 } })).status, 403);
    }
  });
});

describe('backup runs', () => {
  test('a per-second schedule fires after a PUT, without a restart', async (t) => {
    const { server, token } = await adminServer();
    t.after(() => server.close());
    const put = await server.request('PUT', SCHEDULE, { token, body: { enabled: true, cron: '* * * * * *', retention: 5 } });
    assert.equal(put.status, 200);
    assert.ok(put.body.nextRunAt);

    const ran = await eventually(async () => {
      const { body } = await server.request('GET', SCHEDULE, { token });
      return body.lastStatus === 'ok' && body.lastFile ? body : undefined;
    }, 'a scheduled backup');
    assert.match(ran.lastFile, /^ems-\d{8}T\d{6}\.\d{3}Z\.db$/);
    assert.ok(fs.existsSync(path.join(backupsDir(server.dataDir), ran.lastFile)));
    assert.ok(server.logs.some((line) => line.includes('"backup completed"') && line.includes('"trigger":"scheduled"')));

    await server.request('PUT', SCHEDULE, { token, body: { enabled: false } });
  });

  test('the copy passes integrity_check, is one self-contained file, and the uploads are hard links with a manifest', async (t) => {
    const { server, token } = await adminServer();
    t.after(() => server.close());
    const { user: marker } = await server.createUser({ role: 'viewer', username: 'before_backup' });
    fs.mkdirSync(path.join(server.dataDir, 'uploads', 'nested'), { recursive: true });
    fs.writeFileSync(path.join(server.dataDir, 'uploads', 'nested', 'u1.bin'), 'upload bytes');
    fs.writeFileSync(path.join(server.dataDir, 'models', 'plant.glb'), Buffer.alloc(4096, 7));

    const settingsChanged = (await server.request('GET', SCHEDULE, { token })).body.updatedAt;
    const outcome = await server.service.deps.backups.runNow();
    assert.equal(outcome.status, 'ok');
    if (outcome.status !== 'ok') return;
    const { file, filesDir } = outcome.backup;

    const db = new Database(file, { readonly: true });
    t.after(() => db.close());
    assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');
    assert.equal(db.pragma('journal_mode', { simple: true }), 'delete');
    assert.equal(db.prepare('SELECT username FROM users WHERE id = ?').pluck().get(marker.id), 'before_backup');
    assert.ok(!fs.existsSync(`${file}-wal`));
    assert.equal(fs.statSync(file).mode & 0o777, 0o640);

    const live = fs.statSync(path.join(server.dataDir, 'models', 'plant.glb'));
    const copy = fs.statSync(path.join(filesDir!, 'models', 'plant.glb'));
    assert.equal(copy.ino, live.ino, 'hard link: no second copy of the bytes');
    const manifest = JSON.parse(fs.readFileSync(path.join(filesDir!, 'manifest.json'), 'utf8'));
    assert.deepEqual(manifest.files.map((entry: { path: string; size: number }) => `${entry.path}:${entry.size}`).sort(), [
      'models/plant.glb:4096',
      'uploads/nested/u1.bin:12',
    ]);

    const schedule = await server.request('GET', SCHEDULE, { token });
    assert.equal(schedule.body.lastStatus, 'ok');
    assert.equal(schedule.body.lastFile, path.basename(file));
    assert.equal(schedule.body.updatedAt, settingsChanged, 'a run is not a change of the schedule');
  });

  test('retention after a run: backups of the last 24 hours stay, older ones keep the newest per day, week and month', async (t) => {
    const { server, token } = await adminServer();
    t.after(() => server.close());
    fs.writeFileSync(path.join(server.dataDir, 'uploads', 'keep.txt'), 'x');
    await server.request('PUT', SCHEDULE, { token, body: { retention: { daily: 2, weekly: 0, monthly: 0 } } });
    const first = await server.service.deps.backups.runNow();
    assert.equal(first.status, 'ok');
    const template = (first as { backup: { file: string; filesDir: string } }).backup;

    // Earlier backups as a box that ran for days would have them: local noon 2, 3 and 4 days ago, plus one this morning.
    const dir = backupsDir(server.dataDir);
    const nameAt = (date: Date) => `ems-${date.toISOString().replace(/[-:]/g, '')}.db`;
    const localNoon = (daysAgo: number) => {
      const date = new Date();
      date.setDate(date.getDate() - daysAgo);
      date.setHours(12, 0, 0, 0);
      return date;
    };
    const planted = [2, 3, 4].map((days) => nameAt(localNoon(days)));
    // "This morning": an hour ago, but not before today's local midnight (a run in the first hour of the day would put
    // it on yesterday, which it then keeps as that day's daily backup).
    const midnight = new Date();
    midnight.setHours(0, 0, 0, 0);
    planted.push(nameAt(new Date(Math.max(Date.now() - 3_600_000, Math.min(midnight.getTime() + 1000, Date.now() - 1000)))));
    for (const name of planted) {
      fs.copyFileSync(template.file, path.join(dir, name));
      fs.cpSync(template.filesDir, path.join(dir, name.replace('.db', '.files')), { recursive: true });
    }

    const second = await server.service.deps.backups.runNow();
    assert.equal(second.status, 'ok');
    const newest = (second as { backup: { name: string; deleted: string[] } }).backup;
    const kept = listBackups(server.dataDir).map((info) => info.name);
    // Today: the new one, the first one and the one an hour ago (all within 24 h); then the second daily: 2 days ago.
    assert.deepEqual(kept, [newest.name, (first as { backup: { name: string } }).backup.name, planted[3], planted[0]].sort().reverse());
    assert.deepEqual(newest.deleted.sort(), [planted[1], planted[2]].sort());
    const onDisk = fs
      .readdirSync(dir)
      .filter((name) => name.startsWith('ems-'))
      .sort();
    assert.deepEqual(onDisk, kept.flatMap((name) => [name, name.replace('.db', '.files')]).sort(), 'each deleted backup goes with its files');
    assert.ok(fs.existsSync(path.join(server.dataDir, 'uploads', 'keep.txt')), 'deleting an old backup leaves the live file');
  });

  test('two runs never overlap: in the service, and between the service and emsctl', async (t) => {
    const { server, token } = await adminServer();
    t.after(() => server.close());
    const backups = server.service.deps.backups;
    const outcomes = await Promise.all([backups.runNow(), backups.runNow()]);
    assert.deepEqual(outcomes.map((o) => o.status).sort(), ['ok', 'skipped']);
    assert.equal(listBackups(server.dataDir).length, 1);

    // Another process (emsctl) holding the lock: the scheduled run is skipped, the row untouched.
    const before = (await server.request('GET', SCHEDULE, { token })).body;
    const lock = acquireLock(path.join(server.dataDir, BACKUP_LOCK_FILE), 'a test standing in for another run');
    const skipped = await backups.runNow();
    assert.equal(skipped.status, 'skipped');
    assert.match((skipped as { reason: string }).reason, /already in progress/);
    assert.deepEqual((await server.request('GET', SCHEDULE, { token })).body.lastRunAt, before.lastRunAt);

    // And the other way round: emsctl refuses while a run holds the lock, then works once it is released.
    const refused = await runCli(['--data-dir', server.dataDir, 'backup', 'run']);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /backup not taken: a backup or restore is already in progress/);
    lock.release();
    const ran = await runCli(['--data-dir', server.dataDir, '--json', 'backup', 'run']);
    assert.equal(ran.code, 0, ran.stderr);
    const result = JSON.parse(ran.stdout);
    assert.equal(listBackups(server.dataDir).length, 2);
    const after = (await server.request('GET', SCHEDULE, { token })).body;
    assert.equal(after.lastFile, result.name, 'a backup taken by emsctl shows in the schedule too');
  });

  test('a failed run is recorded in lastStatus and the service keeps serving', async (t) => {
    const { server, token } = await adminServer();
    t.after(() => server.close());
    // A file where the backups folder should be: the run cannot write.
    fs.rmSync(backupsDir(server.dataDir), { recursive: true });
    fs.writeFileSync(backupsDir(server.dataDir), 'not a folder');
    const outcome = await server.service.deps.backups.runNow();
    assert.equal(outcome.status, 'failed');
    const schedule = await server.request('GET', SCHEDULE, { token });
    assert.equal(schedule.status, 200);
    assert.match(schedule.body.lastStatus, /^failed: /);
    assert.ok(schedule.body.lastRunAt);
    assert.equal(schedule.body.lastFile, null);
    assert.ok(server.logs.some((line) => line.includes('"backup failed"')));
    fs.rmSync(backupsDir(server.dataDir));
  });
});

describe('emsctl backup restore', () => {
  test('round trip: data written after the backup is gone, data before it is back, files too', { timeout: 60_000 }, async () => {
    const dataDir = tempDir();
    cleanups.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    let first: TestServer | undefined = await startTestServer({ EMS_DATA_DIR: dataDir });
    cleanups.push(() => first?.service.close());
    const before = await first.createUser({ role: 'admin', username: 'made_before' });
    await first.request('PUT', SCHEDULE, { token: before.accessToken, body: { retention: { daily: 5 } } });
    fs.writeFileSync(path.join(dataDir, 'uploads', 'before.txt'), 'before the backup');
    fs.writeFileSync(path.join(dataDir, 'avatars', 'a1.png'), 'avatar');

    const outcome = await first.service.deps.backups.runNow();
    assert.equal(outcome.status, 'ok');
    const name = (outcome as { backup: { name: string } }).backup.name;

    const afterUser = await first.createUser({ role: 'admin', username: 'made_after' });
    await first.request('PUT', SCHEDULE, { token: afterUser.accessToken, body: { retention: { daily: 9 } } });
    fs.rmSync(path.join(dataDir, 'uploads', 'before.txt'));
    fs.writeFileSync(path.join(dataDir, 'uploads', 'after.txt'), 'after the backup');

    // While the service runs: refused, with a message that says what to do, and nothing touched.
    const refused = await runCli(['--data-dir', dataDir, 'backup', 'restore', name]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /refusing to restore: the EMS service is running on .* \(pid \d+.*stop it first/);
    assert.ok(fs.existsSync(path.join(dataDir, 'uploads', 'after.txt')));

    // A wrong name or a damaged file is said first, while the service still runs: nobody stops it for nothing.
    const wrongName = await runCli(['--data-dir', dataDir, 'backup', 'restore', 'ems-no-such-backup.db']);
    assert.equal(wrongName.code, 1);
    assert.doesNotMatch(wrongName.stderr, /stop it first/);
    assert.match(wrongName.stderr, /no backup named ems-no-such-backup.db/);
    const damaged = path.join(dataDir, 'backups', 'ems-damaged.db');
    fs.writeFileSync(damaged, 'this is not a database');
    const refusedDamaged = await runCli(['--data-dir', dataDir, 'backup', 'restore', damaged]);
    assert.equal(refusedDamaged.code, 1);
    assert.doesNotMatch(refusedDamaged.stderr, /stop it first/);
    assert.match(refusedDamaged.stderr, /does not verify/);
    fs.rmSync(damaged);

    await first.service.close();
    first = undefined;
    assert.ok(!fs.existsSync(path.join(dataDir, SERVICE_LOCK_FILE)), 'a stopped service lets go of the data dir');

    const listed = await runCli(['--data-dir', dataDir, '--json', 'backup', 'list']);
    assert.equal(listed.code, 0, listed.stderr);
    assert.deepEqual(
      JSON.parse(listed.stdout).map((row: { name: string }) => row.name),
      [name],
    );

    const scheduleBefore = readRows<{ cron: string; retention: number; last_run_at: string; last_file: string }>(
      path.join(dataDir, 'ems.db'),
      'SELECT cron, retention, last_run_at, last_file FROM backup_schedule',
    )[0];
    assert.equal(scheduleBefore.retention, 9);
    assert.ok(scheduleBefore.last_run_at);

    const restored = await runCli(['--data-dir', dataDir, 'backup', 'restore', name]);
    assert.equal(restored.code, 0, restored.stderr);
    const replacedDir = /kept in (.+)$/m.exec(restored.stdout)![1];
    assert.match(restored.stdout, /the backup schedule, its retention and the last backup's record are this box's, as before the restore/);
    // The box's upkeep is the box's: the schedule set after the backup and the record of that backup's own run stay.
    assert.deepEqual(readRows(path.join(dataDir, 'ems.db'), 'SELECT cron, retention, last_run_at, last_file FROM backup_schedule')[0], scheduleBefore);

    // The replaced database and files are kept aside, whole.
    const asideUsers = readRows<{ username: string }>(path.join(replacedDir, 'ems.db'), 'SELECT username FROM users');
    assert.ok(asideUsers.some((row) => row.username === 'made_after'));
    assert.equal(fs.readFileSync(path.join(replacedDir, 'uploads', 'after.txt'), 'utf8'), 'after the backup');

    assert.equal(fs.readFileSync(path.join(dataDir, 'uploads', 'before.txt'), 'utf8'), 'before the backup');
    assert.equal(fs.readFileSync(path.join(dataDir, 'avatars', 'a1.png'), 'utf8'), 'avatar');
    assert.ok(!fs.existsSync(path.join(dataDir, 'uploads', 'after.txt')));

    // The service starts on the restored data: the earlier account works, the later one is gone.
    const second = await startTestServer({ EMS_DATA_DIR: dataDir });
    cleanups.push(() => second.close());
    const schedule = await second.request('GET', SCHEDULE, { token: before.accessToken });
    assert.equal(schedule.status, 200);
    assert.equal(schedule.body.retention.daily, 9, "the schedule set after the backup, not the backup's 5");
    assert.equal(schedule.body.lastRunAt, scheduleBefore.last_run_at, 'not "last backup never"');
    assert.equal((await second.request('GET', SCHEDULE, { token: afterUser.accessToken })).status, 401);
    assert.equal(second.service.deps.db.sqlite.pragma('integrity_check', { simple: true }), 'ok');
  });

  test('a backup that does not verify is refused and the data dir is left as it was', { timeout: 60_000 }, async () => {
    const dataDir = tempDir();
    cleanups.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    const server = await startTestServer({ EMS_DATA_DIR: dataDir });
    fs.writeFileSync(path.join(dataDir, 'uploads', 'u.txt'), 'live');
    const good = await server.service.deps.backups.runNow();
    const damaged = await server.service.deps.backups.runNow();
    await server.service.close();
    assert.equal(good.status, 'ok');
    assert.equal(damaged.status, 'ok');
    const goodBackup = (good as { backup: { name: string; filesDir: string } }).backup;
    const damagedBackup = (damaged as { backup: { name: string; file: string } }).backup;

    // Page 2 and on overwritten: SQLite still opens it, integrity_check does not pass.
    const fd = fs.openSync(damagedBackup.file, 'r+');
    fs.writeSync(fd, Buffer.alloc(8192, 0x5a), 0, 8192, 4096);
    fs.closeSync(fd);
    const liveBefore = fs.readFileSync(path.join(dataDir, 'ems.db'));

    const corrupt = await runCli(['--data-dir', dataDir, 'backup', 'restore', damagedBackup.name]);
    assert.equal(corrupt.code, 1);
    assert.match(corrupt.stderr, /refusing to restore: the backup does not verify/);

    fs.rmSync(path.join(goodBackup.filesDir, 'uploads', 'u.txt'));
    const incomplete = await runCli(['--data-dir', dataDir, 'backup', 'restore', goodBackup.name]);
    assert.equal(incomplete.code, 1);
    assert.match(incomplete.stderr, /incomplete: uploads\/u\.txt is missing/);

    const unknown = await runCli(['--data-dir', dataDir, 'backup', 'restore', 'ems-nope.db']);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /no backup named ems-nope\.db/);

    assert.deepEqual(fs.readFileSync(path.join(dataDir, 'ems.db')), liveBefore);
    assert.equal(fs.readFileSync(path.join(dataDir, 'uploads', 'u.txt'), 'utf8'), 'live');
    assert.ok(!fs.existsSync(path.join(dataDir, 'replaced')));
  });

  test('while a restore holds the data dir, a service refuses to start (exit 3, clear message)', { timeout: 60_000 }, async () => {
    const dataDir = tempDir();
    cleanups.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    const lock = acquireLock(path.join(dataDir, SERVICE_LOCK_FILE), 'emsctl backup restore');
    cleanups.push(() => lock.release());
    // Were it to start after all, it is killed at once and the assertion fails.
    const attempt = spawnService(dataDir).then((service) => (service.child.kill('SIGKILL'), service));
    await assert.rejects(attempt, /exited \(3\).*data dir .* is in use by emsctl backup restore \(pid \d+\)/s);
    lock.release();
  });
});
