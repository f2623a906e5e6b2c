// Every way the suites are run bounds a hung test, so that it fails naming itself instead of holding CI until the
// runner's own limit (issue 57): `npm test` and `npm run test:context` pass --test-timeout (Node 24, the release's
// runtime CI runs `npm test` on, bounds each test by it; Node 20 each file), `npm run test:fast` gives each grouped
// suite's describe a timeout (a group's file holds a quarter of the run, too much for one bound; a suite that runs
// alone is a group of one) and --per-file the flag.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

const ROOT = path.resolve(import.meta.dirname, '../..');
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');
/** The bound, in ms: above the slowest test on a busy box (failover's own limit is 600 s), below CI's 60-minute limit. */
const BOUND = 600_000;

function timeoutFlag(args: string): number | undefined {
  const match = /--test-timeout=(\d+)/.exec(args);
  return match ? Number(match[1]) : undefined;
}

test('npm test and test:context pass --test-timeout', () => {
  const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
  assert.equal(timeoutFlag(scripts.test), BOUND, scripts.test);
  const context = read('test/context.ts');
  const spawned = /spawn\(process\.execPath, \[([^\]]*)\]/.exec(context)?.[1] ?? '';
  assert.equal(timeoutFlag(spawned), BOUND, `test/context.ts spawns node --test with ${spawned}`);
});

test("test:fast bounds each grouped suite's describe, and --per-file passes the flag", () => {
  const fast = read('test/fast.ts');
  assert.equal(Number(/const SUITE_TIMEOUT_MS = ([\d_]+);/.exec(fast)?.[1].replaceAll('_', '')), BOUND);
  assert.match(fast, /describe\(\$\{name\}, \{ timeout: \$\{SUITE_TIMEOUT_MS\} \}, /, "each grouped suite's describe has the timeout");
  assert.match(fast, /--per-file'\) \? \[`--test-timeout=\$\{SUITE_TIMEOUT_MS\}`\]/, '--per-file passes --test-timeout');
  assert.match(fast, /\.\.\.bound, \.\.\.files\]/, 'the bound is among the spawned arguments');
  assert.match(fast, /\.\.\.alone\.map\(\(suite\) => \[suite\]\)/, 'a suite that runs alone (OWN_PROCESS) is a group of one, its describe bounded too');
  assert.doesNotMatch(fast, /\.\.\.alone,/, 'no suite file is handed to node --test without its describe');
});
