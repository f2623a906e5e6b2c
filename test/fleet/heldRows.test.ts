// What a box's collector holds ahead of its rows reaches the fleet (issue 44): the box writes its rows hourly, joined to
// a fleet or not, and every sync sends what is held as `held` rows. The fleet stores them under the batch's `after`, so
// a held row replaces the held row before it and any sequenced row the box sends later replaces it; a sequenced row
// above `after` is never replaced by a held one. Checked against a real PostgreSQL fleet over HTTP, and end to end with
// the service's own collector on the built-in simulator: the fleet never calls the site stale between the hourly
// writes, its figures for today are the box's at every sync, and the hourly write's rows take over from the held ones.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, test } from 'node:test';
import pg from 'pg';
import pino from 'pino';
import { createEnrolmentCode } from '../../src/fleet/enrolment.ts';
import { joinFleet, readLink } from '../../src/fleetSync/link.ts';
import { FleetSync } from '../../src/fleetSync/sync.ts';
import type { HeldDay } from '../../src/metering/index.ts';
import { encodeFlags, encodeValues, KWH_SCALE } from '../../src/metering/intervalCodec.ts';
import { dayIntervals, siteDay } from '../../src/platform/time/calendar.ts';
import { testDatabase } from '../helpers/database.ts';
import { adminToken, enrolSite, type FleetInstance, getJson, intervalBatch, quarterAgo, sendBatch, startFleet, startFleetDatabase } from '../helpers/fleet.ts';
import { patience } from '../helpers/patience.ts';
import type { PostgresCluster } from '../helpers/postgres.ts';
import { MIN, type SimulatorRig, simulatorRig } from '../helpers/rig.ts';

const HOUR = 60 * MIN;
/** The fleet's clock: the wall clock, or the simulated box's in the tests that run one. */
let fleetNow = () => Date.now();
let cluster: PostgresCluster;
let fleet: FleetInstance;
let sql: pg.Pool;

before(async () => {
  cluster = await startFleetDatabase();
  fleet = await startFleet(cluster.url, { now: () => fleetNow() });
  sql = new pg.Pool({ connectionString: cluster.url, max: 2 });
});
after(async () => {
  await sql?.end();
  await fleet?.close();
  cluster?.destroy();
});

async function storedIntervals(siteId: string, meter: string): Promise<Array<{ start: string; value: number; quality: string; seq: number }>> {
  const result = await sql.query('select start, value, quality, seq::int as seq from intervals where site_id = $1 and meter_key = $2 order by start', [
    siteId,
    meter,
  ]);
  return result.rows.map((row) => ({ ...row, start: (row.start as Date).toISOString() }));
}

/** The sync job of the rig's service on the rig's clock, sending what its collector holds, every 5 minutes. */
function rigSync(rig: SimulatorRig): FleetSync {
  const { deps } = rig.server.service;
  return new FleetSync({
    db: deps.db,
    logger: pino({ level: 'silent' }),
    catchUpDelayMs: 0,
    intervalMs: 5 * MIN,
    now: () => rig.clock.now,
    health: () => ({ version: 'test', collector: 'ok', gateway: 'reachable', lastBackupAt: new Date(rig.clock.now).toISOString() }),
    held: () => deps.energy.store.heldDays(),
  });
}

/** Every JSON body the box sends goes into `bodies` as well, until the test ends. */
function recordSent(t: { after: (fn: () => void) => void }, bodies: unknown[]): void {
  const realFetch = globalThis.fetch;
  globalThis.fetch = (async (url: string | URL | Request, init?: RequestInit) => {
    if (typeof init?.body === 'string') bodies.push(JSON.parse(init.body));
    return realFetch(url, init);
  }) as typeof fetch;
  t.after(() => {
    globalThis.fetch = realFetch;
  });
}

