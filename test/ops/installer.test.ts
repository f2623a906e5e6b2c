// installer/install.sh, uninstall.sh and package.sh under --root into temp dirs: checks, dry run, files, modes, the unit, the env file,
// upgrade with its backup and rollback, the release tarball installed without npm or a compiler, TLS, uninstall, the staged program running.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { tempDir } from '../helpers/server.ts';
import { buildWeb, webBuildIsStale } from '../../src/web/tools/build.ts';
import { compiledBuild } from '../helpers/compiledBuild.ts';
import { cleanEnv, repoRoot, spawnService } from '../helpers/serviceProcess.ts';

const install = path.join(repoRoot, 'installer', 'install.sh');
const uninstall = path.join(repoRoot, 'installer', 'uninstall.sh');
const packageScript = path.join(repoRoot, 'installer', 'package.sh');
const nodeBin = execFileSync('sh', ['-c', 'command -v node'], { encoding: 'utf8' }).trim();

function hasCommand(name: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${name}`]).status === 0;
}

/** Every file and folder under dir with its size, to show that a refused or dry run changed nothing. */
function snapshot(dir: string): string[] {
  return (fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }) as string[])
    .map((entry) => {
      const stat = fs.lstatSync(path.join(dir, entry));
      return `${entry}:${stat.isDirectory() ? 'dir' : stat.size}:${stat.mtimeMs}`;
    })
    .sort();
}

function run(script: string, args: string[], env: Record<string, string> = {}) {
  // The runtime check with 1,500 statements instead of 15,000: every install here runs it (test/runtimeCheck.test.ts
  // tests the check itself).
  const result = spawnSync('bash', [script, ...args], { encoding: 'utf8', env: cleanEnv({ EMS_CHECK_STATEMENTS: '1500', ...env }) });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

function mode(file: string): number {
  return fs.statSync(file).mode & 0o777;
}

const temps: string[] = [];
function temp(prefix: string): string {
  const dir = tempDir(prefix);
  temps.push(dir);
  return dir;
}
after(() => {
  for (const dir of temps) fs.rmSync(dir, { recursive: true, force: true });
});

/**
 * A built tree for --from-build, as `npm ci && npm run build` would leave it: the sources, dist/ compiled by
 * tsc, and node_modules (a link to this checkout's, so the test does not copy 200 MB). The real npm path is
 * the installer's default and is what an admin runs. The compiled tree is shared with the other spawn-heavy tests.
 */
let buildDir: string;
before(() => {
  buildDir = compiledBuild();
  assert.ok(fs.existsSync(path.join(buildDir, 'dist', 'src', 'main.js')), 'tsc produced dist/src/main.js');
});

/** The same build as another version (what an upgrade installs): its package.json says `version`. */
function buildOfVersion(version: string): string {
  const dir = temp('ems-build-');
  for (const item of ['package-lock.json', 'src', 'cli', 'dist']) fs.cpSync(path.join(buildDir, item), path.join(dir, item), { recursive: true });
  const manifest = JSON.parse(fs.readFileSync(path.join(buildDir, 'package.json'), 'utf8'));
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ ...manifest, version }, null, 2));
  fs.symlinkSync(path.join(repoRoot, 'node_modules'), path.join(dir, 'node_modules'));
  return dir;
}
const installedVersion = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')).version as string;

function stagedInstall(): { root: string; stdout: string } {
  const root = temp('ems-root-');
  const result = run(install, ['--root', root, '--from-build', buildDir]);
  assert.equal(result.code, 0, result.stderr + result.stdout);
  return { root, stdout: result.stdout };
}

describe('installer', () => {
  test('install.sh and uninstall.sh are shellcheck clean, and so is the emsctl wrapper they install', () => {
    assert.ok(hasCommand('shellcheck'), 'shellcheck is installed (Debian package shellcheck)');
    const { root } = stagedInstall();
    const result = spawnSync('shellcheck', [install, uninstall, packageScript, path.join(root, 'usr/local/bin/emsctl')], { encoding: 'utf8' });
    assert.equal(result.status, 0, result.stdout);
  });

  test('install --root lays out program, data, settings, unit and wrapper with the right modes', () => {
    const { root, stdout } = stagedInstall();
    const at = (p: string) => path.join(root, p);

    for (const file of [
      'opt/ems/dist/src/main.js',
      'opt/ems/dist/cli/emsctl.js',
      'opt/ems/cli/emsctl.js',
      'opt/ems/package.json',
      'opt/ems/src/platform/db/migrations/0000_init.sql',
    ]) {
      assert.ok(fs.existsSync(at(file)), file);
    }
    assert.equal(mode(at('opt/ems/dist/src/main.js')), 0o644);
    assert.equal(mode(at('opt/ems')), 0o755);
    assert.equal(mode(at('var/lib/ems')), 0o750);
    assert.equal(mode(at('etc/ems')), 0o750);
    assert.equal(mode(at('etc/ems/ems.env')), 0o640, 'the env file may hold secrets');
    assert.equal(mode(at('etc/systemd/system/ems.service')), 0o644);
    assert.equal(mode(at('usr/local/bin/emsctl')), 0o755);
    assert.ok(!fs.existsSync(at('opt/ems.new')) && !fs.existsSync(at('opt/ems.previous')), 'a first install keeps no previous version');
    assert.match(stdout, /\/var\/lib\/ems\/initial-admin-password/, 'says where the initial admin password is');

    // The unit: the repository's, with this box's node, and it passes systemd-analyze verify.
    const unit = fs.readFileSync(at('etc/systemd/system/ems.service'), 'utf8');
    for (const line of [
      'User=ems',
      'EnvironmentFile=/etc/ems/ems.env',
      'Environment=NODE_ENV=production',
      'WorkingDirectory=/opt/ems',
      `ExecStart=${nodeBin} --max-semi-space-size=1 --max-old-space-size=256 /opt/ems/dist/src/main.js`,
      'Restart=on-failure',
      'NoNewPrivileges=yes',
      'ProtectSystem=strict',
      'StateDirectory=ems',
      'StateDirectoryMode=0750',
      'MemoryMax=512M',
      'PrivateTmp=yes',
      'ProtectHome=yes',
      'CapabilityBoundingSet=',
    ]) {
      assert.ok(unit.split('\n').includes(line), `unit has "${line}"`);
    }
    assert.equal(unit.split('\n').filter((line) => line.startsWith('ReadWritePaths=')).length, 0, 'the state directory is the only writable path');
    assert.ok(!fs.existsSync(at('etc/systemd/system/ems.service.d')), 'no backup-target drop-in without EMS_BACKUP_TARGET');
    if (hasCommand('systemd-analyze')) {
      const verify = spawnSync('systemd-analyze', ['verify', at('etc/systemd/system/ems.service')], { encoding: 'utf8' });
      assert.equal(verify.status, 0, verify.stderr);
      assert.deepEqual(
        verify.stderr.split('\n').filter((line) => line.includes('ems.service')),
        [],
        'no warning about the unit',
      );
    } else {
      // .ci/run installs Debian's systemd package, so CI always verifies.
      assert.ok(!process.env.CI, 'systemd-analyze is installed in CI');
    }

    // The env file: listens on all interfaces, data in /var/lib/ems, every EMS_* variable of src/platform/config.ts documented.
    const env = fs.readFileSync(at('etc/ems/ems.env'), 'utf8');
    assert.ok(env.split('\n').includes('EMS_HOST=0.0.0.0'));
    assert.ok(env.split('\n').includes('EMS_DATA_DIR=/var/lib/ems'));
    const variables = new Set(fs.readFileSync(path.join(repoRoot, 'src', 'platform', 'config.ts'), 'utf8').match(/EMS_[A-Z0-9_]*[A-Z0-9]/g));
    assert.ok(variables.size >= 20);
    for (const name of variables) assert.match(env, new RegExp(`^#?${name}=`, 'm'), `${name} is in the env file`);

    // The wrapper: runs the compiled CLI as ems with the env file and NODE_ENV=production.
    const wrapper = fs.readFileSync(at('usr/local/bin/emsctl'), 'utf8');
    assert.match(wrapper, /exec runuser -u "\$SERVICE_USER"/);
    assert.match(wrapper, /SERVICE_USER=ems\n/);
    assert.match(wrapper, /ENV_FILE=\/etc\/ems\/ems\.env\n/);
    assert.match(wrapper, /exec env NODE_ENV=production "\$NODE" --env-file="\$ENV_FILE" "\$APP_DIR\/cli\/emsctl\.js" "\$@"/);
    assert.ok(wrapper.includes(`NODE=${nodeBin}\n`));
  });

  test('the staged program runs: compiled service with the env file answers /api/health, compiled emsctl works', { timeout: 60_000 }, async (t) => {
    const { root } = stagedInstall();
    const dataDir = temp('ems-data-');
    // As the unit and the wrapper do: settings from the env file; the test's own values win (the environment beats --env-file).
    const envFile = path.join(root, 'etc/ems/ems.env');
    const service = await spawnService(dataDir, { NODE_ENV: 'production', EMS_HOST: '127.0.0.1' }, [
      `--env-file=${envFile}`,
      path.join(root, 'opt/ems/dist/src/main.js'),
    ]);
    t.after(() => service.child.kill('SIGKILL'));
    const health = await fetch(`${service.url}/api/health`);
    assert.equal(health.status, 200);
    assert.equal(((await health.json()) as { database: string }).database, 'ok');
    service.child.kill('SIGTERM');
    assert.equal(await service.exited, 0);

    const cli = spawnSync(
      process.execPath,
      [`--env-file=${envFile}`, path.join(root, 'opt/ems/cli/emsctl.js'), '--data-dir', dataDir, '--json', 'backup', 'run'],
      {
        encoding: 'utf8',
        env: cleanEnv({ NODE_ENV: 'production' }),
      },
    );
    assert.equal(cli.status, 0, cli.stderr);
    assert.match(JSON.parse(cli.stdout).name, /^ems-.*\.db$/);
  });

  test('an upgrade backs up first, keeps the installed version for --rollback, and rollback swaps back (and forward)', { timeout: 90_000 }, async () => {
    const { root } = stagedInstall();
    const at = (p: string) => path.join(root, p);
    fs.appendFileSync(at('etc/ems/ems.env'), 'EMS_LOG_LEVEL=debug\n');
    const settings = fs.readFileSync(at('etc/ems/ems.env'), 'utf8');
    // A real database, made by the installed program's first start.
    const first = await spawnService(at('var/lib/ems'), { NODE_ENV: 'production', EMS_HOST: '127.0.0.1' }, [
      `--env-file=${at('etc/ems/ems.env')}`,
      at('opt/ems/dist/src/main.js'),
    ]);
    first.child.kill('SIGTERM');
    assert.equal(await first.exited, 0);
    const data = fs.readFileSync(at('var/lib/ems/ems.db'));
    fs.writeFileSync(at('opt/ems/left-over-from-the-old-version.js'), 'old');

    const again = run(install, ['--root', root, '--from-build', buildOfVersion('99.0.0')]);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, new RegExp(`upgrade version ${installedVersion.replace(/\./g, '\\.')} to version 99\\.0\\.0 from `));
    assert.match(again.stdout, /kept the existing settings/);
    assert.match(again.stdout, /upgrade done/);
    const backup = /backup taken: (ems-\S+\.db)/.exec(again.stdout)?.[1];
    assert.ok(backup, again.stdout);
    assert.ok(fs.existsSync(at(`var/lib/ems/backups/${backup}`)), 'the pre-upgrade backup is in the data dir');
    assert.equal(fs.readFileSync(at('opt/ems.previous/.pre-upgrade-backup'), 'utf8'), `${backup}\n`);
    assert.equal(fs.readFileSync(at('etc/ems/ems.env'), 'utf8'), settings);
    // The backup run records itself in the schedule row; the accounts are as they were.
    const users = (file: string) => {
      const db = new Database(file, { readonly: true });
      try {
        return (db.prepare('SELECT username FROM users ORDER BY id').pluck().all() as string[]).join('\n');
      } finally {
        db.close();
      }
    };
    assert.equal(users(at('var/lib/ems/ems.db')), users(at(`var/lib/ems/backups/${backup}`)));
    assert.match(users(at('var/lib/ems/ems.db')), /^admin$/m);
    const upgraded = fs.readFileSync(at('var/lib/ems/ems.db'));
    assert.ok(data.length > 0);
    assert.ok(!fs.existsSync(at('opt/ems/left-over-from-the-old-version.js')), 'the program folder is replaced whole');
    assert.equal(fs.readFileSync(at('opt/ems.previous/left-over-from-the-old-version.js'), 'utf8'), 'old', 'the installed version is kept');
    assert.match(again.stdout, /kept in \/opt\/ems\.previous \(sudo \/opt\/ems\/installer\/install\.sh --rollback\)/);

    // The dry run of a rollback names both versions and builds nothing.
    const dryBack = run(install, ['--root', root, '--rollback', '--dry-run']);
    assert.equal(dryBack.code, 0, dryBack.stderr);
    assert.match(
      dryBack.stdout,
      new RegExp(`roll back from version 99\\.0\\.0 to version ${installedVersion.replace(/\./g, '\\.')} \\(kept in /opt/ems\\.previous\\)`),
    );
    assert.match(dryBack.stdout, /swap \/opt\/ems and \/opt\/ems\.previous \(nothing is downloaded or built\)/);
    assert.doesNotMatch(dryBack.stdout, /npm|build, prune/);

    const back = run(install, ['--root', root, '--rollback']);
    assert.equal(back.code, 0, back.stderr);
    assert.equal(fs.readFileSync(at('opt/ems/left-over-from-the-old-version.js'), 'utf8'), 'old', 'the previous version is back');
    assert.ok(fs.existsSync(at('opt/ems.previous/dist/src/main.js')) && !fs.existsSync(at('opt/ems.previous/left-over-from-the-old-version.js')));
    assert.match(back.stdout, new RegExp(`emsctl backup restore ${backup.replace(/\./g, '\\.')}`), 'names the backup taken before the upgrade');
    assert.deepEqual(fs.readFileSync(at('var/lib/ems/ems.db')), upgraded, 'a rollback leaves the data alone');

    const forward = run(install, ['--root', root, '--rollback']);
    assert.equal(forward.code, 0, forward.stderr);
    assert.ok(!fs.existsSync(at('opt/ems/left-over-from-the-old-version.js')), 'rolling back again rolls forward');

    const uninstalled = run(uninstall, ['--root', root]);
    assert.equal(uninstalled.code, 0, uninstalled.stderr);
    assert.ok(!fs.existsSync(at('opt/ems')) && !fs.existsSync(at('opt/ems.previous')));
    const nothing = run(install, ['--root', root, '--rollback']);
    assert.notEqual(nothing.code, 0);
    assert.match(nothing.stderr, /no previous version to roll back to/);
  });

  test('an upgrade whose backup fails is refused: the installed version stays as it was', () => {
    const { root } = stagedInstall();
    const at = (p: string) => path.join(root, p);
    fs.writeFileSync(at('var/lib/ems/ems.db'), 'not a database');
    fs.writeFileSync(at('opt/ems/marker-of-the-installed-version'), '');
    const before = snapshot(at('opt'));

    const refused = run(install, ['--root', root, '--from-build', buildOfVersion('99.0.0')]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /refusing to upgrade: the backup before the upgrade failed .*the installed version is unchanged/);
    assert.deepEqual(snapshot(at('opt')), before, 'no new program, no previous, nothing moved');
    assert.equal(fs.readFileSync(at('var/lib/ems/ems.db'), 'utf8'), 'not a database');
  });

  test('--dry-run runs the checks and says what it would do, changing nothing', () => {
    const fresh = temp('ems-root-');
    const dry = run(install, ['--root', fresh, '--from-build', buildDir, '--dry-run', '--tls-self-signed', '--tls-name', 'ems.example.lan']);
    assert.equal(dry.code, 0, dry.stderr);
    assert.match(dry.stdout, /checks passed: node \d+\.\d+\.\d+ \(linux-\w+, ABI \d+\)/);
    assert.match(dry.stdout, /dry run: nothing is changed/);
    assert.match(dry.stdout, /create a self-signed certificate for ems\.example\.lan/);
    assert.deepEqual(fs.readdirSync(fresh), [], 'nothing written');

    const { root } = stagedInstall();
    const before = snapshot(root);
    const upgrade = run(install, ['--root', root, '--from-build', buildOfVersion('99.0.0'), '--dry-run']);
    assert.equal(upgrade.code, 0, upgrade.stderr);
    assert.match(upgrade.stdout, /upgrade version \S+ to version 99\.0\.0/);
    assert.match(upgrade.stdout, /keep the installed version in \/opt\/ems\.previous/);
    assert.match(upgrade.stdout, /run the runtime check on the Node that will run the new program/);
    assert.match(upgrade.stdout, /should it not be healthy within 90 s \(or stop at start\): roll back to version \S+ and its database/);
    const same = run(install, ['--root', root, '--from-build', buildDir, '--dry-run']);
    assert.equal(same.code, 0, same.stderr);
    assert.match(same.stdout, /reinstall version \S+ \(the version installed\)/);
    assert.match(same.stdout, /\/opt\/ems\.previous stays as it is/);
    const rollback = run(install, ['--root', root, '--rollback', '--dry-run']);
    assert.notEqual(rollback.code, 0, 'nothing to roll back to after a first install');
    assert.deepEqual(snapshot(root), before);
  });

  test('checks come first: too little free space, or (on this box) no running systemd, stop it before anything changes', () => {
    // df as the installer reads it (POSIX -P), with 50 MB free everywhere.
    const fakeBin = temp('ems-fake-df-');
    fs.writeFileSync(
      path.join(fakeBin, 'df'),
      '#!/bin/sh\necho "Filesystem 1024-blocks Used Available Capacity Mounted on"\necho "/dev/fake 1000000 948800 51200 95% /"\n',
      { mode: 0o755 },
    );
    const root = temp('ems-root-');
    const full = run(install, ['--root', root, '--from-build', buildDir], { PATH: `${fakeBin}:${process.env.PATH}` });
    assert.equal(full.code, 1);
    assert.match(full.stderr, /not enough free space for the program: \/opt has 50 MB free, 400 MB needed/);
    assert.deepEqual(fs.readdirSync(root), []);

    // A real install (no --root) on a box without a running systemd: refused before anything is written.
    // Where systemd does run, the same check passes and a dry run shows it, still without writing anything.
    const systemdRuns = fs.existsSync('/run/systemd/system');
    const real = run(install, ['--from-build', buildDir, ...(systemdRuns ? ['--dry-run'] : [])]);
    if (process.getuid?.() !== 0) {
      assert.match(real.stderr, /run as root/);
    } else if (systemdRuns) {
      assert.equal(real.code, 0, real.stderr);
      assert.match(real.stdout, /dry run: nothing is changed/);
    } else {
      assert.equal(real.code, 1);
      assert.match(real.stderr, /systemd is not running on this box \(PID 1 is .*\); EMS runs as a systemd service\. Nothing was changed/);
      assert.ok(!fs.existsSync('/opt/ems.new') && !fs.existsSync('/etc/ems/ems.env'));
    }
  });

  test('--tls-self-signed makes a certificate for the name and sets EMS_TLS_CERT/EMS_TLS_KEY; an upgrade keeps it', () => {
    const root = temp('ems-root-');
    const at = (p: string) => path.join(root, p);
    const result = run(install, ['--root', root, '--from-build', buildDir, '--tls-self-signed', '--tls-name', 'ems.plant.lan']);
    assert.equal(result.code, 0, result.stderr);
    const text = execFileSync('openssl', ['x509', '-in', at('etc/ems/tls/ems.crt'), '-noout', '-subject', '-ext', 'subjectAltName'], { encoding: 'utf8' });
    assert.match(text, /CN ?= ?ems\.plant\.lan/);
    assert.match(text, /DNS:ems\.plant\.lan, DNS:localhost, IP Address:127\.0\.0\.1/);
    // Every address of the box is named too, and the URL printed is one the certificate names.
    const addresses = execFileSync('hostname', ['-I'], { encoding: 'utf8' })
      .split(/\s+/)
      .filter((ip) => ip && !ip.startsWith('fe80:'));
    for (const ip of addresses.filter((ip) => !ip.includes(':'))) assert.ok(text.includes(`IP Address:${ip}`), `the certificate names ${ip}: ${text}`);
    assert.equal(text.match(/IP Address:/g)?.length, 1 + addresses.length, 'loopback and every address of the box (IPv6 too)');
    assert.match(result.stdout, /on the box EMS will answer at https:\/\/ems\.plant\.lan:3000\//);
    assert.match(result.stdout, /replace both files with a CA-signed pair, then: systemctl kill -s HUP ems/);
    assert.doesNotMatch(result.stdout, /systemctl reload/);
    assert.equal(mode(at('etc/ems/tls/ems.key')), 0o640, 'the key is readable by root and the ems group only');
    assert.equal(mode(at('etc/ems/tls')), 0o750);
    const env = fs.readFileSync(at('etc/ems/ems.env'), 'utf8').split('\n');
    assert.deepEqual(
      env.filter((line) => /^#?EMS_TLS_(CERT|KEY)=/.test(line)),
      ['EMS_TLS_CERT=/etc/ems/tls/ems.crt', 'EMS_TLS_KEY=/etc/ems/tls/ems.key'],
    );
    const cert = fs.readFileSync(at('etc/ems/tls/ems.crt'));

    const again = run(install, ['--root', root, '--from-build', buildDir, '--tls-self-signed']);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /kept the certificate/);
    assert.deepEqual(fs.readFileSync(at('etc/ems/tls/ems.crt')), cert);
    assert.equal(
      fs
        .readFileSync(at('etc/ems/ems.env'), 'utf8')
        .split('\n')
        .filter((line) => line.startsWith('EMS_TLS_CERT=')).length,
      1,
    );

    // A box with no address but loopback (hostname -I lists none): the certificate names the name and loopback.
    const fakeBin = temp('ems-no-addresses-');
    fs.writeFileSync(
      path.join(fakeBin, 'hostname'),
      `#!/bin/sh\n[ "$1" = -I ] && exit 0\nexec ${execFileSync('sh', ['-c', 'command -v hostname'], { encoding: 'utf8' }).trim()} "$@"\n`,
      { mode: 0o755 },
    );
    const lonely = temp('ems-root-');
    const noAddresses = run(install, ['--root', lonely, '--from-build', buildDir, '--tls-self-signed', '--tls-name', 'ems.lonely.lan'], {
      PATH: `${fakeBin}:${process.env.PATH}`,
    });
    assert.equal(noAddresses.code, 0, noAddresses.stderr + noAddresses.stdout);
    const lonelyText = execFileSync('openssl', ['x509', '-in', path.join(lonely, 'etc/ems/tls/ems.crt'), '-noout', '-ext', 'subjectAltName'], {
      encoding: 'utf8',
    });
    assert.match(lonelyText, /DNS:ems\.lonely\.lan, DNS:localhost, IP Address:127\.0\.0\.1\s*$/);
    assert.match(noAddresses.stdout, /on the box EMS will answer at https:\/\/ems\.lonely\.lan:3000\//);

    const bad = run(install, ['--root', temp('ems-root-'), '--from-build', buildDir, '--tls-self-signed', '--tls-name', 'bad name;rm']);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /--tls-name: "bad name;rm" is not a host name/);
  });

  test('EMS_BACKUP_TARGET in the env file gets a drop-in that lets the service write there', () => {
    const { root } = stagedInstall();
    const at = (p: string) => path.join(root, p);
    fs.appendFileSync(at('etc/ems/ems.env'), 'EMS_BACKUP_TARGET=/mnt/ems-backup\n');
    const again = run(install, ['--root', root, '--from-build', buildDir]);
    assert.equal(again.code, 0, again.stderr);
    const dropIn = fs.readFileSync(at('etc/systemd/system/ems.service.d/backup-target.conf'), 'utf8');
    assert.match(dropIn, /^\[Service\]\nReadWritePaths=-\/mnt\/ems-backup\n/m);
    const removed = run(uninstall, ['--root', root]);
    assert.equal(removed.code, 0, removed.stderr);
    assert.ok(!fs.existsSync(at('etc/systemd/system/ems.service.d')));
  });

  test('re-running the installer on the installed version (after setting EMS_BACKUP_TARGET) is a reinstall: /opt/ems.previous stays', () => {
    const { root } = stagedInstall();
    const at = (p: string) => path.join(root, p);
    // An upgrade first, so that there is a real rollback target to lose.
    const upgraded = run(install, ['--root', root, '--from-build', buildOfVersion('99.0.0')]);
    assert.equal(upgraded.code, 0, upgraded.stderr);
    fs.writeFileSync(at('opt/ems.previous/marker-of-the-rollback-target'), 'keep me');
    fs.writeFileSync(at('opt/ems/left-over'), 'x');
    const previous = snapshot(at('opt/ems.previous'));
    fs.appendFileSync(at('etc/ems/ems.env'), 'EMS_BACKUP_TARGET=/mnt/ems-backup\n');

    const again = run(install, ['--root', root, '--from-build', buildOfVersion('99.0.0')]);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /reinstall version 99\.0\.0 \(the version installed\)/);
    assert.doesNotMatch(again.stdout, /backup taken|upgrade done|first install/);
    assert.match(
      again.stdout,
      new RegExp(`/opt/ems\\.previous \\(version ${installedVersion.replace(/\./g, '\\.')}\\) is kept as it was: still the target of --rollback`),
    );
    assert.match(again.stdout, /reinstall done/);
    assert.deepEqual(snapshot(at('opt/ems.previous')), previous, 'the rollback target is untouched');
    assert.ok(!fs.existsSync(at('opt/ems/left-over')), 'the program itself is replaced');
    assert.equal(JSON.parse(fs.readFileSync(at('opt/ems/package.json'), 'utf8')).version, '99.0.0');
    assert.match(fs.readFileSync(at('etc/systemd/system/ems.service.d/backup-target.conf'), 'utf8'), /ReadWritePaths=-\/mnt\/ems-backup/);
    assert.deepEqual(fs.readdirSync(at('opt')).sort(), ['ems', 'ems.previous']);
  });

  test('an install on the data an uninstall kept says so, and makes no new admin password', () => {
    const { root } = stagedInstall();
    const at = (p: string) => path.join(root, p);
    fs.writeFileSync(at('var/lib/ems/ems.db'), 'the data');
    assert.equal(run(uninstall, ['--root', root]).code, 0);
    const dry = run(install, ['--root', root, '--from-build', buildDir, '--dry-run']);
    assert.match(dry.stdout, /use the data kept in \/var\/lib\/ems \(its users, settings and history; no new admin password\)/);
    const again = run(install, ['--root', root, '--from-build', buildDir]);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /install version \S+ from /);
    assert.match(again.stdout, /installed on the data kept in \/var\/lib\/ems: its users, settings and history are as they were/);
    assert.doesNotMatch(again.stdout, /first install|initial-admin-password/);
    assert.equal(fs.readFileSync(at('var/lib/ems/ems.db'), 'utf8'), 'the data');
  });

  test('node linked into a home directory is judged by where the link leads (the service could not run it)', () => {
    // nvm's layout: a node in the home directory, linked from a directory on PATH that is not in a home.
    assert.match(os.homedir(), /^\/(home|root)(\/|$)/, 'the test user has a home directory under /home or /root');
    const home = fs.mkdtempSync(path.join(os.homedir(), '.ems-test-nvm-'));
    temps.push(home);
    const realNode = path.join(home, 'node');
    fs.writeFileSync(realNode, `#!/bin/sh\nexec ${process.execPath} "$@"\n`, { mode: 0o755 });
    const bin = temp('ems-usr-local-bin-');
    fs.symlinkSync(realNode, path.join(bin, 'node'));
    const result = run(install, ['--root', temp('ems-root-'), '--from-build', buildDir, '--dry-run'], { PATH: `${bin}:${process.env.PATH}` });
    assert.equal(result.code, 0, result.stderr);
    assert.ok(
      result.stdout.includes(
        `warning: node at ${path.join(bin, 'node')} (a link to ${realNode}) lives in a home directory, which the service on a real box cannot see`,
      ),
      result.stdout,
    );
    // Node on a system path raises no warning.
    assert.doesNotMatch(run(install, ['--root', temp('ems-root-'), '--from-build', buildDir, '--dry-run']).stdout, /warning: node/);
  });

  test("the JSON-log command in the unit, the installer and docs/operating.md keeps the service lines and skips systemd's", async (t) => {
    const command = "journalctl -u ems -o cat | jq -R 'fromjson?'";
    assert.ok(fs.readFileSync(path.join(repoRoot, 'systemd', 'ems.service'), 'utf8').includes(command));
    assert.ok(fs.readFileSync(path.join(repoRoot, 'docs', 'operating.md'), 'utf8').includes(command));
    assert.ok(stagedInstall().stdout.includes(command));
    // What `journalctl -o cat` prints: systemd's lines around the service's own JSON lines (real ones, from a start).
    const dataDir = temp('ems-data-');
    const service = await spawnService(dataDir, { NODE_ENV: 'production' }, [path.join(buildDir, 'dist', 'src', 'main.js')]);
    t.after(() => service.child.kill('SIGKILL'));
    service.child.kill('SIGTERM');
    await service.exited;
    const serviceLines = service.lines().map((line) => JSON.stringify(line));
    assert.ok(serviceLines.length >= 2);
    const journal = [
      'Started ems.service - EMS energy-management service.',
      ...serviceLines,
      'Stopping ems.service - EMS energy-management service...',
      'ems.service: Deactivated successfully.',
    ].join('\n');
    const filter = spawnSync('jq', ['-c', '-R', 'fromjson?'], { input: journal, encoding: 'utf8' });
    assert.equal(filter.status, 0, filter.stderr);
    assert.deepEqual(
      filter.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line)),
      service.lines(),
    );
    // The old advice fails on the same input.
    assert.notEqual(spawnSync('jq', ['.'], { input: journal, encoding: 'utf8' }).status, 0);
  });

  test('npm run package makes a release tarball with its own Node that installs with no Node, npm, compiler or registry, and runs', {
    timeout: 420_000,
  }, async (t) => {
    // The packaging script on a tree like a checkout after "npm run build" (dist/ is the one compiled above).
    const tree = temp('ems-pack-');
    for (const item of ['package.json', 'package-lock.json', 'README.md', 'docs', 'src', 'cli', 'systemd', 'installer']) {
      fs.cpSync(path.join(repoRoot, item), path.join(tree, item), { recursive: true });
    }
    fs.cpSync(path.join(buildDir, 'dist'), path.join(tree, 'dist'), { recursive: true });
    // npm run build also builds the staff app into dist/web (vite); the release must carry it.
    if (webBuildIsStale()) await buildWeb();
    fs.cpSync(path.join(repoRoot, 'dist', 'web'), path.join(tree, 'dist', 'web'), { recursive: true });
    fs.symlinkSync(path.join(repoRoot, 'node_modules'), path.join(tree, 'node_modules'));
    const out = temp('ems-release-');
    // The runtime check at the installs' 1,500 statements (see run above): 5,000 by default took 6 s of this test.
    const packed = spawnSync('bash', [path.join(tree, 'installer', 'package.sh'), '--no-build', '--out', out], {
      encoding: 'utf8',
      env: cleanEnv({ EMS_CHECK_STATEMENTS: '1500' }),
    });
    assert.equal(packed.status, 0, packed.stderr + packed.stdout);
    const [tarball] = fs.readdirSync(out);
    assert.ok(packed.stdout.includes(`installs with: tar -xzf ${tarball} && sudo ems/installer/install.sh --from-tarball ${tarball}`), packed.stdout);
    assert.match(tarball, new RegExp(`^ems-\\d+\\.\\d+\\.\\d+-${process.platform}-${process.arch}\\.tar\\.gz$`));
    assert.match(packed.stderr, /check-runtime: ok on node 24\.\d+\.\d+ .* under forced GC/, 'the packaged tree passed the runtime check on its own Node');

    // Every build tool on PATH, and Node itself, is a trap that records being called: the box needs none of them.
    const traps = temp('ems-no-tools-');
    const called = path.join(traps, 'called.log');
    for (const tool of ['node', 'nodejs', 'npm', 'npx', 'node-gyp', 'gcc', 'g++', 'cc', 'c++', 'make', 'python3']) {
      fs.writeFileSync(path.join(traps, tool), `#!/bin/sh\necho ${tool} >>${called}\nexit 97\n`, { mode: 0o755 });
    }
    const root = temp('ems-root-');
    const at = (p: string) => path.join(root, p);
    const installed = run(install, ['--root', root, '--from-tarball', path.join(out, tarball)], {
      PATH: `${traps}:${process.env.PATH}`,
      npm_config_registry: 'http://127.0.0.1:9/',
    });
    assert.equal(installed.code, 0, installed.stderr + installed.stdout);
    assert.ok(!fs.existsSync(called), `no Node or build tool of the box was run: ${fs.existsSync(called) ? fs.readFileSync(called, 'utf8') : ''}`);
    // The release's own Node, the one installer/runtime.json names, runs the service and emsctl.
    const runtime = JSON.parse(fs.readFileSync(path.join(repoRoot, 'installer', 'runtime.json'), 'utf8')) as {
      node: string;
      dependencies: Record<string, string>;
    };
    const releaseNode = at('opt/ems/runtime/bin/node');
    assert.equal(execFileSync(releaseNode, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim(), runtime.node);
    const releaseAbi = execFileSync(releaseNode, ['-p', 'process.versions.modules'], { encoding: 'utf8' }).trim();
    assert.match(
      installed.stdout,
      new RegExp(
        `checks passed: ${process.platform}-${process.arch}; the service runs on the release's own node ${runtime.node} \\(no Node needed on the box\\)`,
      ),
    );
    assert.match(
      installed.stdout,
      new RegExp(`check-runtime: ok on node ${runtime.node} \\(ABI ${releaseAbi}\\)`),
      'the installer ran the runtime check on it',
    );
    assert.ok(fs.readFileSync(at('etc/systemd/system/ems.service'), 'utf8').includes('\nExecStart=/opt/ems/runtime/bin/node --max-semi-space-size=1 '));
    assert.ok(fs.readFileSync(at('usr/local/bin/emsctl'), 'utf8').includes('\nNODE=/opt/ems/runtime/bin/node\n'));
    const release = JSON.parse(fs.readFileSync(at('opt/ems/ems-release.json'), 'utf8'));
    assert.equal(release.nodeAbi, releaseAbi);
    assert.equal(release.runtime, `node ${runtime.node}`);
    // The dependencies as they ship: runtime.json's versions, in package.json and in the modules.
    for (const [name, wanted] of Object.entries(runtime.dependencies)) {
      assert.equal(JSON.parse(fs.readFileSync(at('opt/ems/package.json'), 'utf8')).dependencies[name], wanted);
      assert.equal(JSON.parse(fs.readFileSync(at(`opt/ems/node_modules/${name}/package.json`), 'utf8')).version, wanted);
    }
    assert.ok(!fs.lstatSync(at('opt/ems/node_modules')).isSymbolicLink());
    const nativeBinaries = (fs.readdirSync(at('opt/ems/node_modules/better-sqlite3'), { recursive: true, encoding: 'utf8' }) as string[]).filter((f) =>
      f.endsWith('.node'),
    );
    assert.deepEqual(nativeBinaries, [`prebuilds/${process.platform}-${process.arch}.node`], "the native binary ships built, this platform's only");
    assert.ok(fs.statSync(at('opt/ems/dist/web/index.html')).isFile(), 'the staff app ships built');
    assert.ok(!fs.existsSync(at('opt/ems/node_modules/typescript')), 'production modules only');
    assert.ok(!fs.existsSync(at('opt/ems/node_modules/better-sqlite3/deps')), 'no sources of the native modules');
    assert.ok(!fs.existsSync(at('opt/ems/node_modules/exceljs/dist')), 'no browser bundles');
    assert.deepEqual(fs.readdirSync(at('opt')).sort(), ['ems'], 'nothing left from unpacking');
    // Lean (issue 57): compiled code only, no TypeScript runner, no source maps, no packages' tests; the docs the README
    // links to ship with it; ems-release.json leads the archive, so the installer reads it without unpacking the rest.
    const shipped = fs.readdirSync(at('opt/ems'), { recursive: true, encoding: 'utf8' }) as string[];
    const own = shipped.filter((f) => !f.startsWith('node_modules/') && !f.startsWith('runtime/'));
    assert.deepEqual(
      own.filter((f) => /\.tsx?$/.test(f)),
      [],
      'no TypeScript source ships',
    );
    assert.deepEqual(
      own.filter((f) => f.endsWith('.map')),
      [],
      'no source maps',
    );
    assert.ok(!fs.existsSync(at('opt/ems/node_modules/tsx')) && !fs.existsSync(at('opt/ems/node_modules/esbuild')), 'no tsx, no esbuild');
    assert.deepEqual(
      shipped.filter((f) => f.startsWith('node_modules/') && /\/(test|tests|__tests__|example|examples)$/.test(f)),
      [],
      "no package's tests or examples",
    );
    const readme = fs.readFileSync(at('opt/ems/README.md'), 'utf8');
    const links = [...readme.matchAll(/\]\((docs\/[^)#]+)/g)].map((m) => m[1]);
    assert.ok(links.length >= 18, `the README links its docs: ${links.length}`);
    assert.deepEqual(
      links.filter((link) => !fs.existsSync(at(`opt/ems/${link}`))),
      [],
      'every doc the README links to ships',
    );
    assert.equal(
      execFileSync('tar', ['-tzf', path.join(out, tarball)], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }).split('\n')[0],
      'ems/ems-release.json',
    );
    // The font files the PDFs name ship (the others are trimmed).
    const named = ['src/reporting/reports/pdfText.ts', 'src/billing/documents.ts'].flatMap((file) => [
      ...fs.readFileSync(path.join(repoRoot, file), 'utf8').matchAll(/'(Noto[\w-]+\.(?:ttf|otf))'/g),
    ]);
    assert.ok(named.length >= 6, `font names found in the PDF code: ${named.length}`);
    const fonts = shipped.filter((f) => /^node_modules\/@embedpdf\/[^/]+\/fonts\//.test(f)).map((f) => path.basename(f));
    assert.deepEqual(
      named.map((m) => m[1]).filter((font) => !fonts.includes(font)),
      [],
      'every font a PDF uses ships',
    );
    const megabytes = fs.statSync(path.join(out, tarball)).size / 2 ** 20;
    console.log(`release tarball ${megabytes.toFixed(1)} MiB; unpacked ${execFileSync('du', ['-sm', at('opt/ems')], { encoding: 'utf8' }).split('\t')[0]} MB`);
    assert.ok(megabytes <= 70, `the tarball is at most 70 MiB (${megabytes.toFixed(1)})`);

    // The installed release runs: the compiled service answers health and emsctl status reads it.
    const dataDir = temp('ems-data-');
    const envFile = at('etc/ems/ems.env');
    const service = await spawnService(
      dataDir,
      { NODE_ENV: 'production', EMS_HOST: '127.0.0.1' },
      [`--env-file=${envFile}`, at('opt/ems/dist/src/main.js')],
      releaseNode,
    );
    t.after(() => service.child.kill('SIGKILL'));
    const health = (await (await fetch(`${service.url}/api/health`)).json()) as { database: string; backup: { enabled: boolean } };
    assert.equal(health.database, 'ok');
    assert.equal(health.backup.enabled, true, 'backups on from the first start');
    const status = spawnSync(releaseNode, [`--env-file=${envFile}`, at('opt/ems/cli/emsctl.js'), '--data-dir', dataDir, '--json', 'status'], {
      encoding: 'utf8',
      env: cleanEnv({ NODE_ENV: 'production', EMS_PORT: new URL(service.url).port, EMS_HOST: '127.0.0.1' }),
    });
    assert.equal(status.status, 0, status.stderr);
    assert.equal(JSON.parse(status.stdout).service.state, 'running');
    // A hand-run emsctl without NODE_ENV runs the compiled CLI too: the release has no sources to run instead.
    const handRun = spawnSync(releaseNode, [at('opt/ems/cli/emsctl.js'), '--data-dir', dataDir, '--json', 'site', 'show'], {
      encoding: 'utf8',
      env: cleanEnv({}),
    });
    assert.equal(handRun.status, 0, handRun.stderr);
    assert.equal(JSON.parse(handRun.stdout).timezone, 'UTC');
    service.child.kill('SIGTERM');
    assert.equal(await service.exited, 0);
  });

  test('--from-tarball refuses a release for another Node ABI, or a file that is no release, before changing anything', () => {
    const fake = temp('ems-fake-release-');
    fs.mkdirSync(path.join(fake, 'ems'));
    fs.writeFileSync(
      path.join(fake, 'ems', 'ems-release.json'),
      JSON.stringify({ name: 'ems', version: '9.9.9', platform: process.platform, arch: process.arch, nodeAbi: '1', builtWith: 'v0.1.0' }, null, 2),
    );
    execFileSync('tar', ['-czf', path.join(fake, 'old.tar.gz'), '-C', fake, 'ems']);
    fs.writeFileSync(path.join(fake, 'other.txt'), 'x');
    execFileSync('tar', ['-czf', path.join(fake, 'other.tar.gz'), '-C', fake, 'other.txt']);
    const root = temp('ems-root-');
    const abi = run(install, ['--root', root, '--from-tarball', path.join(fake, 'old.tar.gz')]);
    assert.equal(abi.code, 1);
    assert.match(abi.stderr, new RegExp(`built for Node ABI 1 \\(v0\\.1\\.0\\), this node .* has ABI ${process.versions.modules}`));
    const other = run(install, ['--root', root, '--from-tarball', path.join(fake, 'other.tar.gz')]);
    assert.equal(other.code, 1);
    assert.match(other.stderr, /is not an EMS release/);
    assert.deepEqual(fs.readdirSync(root), []);
  });

  test('uninstall removes the program and keeps data and settings; --purge removes those too', () => {
    const { root } = stagedInstall();
    const at = (p: string) => path.join(root, p);
    fs.writeFileSync(at('var/lib/ems/ems.db'), 'the data');

    const kept = run(uninstall, ['--root', root]);
    assert.equal(kept.code, 0, kept.stderr);
    for (const gone of ['opt/ems', 'usr/local/bin/emsctl', 'etc/systemd/system/ems.service']) assert.ok(!fs.existsSync(at(gone)), `${gone} removed`);
    assert.equal(fs.readFileSync(at('var/lib/ems/ems.db'), 'utf8'), 'the data');
    assert.ok(fs.existsSync(at('etc/ems/ems.env')));
    assert.match(kept.stdout, /kept \/var\/lib\/ems/);

    const purged = run(uninstall, ['--root', root, '--purge']);
    assert.equal(purged.code, 0, purged.stderr);
    assert.ok(!fs.existsSync(at('var/lib/ems')));
    assert.ok(!fs.existsSync(at('etc/ems')));
  });

  test('refuses a Node.js older than 20.18, and unknown options', () => {
    const fakeBin = temp('ems-fake-node-');
    fs.writeFileSync(path.join(fakeBin, 'node'), '#!/bin/sh\necho 20.17.9\n', { mode: 0o755 });
    const root = temp('ems-root-');
    const old = run(install, ['--root', root, '--from-build', buildDir], { PATH: `${fakeBin}:${process.env.PATH}` });
    assert.notEqual(old.code, 0);
    assert.match(old.stderr, /Node\.js >= 20\.18\.0 is required, found 20\.17\.9/);
    assert.deepEqual(fs.readdirSync(root), [], 'nothing installed');

    const unknown = run(install, ['--root', root, '--frobnicate']);
    assert.notEqual(unknown.code, 0);
    assert.match(unknown.stderr, /unknown option: --frobnicate/);
  });
});
