// The box's side of the fleet's answers (issue 55): the cursor moves only on the fleet's acknowledgement (JSON naming
// this site and the batch's sequence range), an answer is read to at most MAX_ANSWER_BYTES (400 MiB is never read), and
// leaving then joining again (a new site at the fleet) works without a restart.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, test } from 'node:test';
import pino from 'pino';
import { createEnrolmentCode } from '../../src/fleet/enrolment.ts';
import { joinFleet, leaveFleet, MAX_ANSWER_BYTES, readLink, syncState } from '../../src/fleetSync/link.ts';
import { FleetSync } from '../../src/fleetSync/sync.ts';
import { encodeFlags, encodeValues, KWH_SCALE } from '../../src/metering/intervalCodec.ts';
import { meterDays } from '../../src/platform/db/schema/index.ts';
import { addDays, siteDay } from '../../src/platform/time/calendar.ts';
import { insertAlert } from '../helpers/facilityRows.ts';
import { type FleetInstance, startFleet, startFleetDatabase } from '../helpers/fleet.ts';
import type { PostgresCluster } from '../helpers/postgres.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let cluster: PostgresCluster;
let fleet: FleetInstance;
let site: TestServer;

before(async () => {
  cluster = await startFleetDatabase();
  fleet = await startFleet(cluster.url);
  site = await startTestServer();
});
after(async () => {
  await site?.close();
  await fleet?.close();
  cluster?.destroy();
});

const syncOptions = () => ({
  db: site.service.deps.db,
  logger: pino({ level: 'silent' }),
  catchUpDelayMs: 0,
  health: () => ({ version: 'test', collector: 'ok', gateway: 'reachable', lastBackupAt: null }),
});

type Answer = (body: { after: number; through: number }, response: http.ServerResponse) => void;

