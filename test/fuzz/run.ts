// npm run fuzz [-- --seed N --rounds N]: the large run of the API fuzzer; prints its figures and every failure.
import { parseArgs } from 'node:util';
import { runFuzz } from './apiFuzzer.ts';

const { values } = parseArgs({ options: { seed: { type: 'string', default: '20261123' }, rounds: { type: 'string', default: '60' } } });
const figures = await runFuzz({ seed: Number(values.seed), rounds: Number(values.rounds), log: (line) => console.error(line) });
const { failures, ...summary } = figures;
const seen = new Map<string, { count: number; example: (typeof failures)[number] }>();
for (const failure of failures) {
  const key = `${failure.operation} ${failure.status} ${failure.problem.slice(0, 120)}`;
  const entry = seen.get(key);
  if (entry) entry.count += 1;
  else seen.set(key, { count: 1, example: failure });
}
console.log(JSON.stringify({ ...summary, failures: failures.length, distinctFailures: [...seen.values()] }, null, 2));
process.exitCode = failures.length > 0 ? 1 : 0;
