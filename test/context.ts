// `npm run test:context -- <context>`: one folder of test/ (a context's suites, or structure, hardening, ops, web), for
// the inner loop on one part of the house. Unknown names are refused with the list of folders.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const folders = fs
  .readdirSync(path.join(root, 'test'), { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && fs.readdirSync(path.join(root, 'test', entry.name)).some((file) => file.endsWith('.test.ts')))
  .map((entry) => entry.name)
  .sort();
const wanted = process.argv.slice(2);
const unknown = wanted.filter((name) => !folders.includes(name));
if (wanted.length === 0 || unknown.length) {
  console.error(`test:context: name one or more of: ${folders.join(', ')}${unknown.length ? ` (not a test folder: ${unknown.join(', ')})` : ''}`);
  process.exit(2);
}
const files = wanted.flatMap((name) =>
  fs
    .readdirSync(path.join(root, 'test', name))
    .filter((file) => file.endsWith('.test.ts'))
    .sort()
    .map((file) => path.join('test', name, file)),
);
// A hung test fails after 10 minutes naming itself (Node 20 bounds each file so; Node 24, each test; docs/development.md).
const child = spawn(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-timeout=600000', ...files], {
  stdio: 'inherit',
  cwd: root,
});
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