test('held rows at the fleet: stored under `after`, replaced by the next held rows and by any later sequenced row, never replacing a higher one', async () => {
  const { siteId, credential } = await enrolSite(fleet, 'Held rules');
  const from = quarterAgo(8);
  const at = (i: number) => new Date(from + i * 900_000).toISOString();
  // Four sequenced intervals of meter 1 (sequences 1-4) and its day.
  const first = intervalBatch({ after: 0, from, count: 4, meters: ['1'] });
  const day = at(0).slice(0, 10);
  assert.equal((await sendBatch(fleet.url, credential, { ...first, days: [{ meter: '1', day, value: 10, cost: 3, carbonKg: 1, seq: 4 }] })).status, 200);

  // Held: interval 3 corrected, interval 4 new, and the day's totals so far; `after` = 4, the site's cursor.
  const held = (values: number[], total: number) => ({
    sentAt: new Date().toISOString(),
    after: 4,
    through: 4,
    intervals: [],
    held: {
      intervals: values.map((value, i) => ({ meter: '1', start: at(3 + i), value, quality: 'measured' as const })),
      days: [{ meter: '1', day, value: total, cost: total * 0.3, carbonKg: total * 0.1 }],
    },
  });
  const stored = await sendBatch(fleet.url, credential, held([2.5, 0.4], 12));
  assert.equal(stored.status, 200, JSON.stringify(stored.body));
  let rows = await storedIntervals(siteId, '1');
  assert.deepEqual(
    rows.slice(3).map((r) => [r.value, r.seq]),
    [
      [2.5, 4],
      [0.4, 4],
    ],
  );
  // The site went stale no more: the newest interval the fleet holds is the held one.
  const site = await sql.query('select latest_interval_at from sites where id = $1', [siteId]);
  assert.equal((site.rows[0].latest_interval_at as Date).toISOString(), at(4));

  // The next held rows replace these (same `after`): the open interval grew.
  assert.equal((await sendBatch(fleet.url, credential, held([2.5, 0.9], 12.5))).status, 200);
  rows = await storedIntervals(siteId, '1');
  assert.equal(rows[4]!.value, 0.9);
  const dayRow = async () => (await sql.query('select value, seq::int as seq from day_rollups where site_id = $1 and meter_key = $2', [siteId, '1'])).rows[0];
  assert.deepEqual(await dayRow(), { value: 12.5, seq: 4 });

  // A batch after `after` whose one sequence is `through`, meter 1's interval i at `value`, with what `rest` adds.
  const sequenced = (after: number, through: number, i: number, value: number, quality: 'measured' | 'estimated', rest: Record<string, unknown> = {}) => ({
    sentAt: new Date().toISOString(),
    after,
    through,
    intervals: [{ meter: '1', start: at(i), value, quality, seq: through }],
    ...rest,
  });
  // The box's write of the row: sequence 5, the sequenced row replaces the held one, interval and day.
  const written = sequenced(4, 5, 4, 1, 'measured', { days: [{ meter: '1', day, value: 12.6, cost: 3.78, carbonKg: 1.26, seq: 5 }] });
  assert.equal((await sendBatch(fleet.url, credential, written)).status, 200);
  rows = await storedIntervals(siteId, '1');
  assert.deepEqual([rows[4]!.value, rows[4]!.seq], [1, 5]);
  assert.deepEqual(await dayRow(), { value: 12.6, seq: 5 });

  // A held batch still under the old cursor (the answer to sequence 5 lost, the site's cursor 4): the fleet's cursor is
  // the end of the last batch stored (5), so it is refused as going back and replaces nothing (the box re-stamps).
  const late = await sendBatch(fleet.url, credential, held([9, 9], 99));
  assert.equal(late.status, 409);
  assert.equal(late.body.details.cursor, 5);
  rows = await storedIntervals(siteId, '1');
  assert.deepEqual(
    rows.slice(3).map((r) => [r.value, r.seq]),
    [
      [2.5, 4],
      [1, 5],
    ],
    'nothing of the late held batch was stored',
  );
  assert.deepEqual(await dayRow(), { value: 12.6, seq: 5 });

  // Held rows under the current cursor replace a row at or below it where they differ, never one above.
  assert.equal((await sendBatch(fleet.url, credential, { ...held([9, 9], 99), after: 5, through: 5 })).status, 200);
  rows = await storedIntervals(siteId, '1');
  assert.deepEqual(
    rows.slice(3).map((r) => [r.value, r.seq]),
    [
      [9, 5],
      [9, 5],
    ],
  );

  // In one batch with a sequenced row of the same interval, the held row does not win (it is under the lower sequence).
  const both = sequenced(5, 6, 5, 2, 'estimated', { held: { intervals: [{ meter: '1', start: at(5), value: 7, quality: 'measured' }], days: [] } });
  assert.equal((await sendBatch(fleet.url, credential, both)).status, 200);
  rows = await storedIntervals(siteId, '1');
  assert.deepEqual([rows[5]!.value, rows[5]!.quality, rows[5]!.seq], [2, 'estimated', 6]);
});

