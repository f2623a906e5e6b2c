// The API fuzzer at a small size (npm run fuzz runs it large): one round. It seeds the records the operations behind an
// id need, sends every operation of the served document a valid-id request as anonymous, viewer, operator and admin,
// then seeded valid and hostile inputs: no 5xx, no undeclared status, every body valid, every role refused what is
// above it, and every operation of the route table reached by a valid-id request (answered other than 404).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { reachTables, runFuzz } from '../fuzz/apiFuzzer.ts';

test('every operation of the route table is reached with valid ids and answers only what it declares, as every role', async () => {
  const seed = Number(process.env.EMS_FUZZ_SEED ?? 23);
  const figures = await runFuzz({ seed, rounds: 1 });
  assert.deepEqual(
    figures.failures.slice(0, 20).map((failure) => `${failure.role} ${failure.request} → ${failure.status}: ${failure.problem} ${failure.body}`),
    [],
    `seed ${seed}: ${figures.failures.length} failures`,
  );
  assert.deepEqual(figures.seedProblems, [], 'every seeded record was created');
  // Coverage: the document walked is the route table, and each of its operations was reached by a valid-id request of
  // a role allowed to call it.
  assert.deepEqual(Object.keys(figures.reach).sort(), [...figures.routeTable].sort(), 'the fuzzer walks the whole route table');
  assert.deepEqual(figures.unreached, [], 'operations no valid-id request reached');
  console.log(
    `${reachTables(figures).roles}\n(${figures.requests} fuzzed, ${figures.validRequests} valid-id, ${figures.seedRequests} seeding requests; ms: ${JSON.stringify(figures.phaseMs)}; slowest: ${figures.slowest.slice(0, 3).join(', ')})`,
  );
  for (const [role, counts] of Object.entries(figures.perRole)) {
    assert.equal(counts.reached, counts.allowed, `${role}: every operation it may call reached`);
    assert.equal(counts.refused, figures.operations - counts.allowed, `${role}: every operation above it refused`);
  }
  assert.equal(figures.validRequests, figures.operations * 4, 'one valid-id request per operation and role');
  assert.equal(figures.requests, figures.operations * 4, 'one fuzzed request per operation and role');
  // The walk reaches the handlers, not only the auth and validation layers.
  assert.ok(figures.operationsWithSuccess >= figures.operations * 0.85, `${figures.operationsWithSuccess} operations answered a success`);
  for (const status of ['200', '201', '204', '400', '401', '403', '404']) assert.ok(figures.statuses[status], `status ${status} seen`);
});