/** A stand-in for whatever answers at the fleet's address; `answer` decides, and sees the batch sent. */
async function standIn(answer: { current: Answer }): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((request, response) => {
    let text = '';
    request.on('data', (chunk) => (text += chunk));
    request.on('end', () => answer.current(JSON.parse(text), response));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

test("the cursor moves only on the fleet's acknowledgement of this site and this batch; an answer is read to 64 KiB at most", async (t) => {
  const { db } = site.service.deps;
  insertAlert(db.sqlite, { title: 'to the fleet' });
  insertAlert(db.sqlite, { title: 'and another' });
  const answer: { current: Answer } = { current: () => {} };
  const fake = await standIn(answer);
  t.after(() => fake.close());
  db.sqlite
    .prepare("INSERT INTO fleet_link (id, fleet_url, site_id, credential, joined_at, cursor, not_before) VALUES (1, ?, 'site-a', 'secret', ?, 0, 0)")
    .run(fake.url, new Date().toISOString());
  t.after(() => db.sqlite.prepare('DELETE FROM fleet_link').run());
  const sync = new FleetSync(syncOptions());
  let sent = undefined as { after: number; through: number } | undefined;
  const json = (status: number, body: unknown) => (batch: { after: number; through: number }, response: http.ServerResponse) => {
    sent = batch;
    response.statusCode = status;
    response.setHeader('content-type', 'application/json');
    response.end(JSON.stringify(typeof body === 'function' ? body(batch) : body));
  };
  let written = 0;
  /** A 200 that never ends by itself: 1 MiB chunks up to 400 MiB, counting what left before the box hung up. */
  const endless = (declare: boolean) => (batch: { after: number; through: number }, response: http.ServerResponse) => {
    sent = batch;
    written = 0;
    const total = 400 * 1024 * 1024;
    response.writeHead(200, { 'content-type': 'application/json', ...(declare ? { 'content-length': String(total) } : {}) });
    const chunk = Buffer.alloc(1024 * 1024, 'a');
    const more = () => {
      while (written < total && !response.destroyed) {
        written += chunk.length;
        if (!response.write(chunk)) return void response.once('drain', more);
      }
      response.end();
    };
    response.on('close', () => {});
    more();
  };
  const tries: Array<[string, Answer]> = [
    [
      "a proxy's sign-in page",
      (batch, response) => {
        sent = batch;
        response.setHeader('content-type', 'text/html');
        response.end('<!doctype html><title>Sign in</title><form>…</form>');
      },
    ],
    ['a 200 with an empty body', json(200, {})],
    ["another site's acknowledgement", json(200, (b: { after: number; through: number }) => ({ siteId: 'site-b', after: b.after, acknowledged: b.through }))],
    ['another range', json(200, (b: { after: number; through: number }) => ({ siteId: 'site-a', after: b.after, acknowledged: b.through + 5 }))],
    ['another start', json(200, (b: { after: number; through: number }) => ({ siteId: 'site-a', after: b.after - 1, acknowledged: b.through }))],
    ['400 MiB streamed', endless(false)],
    ['400 MiB declared', endless(true)],
  ];
  for (const [what, handler] of tries) {
    answer.current = handler;
    db.sqlite.prepare('UPDATE fleet_link SET not_before = 0').run();
    sent = undefined;
    const rssBefore = process.memoryUsage().rss;
    await sync.tick();
    assert.ok(((sent as { through: number } | undefined)?.through ?? 0) > 0, `${what}: a batch with rows went`);
    const state = syncState(db);
    assert.equal(state.cursor, 0, `${what}: the cursor stays`);
    assert.equal(state.state, 'failing', what);
    assert.equal(state.lastErrorCode, 'not_acknowledged', what);
    assert.equal(state.unsentRows, 2, `${what}: the rows stay`);
    if (what.startsWith('400 MiB')) {
      // The box hung up after its 64 KiB: what left the stand-in is bounded by the socket buffers, not the 400 MiB.
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.ok(written < 64 * 1024 * 1024, `${what}: ${written} bytes written before the box hung up`);
      assert.ok(process.memoryUsage().rss - rssBefore < 200 * 1024 * 1024, `${what}: memory stays`);
    }
  }
  // A refusal of 400 MiB: the reason is not read either, the rows stay.
  answer.current = (batch, response) => {
    sent = batch;
    response.writeHead(500, { 'content-type': 'application/json' });
    response.end(Buffer.alloc(MAX_ANSWER_BYTES + 1, 'a'));
  };
  db.sqlite.prepare('UPDATE fleet_link SET not_before = 0').run();
  await sync.tick();
  assert.equal(syncState(db).cursor, 0);
  assert.equal(syncState(db).lastErrorCode, 'http_500');
  // The fleet's own acknowledgement moves it.
  answer.current = json(200, (b: { after: number; through: number }) => ({ siteId: 'site-a', after: b.after, acknowledged: b.through }));
  db.sqlite.prepare('UPDATE fleet_link SET not_before = 0').run();
  await sync.tick();
  assert.equal(syncState(db).state, 'ok');
  assert.equal(syncState(db).cursor, sent?.through);
  assert.equal(syncState(db).unsentRows, 0);
});

test('leave and join again without a restart: the new site gets the metadata and the whole history', async () => {
  const { db } = site.service.deps;
  const timezone = site.service.deps.energy.timezone();
  const meter = site.service.deps.energy.meters.create({ name: 'Rejoin 1', code: 'rejoin.1.kwh', kind: 'energy', site: true }, null);
  const day = addDays(siteDay(timezone, new Date()), -2);
  const values = new Float64Array(96).fill(0.25);
  db.orm
    .insert(meterDays)
    .values({ meterId: meter.id, day, kwh: encodeValues(values, KWH_SCALE), flags: encodeFlags(new Uint8Array(96)), totalKwh: 24, cost: 7.2, carbonKg: 4.8 })
    .run();
  const sync = new FleetSync(syncOptions());
  const first = await joinFleet(db, fleet.url, (await createEnrolmentCode(fleet.db.pool, 'First')).code);
  await sync.tick();
  assert.equal(syncState(db).state, 'ok', String(syncState(db).lastError));
  assert.ok(readLink(db)!.cursor > 0);
  const stored = async (siteId: string) =>
    (await fleet.db.pool.query('select count(*)::int as n from intervals where site_id = $1 and meter_key = $2', [siteId, String(meter.id)])).rows[0].n;
  assert.equal(await stored(first.siteId), 96);

  await leaveFleet(db);
  const second = await joinFleet(db, fleet.url, (await createEnrolmentCode(fleet.db.pool, 'Second')).code);
  assert.notEqual(second.siteId, first.siteId);
  // The same running job (no restart): the new site is sent the meters again, then every row.
  await sync.tick();
  const state = syncState(db);
  assert.equal(state.state, 'ok', `${state.lastErrorCode}: ${state.lastError}`);
  assert.equal(state.unsentRows, 0);
  assert.equal(await stored(second.siteId), 96);
});