test('held rows are checked like any other: off the quarter hour, repeated, with a sequence, an undeclared meter or too many: refused, nothing stored', async () => {
  const { siteId, credential } = await enrolSite(fleet, 'Held refusals');
  const from = quarterAgo(4);
  assert.equal((await sendBatch(fleet.url, credential, intervalBatch({ after: 0, from, count: 1, meters: ['1'] }))).status, 200);
  const before = await storedIntervals(siteId, '1');
  const start = new Date(from).toISOString();
  const heldOf = (intervals: unknown[], days: unknown[] = []) => ({ sentAt: new Date().toISOString(), after: 1, through: 1, held: { intervals, days } });
  const cases: Array<[string, unknown, number, RegExp]> = [
    ['off the quarter hour', heldOf([{ meter: '1', start: new Date(from + 60_000).toISOString(), value: 1, quality: 'measured' }]), 400, /15-minute boundary/],
    [
      'repeated',
      heldOf([
        { meter: '1', start, value: 1, quality: 'measured' },
        { meter: '1', start, value: 2, quality: 'measured' },
      ]),
      400,
      /held\/intervals\/1 repeats/,
    ],
    ['a sequence given', heldOf([{ meter: '1', start, value: 1, quality: 'measured', seq: 2 }]), 400, /held\/intervals\/0 must NOT have additional properties/],
    ['missing quality', heldOf([{ meter: '1', start, value: 1, quality: 'missing' }]), 400, /quality/],
    ['undeclared meter', heldOf([{ meter: '99', start, value: 1, quality: 'measured' }]), 422, /never declared/],
    [
      'day repeated',
      heldOf(
        [],
        [
          { meter: '1', day: start.slice(0, 10), value: 1, cost: 0, carbonKg: 0 },
          { meter: '1', day: start.slice(0, 10), value: 2, cost: 0, carbonKg: 0 },
        ],
      ),
      400,
      /held\/days\/1 repeats/,
    ],
    [
      'too many rows',
      heldOf(Array.from({ length: 20_001 }, (_, i) => ({ meter: '1', start: new Date(from - i * 900_000).toISOString(), value: 1, quality: 'measured' }))),
      413,
      /at most 20000/,
    ],
  ];
  for (const [name, body, status, message] of cases) {
    const response = await sendBatch(fleet.url, credential, body);
    assert.equal(response.status, status, `${name}: ${JSON.stringify(response.body)}`);
    assert.match(response.body.error, message, name);
  }
  assert.deepEqual(await storedIntervals(siteId, '1'), before, 'nothing stored');
});

