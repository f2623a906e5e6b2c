// `npm run test:fast`: the in-process suites, for the inner loop. A suite is slow when it, or a test helper it imports
// (followed transitively), starts other processes or programs: child processes (the service, emsctl, the compiled
// build), Chromium, LibreOffice, faketime, the installer. Those run in `npm test` (the whole suite CI runs) only.
// The rule reads the files, so a new suite lands on the right side without a list to keep.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const root = path.resolve(import.meta.dirname, '..');
const SLOW = /node:child_process|playwright|chromium|soffice|faketime/;
/** The marker of a suite that runs in a process of its own under test:fast (see grouped). */
const OWN_PROCESS = /^\/\/ test:fast: own process/m;

/**
 * The suites in a few processes instead of one each (`--per-file`: one each, as `npm test` runs them). Each process
 * loads tsx and the app's modules once (about 1.5 s of CPU per suite otherwise); the suites of a group run one after another in it, each in a describe
 * named after its file, two groups at a time. Measured at load 15–20 on the shared 2-core box, 682 tests: 230 s of CPU
 * against 534 s one process per suite (docs/development.md).
 * The fast screen tier (test/web/screens, a happy-dom page on the global object) keeps a process of its own.
 */
function grouped(files: string[]): string[] {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ems-test-fast-'));
  process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  const dom = files.filter((file) => file.includes(`${path.sep}web${path.sep}screens${path.sep}`));
  // A suite that checks what its own process loaded (e.g. test/ops/memoryAtStart.test.ts: no undici at start) says
  // so with OWN_PROCESS and runs alone: in a group, another suite's imports are in that process too.
  const alone = files.filter((file) => !dom.includes(file) && OWN_PROCESS.test(fs.readFileSync(file, 'utf8')));
  const rest = files.filter((file) => !dom.includes(file) && !alone.includes(file));
  const groups = [dom, rest.filter((_, i) => i % 2 === 0), rest.filter((_, i) => i % 2 === 1)].filter((group) => group.length > 0);
  return [
    ...alone,
    ...groups.map((group, i) => {
      const file = path.join(dir, `group-${i + 1}.test.mjs`);
      // Each suite in a describe of its own, imported inside it: its top-level hooks and tests stay its own (a plain
      // import would run every suite's \`before\` first and every \`after\` last).
      const lines = group.map(
        (suite) => `describe(${JSON.stringify(path.relative(root, suite))}, async () => { await import(${JSON.stringify(pathToFileURL(suite).href)}); });\n`,
      );
      fs.writeFileSync(file, `import { describe } from 'node:test';\n${lines.join('')}`);
      return file;
    }),
  ];
}

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
const child = spawn(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=2', ...(process.argv.includes('--per-file') ? fast : grouped(fast))], {
  stdio: 'inherit',
  cwd: root,
});
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
