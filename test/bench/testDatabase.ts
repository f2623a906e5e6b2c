// `npm run bench:testdb`: what a test's database costs, a copy of the migrated template (`testDatabase()`,
// test/helpers/database.ts) against a new file migrated by openDatabase (what 11 test files did each time), measured
// in the same run, interleaved, so the machine's load falls on both alike. Wall and CPU time per database, opened and
// closed and removed; the ratio is the figure to read (docs/development.md "The tests' set-up").
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { closeDatabase, databasePath, openDatabase } from '../../src/platform/db/client.ts';
import { migratedTemplate, openTestDatabase } from '../helpers/database.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 30);

function timed(fn: () => void): { wall: number; cpu: number } {
  const wall = performance.now();
  const cpu = process.cpuUsage();
  fn();
  const used = process.cpuUsage(cpu);
  return { wall: performance.now() - wall, cpu: (used.user + used.system) / 1000 };
}

const migrated = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ems-bench-migrate-'));
  closeDatabase(openDatabase(databasePath(dir)));
  fs.rmSync(dir, { recursive: true, force: true });
};
const copied = () => openTestDatabase({ prefix: 'ems-bench-copy-' }).close();

const template = timed(() => migratedTemplate());
const runs = { migrated: [] as Array<{ wall: number; cpu: number }>, copied: [] as Array<{ wall: number; cpu: number }> };
for (let round = 0; round < ROUNDS; round += 1) {
  runs.migrated.push(timed(migrated));
  runs.copied.push(timed(copied));
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const figures = Object.fromEntries(
  Object.entries(runs).map(([name, list]) => [name, { wallMs: median(list.map((r) => r.wall)), cpuMs: median(list.map((r) => r.cpu)) }]),
) as Record<keyof typeof runs, { wallMs: number; cpuMs: number }>;
const load = os.loadavg()[0]!;
console.log(`bench:testdb, ${ROUNDS} databases each way, load ${load.toFixed(1)} (the template once: ${template.wall.toFixed(0)} ms wall)`);
for (const [name, f] of Object.entries(figures)) console.log(`  ${name.padEnd(9)} median ${f.wallMs.toFixed(1)} ms wall, ${f.cpuMs.toFixed(1)} ms CPU`);
console.log(
  `  copied / migrated: ${(figures.copied.wallMs / figures.migrated.wallMs).toFixed(2)} of the wall, ${(figures.copied.cpuMs / figures.migrated.cpuMs).toFixed(2)} of the CPU`,
);