test('a joined box writes hourly; every third sync (15 minutes) brings the fleet what is held, so the site is never stale and its today is the box’s', {
  // Its only limit that moves with the machine's load (15 s at load 8, ~30 s at load 16): scaled like every other wait.
  timeout: 120_000 * patience(),
}, async (t) => {
  // Two minutes into an hour: the next hour's write comes after 58 minutes of held counting.
  const start = Math.floor(Date.now() / HOUR) * HOUR + 2 * MIN;
  const rig = await simulatorRig({ start, collector: 'service' });
  t.after(() => rig.close());
  // The fleet and the box share the rig's clock (up to two hours from the wall clock: the test runs two simulated hours).
  fleetNow = () => rig.clock.now;
  t.after(() => {
    fleetNow = () => Date.now();
  });
  const main = await rig.meter({ name: 'Main', code: 'meter.main.kwh', kind: 'energy', site: true });
  const hvac = await rig.meter({ name: 'HVAC', code: 'meter.hvac.kwh', kind: 'energy', area: 'HVAC' });
  const { deps } = rig.server.service;
  const { db } = deps;
  const timezone = deps.energy.timezone();
  const lastAt = db.sqlite.prepare('SELECT max(last_at) FROM meter_state').pluck();
  await rig.collector.collect(); // the first reading: a week backfilled from the history, written at once
  const backfilled = Number(lastAt.get());

  const { code } = await createEnrolmentCode(fleet.db.pool, 'Hourly box');
  const { siteId } = await joinFleet(db, fleet.url, code, new Date(rig.clock.now));
  const sync = rigSync(rig);
  const token = await adminToken(fleet.db);

  const hourAfter = Math.floor(start / HOUR) * HOUR + HOUR;
  let writes = 0;
  let previousLastAt = backfilled;
  for (let at = start + 3 * MIN, step = 0; at <= hourAfter + 62 * MIN; at += 5 * MIN, step++) {
    await rig.run(at);
    await sync.tick();
    // Held rows go at most every 15 minutes (every third sync, from the first): the fleet's today is the box's at those.
    const heldWent = step % 3 === 0;
    const written = Number(lastAt.get());
    if (written !== previousLastAt) {
      writes++;
      assert.ok(Math.floor(written / HOUR) > Math.floor(previousLastAt / HOUR), `a write only at a new hour (${new Date(written).toISOString()})`);
      previousLastAt = written;
    }
    // The fleet's view of the site: ok (not stale), its newest interval the box's open one.
    const sites = (await getJson(`${fleet.url}/api/fleet/sites`, token)).body as { items: Array<{ id: string; status: string; syncLagSec: number }> };
    const row = sites.items.find((s) => s.id === siteId)!;
    assert.equal(row.status, 'ok', `${new Date(at).toISOString()}: ${JSON.stringify(row)}`);
    // The newest interval the fleet holds is the open one of the last held send: at most 15 + 15 minutes old.
    assert.ok(row.syncLagSec <= 30 * 60, `lag ${row.syncLagSec} s at ${new Date(at).toISOString()}`);
    if (!heldWent) continue;
    // Today at the fleet is today at the box: every meter's day total as the box holds it (what its write will store).
    const today = siteDay(timezone, new Date(at));
    const fleetDays = (await sql.query('select meter_key, value, cost from day_rollups where site_id = $1 and day = $2 order by meter_key', [siteId, today]))
      .rows as Array<{ meter_key: string; value: number; cost: number }>;
    for (const meter of [main, hvac]) {
      // What the box holds of today, or its row when it holds nothing (just after a write).
      const mine =
        deps.energy.store.heldDays().find((d) => d.meterId === meter.id && d.day === today) ??
        (db.sqlite.prepare('SELECT total_kwh AS totalKwh, cost FROM meter_days WHERE meter_id = ? AND day = ?').get(meter.id, today) as {
          totalKwh: number;
          cost: number;
        });
      const theirs = fleetDays.find((r) => r.meter_key === String(meter.id));
      if (!mine) {
        // Just past midnight nothing of the new day has been read yet: the fleet holds nothing of it either.
        assert.equal(theirs, undefined, `meter ${meter.id}: the box holds nothing of ${today} at ${new Date(at).toISOString()}, nor may the fleet`);
        continue;
      }
      assert.ok(theirs, `the fleet holds today for meter ${meter.id} at ${new Date(at).toISOString()}`);
      assert.ok(Math.abs(mine.totalKwh - theirs.value) < 1e-9, `meter ${meter.id} kWh at ${new Date(at).toISOString()}: ${mine.totalKwh} ${theirs.value}`);
      assert.ok(Math.abs(mine.cost - theirs.cost) < 1e-9, `meter ${meter.id} cost at ${new Date(at).toISOString()}`);
    }
  }
  assert.equal(writes, 2, 'two hourly writes in 2 hours (none at a 15-minute boundary or at the half hour)');

  // The rows take over: written, then synced, the fleet holds exactly the box's rows, each interval at a sequence the
  // row's write gave or the held one before it (none above the box's cursor), and today's day rows at the rows' own.
  rig.collector.flush();
  await sync.tick();
  await sync.tick(); // the interval has not passed: the second tick only looks
  rig.clock.now += 5 * MIN;
  await sync.tick();
  const cursor = readLink(db)!.cursor;
  for (const meter of [main, hvac]) {
    const rows = rig.dayRows(meter.id).filter((r) => r.day >= siteDay(timezone, new Date(start)));
    const expected = rows.flatMap((row) => {
      const { kwh } = row;
      return Array.from(kwh).flatMap((value, i) => (Number.isNaN(value) ? [] : [{ value, i, day: row.day }]));
    });
    const stored = (await storedIntervals(siteId, String(meter.id))).filter(
      (r) => r.start >= new Date(Math.floor(start / 86_400_000) * 86_400_000).toISOString(),
    );
    assert.ok(stored.length >= expected.length - 96, 'the fleet holds the day');
    const byStart = new Map(stored.map((r) => [r.start, r]));
    const fleetToday = await sql.query('select day::text as day, value, seq::int as seq from day_rollups where site_id = $1 and meter_key = $2', [
      siteId,
      String(meter.id),
    ]);
    for (const row of rows) {
      const { start: dayStart } = dayIntervals(timezone, row.day);
      row.kwh.forEach((value, i) => {
        if (Number.isNaN(value)) return;
        const at = new Date(dayStart + i * 900_000).toISOString();
        const theirs = byStart.get(at);
        assert.ok(theirs, `meter ${meter.id} ${at} at the fleet`);
        assert.equal(theirs.value, value, `meter ${meter.id} ${at}`);
        assert.ok(theirs.seq <= cursor, 'no sequence above the box cursor');
      });
      const seq = Number(db.sqlite.prepare('SELECT sync_seq FROM meter_days WHERE meter_id = ? AND day = ?').pluck().get(meter.id, row.day));
      const dayAtFleet = fleetToday.rows.find((r) => r.day === row.day);
      assert.ok(dayAtFleet, `meter ${meter.id} ${row.day} at the fleet`);
      assert.equal(dayAtFleet.seq, seq, `meter ${meter.id} ${row.day}: the written row's sequence`);
      assert.ok(Math.abs(dayAtFleet.value - row.total) < 1e-9);
    }
  }
});

