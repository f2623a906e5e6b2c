// Operating backups: the copy to EMS_BACKUP_TARGET, the restore drill, emsctl backup schedule, and emsctl status against a real service.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { listBackups, listBackupsIn } from '../../src/operations/backup/archive.ts';
import { version } from '../../src/platform/packageRoot.ts';
import { selfSignedCertificate } from '../helpers/certificate.ts';
import { runCli } from '../helpers/cli.ts';
import { spawnService } from '../helpers/serviceProcess.ts';
import { eventually as eventuallyWithin, startTestServer, tempDir } from '../helpers/server.ts';
import { LOOPS_AS_INSTALLED } from '../helpers/testEnv.ts';

const SCHEDULE = '/api/system/backup-schedule';

const cleanups: Array<() => unknown> = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

/** A folder on another file system than the data dirs in os.tmpdir(): what a USB disk or an NFS mount is. */
function otherDisk(): string {
  assert.notEqual(fs.statSync('/dev/shm').dev, fs.statSync(os.tmpdir()).dev, '/dev/shm is a file system of its own');
  const dir = fs.mkdtempSync('/dev/shm/ems-target-');
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function adminServer(env: Record<string, string> = {}) {
  const server = await startTestServer(env);
  cleanups.push(() => server.close());
  const admin = await server.createUser({ role: 'admin' });
  return { server, token: admin.accessToken };
}

/** Up to 30 s: these wait for a spawned service and its scheduler. */
const eventually = <T>(check: () => Promise<T | undefined>, what: string) => eventuallyWithin(check, what, 30_000);

const sha256 = (file: string) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');

describe('EMS_BACKUP_TARGET', () => {
  test('each backup is copied to the target and verified there; the target is pruned by the same retention', async () => {
    const target = otherDisk();
    const { server, token } = await adminServer({ EMS_BACKUP_TARGET: target });
    fs.writeFileSync(path.join(server.dataDir, 'uploads', 'meter-photo.jpg'), Buffer.alloc(5000, 3));
    await server.request('PUT', SCHEDULE, { token, body: { retention: { daily: 2, weekly: 0, monthly: 0 } } });

    // Two older backups already on the target, 4 and 5 days old: daily 2 keeps the 4-day-old one only.
    const first = await server.service.deps.backups.runNow();
    assert.equal(first.status, 'ok');
    const local = (first as { backup: { name: string; file: string; target: { status: string } } }).backup;
    assert.equal(local.target.status, 'ok');
    const old = [4, 5].map((days) => {
      const date = new Date();
      date.setDate(date.getDate() - days);
      date.setHours(12, 0, 0, 0);
      return `ems-${date.toISOString().replace(/[-:]/g, '')}.db`;
    });
    for (const name of old) {
      fs.copyFileSync(local.file, path.join(target, name));
      fs.cpSync(local.file.replace('.db', '.files'), path.join(target, name.replace('.db', '.files')), { recursive: true });
    }

    const second = await server.service.deps.backups.runNow();
    assert.equal(second.status, 'ok');
    const { name, file, target: copy } = (second as { backup: { name: string; file: string; target: { status: string; deleted: string[] } } }).backup;
    assert.equal(copy.status, 'ok');
    assert.deepEqual(copy.deleted, [old[1]]);
    assert.equal(sha256(path.join(target, name)), sha256(file), 'the same bytes as the local backup');
    const copied = fs.statSync(path.join(target, name.replace('.db', '.files'), 'uploads', 'meter-photo.jpg'));
    assert.equal(copied.size, 5000);
    assert.notEqual(copied.ino, fs.statSync(path.join(server.dataDir, 'uploads', 'meter-photo.jpg')).ino, 'real bytes on the other disk, not a link');
    assert.deepEqual(
      listBackupsIn(target).map((info) => info.name),
      [name, local.name, old[0]],
    );
    assert.ok(!fs.readdirSync(target).some((entry) => entry.endsWith('.partial')));

    const schedule = (await server.request('GET', SCHEDULE, { token })).body;
    assert.deepEqual(
      { dir: schedule.target.dir, status: schedule.target.status, backup: schedule.target.backup, error: schedule.target.error },
      { dir: target, status: 'ok', backup: name, error: null },
    );
    assert.equal((await server.request('GET', '/api/health')).body.backup.target, 'ok');
    assert.ok(server.logs.some((line) => line.includes('"backup copied to the backup target"')));
  });

  test('a missing target, or one on the data disk (an unmounted mount point), is a warning: the local backup stands', async () => {
    const missing = path.join(otherDisk(), 'not-mounted');
    const sameDisk = tempDir('ems-same-disk-');
    cleanups.push(() => fs.rmSync(sameDisk, { recursive: true, force: true }));
    for (const [target, reason] of [
      [missing, /does not exist \(is the disk mounted\?\)/],
      [sameDisk, /is on the same file system as the data dir .*protects nothing/],
    ] as const) {
      const { server, token } = await adminServer({ EMS_BACKUP_TARGET: target });
      const outcome = await server.service.deps.backups.runNow();
      assert.equal(outcome.status, 'ok', 'the run itself succeeds');
      const backup = (outcome as { backup: { name: string; target: { status: string; error: string } } }).backup;
      assert.equal(backup.target.status, 'failed');
      assert.match(backup.target.error, reason);
      assert.deepEqual(
        listBackups(server.dataDir).map((info) => info.name),
        [backup.name],
        'the local backup is kept',
      );
      assert.deepEqual(fs.readdirSync(sameDisk), [], 'nothing written to the same disk');

      const schedule = (await server.request('GET', SCHEDULE, { token })).body;
      assert.equal(schedule.lastStatus, 'ok');
      assert.equal(schedule.target.status, 'failed');
      assert.match(schedule.target.error, reason);
      assert.equal((await server.request('GET', '/api/health')).body.backup.target, 'failed');
      assert.ok(
        server.logs.some((line) => line.includes('"level":40') || line.includes('"level":"warn"')) &&
          server.logs.some((line) => line.includes('backup not copied to the backup target')),
      );

      const status = await runCli(['--data-dir', server.dataDir, 'status'], { env: { EMS_BACKUP_TARGET: target } });
      assert.match(status.stdout, new RegExp(`backup target +${target.replace(/[/.]/g, '\\$&')}: FAILED at .*${reason.source}`));
    }
  });

  test('EMS_BACKUP_TARGET must be an absolute path: a relative one stops emsctl with one line naming it', async () => {
    const result = await runCli(['--data-dir', tempDir(), 'backup', 'list'], { env: { EMS_BACKUP_TARGET: 'usb/backups' } });
    assert.equal(result.code, 1);
    assert.equal(result.stderr, 'emsctl: EMS_BACKUP_TARGET: expected an absolute folder path such as /mnt/ems-backup, got "usb/backups"\n');
  });
});

describe('restore drill', () => {
  test('the first scheduled backup is followed by a drill; it shows in health (no names) and in the schedule; it does not repeat within the week', async () => {
    const { server, token } = await adminServer();
    const { user } = await server.createUser({ role: 'viewer', username: 'drill_marker' });
    fs.writeFileSync(path.join(server.dataDir, 'avatars', 'a.png'), 'png bytes');
    assert.equal((await server.request('GET', '/api/health')).body.backup.drill, null);

    await server.request('PUT', SCHEDULE, { token, body: { cron: '* * * * * *' } });
    const health = await eventually(async () => {
      const { body } = await server.request('GET', '/api/health');
      return body.backup?.drill ? body : undefined;
    }, 'a drill after the scheduled backup');
    assert.equal(health.backup.drill.status, 'ok');
    assert.equal(health.backup.lastStatus, 'ok');
    assert.ok(health.backup.lastGoodAt);
    const publicText = JSON.stringify(health.backup);
    assert.ok(!publicText.includes('ems-') && !publicText.includes(server.dataDir) && !publicText.includes(user.username), publicText);

    const schedule = (await server.request('GET', SCHEDULE, { token })).body;
    const drill = schedule.drill;
    assert.equal(drill.status, 'ok');
    assert.match(drill.backup, /^ems-.*\.db$/);
    assert.ok(drill.tables > 10 && drill.rows > 10, JSON.stringify(drill));
    assert.equal(drill.files, 1);
    assert.deepEqual(
      fs.readdirSync(path.join(server.dataDir, 'tmp')).filter((name) => name.startsWith('restore-drill-')),
      [],
      'the temp restore is removed',
    );
    assert.ok(server.logs.some((line) => line.includes('"restore drill passed"')));

    // More scheduled backups within the week: no second drill.
    const lastRun = schedule.lastRunAt;
    await eventually(async () => {
      const { body } = await server.request('GET', SCHEDULE, { token });
      return body.lastRunAt > lastRun && listBackups(server.dataDir).length >= 2 ? body : undefined;
    }, 'another scheduled backup');
    await server.request('PUT', SCHEDULE, { token, body: { enabled: false } });
    assert.equal((await server.request('GET', SCHEDULE, { token })).body.drill.at, drill.at);
    assert.equal(server.logs.filter((line) => line.includes('"restore drill passed"')).length, 1);
  });

  test('emsctl backup drill finds a backup that does not restore as it was taken (rows, files) and says so everywhere', async () => {
    const { server, token } = await adminServer();
    fs.writeFileSync(path.join(server.dataDir, 'uploads', 'u.bin'), 'twelve bytes');
    const outcome = await server.service.deps.backups.runNow();
    const backup = (outcome as { backup: { name: string; filesDir: string } }).backup;

    const passed = await runCli(['--data-dir', server.dataDir, 'backup', 'drill']);
    assert.equal(passed.code, 0, passed.stderr);
    assert.match(
      passed.stdout,
      new RegExp(`restore drill passed: ${backup.name} restored, integrity_check ok, \\d+ tables / \\d+ rows as when it was taken, 1 files`),
    );

    // The manifest says the backup held 999 users: a restore that lost rows would look like this.
    const manifestFile = path.join(backup.filesDir, 'manifest.json');
    const manifest = JSON.parse(fs.readFileSync(manifestFile, 'utf8'));
    const users = manifest.rowCounts.users;
    manifest.rowCounts.users = 999;
    fs.writeFileSync(manifestFile, JSON.stringify(manifest));
    const rows = await runCli(['--data-dir', server.dataDir, '--json', 'backup', 'drill', backup.name]);
    assert.equal(rows.code, 1);
    const result = JSON.parse(rows.stdout);
    assert.equal(result.status, 'failed');
    assert.equal(result.error, `table users has ${users} rows after the restore, 999 when the backup was taken`);

    fs.writeFileSync(path.join(backup.filesDir, 'uploads', 'u.bin'), 'short');
    const files = await runCli(['--data-dir', server.dataDir, 'backup', 'drill']);
    assert.equal(files.code, 1);
    assert.match(files.stdout, /restore drill FAILED for ems-.*: .*uploads\/u\.bin has 5 bytes, the manifest says 12/);

    assert.equal((await server.request('GET', '/api/health')).body.backup.drill.status, 'failed');
    assert.match((await server.request('GET', SCHEDULE, { token })).body.drill.error, /u\.bin/);
    assert.deepEqual(
      fs.readdirSync(path.join(server.dataDir, 'tmp')).filter((name) => name.startsWith('restore-drill-')),
      [],
    );

    const none = await runCli(['--data-dir', server.dataDir, 'backup', 'drill', 'ems-nope.db']);
    assert.equal(none.code, 1);
    assert.match(none.stderr, /no backup named ems-nope\.db/);
  });
});

describe('emsctl backup schedule', () => {
  test('show and set (time, on/off, retention), audited as emsctl, picked up by the running service without a restart', { timeout: 60_000 }, async () => {
    const { server, token } = await adminServer();
    const cli = (...args: string[]) => runCli(['--data-dir', server.dataDir, ...args]);

    const shown = await cli('backup', 'schedule', 'show');
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /^enabled +yes$/m);
    assert.match(shown.stdout, /^cron +30 3 \* \* \* \(local time: \S+\)$/m);
    assert.match(shown.stdout, /^retention +7 daily, 4 weekly, 6 monthly$/m);

    const set = await cli('--json', 'backup', 'schedule', 'set', '--at', '02:15', '--daily', '10', '--monthly', '12');
    assert.equal(set.code, 0, set.stderr);
    const view = JSON.parse(set.stdout);
    assert.deepEqual(
      { enabled: view.enabled, cron: view.cron, retention: view.retention },
      { enabled: true, cron: '15 2 * * *', retention: { daily: 10, weekly: 4, monthly: 12 } },
    );
    const next = new Date(view.nextRunAt);
    assert.deepEqual([next.getHours(), next.getMinutes()], [2, 15]);
    const audit = server.service.deps.db.sqlite.prepare("SELECT username, after FROM audit_log WHERE resource = 'backup_schedule' ORDER BY id DESC").get() as {
      username: string;
      after: string;
    };
    assert.equal(audit.username, 'emsctl');
    assert.equal(JSON.parse(audit.after).cron, '15 2 * * *');

    // The service re-reads the schedule (every 10 s) and reschedules.
    await eventually(async () => {
      const { body } = await server.request('GET', SCHEDULE, { token });
      return body.nextRunAt && new Date(body.nextRunAt).getHours() === 2 && new Date(body.nextRunAt).getMinutes() === 15 ? body : undefined;
    }, 'the service to take the new time');

    const off = await cli('backup', 'schedule', 'set', '--disable');
    assert.equal(off.code, 0, off.stderr);
    assert.match(off.stdout, /^enabled +no$/m);
    await eventually(
      async () => ((await server.request('GET', SCHEDULE, { token })).body.nextRunAt === null ? true : undefined),
      'the service to stop the schedule',
    );
    const hourly = await cli('--json', 'backup', 'schedule', 'set', '--enable', '--hour', '4', '--weekly', '0');
    assert.equal(JSON.parse(hourly.stdout).cron, '0 4 * * *');
    assert.deepEqual(JSON.parse(hourly.stdout).retention, { daily: 10, weekly: 0, monthly: 12 });

    for (const [args, message] of [
      [['--at', '25:00'], /--at: expected a local time HH:MM such as 03:30, got "25:00"/],
      [['--cron', 'every night'], /--cron: must be a valid cron expression \(5 or 6 fields, e.g. "30 3 \* \* \*"\)/],
      [['--daily', '0'], /--daily: expected an integer from 1 to 1000, got "0"/],
      [['--hour', '3', '--at', '03:00'], /give one of --cron, --at and --hour/],
      [['--enable', '--disable'], /give --enable or --disable, not both/],
      [[], /nothing to change: give --cron\/--at\/--hour, --enable\/--disable, --daily, --weekly or --monthly/],
    ] as const) {
      const refused = await cli('backup', 'schedule', 'set', ...args);
      assert.notEqual(refused.code, 0, args.join(' '));
      assert.match(refused.stderr, new RegExp(`^emsctl: ${message.source}\\n$`));
    }
    assert.equal(JSON.parse((await cli('--json', 'backup', 'schedule', 'show')).stdout).cron, '0 4 * * *', 'refused changes change nothing');
  });
});

