// npm run bench:emsctl: how long a simple emsctl command takes as installed (compiled, NODE_ENV=production, settings
// from an env file), this checkout against a baseline built from an earlier commit, in the same run.
//
//   npm run bench:emsctl [-- --baseline <git ref>] [-- --runs N]
//
// The baseline ref defaults to 2f3a6df, the commit before emsctl loaded its commands lazily (#29: ~1.0 s compiled).
// Both trees are compiled (the baseline with tsc --noCheck into a temp dir), both CLIs ask the same running
// compiled service and the same data dir, and their calls alternate so that a busy neighbour slows both alike.
// Printed: the median and the spread of each command, the ratio to the baseline, `node -e 0` as the floor (what
// node itself costs on this box), and the target (0.5 s). No figure is asserted here: it is a measurement.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { compiledBuild } from '../helpers/compiledBuild.ts';
import { cleanEnv, repoRoot, spawnService } from '../helpers/serviceProcess.ts';

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const baselineRef = option('--baseline', '2f3a6df');
const runs = Number(option('--runs', '9'));
const TARGET_MS = 500;

function baselineTree(ref: string): string {
  const dir = path.join(os.tmpdir(), `ems-bench-emsctl-${execFileSync('git', ['rev-parse', '--short', ref], { cwd: repoRoot, encoding: 'utf8' }).trim()}`);
  if (fs.existsSync(path.join(dir, 'dist', 'cli', 'emsctl.js'))) {
    // A tree kept from an earlier run may link to a checkout that is gone: link this one's dependencies again.
    fs.rmSync(path.join(dir, 'node_modules'), { force: true });
    fs.symlinkSync(path.join(repoRoot, 'node_modules'), path.join(dir, 'node_modules'));
    return dir;
  }
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const archive = spawnSync('git', ['archive', ref, 'package.json', 'tsconfig.json', 'tsconfig.build.json', 'src', 'cli'], {
    cwd: repoRoot,
    maxBuffer: 1 << 30,
  });
  if (archive.status !== 0) throw new Error(`git archive ${ref}: ${archive.stderr}`);
  execFileSync('tar', ['-x', '-C', dir], { input: archive.stdout });
  fs.symlinkSync(path.join(repoRoot, 'node_modules'), path.join(dir, 'node_modules'));
  console.log(`compiling the baseline ${ref} (tsc --noCheck) in ${dir}`);
  spawnSync(process.execPath, [path.join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json', '--noCheck'], {
    cwd: dir,
    stdio: 'inherit',
  });
  if (!fs.existsSync(path.join(dir, 'dist', 'cli', 'emsctl.js'))) throw new Error(`the baseline ${ref} did not compile`);
  return dir;
}

/**
 * Wall time of one child process, from spawn to exit, in ms, and its CPU time (user + system, from GNU time): on a
 * shared box the wall time follows the neighbours' load, the CPU time much less.
 */
const cpuFile = path.join(os.tmpdir(), `ems-bench-emsctl-cpu-${process.pid}`);
const cpu: number[] = [];
function timed(argv: string[], env: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn('/usr/bin/time', ['-f', '%U %S', '-o', cpuFile, process.execPath, ...argv], {
      env: cleanEnv(env),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      const ms = performance.now() - started;
      // status exits 3 when the service is not running: here it runs, so every call must succeed.
      if (code !== 0) reject(new Error(`${argv.join(' ')} exited ${code}: ${stderr}`));
      else {
        const [user, system] = fs.readFileSync(cpuFile, 'utf8').trim().split('\n').at(-1)!.split(' ').map(Number);
        cpu.push((user + system) * 1000);
        resolve(ms);
      }
    });
  });
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const fmt = (ms: number) => `${Math.round(ms)} ms`;