test('a fleet that refuses held rows (older than the box): the rows go on without them, the refusal stays out of the link row, held rows are tried again an hour later', async (t) => {
  // An old fleet stand-in over HTTP: it refuses a batch with a `held` field as the old schema did, stores nothing else.
  const bodies: Array<{ after: number; through: number; held?: unknown; days: unknown[] }> = [];
  const old = http.createServer((request, response) => {
    let text = '';
    request.on('data', (chunk) => (text += chunk));
    request.on('end', () => {
      const body = JSON.parse(text);
      bodies.push(body);
      response.setHeader('content-type', 'application/json');
      if (body.held) {
        response.statusCode = 400;
        response.end(JSON.stringify({ code: 'invalid_batch', error: 'batch refused: /held is not allowed (unknown field)' }));
        return;
      }
      // The acknowledgement the box checks: its site and the batch's range (a fleet older than that one is not modelled).
      response.end(JSON.stringify({ siteId: 'site', after: body.after, acknowledged: body.through }));
    });
  });
  await new Promise<void>((resolve) => old.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => old.close(() => resolve())));
  const port = (old.address() as { port: number }).port;

  const start = Math.floor(Date.now() / HOUR) * HOUR + 2 * MIN;
  const rig = await simulatorRig({ start, collector: 'service' });
  t.after(() => rig.close());
  await rig.meter({ name: 'Main', code: 'meter.main.kwh', kind: 'energy', site: true });
  const { deps } = rig.server.service;
  const { db } = deps;
  await rig.collector.collect();
  db.sqlite
    .prepare("INSERT INTO fleet_link (id, fleet_url, site_id, credential, joined_at, cursor, not_before) VALUES (1, ?, 'site', 'secret', ?, 0, 0)")
    .run(`http://127.0.0.1:${port}`, new Date(rig.clock.now).toISOString());
  const sync = rigSync(rig);
  await rig.run(start + 4 * MIN);
  await sync.tick();
  const firstTick = bodies.splice(0);
  assert.ok(
    firstTick.some((b) => b.through > 0 && !b.held),
    'the rows went',
  );
  assert.equal(firstTick.filter((b) => b.held).length, 1, 'held rows tried once, refused');
  const link = readLink(db)!;
  assert.equal(link.lastError, null, 'the refusal of held rows is not the rows’ state');
  assert.equal(link.cursor, firstTick.find((b) => b.through > 0)!.through);

  // The next ticks within the hour send without held rows; an hour later they are tried again.
  await rig.run(start + 10 * MIN);
  await sync.tick();
  assert.ok(bodies.length > 0 && bodies.every((b) => !b.held), 'sent without held rows');
  for (let at = start + 15 * MIN; at < start + 64 * MIN; at += 5 * MIN) {
    await rig.run(at);
    await sync.tick();
  }
  assert.ok(bodies.length >= 10 && bodies.every((b) => !b.held), 'still without held rows within the hour');
  bodies.length = 0;
  await rig.run(start + 66 * MIN);
  await sync.tick();
  assert.ok(
    bodies.some((b) => b.held),
    'held rows tried again after an hour',
  );
});

