// npm run fuzz [-- --seed N --rounds N --requests N]: the large run of the API fuzzer. Each round seeds its records,
// sends every operation a valid-id request per role, then the fuzzed ones; stops after --rounds rounds or --requests
// fuzzed requests, whichever comes first. Prints the figures, the reach per role and per operation, and every failure.
import { parseArgs } from 'node:util';
import { reachTables, runFuzz } from './apiFuzzer.ts';

const { values } = parseArgs({
  options: {
    seed: { type: 'string', default: '20261123' },
    rounds: { type: 'string', default: '60' },
    requests: { type: 'string' },
    operations: { type: 'boolean', default: false },
  },
});
const figures = await runFuzz({
  seed: Number(values.seed),
  rounds: Number(values.rounds),
  requests: values.requests === undefined ? undefined : Number(values.requests),
  log: (line) => console.error(line),
});
const { failures, reach, reachedBy, ...summary } = figures;
const seen = new Map<string, { count: number; example: (typeof failures)[number] }>();
for (const failure of failures) {
  const key = `${failure.operation} ${failure.status} ${failure.problem.slice(0, 120)}`;
  const entry = seen.get(key);
  if (entry) entry.count += 1;
  else seen.set(key, { count: 1, example: failure });
}
console.log(JSON.stringify({ ...summary, failures: failures.length, distinctFailures: [...seen.values()] }, null, 2));
const tables = reachTables(figures);
console.log(`\n${tables.roles}\n\n${tables.areas}`);
// The per-operation table (one line per operation: each role's valid-id statuses) with --operations.
if (values.operations) console.log(`\n${tables.operations}`);
process.exitCode = failures.length > 0 || figures.unreached.length > 0 ? 1 : 0;