const current = compiledBuild();
const baseline = baselineTree(baselineRef);
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ems-bench-emsctl-data-'));
const service = await spawnService(dataDir, { NODE_ENV: 'production', EMS_HOST: '127.0.0.1' }, [path.join(current, 'dist', 'src', 'main.js')]);
try {
  // The settings as installed: an env file with the port (the service's), read by node --env-file like the wrapper does.
  const envFile = path.join(dataDir, 'ems.env');
  fs.writeFileSync(envFile, `EMS_HOST=127.0.0.1\nEMS_PORT=${new URL(service.url).port}\nEMS_DATA_DIR=${dataDir}\n`);
  const env = { NODE_ENV: 'production' };
  const cli = (tree: string, command: string[]) => [`--env-file=${envFile}`, path.join(tree, 'cli', 'emsctl.js'), ...command];
  const cases: Array<{ name: string; argv: (tree: string) => string[] }> = [
    { name: 'role list', argv: (tree) => cli(tree, ['role', 'list']) },
    { name: 'status', argv: (tree) => cli(tree, ['status']) },
    { name: 'user list', argv: (tree) => cli(tree, ['user', 'list']) },
  ];
  const samples = new Map<string, number[]>();
  const cpuSamples = new Map<string, number[]>();
  const add = (key: string, ms: number) => {
    samples.set(key, [...(samples.get(key) ?? []), ms]);
    cpuSamples.set(key, [...(cpuSamples.get(key) ?? []), cpu.at(-1)!]);
  };
  // One warm-up round (page cache), then alternating calls.
  for (const item of cases) {
    await timed(item.argv(baseline), env);
    await timed(item.argv(current), env);
  }
  for (let i = 0; i < runs; i++) {
    add('floor', await timed(['-e', '0'], {}));
    for (const item of cases) {
      add(`before ${item.name}`, await timed(item.argv(baseline), env));
      add(`after ${item.name}`, await timed(item.argv(current), env));
    }
  }
  const load = os.loadavg()[0].toFixed(1);
  console.log(
    `\nemsctl as installed (compiled, NODE_ENV=production, --env-file), ${runs} calls each, alternating; load average ${load} on ${os.cpus().length} cores`,
  );
  console.log(`floor: node -e 0  median ${fmt(median(samples.get('floor')!))} wall, ${fmt(median(cpuSamples.get('floor')!))} CPU`);
  console.log(
    `${'command'.padEnd(12)} ${`before (${baselineRef})`.padEnd(20)} ${'after'.padEnd(10)} ${'ratio'.padEnd(7)} ${'after - floor'.padEnd(14)} target`,
  );
  const figures: { name: string; value: string; target: string; met: boolean | null }[] = [];
  for (const item of cases) {
    const before = median(samples.get(`before ${item.name}`)!);
    const after = median(samples.get(`after ${item.name}`)!);
    const floor = median(samples.get('floor')!);
    const spread = (key: string) => `${fmt(Math.min(...samples.get(key)!))}..${fmt(Math.max(...samples.get(key)!))}`;
    console.log(
      `${item.name.padEnd(12)} ${fmt(before).padEnd(20)} ${fmt(after).padEnd(10)} ${(after / before).toFixed(2).padEnd(7)} ${fmt(after - floor).padEnd(14)} ${item.name === 'user list' ? '-' : `${TARGET_MS} ms: ${after <= TARGET_MS ? 'met' : 'NOT met'}`}`,
    );
    console.log(`${''.padEnd(12)} ${spread(`before ${item.name}`).padEnd(20)} ${spread(`after ${item.name}`)}`);
    const cpuBefore = median(cpuSamples.get(`before ${item.name}`)!);
    const cpuAfter = median(cpuSamples.get(`after ${item.name}`)!);
    console.log(`${'  CPU time'.padEnd(12)} ${fmt(cpuBefore).padEnd(20)} ${fmt(cpuAfter).padEnd(10)} ${(cpuAfter / cpuBefore).toFixed(2)}`);
    figures.push({
      name: `emsctl ${item.name} as installed (median of ${runs})`,
      value: `${fmt(after)} (before ${baselineRef}: ${fmt(before)}; node -e 0: ${fmt(floor)})`,
      target: item.name === 'user list' ? 'none' : `≤ ${TARGET_MS} ms`,
      met: item.name === 'user list' ? null : after <= TARGET_MS,
    });
  }
  // bench:edge's emsctl part reads these, to print every figure of issue 29 in one run.
  fs.writeFileSync(path.join(os.tmpdir(), 'ems-bench-emsctl-figures.json'), JSON.stringify(figures, null, 2));
} finally {
  fs.rmSync(cpuFile, { force: true });
  service.child.kill('SIGTERM');
  await service.exited;
  fs.rmSync(dataDir, { recursive: true, force: true });
}
