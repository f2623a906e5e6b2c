import { runFuzz } from './apiFuzzer.ts';
const f = await runFuzz({ seed: 23, rounds: 1, log: console.error });
const { failures, reach, ...rest } = f;
console.log(JSON.stringify(rest, null, 1));
for (const x of failures.slice(0, 60)) console.log(x.role, x.request, x.status, x.problem, x.body.slice(0, 200));
for (const [k, v] of Object.entries(reach)) if (Object.values(v.statuses).some(s => s.includes(404))) console.log('404', k, JSON.stringify(v.statuses));
