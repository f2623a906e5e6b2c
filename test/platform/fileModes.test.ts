// Nothing under the data dir is readable by other local users, whatever the umask: the database holds the signing secret.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { runCli } from '../helpers/cli.ts';
import { spawnService } from '../helpers/serviceProcess.ts';
import { tempDir } from '../helpers/server.ts';

function walk(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? [full, ...walk(full)] : [full];
  });
}

const modeOf = (file: string) => fs.statSync(file).mode & 0o777;

test('with umask 022, the service and emsctl create nothing group-writable or other-readable under the data dir', async (t) => {
  const previous = process.umask(0o022);
  t.after(() => process.umask(previous));
  const root = tempDir();
  const dataDir = path.join(root, 'data');
  // An earlier version left a world-readable database behind: it is tightened on open.
  fs.mkdirSync(dataDir, { mode: 0o755 });
  fs.writeFileSync(path.join(dataDir, 'ems.db'), '');
  fs.chmodSync(path.join(dataDir, 'ems.db'), 0o644);

  const service = await spawnService(dataDir);
  service.child.kill('SIGTERM');
  await service.exited;
  const cliBackup = await runCli(['--data-dir', dataDir, 'backup', 'run']);
  assert.equal(cliBackup.code, 0, cliBackup.stderr);

  const files = [dataDir, ...walk(dataDir)];
  assert.ok(files.some((file) => file.endsWith('ems.db')));
  assert.ok(
    files.some((file) => file.includes(`${path.sep}backups${path.sep}`)),
    'a backup was written',
  );
  for (const file of files) {
    const mode = modeOf(file);
    assert.equal(mode & 0o027, 0, `${path.relative(root, file)} is ${mode.toString(8)}`);
  }
  assert.equal(modeOf(dataDir), 0o750);
});
