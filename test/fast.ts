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

/** Seconds each suite took in a measured run (`-- --weigh` rewrites it): the groups are balanced by them. */
const WEIGHTS = path.join(root, 'test', 'fast-weights.json');
/** Where each grouped suite notes that it ran to its end (a directory of the run's own, removed at exit). */
const RAN = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ems-test-fast-')), 'ran.txt');
process.on('exit', () => fs.rmSync(path.dirname(RAN), { recursive: true, force: true }));
/**
 * A hung suite fails after this long, naming itself, and its group goes on: each grouped suite's describe has it as its
 * timeout, and `--per-file` passes it as --test-timeout. Not --test-timeout beside the groups: Node 20 bounds each file
 * by it (Node 24 each test), and a group's file is a quarter of the run. A suite that runs alone (OWN_PROCESS) is a
 * group of one, so its describe has the bound too. The slowest suite took 39 s on a quiet machine.
 */
const SUITE_TIMEOUT_MS = 600_000;
/** Processes for the suites besides the screen tier and the suites that run alone (`-- --groups N`). */
const GROUPS = Number(process.argv[process.argv.indexOf('--groups') + 1]) || 4;

/**
 * The suites in a few processes instead of one each (`--per-file`: one each, as `npm test` runs them). Each process
 * loads tsx and the app's modules once (about 1.5 s of CPU per suite otherwise); the suites of a group run one after another in it, each in a describe
 * named after its file. Measured at load 15–20 on the shared 2-core box, 682 tests: 230 s of CPU against 534 s one
 * process per suite (docs/development.md).
 * GROUPS groups, all running at once, balanced by the suites' measured seconds (longest first into the group with the
 * least so far; a suite not yet weighed counts as the median): with two groups split by position one took 811 s and
 * the other 708 s, and one process per group sat idle while its suite waited (bcrypt workers, timers, fsync) — four
 * processes on two cores fill those waits (docs/development.md "test:fast").
 * The fast screen tier (test/web/screens, a happy-dom page on the global object) keeps a process of its own.
 */
function grouped(files: string[], times: string | null): string[] {
  const dir = path.dirname(RAN);
  const dom = files.filter((file) => file.includes(`${path.sep}web${path.sep}screens${path.sep}`));
  // A suite that checks what its own process loaded (e.g. test/ops/memoryAtStart.test.ts: no undici at start) says
  // so with OWN_PROCESS and runs alone, a group of one: in a group, another suite's imports are in that process too.
  const alone = files.filter((file) => !dom.includes(file) && OWN_PROCESS.test(fs.readFileSync(file, 'utf8')));
  const rest = files.filter((file) => !dom.includes(file) && !alone.includes(file));
  const groups = [dom, ...balanced(rest, GROUPS), ...alone.map((suite) => [suite])].filter((group) => group.length > 0);
  return [
    ...groups.map((group, i) => {
      const file = path.join(dir, `group-${i + 1}.test.mjs`);
      // Each suite in a describe of its own, imported inside it: its top-level hooks and tests stay its own (a plain
      // import would run every suite's \`before\` first and every \`after\` last). With --weigh, a first and a last
      // hook of the describe note the suite's wall and CPU seconds.
      const lines = group.map((suite) => {
        const name = JSON.stringify(path.relative(root, suite));
        const weigh = times
          ? `let t; before(() => { t = [performance.now(), process.cpuUsage()]; }); const note = () => { const c = process.cpuUsage(t[1]); appendFileSync(${JSON.stringify(times)}, JSON.stringify({ suite: ${name}, wall: (performance.now() - t[0]) / 1000, cpu: (c.user + c.system) / 1e6 }) + '\\n'); }; `
          : '';
        const last = times ? ' after(note);' : '';
        // Every suite notes that it ran to its end (checked at exit: a suite left out silently fails the run).
        const ran = ` after(() => appendFileSync(${JSON.stringify(RAN)}, ${name} + '\\n'));`;
        return `describe(${name}, { timeout: ${SUITE_TIMEOUT_MS} }, async () => { ${weigh}await import(${JSON.stringify(pathToFileURL(suite).href)});${last}${ran} });\n`;
      });
      const head = times
        ? "import { after, before, describe } from 'node:test';\nimport { appendFileSync } from 'node:fs';\n"
        : "import { after, describe } from 'node:test';\nimport { appendFileSync } from 'node:fs';\n";
      fs.writeFileSync(file, head + lines.join(''));
      return file;
    }),
  ];
}