test('held rows go only when they changed: a meter day the fleet holds as it is sends nothing, all of it again after a 409; the fleet writes nothing for a row sent again as stored', async (t) => {
  // A box of its own (migrated SQLite, three meters), joined to the real fleet; what it holds is given day by day. The
  // day is three days back (whole UTC day): nothing here depends on the time of day.
  const db = testDatabase();
  const insert = db.sqlite.prepare(
    "INSERT INTO meters (name, code, kind, site, commodity, created_at, updated_at) VALUES (?, ?, 'energy', 1, 'electricity', '2026-01-01', '2026-01-01')",
  );
  for (const m of [1, 2, 3]) insert.run(`Meter ${m}`, `m${m}`);
  const { code } = await createEnrolmentCode(fleet.db.pool, 'Held when changed');
  const { siteId } = await joinFleet(db, fleet.url, code);
  const day = new Date(Date.now() - 3 * 86_400_000).toISOString().slice(0, 10);
  const dayStart = Date.parse(`${day}T00:00:00Z`);
  /** The collector's held records: meter m's intervals 0..values.length-1, priced at 0.3/kWh. */
  let holding: Record<number, number[]> = {};
  const heldDays = (): HeldDay[] =>
    Object.entries(holding).map(([m, values]) => {
      const kwh = new Float64Array(96).fill(Number.NaN);
      kwh.set(values);
      const total = values.reduce((a, b) => a + b, 0);
      return {
        meterId: Number(m),
        day,
        totalKwh: total,
        cost: total * 0.3,
        carbonKg: total * 0.2,
        peakKw: null,
        peakIndex: null,
        stored: null,
        record: { meterId: Number(m), day, start: dayStart, kwh, flags: new Uint8Array(96), maxKw: null },
      };
    });
  let now = Date.now();
  // A new FleetSync is the box's service after a restart: it remembers nothing of what the fleet holds.
  const makeSync = () =>
    new FleetSync({
      db,
      logger: pino({ level: 'silent' }),
      catchUpDelayMs: 0,
      intervalMs: 5 * MIN,
      now: () => now,
      health: () => ({ version: 'test', collector: 'ok', gateway: 'reachable', lastBackupAt: null }),
      held: heldDays,
      heldEveryMs: 0, // held rows due at every sync here: what goes when they are is the question (15 minutes: below)
    });
  let sync = makeSync();
  // What the box sends: a spy on fetch that passes every request on to the real fleet.
  const sentBodies: Array<{
    after: number;
    through: number;
    held?: { intervals: Array<{ meter: string; value: number }>; days: Array<{ meter: string; value: number }> };
  }> = [];
  recordSent(t, sentBodies);
  const nextSync = async () => {
    sentBodies.length = 0;
    now += 5 * MIN;
    await sync.tick();
    const held = sentBodies.flatMap((b) => (b.held ? [b.held] : []));
    return {
      intervals: held.flatMap((h) => h.intervals.map((r) => `${r.meter}:${r.value}`)).sort(),
      days: held.flatMap((h) => h.days.map((r) => `${r.meter}:${r.value}`)).sort(),
    };
  };
  const xmins = async () =>
    (
      await sql.query<{ key: string; xmin: string }>(
        `select 'd' || meter_key || ' ' || day as key, xmin::text from day_rollups where site_id = $1 union all
         select 'm ' || month, xmin::text from site_months where site_id = $1 order by 1`,
        [siteId],
      )
    ).rows;

  holding = { 1: [1, 0.5], 2: [2], 3: [0] };
  assert.deepEqual(await nextSync(), { intervals: ['1:0.5', '1:1', '2:2', '3:0'], days: ['1:1.5', '2:2', '3:0'] }, 'the first send: everything held');
  const stored = await xmins();
  assert.equal(stored.length, 4, 'three day rows and the month');

  // Nothing changed: no held row at all; the heartbeat still goes.
  assert.deepEqual(await nextSync(), { intervals: [], days: [] });
  assert.equal(sentBodies.length, 1, 'a heartbeat went');
  // Meter 1's open interval grew, meter 3 opened an interval of 0 (its day total unchanged): only those.
  holding = { 1: [1, 0.75], 2: [2], 3: [0, 0] };
  assert.deepEqual(await nextSync(), { intervals: ['1:0.75', '3:0'], days: ['1:1.75'] });
  const fleetDays = await sql.query('select meter_key, value from day_rollups where site_id = $1 order by meter_key', [siteId]);
  assert.deepEqual(
    fleetDays.rows.map((r) => [r.meter_key, r.value]),
    [
      ['1', 1.75],
      ['2', 2],
      ['3', 0],
    ],
    "the fleet's day rows are the box's",
  );

  // A 409: the box's cursor put back below the fleet's (a restore), with one written row (the day before) to re-stamp.
  // After it the box re-sends every held row, as after a restart.
  const dayBefore = new Date(dayStart - 86_400_000).toISOString().slice(0, 10);
  db.sqlite.prepare('INSERT INTO meter_days (meter_id, day, kwh, flags, total_kwh, cost, carbon_kg) VALUES (2, ?, ?, ?, 2, 0.6, 0.4)').run(
    dayBefore,
    encodeValues(
      Float64Array.from({ length: 96 }, (_, i) => (i === 0 ? 2 : Number.NaN)),
      KWH_SCALE,
    ),
    encodeFlags(new Uint8Array(96)),
  );
  await nextSync();
  const cursor = readLink(db)!.cursor;
  assert.ok(cursor > 0, 'the written row was stored');
  db.sqlite.prepare('UPDATE fleet_link SET cursor = 0').run();
  const refused = await nextSync();
  assert.deepEqual(refused, { intervals: [], days: [] }, 'the refused batch carried rows only');
  assert.ok(readLink(db)!.cursor >= cursor, 'the box took the fleet cursor');
  const again = await nextSync();
  assert.deepEqual(again.days, ['1:1.75', '2:2', '3:0'], 'every held day row again after the 409');
  assert.deepEqual(again.intervals, ['1:0.75', '1:1', '2:2', '3:0', '3:0'], 'every held interval again');

  // A restart sends everything held again; at the fleet a row sent again as it is stored writes nothing (day rows, the
  // month's totals).
  const before = await xmins();
  sync = makeSync();
  assert.deepEqual((await nextSync()).days, ['1:1.75', '2:2', '3:0'], 'everything held sent again after a restart');
  assert.deepEqual(await xmins(), before, 'no day row and no month rewritten');
  holding = { 1: [1, 0.75], 2: [2, 1], 3: [0, 0] };
  assert.deepEqual(await nextSync(), { intervals: ['2:1'], days: ['2:3'] });
  const after = await xmins();
  const xmin = (rows: typeof after, key: string) => rows.find((r) => r.key === key)!.xmin;
  assert.notEqual(xmin(after, `d2 ${day}`), xmin(before, `d2 ${day}`), 'the changed day row is written');
  assert.equal(xmin(after, `d1 ${day}`), xmin(before, `d1 ${day}`), 'the others are not');
  assert.equal(xmin(after, `d2 ${dayBefore}`), xmin(before, `d2 ${dayBefore}`));
  const month = `m ${day.slice(0, 7)}-01`;
  assert.notEqual(xmin(after, month), xmin(before, month), "the changed row's month follows");
});

