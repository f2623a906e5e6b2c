// installer/install.sh and uninstall.sh under --root into temp dirs: files, modes, the unit, the env file, upgrade, uninstall, the staged program running.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { tempDir } from './helpers/server.ts';
import { cleanEnv, repoRoot, spawnService } from './helpers/serviceProcess.ts';

const install = path.join(repoRoot, 'installer', 'install.sh');
const uninstall = path.join(repoRoot, 'installer', 'uninstall.sh');
const nodeBin = execFileSync('sh', ['-c', 'command -v node'], { encoding: 'utf8' }).trim();

function hasCommand(name: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${name}`]).status === 0;
}

function run(script: string, args: string[], env: Record<string, string> = {}) {
  const result = spawnSync('bash', [script, ...args], { encoding: 'utf8', env: cleanEnv(env) });
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
 * the installer's default and is what an admin runs.
 */
let buildDir: string;
before(() => {
  buildDir = temp('ems-build-');
  for (const item of ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'src', 'cli']) {
    fs.cpSync(path.join(repoRoot, item), path.join(buildDir, item), { recursive: true });
  }
  fs.symlinkSync(path.join(repoRoot, 'node_modules'), path.join(buildDir, 'node_modules'));
  // Type errors are the typecheck step's business; tsc still emits, and the files below must exist.
  spawnSync(process.execPath, [path.join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], { cwd: buildDir });
  assert.ok(fs.existsSync(path.join(buildDir, 'dist', 'src', 'main.js')), 'tsc produced dist/src/main.js');
});

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
    const result = spawnSync('shellcheck', [install, uninstall, path.join(root, 'usr/local/bin/emsctl')], { encoding: 'utf8' });
    assert.equal(result.status, 0, result.stdout);
  });

  test('install --root lays out program, data, settings, unit and wrapper with the right modes', () => {
    const { root, stdout } = stagedInstall();
    const at = (p: string) => path.join(root, p);

    for (const file of ['opt/ems/dist/src/main.js', 'opt/ems/dist/cli/emsctl.js', 'opt/ems/cli/emsctl.js', 'opt/ems/package.json', 'opt/ems/src/db/migrations/0000_init.sql']) {
      assert.ok(fs.existsSync(at(file)), file);
    }
    assert.equal(mode(at('opt/ems/dist/src/main.js')), 0o644);
    assert.equal(mode(at('opt/ems')), 0o755);
    assert.equal(mode(at('var/lib/ems')), 0o750);
    assert.equal(mode(at('etc/ems')), 0o750);
    assert.equal(mode(at('etc/ems/ems.env')), 0o640, 'the env file may hold secrets');
    assert.equal(mode(at('etc/systemd/system/ems.service')), 0o644);
    assert.equal(mode(at('usr/local/bin/emsctl')), 0o755);
    assert.ok(!fs.existsSync(at('opt/ems.new')) && !fs.existsSync(at('opt/ems.old')));
    assert.match(stdout, /\/var\/lib\/ems\/initial-admin-password/, 'says where the initial admin password is');

    // The unit: the repository's, with this box's node, and it passes systemd-analyze verify.
    const unit = fs.readFileSync(at('etc/systemd/system/ems.service'), 'utf8');
    for (const line of [
      'User=ems',
      'EnvironmentFile=/etc/ems/ems.env',
      'Environment=NODE_ENV=production',
      'WorkingDirectory=/opt/ems',
      `ExecStart=${nodeBin} /opt/ems/dist/src/main.js`,
      'Restart=on-failure',
      'NoNewPrivileges=yes',
      'ProtectSystem=strict',
      'ReadWritePaths=/var/lib/ems',
      'PrivateTmp=yes',
      'ProtectHome=yes',
      'CapabilityBoundingSet=',
    ]) {
      assert.ok(unit.split('\n').includes(line), `unit has "${line}"`);
    }
    assert.equal(unit.split('\n').filter((line) => line.startsWith('ReadWritePaths=')).length, 1, 'the data dir is the only writable path');
    if (hasCommand('systemd-analyze')) {
      const verify = spawnSync('systemd-analyze', ['verify', at('etc/systemd/system/ems.service')], { encoding: 'utf8' });
      assert.equal(verify.status, 0, verify.stderr);
      assert.deepEqual(verify.stderr.split('\n').filter((line) => line.includes('ems.service')), [], 'no warning about the unit');
    } else {
      // .ci/run installs Debian's systemd package, so CI always verifies.
      assert.ok(!process.env.CI, 'systemd-analyze is installed in CI');
    }

    // The env file: listens on all interfaces, data in /var/lib/ems, every EMS_* variable of src/config.ts documented.
    const env = fs.readFileSync(at('etc/ems/ems.env'), 'utf8');
    assert.ok(env.split('\n').includes('EMS_HOST=0.0.0.0'));
    assert.ok(env.split('\n').includes('EMS_DATA_DIR=/var/lib/ems'));
    const variables = new Set(fs.readFileSync(path.join(repoRoot, 'src', 'config.ts'), 'utf8').match(/EMS_[A-Z0-9_]*[A-Z0-9]/g));
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
    const service = await spawnService(dataDir, { NODE_ENV: 'production', EMS_HOST: '127.0.0.1' }, [`--env-file=${envFile}`, path.join(root, 'opt/ems/dist/src/main.js')]);
    t.after(() => service.child.kill('SIGKILL'));
    const health = await fetch(`${service.url}/api/health`);
    assert.equal(health.status, 200);
    assert.equal(((await health.json()) as { database: string }).database, 'ok');
    service.child.kill('SIGTERM');
    assert.equal(await service.exited, 0);

    const cli = spawnSync(process.execPath, [`--env-file=${envFile}`, path.join(root, 'opt/ems/cli/emsctl.js'), '--data-dir', dataDir, '--json', 'backup', 'run'], {
      encoding: 'utf8',
      env: cleanEnv({ NODE_ENV: 'production' }),
    });
    assert.equal(cli.status, 0, cli.stderr);
    assert.match(JSON.parse(cli.stdout).name, /^ems-.*\.db$/);
  });

  test('running it again upgrades: program replaced, data and settings kept', () => {
    const { root } = stagedInstall();
    const at = (p: string) => path.join(root, p);
    fs.appendFileSync(at('etc/ems/ems.env'), 'EMS_LOG_LEVEL=debug\n');
    const settings = fs.readFileSync(at('etc/ems/ems.env'), 'utf8');
    fs.writeFileSync(at('var/lib/ems/ems.db'), 'the data');
    fs.writeFileSync(at('opt/ems/left-over-from-the-old-version.js'), '');

    const again = run(install, ['--root', root, '--from-build', buildDir]);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /kept the existing settings/);
    assert.match(again.stdout, /upgrade done/);
    assert.equal(fs.readFileSync(at('etc/ems/ems.env'), 'utf8'), settings);
    assert.equal(fs.readFileSync(at('var/lib/ems/ems.db'), 'utf8'), 'the data');
    assert.ok(!fs.existsSync(at('opt/ems/left-over-from-the-old-version.js')), 'the program folder is replaced whole');
    assert.ok(fs.existsSync(at('opt/ems/dist/src/main.js')));
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
