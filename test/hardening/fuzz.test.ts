// The API fuzzer at a small size (npm run fuzz runs it large): every operation of the served document, as anonymous,
// viewer, operator and admin, with seeded valid and hostile inputs: no 5xx, no undeclared status, every body valid.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runFuzz } from '../fuzz/apiFuzzer.ts';

test('every operation of /documentation/json answers only what it declares, with bodies that fit their schemas', async () => {
  const seed = Number(process.env.EMS_FUZZ_SEED ?? 23);
  const figures = await runFuzz({ seed, rounds: 1 });
  assert.deepEqual(
    figures.failures.slice(0, 20).map((failure) => `${failure.role} ${failure.request} → ${failure.status}: ${failure.problem} ${failure.body}`),
    [],
    `seed ${seed}: ${figures.failures.length} failures`,
  );
  assert.ok(figures.operations >= 100, `${figures.operations} operations walked`);
  assert.equal(figures.requests, figures.operations * 4, 'one request per operation and role');
  // The walk reaches the handlers, not only the auth and validation layers.
  assert.ok(figures.operationsWithSuccess >= figures.operations / 2, `${figures.operationsWithSuccess} operations answered a success`);
  for (const status of ['200', '201', '204', '400', '401', '403', '404']) assert.ok(figures.statuses[status], `status ${status} seen`);
});
