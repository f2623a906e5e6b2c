// The contract fuzzer against the fleet (issue 55 item 5; test/fuzz/fleetFuzzer.ts): a real fleet on a private
// PostgreSQL, its served OpenAPI document walked as every kind of caller with valid and hostile input.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { FLEET_ROUTES } from '../../src/fleet/app.ts';
import { type FleetInstance, startFleet, startFleetDatabase } from '../helpers/fleet.ts';
import type { PostgresCluster } from '../helpers/postgres.ts';
import { runFleetFuzz } from '../fuzz/fleetFuzzer.ts';

let cluster: PostgresCluster;
let fleet: FleetInstance;

before(async () => {
  cluster = await startFleetDatabase();
  fleet = await startFleet(cluster.url);
});
after(async () => {
  await fleet?.close();
  cluster?.destroy();
});

test('the fleet serves its reference at /documentation and the document at /documentation/json', async () => {
  const page = await fetch(`${fleet.url}/documentation`);
  assert.equal(page.status, 200);
  assert.match(page.headers.get('content-type') ?? '', /text\/html/);
  assert.match(await page.text(), /swagger/i);
  const doc = (await (await fetch(`${fleet.url}/documentation/json`)).json()) as { info: { title: string }; paths: object };
  assert.equal(doc.info.title, 'EMS fleet API');
  assert.equal(Object.keys(doc.paths).length, new Set(FLEET_ROUTES.map((r) => r.path)).size);
});

test('every fleet operation answers only what its document declares, as every caller, with valid and hostile input', async () => {
  const seed = Number(process.env.EMS_FUZZ_SEED ?? 55);
  const figures = await runFleetFuzz(fleet, { seed, hostilePerCaller: 4 });
  assert.deepEqual(
    figures.failures.slice(0, 20).map((f) => `${f.caller} ${f.request} → ${f.status}: ${f.problem} ${f.body}`),
    [],
    `seed ${seed}: ${figures.failures.length} failures`,
  );
  // The document is the route table, and every operation answered a success to some caller.
  assert.equal(figures.operations, FLEET_ROUTES.length);
  // Single sign-on is off at this fleet: its start answers 404 (declared); test/fleet/sso.test.ts signs in through it.
  const reachable = FLEET_ROUTES.filter((r) => r.key !== 'GET /api/fleet/auth/sso');
  assert.deepEqual(figures.succeeded, reachable.map((r) => `${r.method} ${r.path.replace(/:([a-z]+)/g, '{$1}')}`).sort());
  // One valid-id request per operation and caller, 4 hostile ones per operation and caller (the 3 XLSX exports: only as
  // anonymous and as a site, refused before the workbook is made).
  assert.equal(figures.requests, figures.operations * 5 + (figures.operations - 3) * 5 * 4 + 3 * 2 * 4);
  for (const status of ['200', '201', '204', '400', '401', '403', '404']) assert.ok(figures.statuses[status], `status ${status} seen`);
  console.log(
    `fleet fuzz seed ${seed}: ${figures.requests} requests over ${figures.operations} operations in ${figures.ms} ms; statuses ${JSON.stringify(figures.statuses)}`,
  );
});