test('held rows go at most every 15 minutes: the syncs between carry the written rows and a heartbeat; after a 409 or a restart they go at once', async (t) => {
  // A box of its own (migrated SQLite, two meters), joined to the real fleet, its sync every 5 minutes; what its collector
  // holds is given. The day is three days back (a whole UTC day): nothing here depends on the time of day.
  const db = testDatabase();
  const insert = db.sqlite.prepare(
    "INSERT INTO meters (name, code, kind, site, commodity, created_at, updated_at) VALUES (?, ?, 'energy', 1, 'electricity', '2026-01-01', '2026-01-01')",
  );
  for (const m of [1, 2]) insert.run(`Meter ${m}`, `m${m}`);
  const { code } = await createEnrolmentCode(fleet.db.pool, 'Held every 15 minutes');
  const { siteId } = await joinFleet(db, fleet.url, code);
  const day = new Date(Date.now() - 3 * 86_400_000).toISOString().slice(0, 10);
  const dayStart = Date.parse(`${day}T00:00:00Z`);
  let holding: Record<number, number[]> = {};
  const heldDays = (): HeldDay[] =>
    Object.entries(holding).map(([m, values]) => {
      const kwh = new Float64Array(96).fill(Number.NaN);
      kwh.set(values);
      const total = values.reduce((a, b) => a + b, 0);
      const record = { meterId: Number(m), day, start: dayStart, kwh, flags: new Uint8Array(96), maxKw: null };
      return { meterId: Number(m), day, totalKwh: total, cost: total * 0.3, carbonKg: total * 0.2, peakKw: null, peakIndex: null, stored: null, record };
    });
  let now = Date.now();
  const makeSync = () =>
    new FleetSync({
      db,
      logger: pino({ level: 'silent' }),
      catchUpDelayMs: 0,
      intervalMs: 5 * MIN,
      now: () => now,
      health: () => ({ version: 'test', collector: 'ok', gateway: 'reachable', lastBackupAt: null }),
      held: heldDays,
    });
  let sync = makeSync();
  const sentBodies: Array<{ through: number; days?: Array<{ meter: string }>; held?: { days: Array<{ meter: string; value: number }> } }> = [];
  recordSent(t, sentBodies);
  /** The sync 5 minutes on: how many requests went, and the held day rows they carried ('meter:kWh'). */
  const syncIn5 = async () => {
    sentBodies.length = 0;
    now += 5 * MIN;
    await sync.tick();
    return { requests: sentBodies.length, heldDays: sentBodies.flatMap((b) => b.held?.days.map((d) => `${d.meter}:${d.value}`) ?? []).sort() };
  };
  const fleetDay = async () =>
    (await sql.query('select meter_key, value from day_rollups where site_id = $1 and day = $2 order by meter_key', [siteId, day])).rows.map(
      (r) => `${r.meter_key}:${r.value}`,
    );

  holding = { 1: [1], 2: [2] };
  assert.deepEqual((await syncIn5()).heldDays, ['1:1', '2:2'], 'the first send carries what is held');
  // Both meters use energy at every sync: 5 and 10 minutes on, heartbeats only; the fleet keeps the first figures.
  holding = { 1: [1, 0.5], 2: [2] };
  assert.deepEqual(await syncIn5(), { requests: 1, heldDays: [] }, 'a heartbeat, no held rows 5 minutes on');
  holding = { 1: [1, 1], 2: [2, 0.25] };
  // A row the box writes meanwhile (the day before) goes at once all the same.
  const dayBefore = new Date(dayStart - 86_400_000).toISOString().slice(0, 10);
  db.sqlite.prepare('INSERT INTO meter_days (meter_id, day, kwh, flags, total_kwh, cost, carbon_kg) VALUES (1, ?, ?, ?, 4, 1.2, 0.8)').run(
    dayBefore,
    encodeValues(
      Float64Array.from({ length: 96 }, (_, i) => (i === 0 ? 4 : Number.NaN)),
      KWH_SCALE,
    ),
    encodeFlags(new Uint8Array(96)),
  );
  const tenOn = await syncIn5();
  assert.deepEqual(tenOn.heldDays, [], 'no held rows 10 minutes on');
  assert.ok(
    sentBodies.some((b) => b.days?.some((d) => d.meter === '1')),
    'the written row went at once',
  );
  assert.deepEqual(await fleetDay(), ['1:1', '2:2'], 'the fleet still holds the first held figures');
  // 15 minutes on: the held rows that changed since, as the box holds them now.
  assert.deepEqual((await syncIn5()).heldDays, ['1:2', '2:2.25'], 'held rows again 15 minutes on');
  assert.deepEqual(await fleetDay(), ['1:2', '2:2.25'], "the fleet's day rows are the box's");
  holding = { 1: [1, 1.5], 2: [2, 0.25] };
  assert.deepEqual((await syncIn5()).heldDays, [], 'and then not for another 15 minutes');

  // A 409 (the box's cursor put back below the fleet's): what the fleet holds is not known; held rows go at once after it.
  db.sqlite.prepare('UPDATE fleet_link SET cursor = 0').run();
  await syncIn5(); // refused, re-stamped
  assert.deepEqual((await syncIn5()).heldDays, ['1:2.5', '2:2.25'], 'every held day row at the send after the 409');
  // A restart (a new process): held rows go at its first send.
  holding = { 1: [1, 1.75], 2: [2, 0.25] };
  sync = makeSync();
  assert.deepEqual((await syncIn5()).heldDays, ['1:2.75', '2:2.25'], 'held rows at the first send after a restart');
  assert.deepEqual(await fleetDay(), ['1:2.75', '2:2.25']);
});
