// installer/check-runtime.mjs, the installer's runtime check: it passes on this checkout's modules, fails with the signal
// of a native module that aborts when the garbage collector frees a statement (the better-sqlite3 12 / Node >= 24.19
// failure), and the installer refuses such a release before it replaces the installed one.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { tempDir } from '../helpers/server.ts';
import { cleanEnv, repoRoot } from '../helpers/serviceProcess.ts';

const check = path.join(repoRoot, 'installer', 'check-runtime.mjs');
/** The shipped migrations, relative to the checkout: where the service reads them (src/platform/db/client.ts). */
const migrationsFolder = path.join('src', 'platform', 'db', 'migrations');
const temps: string[] = [];
after(() => {
  for (const dir of temps) fs.rmSync(dir, { recursive: true, force: true });
});

/**
 * A release tree like the one the installer unpacks, on this checkout's modules, except better-sqlite3: the real one
 * with every prepared statement registered for finalization, the finalizer aborting the process. That is how the
 * broken build dies (in C++, when the collector frees a statement); a check that never drops statements or never
 * collects them passes such a tree, and this test fails.
 */
function treeAbortingOnFreedStatement(): string {
  const tree = tempDir('ems-abort-tree-');
  temps.push(tree);
  for (const item of ['package.json', 'installer']) fs.cpSync(path.join(repoRoot, item), path.join(tree, item), { recursive: true });
  fs.mkdirSync(path.dirname(path.join(tree, migrationsFolder)), { recursive: true });
  fs.cpSync(path.join(repoRoot, migrationsFolder), path.join(tree, migrationsFolder), { recursive: true });
  const modules = path.join(tree, 'node_modules');
  fs.mkdirSync(modules);
  for (const entry of fs.readdirSync(path.join(repoRoot, 'node_modules'))) {
    if (entry !== 'better-sqlite3') fs.symlinkSync(path.join(repoRoot, 'node_modules', entry), path.join(modules, entry));
  }
  const real = path.join(repoRoot, 'node_modules', 'better-sqlite3');
  fs.mkdirSync(path.join(modules, 'better-sqlite3'));
  fs.writeFileSync(
    path.join(modules, 'better-sqlite3', 'package.json'),
    JSON.stringify({ name: 'better-sqlite3', version: '0.0.0-aborts-in-gc', main: 'index.js' }),
  );
  fs.writeFileSync(
    path.join(modules, 'better-sqlite3', 'index.js'),
    `const Real = require(${JSON.stringify(real)});
const freed = new FinalizationRegistry(() => process.abort());
module.exports = function Database(...args) {
  const db = new Real(...args);
  const prepare = db.prepare.bind(db);
  db.prepare = (sql) => {
    const statement = prepare(sql);
    freed.register(statement, sql);
    return statement;
  };
  return db;
};
`,
  );
  return tree;
}

function runCheck(cwdTree: string, nodeArgs: string[]) {
  return spawnSync(process.execPath, [...nodeArgs, path.join(cwdTree, 'installer', 'check-runtime.mjs')], {
    encoding: 'utf8',
    cwd: cwdTree,
    env: cleanEnv({ EMS_CHECK_STATEMENTS: '1500' }),
  });
}

describe('the runtime check (installer/check-runtime.mjs)', () => {
  test("passes on this checkout's modules: migrations applied, statements prepared and dropped under forced GC, bcrypt", () => {
    const result = spawnSync(process.execPath, ['--expose-gc', check], { encoding: 'utf8', env: cleanEnv({ EMS_CHECK_STATEMENTS: '1500' }) });
    assert.equal(result.status, 0, result.stderr);
    const migrations = fs.readdirSync(path.join(repoRoot, migrationsFolder)).filter((file) => file.endsWith('.sql')).length;
    assert.match(
      result.stdout,
      new RegExp(
        `^check-runtime: ok on node ${process.versions.node} \\(ABI ${process.versions.modules}\\): better-sqlite3 \\S+ ran ${migrations} migrations and 4500 statements prepared and dropped under forced GC; bcrypt hashes\\n$`,
      ),
    );
  });

  test('fails with SIGABRT on modules that abort when the collector frees a statement; refuses to run without --expose-gc', () => {
    const tree = treeAbortingOnFreedStatement();
    const aborted = runCheck(tree, ['--expose-gc']);
    assert.equal(aborted.signal, 'SIGABRT', `the check died of the abort: status ${aborted.status}, ${aborted.stdout}${aborted.stderr}`);
    assert.doesNotMatch(aborted.stdout, /ok on node/);

    const noGc = runCheck(tree, []);
    assert.equal(noGc.status, 2);
    assert.match(noGc.stderr, /run with --expose-gc/);
  });

  test('the installer refuses such a release before it replaces the installed one', () => {
    const root = tempDir('ems-root-');
    temps.push(root);
    const install = path.join(repoRoot, 'installer', 'install.sh');
    const tree = treeAbortingOnFreedStatement();
    fs.mkdirSync(path.join(tree, 'dist', 'src'), { recursive: true });
    fs.mkdirSync(path.join(tree, 'dist', 'cli'), { recursive: true });
    fs.writeFileSync(path.join(tree, 'dist', 'src', 'main.js'), '');
    fs.writeFileSync(path.join(tree, 'dist', 'cli', 'emsctl.js'), '');
    const refused = spawnSync('bash', [install, '--root', root, '--from-build', tree], { encoding: 'utf8', env: cleanEnv({ EMS_CHECK_STATEMENTS: '1500' }) });
    assert.equal(refused.status, 1, refused.stdout + refused.stderr);
    assert.match(
      refused.stderr,
      /refusing version \S+: its runtime check failed on the Node that would run it \(killed by signal ABRT; output above\)\. Nothing was changed/,
    );
    assert.deepEqual(fs.readdirSync(path.join(root, 'opt')), [], 'no program was put in place, no half-made folder left');
    assert.ok(!fs.existsSync(path.join(root, 'etc', 'systemd')), 'no unit written');
  });
});
