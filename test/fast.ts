// `npm run test:fast`: the in-process suites, for the inner loop. A suite is slow when it, or a test helper it imports
// (followed transitively), starts other processes or programs: child processes (the service, emsctl, the compiled
// build), Chromium, LibreOffice, faketime, the installer. Those run in `npm test` (the whole suite CI runs) only.
// The rule reads the files, so a new suite lands on the right side without a list to keep.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const SLOW = /node:child_process|playwright|chromium|soffice|faketime/;

const seen = new Map<string, boolean>();
function slow(file: string): boolean {
  const known = seen.get(file);
  if (known !== undefined) return known;
  seen.set(file, false);
  const text = fs.readFileSync(file, 'utf8');
  const local = [...text.matchAll(/from\s+'(\.[^']+)'/g)]
    .map((match) => path.resolve(path.dirname(file), match[1]))
    .filter((target) => target.startsWith(path.join(root, 'test')) && fs.existsSync(target));
  const result = SLOW.test(text) || local.some(slow);
  seen.set(file, result);
  return result;
}

const suites = fs
  .readdirSync(path.join(root, 'test'), { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.test.ts'))
  .map((file) => path.join(root, 'test', file))
  .sort();
const fast = suites.filter((file) => !slow(file));
if (process.argv.includes('--list')) {
  for (const file of suites) console.log(`${slow(file) ? 'slow' : 'fast'} ${path.relative(root, file)}`);
  process.exit(0);
}
console.log(`test:fast: ${fast.length} of ${suites.length} suites (the others start processes or programs: npm test runs them)`);
const child = spawn(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=2', ...fast], { stdio: 'inherit', cwd: root });
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
