// The compiled-build cache (test/helpers/compiledBuild.ts) is keyed by the checkout and the Node ABI besides the sources:
// a tree links its node_modules to the checkout that built it, built for one ABI.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { compiledBuildKey } from '../helpers/compiledBuild.ts';
import { tempDir } from '../helpers/server.ts';
import { repoRoot } from '../helpers/serviceProcess.ts';

test('the key differs for another checkout with the same sources and for another Node ABI, and follows the sources', (t) => {
  const copy = tempDir('ems-checkout-copy-');
  t.after(() => fs.rmSync(copy, { recursive: true, force: true }));
  for (const item of ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'src', 'cli']) {
    fs.cpSync(path.join(repoRoot, item), path.join(copy, item), { recursive: true });
  }
  const here = compiledBuildKey();
  assert.equal(compiledBuildKey(repoRoot, process.versions.modules), here, 'stable for one checkout and ABI');
  assert.notEqual(compiledBuildKey(copy), here, 'another checkout (its own node_modules) gets its own tree');
  assert.notEqual(compiledBuildKey(repoRoot, String(Number(process.versions.modules) + 1)), here, 'another Node ABI gets its own tree');
  const before = compiledBuildKey(copy);
  fs.appendFileSync(path.join(copy, 'cli', 'emsctl.ts'), '\n');
  assert.notEqual(compiledBuildKey(copy), before, 'a changed source gets a new tree');
});