describe('emsctl status', () => {
  test('running service: health answered, version, uptime, database, backups, drill, gateway, disk; stopped: exit 3', { timeout: 90_000 }, async () => {
    const dataDir = tempDir();
    cleanups.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    // Collecting, as installed: status reports the collector's meters.
    const service = await spawnService(dataDir, LOOPS_AS_INSTALLED);
    cleanups.push(() => service.child.kill('SIGKILL'));
    const port = new URL(service.url).port;
    const status = (...args: string[]) => runCli(['--data-dir', dataDir, ...args, 'status'], { env: { EMS_PORT: port, EMS_HOST: '127.0.0.1' } });

    assert.equal((await runCli(['--data-dir', dataDir, 'backup', 'run'])).code, 0);
    assert.equal((await runCli(['--data-dir', dataDir, 'backup', 'drill'])).code, 0);
    // The gateway probe runs at start; wait until health has an answer either way.
    await eventually(async () => {
      const health = (await (await fetch(`${service.url}/api/health`)).json()) as { iot: { gateway: string } };
      return health.iot.gateway !== 'unknown' ? true : undefined;
    }, 'the gateway probe');

    const json = await status('--json');
    assert.equal(json.code, 0, json.stderr);
    const report = JSON.parse(json.stdout);
    assert.equal(report.service.state, 'running');
    assert.equal(report.service.pid, service.child.pid);
    assert.equal(report.service.health, 'ok');
    assert.equal(report.service.version, version);
    assert.ok(Number.isInteger(report.service.uptimeSec));
    assert.ok(report.databaseBytes > 0);
    assert.equal(report.backup.enabled, true);
    assert.equal(report.backup.lastStatus, 'ok');
    assert.equal(report.backup.kept, 1);
    assert.match(report.backup.newest.name, /^ems-/);
    assert.equal(report.drill.status, 'ok');
    assert.equal(report.gateway.state, 'reachable');
    assert.ok(report.disk.freeBytes > 0 && report.disk.freeBytes <= report.disk.totalBytes);
    // A fresh start meters the simulated building: main, three sub-meters, gas, water, PV and grid export (the virtual
    // rest is not read).
    assert.equal(report.collector.meters, 8);

    const text = await status();
    assert.equal(text.code, 0);
    for (const line of [
      /^service +running \(pid \d+, ok, http:\/\/127\.0\.0\.1:\d+\)$/m,
      /^uptime +\d/m,
      /^last backup +\S+ ok \(newest: ems-/m,
      /^restore drill +\S+ OK \(ems-/m,
      /^gateway +reachable/m,
      /^collector +8 meters, /m,
      /^free disk +[\d.]+ (B|KiB|MiB|GiB|TiB) of /m,
      /^database +[\d.]+ (B|KiB|MiB) \([\d,]+ bytes; write-ahead log /m,
    ]) {
      assert.match(text.stdout, line);
    }

    service.child.kill('SIGTERM');
    assert.equal(await service.exited, 0);
    const stopped = await status('--json');
    assert.equal(stopped.code, 3, 'exit 3 when the service is not running, as systemctl status');
    const down = JSON.parse(stopped.stdout);
    assert.equal(down.service.state, 'not running');
    assert.equal(down.gateway, null);
    assert.equal(down.backup.lastStatus, 'ok', 'what is on disk is still reported');
    assert.match((await status()).stdout, /^service +NOT RUNNING \(http:\/\/127\.0\.0\.1:\d+\/api\/health: ECONNREFUSED\)$/m);
    assert.equal(down.lastUpgrade, null);
    assert.match((await status()).stdout, /^last upgrade +none recorded$/m);

    // What the installer writes after an upgrade that rolled itself back (installer/install.sh, record_upgrade).
    const upgrade = { result: 'rolled-back', at: '2026-11-26T14:00:00Z', from: '0.1.0', to: '0.2.0', reason: 'version 0.2.0 exited at start (status 1)' };
    fs.writeFileSync(path.join(dataDir, 'last-upgrade.json'), JSON.stringify(upgrade));
    assert.deepEqual(JSON.parse((await status('--json')).stdout).lastUpgrade, upgrade);
    assert.match(
      (await status()).stdout,
      /^last upgrade +2026-11-26T14:00:00Z ROLLED BACK: version 0\.2\.0 exited at start \(status 1\); 0\.1\.0 runs again on its data as it stopped$/m,
    );
    fs.writeFileSync(path.join(dataDir, 'last-upgrade.json'), '{ not json');
    assert.equal(JSON.parse((await status('--json')).stdout).lastUpgrade, null, 'an unreadable record is no upgrade, not a failure');
  });

  test('a service that speaks HTTPS (EMS_TLS_CERT, self-signed) is asked over HTTPS and counts as running', { timeout: 60_000 }, async () => {
    const dataDir = tempDir();
    cleanups.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    const tls = tempDir('ems-tls-');
    cleanups.push(() => fs.rmSync(tls, { recursive: true, force: true }));
    const { certFile, keyFile } = selfSignedCertificate(tls, 'box');
    const env = { EMS_TLS_CERT: certFile, EMS_TLS_KEY: keyFile };
    const service = await spawnService(dataDir, env);
    cleanups.push(() => service.child.kill('SIGKILL'));
    const result = await runCli(['--data-dir', dataDir, '--json', 'status'], { env: { ...env, EMS_PORT: new URL(service.url).port, EMS_HOST: '127.0.0.1' } });
    assert.equal(result.code, 0, result.stderr + result.stdout);
    const report = JSON.parse(result.stdout);
    assert.equal(report.service.state, 'running');
    assert.match(report.service.healthUrl, /^https:\/\/127\.0\.0\.1:\d+\/api\/health$/);
    service.child.kill('SIGTERM');
    await service.exited;
  });
});