/** The suites in `count` groups of about equal measured seconds (longest processing time first). */
function balanced(suites: string[], count: number): string[][] {
  const weights: Record<string, number> = fs.existsSync(WEIGHTS) ? JSON.parse(fs.readFileSync(WEIGHTS, 'utf8')) : {};
  const known = Object.values(weights).sort((a, b) => a - b);
  const median = known.length > 0 ? known[Math.floor(known.length / 2)] : 1;
  const weight = (suite: string) => weights[path.relative(root, suite)] ?? median;
  const groups = Array.from({ length: count }, () => ({ suites: [] as string[], seconds: 0 }));
  for (const suite of [...suites].sort((a, b) => weight(b) - weight(a) || a.localeCompare(b))) {
    const lightest = groups.reduce((least, group) => (group.seconds < least.seconds ? group : least));
    lightest.suites.push(suite);
    lightest.seconds += weight(suite);
  }
  return groups.map((group) => group.suites);
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
// --weigh: each suite's seconds noted as it runs, and test/fast-weights.json rewritten from them at the end.
const times = process.argv.includes('--weigh') ? path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ems-test-weigh-')), 'times.jsonl') : null;
const files = process.argv.includes('--per-file') ? fast : grouped(fast, times);
/** The grouped suites expected to note their end in RAN. */
const expected = process.argv.includes('--per-file') ? [] : fast.filter((file) => !files.includes(file)).map((file) => path.relative(root, file));
// The group files get their bound from their describes, a file of its own under --per-file from --test-timeout.
const bound = process.argv.includes('--per-file') ? [`--test-timeout=${SUITE_TIMEOUT_MS}`] : [];
const child = spawn(
  process.execPath,
  ['--import', 'tsx', '--test', `--test-concurrency=${process.argv.includes('--per-file') ? 2 : files.length}`, ...bound, ...files],
  {
    stdio: 'inherit',
    cwd: root,
  },
);
child.on('exit', (code, signal) => {
  if (times && fs.existsSync(times)) writeWeights(times);
  // A group's process once reported 3 of its 5 suites and exited 0: a suite that never reached its end fails the run.
  const ran = new Set(fs.existsSync(RAN) ? fs.readFileSync(RAN, 'utf8').split('\n') : []);
  const missing = expected.filter((suite) => !ran.has(suite));
  if (missing.length > 0 && code === 0) {
    console.error(`test:fast: ${missing.length} suite(s) did not run to their end:\n  ${missing.join('\n  ')}`);
    process.exit(1);
  }
  process.exit(code ?? (signal ? 1 : 0));
});

/** test/fast-weights.json from a weighed run (wall seconds, one decimal), and the run's figures per suite. */
function writeWeights(file: string): void {
  const rows = fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { suite: string; wall: number; cpu: number });
  rows.sort((a, b) => b.wall - a.wall);
  fs.writeFileSync(WEIGHTS, `${JSON.stringify(Object.fromEntries(rows.map((row) => [row.suite, Math.round(row.wall * 10) / 10])), null, 1)}\n`);
  const sum = (pick: (row: (typeof rows)[number]) => number) => rows.reduce((total, row) => total + pick(row), 0).toFixed(1);
  console.log(`test:fast --weigh: ${rows.length} suites, ${sum((row) => row.wall)} s of wall, ${sum((row) => row.cpu)} s of CPU in the suites; the slowest:`);
  for (const row of rows.slice(0, 15)) console.log(`  ${row.wall.toFixed(1)} s wall, ${row.cpu.toFixed(1)} s CPU  ${row.suite}`);
}
