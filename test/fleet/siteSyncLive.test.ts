// The site box's live sync against an in-process fleet on a real PostgreSQL: a meter day the fleet has stored re-sends
// only the intervals that changed (the box re-stamps a live day row at every 15-minute write, and the whole day went
// again each time); a new sync process sends whole days once; whatever is sent, the fleet ends with the site's figures.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import pino from 'pino';
import { addUser } from '../../src/fleet/app.ts';
import { createEnrolmentCode } from '../../src/fleet/enrolment.ts';
import { forgetAcknowledgedDeletions, historyBatch, SentIntervals } from '../../src/fleetSync/batch.ts';
import { joinFleet, readLink, syncState } from '../../src/fleetSync/link.ts';
import { FleetSync } from '../../src/fleetSync/sync.ts';
import { FLAG_ESTIMATED } from '../../src/metering/index.ts';
import { encodeFlags, encodeValues, KWH_SCALE } from '../../src/metering/intervalCodec.ts';
import type { Db } from '../../src/platform/db/client.ts';
import { meterDays } from '../../src/platform/db/schema/index.ts';
import { addDays, siteDay } from '../../src/platform/time/calendar.ts';
import { type FleetInstance, startFleet, startFleetDatabase } from '../helpers/fleet.ts';
import type { PostgresCluster } from '../helpers/postgres.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let cluster: PostgresCluster;
let fleet: FleetInstance;
let site: TestServer;
let sql: pg.Pool;

before(async () => {
  cluster = await startFleetDatabase();
  fleet = await startFleet(cluster.url);
  site = await startTestServer();
  sql = new pg.Pool({ connectionString: cluster.url, max: 2 });
});
after(async () => {
  await sql?.end();
  await site?.close();
  await fleet?.close();
  cluster?.destroy();
});

/**
 * A FleetSync's options on a clock the test moves: from the link's last attempt on (the earlier tests' clocks ran ahead
 * of the real one), a second per look.
 */
function ticking(db: Db) {
  let clock = Math.max(Date.now(), Date.parse(readLink(db)!.lastAttemptAt ?? '1970-01-01T00:00:00Z'));
  return {
    db,
    logger: pino({ level: 'silent' }),
    catchUpDelayMs: 60_000,
    now: () => {
      clock += 1000;
      return clock;
    },
    health: () => ({ version: 'test', collector: 'ok', gateway: 'reachable', lastBackupAt: null }),
  };
}

type Sent = { intervals: Array<{ meter: string; start: string; value: number; quality: string }>; days: Array<{ meter: string; value: number }> };

/** The ingest bodies the site sends while `fn` runs (the requests go to the fleet as they are). */
async function sentDuring(fn: () => Promise<void>): Promise<Sent[]> {
  const bodies: Sent[] = [];
  const real = globalThis.fetch;
  globalThis.fetch = (async (input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]) => {
    if (String(input).endsWith('/api/fleet/ingest') && typeof init?.body === 'string') bodies.push(JSON.parse(init.body) as Sent);
    return real(input, init);
  }) as typeof fetch;
  try {
    await fn();
  } finally {
    globalThis.fetch = real;
  }
  return bodies;
}

test('a live meter day sends only the intervals that changed; a new sync process sends the whole day once', async () => {
  const { db } = site.service.deps;
  const timezone = site.service.deps.energy.timezone();
  const meter = site.service.deps.energy.meters.create({ name: 'Live 1', code: 'live.1.kwh', kind: 'energy', site: true }, null);
  const now = Date.now();
  // Yesterday's row, still live for the sync (it trims the days of today and yesterday): every interval of it lies in
  // the past at any hour. The first ten of the current day reach 02:30 UTC; before that the fleet quarantines them.
  const liveDay = addDays(siteDay(timezone, new Date(now)), -1);
  // The box's write of that row: `count` intervals measured (the rest not yet), `estimated` flagged so.
  const values = new Float64Array(96).fill(Number.NaN);
  const flags = new Uint8Array(96);
  const write = () => {
    const total = values.reduce((sum, v) => (Number.isNaN(v) ? sum : sum + v), 0);
    const row = { kwh: encodeValues(values, KWH_SCALE), flags: encodeFlags(flags), totalKwh: total, cost: total * 0.3, carbonKg: total * 0.2 };
    db.orm
      .insert(meterDays)
      .values({ meterId: meter.id, day: liveDay, ...row })
      .onConflictDoUpdate({ target: [meterDays.day, meterDays.meterId], set: row })
      .run();
  };
  for (let i = 0; i < 10; i++) values[i] = 0.25;
  write();

  const { code } = await createEnrolmentCode(fleet.db.pool, 'Live');
  const { siteId } = await joinFleet(db, fleet.url, code);
  const options = {
    db,
    logger: pino({ level: 'silent' }),
    catchUpDelayMs: 60_000,
    now: () => now,
    health: () => ({ version: 'test', collector: 'ok', gateway: 'reachable', lastBackupAt: null }),
  };
  const sync = new FleetSync(options);
  const intervalsOf = (bodies: Sent[]) => bodies.flatMap((b) => b.intervals).filter((r) => r.meter === String(meter.id));
  const fleetIntervals = async () =>
    (await sql.query('select value, quality from intervals where site_id = $1 and meter_key = $2 order by start', [siteId, String(meter.id)])).rows as Array<{
      value: number;
      quality: string;
    }>;

  // First contact: the whole day so far.
  assert.equal(intervalsOf(await sentDuring(() => sync.tick())).length, 10);
  assert.equal((await fleetIntervals()).length, 10);

  // The next 15-minute write: one new interval, and an earlier one corrected and flagged estimated.
  values[10] = 0.5;
  values[3] = 0.3;
  flags[3] = FLAG_ESTIMATED;
  write();
  const live = await sentDuring(() => sync.tick());
  assert.deepEqual(
    intervalsOf(live)
      .map((r) => [new Date(r.start).getTime() - Date.parse(`${liveDay}T00:00:00Z`), r.value, r.quality])
      .map(([ms, v, q]) => [Number(ms) / 900_000, v, q]),
    [
      [3, 0.3, 'estimated'],
      [10, 0.5, 'measured'],
    ],
    'only the changed and the new interval travel',
  );
  assert.equal(live.flatMap((b) => b.days).filter((d) => d.meter === String(meter.id)).length, 1, 'the day row (totals, cost) always goes');
  // Nothing changed: a heartbeat carries no intervals.
  assert.equal(intervalsOf(await sentDuring(() => sync.tick())).length, 0);

  // A new process (the box restarted): it does not know what the fleet holds, so the day goes whole once, then trimmed.
  const restarted = new FleetSync(options);
  values[11] = 0.75;
  write();
  assert.equal(intervalsOf(await sentDuring(() => restarted.tick())).length, 12);
  values[12] = 1;
  write();
  assert.equal(intervalsOf(await sentDuring(() => restarted.tick())).length, 1);

  // The fleet holds exactly the site's figures.
  const stored = await fleetIntervals();
  assert.deepEqual(
    stored.map((r) => r.value),
    [...values].filter((v) => !Number.isNaN(v)),
  );
  assert.equal(stored[3]!.quality, 'estimated');
  const day = await sql.query('select value from day_rollups where site_id = $1 and meter_key = $2', [siteId, String(meter.id)]);
  assert.equal(
    day.rows[0].value,
    values.reduce((sum, v) => (Number.isNaN(v) ? sum : sum + v), 0),
  );
});

test('a batch is bounded by rows: whole days fill it a few at a time, live days trimmed to their new intervals go many to one', () => {
  const { db } = site.service.deps;
  const timezone = site.service.deps.energy.timezone();
  const today = siteDay(timezone, new Date());
  const yesterday = addDays(today, -1);
  const meters = [1, 2, 3].map((n) => site.service.deps.energy.meters.create({ name: `Budget ${n}`, code: `budget.${n}.kwh`, kind: 'energy' }, null));
  const start = db.sqlite.prepare('SELECT value FROM sync_sequence WHERE id = 1').get() as { value: number };
  const write = (intervals: number) => {
    const values = new Float64Array(96).fill(Number.NaN).fill(0.5, 0, intervals);
    for (const day of [yesterday, today]) {
      for (const meter of meters) {
        const row = { kwh: encodeValues(values, KWH_SCALE), flags: encodeFlags(new Uint8Array(96)), totalKwh: intervals / 2, cost: 1, carbonKg: 1 };
        db.orm
          .insert(meterDays)
          .values({ meterId: meter.id, day, ...row })
          .onConflictDoUpdate({ target: [meterDays.day, meterDays.meterId], set: row })
          .run();
      }
    }
  };
  write(10);
  // Whole days: 11 rows each (10 intervals and the day row); a budget of 25 takes two, the third would overflow.
  const sent = new SentIntervals();
  const limits = { days: 1000, alerts: 500, rows: 25 };
  let cursor = start.value;
  const sizes: number[] = [];
  for (;;) {
    const batch = historyBatch(db, cursor, new Date(), limits, sent);
    if (batch.through === cursor) break;
    assert.ok(batch.intervals.length + batch.days.length <= 25);
    assert.equal(batch.through, Math.max(...batch.days.map((d) => d.seq)), 'the batch ends at its last day: contiguous');
    sent.commit();
    sizes.push(batch.days.length);
    cursor = batch.through;
  }
  assert.deepEqual(sizes, [2, 2, 2]);
  // The next 15-minute write: each of the six meter days has one new interval, two rows each: all six in one batch.
  write(11);
  const live = historyBatch(db, cursor, new Date(), limits, sent);
  assert.equal(live.days.length, 6);
  assert.equal(live.intervals.length, 6);
  // Without what the fleet holds (a new process), the same rows are whole days again: two to a batch.
  assert.equal(historyBatch(db, cursor, new Date(), limits).days.length, 2);
});

test('a heartbeat that moves nothing writes no link row until the stored one is 15 minutes old; the process still knows it had contact', async () => {
  const { db } = site.service.deps;
  const timezone = site.service.deps.energy.timezone();
  const meter = site.service.deps.energy.meters.create({ name: 'Beat 1', code: 'beat.1.kwh', kind: 'energy' }, null);
  let now = Date.now() + 120_000;
  const today = siteDay(timezone, new Date(now));
  const values = new Float64Array(96).fill(Number.NaN);
  const write = (intervals: number) => {
    values.fill(0.5, 0, intervals);
    const row = { kwh: encodeValues(values, KWH_SCALE), flags: encodeFlags(new Uint8Array(96)), totalKwh: intervals / 2, cost: 1, carbonKg: 1 };
    db.orm
      .insert(meterDays)
      .values({ meterId: meter.id, day: today, ...row })
      .onConflictDoUpdate({ target: [meterDays.day, meterDays.meterId], set: row })
      .run();
  };
  const sync = new FleetSync({
    db,
    logger: pino({ level: 'silent' }),
    catchUpDelayMs: 60_000,
    intervalMs: 60_000,
    now: () => now,
    health: () => ({ version: 'test', collector: 'ok', gateway: 'reachable', lastBackupAt: null }),
  });
  write(4);
  await sync.tick();
  const stored = readLink(db)!;
  assert.equal(stored.lastSuccessAt, new Date(now).toISOString(), 'rows were carried: the link row is written with the cursor');
  // Heartbeats 4 minutes apart: sent, stored by the fleet, and the link row left alone.
  for (const step of [1, 2]) {
    now += 4 * 60_000;
    const bodies = await sentDuring(() => sync.tick());
    assert.equal(bodies.length, 1, `heartbeat ${step} is sent`);
    assert.deepEqual(readLink(db), stored, `heartbeat ${step} writes nothing`);
  }
  // 30 s later the job looks and does not send: the process remembers its last attempt, not the row's.
  now += 30_000;
  assert.equal((await sentDuring(() => sync.tick())).length, 0);
  // A new write 12.5 minutes after the row's lastSuccessAt: not an outage (the last contact was 4.5 minutes ago), so
  // the rows go in order and the cursor moves; no newest-day-first, no random delay.
  now += 4 * 60_000;
  write(5);
  await sync.tick();
  const moved = readLink(db)!;
  assert.ok(moved.cursor > stored.cursor);
  assert.equal(moved.aheadDay, stored.aheadDay);
  assert.equal(moved.notBefore, 0);
  assert.equal(moved.lastSuccessAt, new Date(now).toISOString());
  // Heartbeats for 15 minutes: the fourth finds the stored time 16 minutes old and writes it.
  for (let i = 0; i < 4; i++) {
    now += 4 * 60_000;
    await sync.tick();
  }
  assert.equal(readLink(db)!.lastSuccessAt, new Date(now).toISOString());
  assert.equal(syncState(db).state, 'ok');
});

test('a sequence that went backwards (the box restored from an older backup) is refused, then re-stamped and sent again', async () => {
  const { db } = site.service.deps;
  const timezone = site.service.deps.energy.timezone();
  const meter = site.service.deps.energy.meters.create({ name: 'Restore 1', code: 'restore.1.kwh', kind: 'energy' }, null);
  const today = siteDay(timezone, new Date());
  const days = [addDays(today, -3), addDays(today, -2), addDays(today, -1)];
  const write = (day: string, kwh: number) => {
    const values = new Float64Array(96).fill(kwh);
    const row = { kwh: encodeValues(values, KWH_SCALE), flags: encodeFlags(new Uint8Array(96)), totalKwh: kwh * 96, cost: 1, carbonKg: 1 };
    db.orm
      .insert(meterDays)
      .values({ meterId: meter.id, day, ...row })
      .onConflictDoUpdate({ target: [meterDays.day, meterDays.meterId], set: row })
      .run();
  };
  const sync = new FleetSync(ticking(db));
  await sync.tick(); // whatever the earlier tests left goes first
  const backupCursor = readLink(db)!.cursor;
  for (const day of days) write(day, 0.25);
  // The backup is taken here (the rows written, not yet sent); then the box sends them and the fleet's cursor passes them.
  await sync.tick();
  await sync.tick();
  const siteId = readLink(db)!.siteId;
  const fleetCursor = Number((await sql.query('select site_cursor from sites where id = $1', [siteId])).rows[0].site_cursor);
  assert.ok(fleetCursor > backupCursor);
  // The backup restored: the link's cursor and the read mark are back where they were; then a day is restated.
  db.sqlite.prepare('UPDATE fleet_link SET cursor = ? WHERE id = 1').run(backupCursor);
  db.sqlite.prepare('UPDATE sync_sequence SET sent_through = ? WHERE id = 1').run(backupCursor);
  write(days[0]!, 0.75);

  await sync.tick();
  assert.equal(syncState(db).state, 'refused');
  assert.equal(syncState(db).lastErrorCode, 'sequence_backwards');
  assert.equal(readLink(db)!.cursor, fleetCursor, "the box takes the fleet's cursor");
  const seqs = db.sqlite.prepare('SELECT sync_seq AS seq FROM meter_days WHERE meter_id = ? ORDER BY day').all(meter.id) as Array<{ seq: number }>;
  assert.ok(
    seqs.every((r) => r.seq > fleetCursor),
    'the rows above the old cursor were re-stamped above the fleet’s',
  );

  await sync.tick();
  assert.equal(syncState(db).state, 'ok');
  assert.equal(syncState(db).unsentRows, 0);
  const stored = await sql.query('select day::text as day, value from day_rollups where site_id = $1 and meter_key = $2 order by day', [
    siteId,
    String(meter.id),
  ]);
  assert.deepEqual(
    stored.rows.map((r) => [r.day, r.value]),
    [
      [days[0], 72],
      [days[1], 24],
      [days[2], 24],
    ],
  );
  const restated = await sql.query('select count(*)::int as n from intervals where site_id = $1 and meter_key = $2 and value = 0.75', [
    siteId,
    String(meter.id),
  ]);
  assert.equal(restated.rows[0].n, 96, "the restated day's intervals replaced the fleet's");
});

test('an alert deleted on the box is deleted at the fleet; the acknowledged deletion stays on the box, below the cursor', async () => {
  const { db } = site.service.deps;
  const alerts = site.service.deps.alerts;
  const sync = new FleetSync(ticking(db));
  const siteId = readLink(db)!.siteId;
  const kept = alerts.create({ title: 'Boiler pressure low', level: 'warning' }, null);
  const doomed = alerts.create({ title: 'Entered by mistake', level: 'info' }, null);
  await sync.tick();
  const fleetAlerts = async () =>
    (
      await sql.query('select alert_id::int as id from site_alerts where site_id = $1 and alert_id = any($2::bigint[]) order by alert_id', [
        siteId,
        [kept.id, doomed.id],
      ])
    ).rows as Array<{ id: number }>;
  assert.deepEqual(await fleetAlerts(), [{ id: kept.id }, { id: doomed.id }]);

  alerts.delete(doomed.id, { id: null, username: 'test' });
  assert.equal(syncState(db).unsentRows, 1, 'the deletion waits to be sent');
  const bodies = await sentDuring(() => sync.tick());
  assert.deepEqual(
    bodies.flatMap((b) => (b as { deletedAlerts?: Array<{ id: number }> }).deletedAlerts ?? []).map((d) => d.id),
    [doomed.id],
  );
  assert.deepEqual(await fleetAlerts(), [{ id: kept.id }]);
  assert.equal(syncState(db).unsentRows, 0);
  const entry = db.sqlite.prepare('SELECT sync_seq AS seq FROM sync_deleted_alerts WHERE alert_id = ?').get(doomed.id) as { seq: number };
  assert.ok(entry.seq <= readLink(db)!.cursor, 'kept, and not counted as unsent');
});

test('an alert deletion the fleet acknowledged and then lost (a failover: its database as before that batch) is sent again', async () => {
  const { db } = site.service.deps;
  const alerts = site.service.deps.alerts;
  const sync = new FleetSync(ticking(db));
  const siteId = readLink(db)!.siteId;
  const lost = alerts.create({ title: 'Deleted just before the fleet crashed', level: 'info' }, null);
  await sync.tick();
  const atFleet = async () => (await sql.query('select * from site_alerts where site_id = $1 and alert_id = $2', [siteId, lost.id])).rows;
  const before = await atFleet();
  assert.equal(before.length, 1);
  const cursorBefore = Number((await sql.query('select site_cursor from sites where id = $1', [siteId])).rows[0].site_cursor);
  assert.equal(cursorBefore, readLink(db)!.cursor);

  alerts.delete(lost.id, { id: null, username: 'test' });
  await sync.tick();
  assert.deepEqual(await atFleet(), [], 'deleted at the fleet, and acknowledged');
  assert.ok(readLink(db)!.cursor > cursorBefore);

  // The fleet's primary crashed before its standby had that batch; the standby, promoted, holds the site as it was.
  const row = before[0];
  await sql.query(
    `insert into site_alerts (site_id, alert_id, title, level, status, occurred_at, acknowledged_at, resolved_at, seq) values ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [row.site_id, row.alert_id, row.title, row.level, row.status, row.occurred_at, row.acknowledged_at, row.resolved_at, row.seq],
  );
  await sql.query('update sites set site_cursor = $2 where id = $1', [siteId, cursorBefore]);

  // The next send is refused (sequence_gap): the box goes back to the fleet's cursor and sends everything above it.
  for (let tick = 0; tick < 5 && (await atFleet()).length > 0; tick++) await sync.tick();
  const fleetCursor = Number((await sql.query('select site_cursor from sites where id = $1', [siteId])).rows[0].site_cursor);
  assert.equal(readLink(db)!.cursor, fleetCursor);
  assert.equal(readLink(db)!.lastErrorCode, null);
  assert.deepEqual(await atFleet(), [], 'the deletion went again');
});

test('an alert acknowledged from the fleet: the box acknowledges it naming who, the fleet then shows it so; a box without the port ignores it', async () => {
  const { db } = site.service.deps;
  const alerts = site.service.deps.alerts;
  const options = ticking(db);
  const siteId = readLink(db)!.siteId;
  const alert = alerts.create({ title: 'Chiller trip', level: 'critical' }, null);
  const older = new FleetSync(options);
  await older.tick();
  const admin = (await addUser(fleet.db.pool, 'Fleet Ops', 'admin')).token;
  const api = async (method: string, path: string) => {
    const response = await fetch(`${fleet.url}${path}`, { method, headers: { authorization: `Bearer ${admin}` } });
    return { status: response.status, body: (await response.json()) as any };
  };
  const listed = async () =>
    (
      (await api('GET', '/api/fleet/alerts?status=all&pageSize=500')).body.items as Array<{
        siteId: string;
        id: string;
        status: string;
        ackRequest?: { by: string };
      }>
    ).find((a) => a.siteId === siteId && a.id === String(alert.id))!;
  assert.equal((await listed()).status, 'active');

  const asked = await api('POST', `/api/fleet/sites/${siteId}/alerts/${alert.id}/acknowledge`);
  assert.equal(asked.status, 202);
  assert.deepEqual([asked.body.siteId, asked.body.alertId, asked.body.requestedBy], [siteId, alert.id, 'Fleet Ops']);
  assert.equal((await listed()).ackRequest?.by, 'Fleet Ops', 'the list shows the request on its way');
  assert.equal(
    (await api('POST', `/api/fleet/sites/${siteId}/alerts/${alert.id}/acknowledge`)).body.requestedAt,
    asked.body.requestedAt,
    'asking again answers the same request',
  );
  assert.equal((await api('POST', `/api/fleet/sites/${siteId}/alerts/999999999/acknowledge`)).status, 404);

  // A box without the port (older software) stores its batches and leaves the alert as it is.
  alerts.create({ title: 'Something to send', level: 'info' }, null);
  await older.tick();
  assert.equal(alerts.get(alert.id).status, 'active');
  assert.equal((await listed()).status, 'active');

  // This box acknowledges it at the answer to its next batch, and sends it so in the same tick.
  const box = new FleetSync({ ...options, alerts });
  await box.tick();
  const local = alerts.get(alert.id);
  assert.equal(local.status, 'acknowledged');
  const note = alerts.notes(alert.id).find((n) => n.kind === 'acknowledge')!;
  assert.equal(note.username, 'Fleet Ops (fleet)');
  assert.match(note.text, /^Acknowledged from the fleet by Fleet Ops at /);
  const audited = db.sqlite
    .prepare("SELECT username FROM audit_log WHERE resource = 'alerts' AND resource_id = ? AND action LIKE '%acknowledge%'")
    .all(String(alert.id)) as Array<{ username: string }>;
  assert.deepEqual(
    audited.map((a) => a.username),
    ['Fleet Ops (fleet)'],
  );
  const shown = await listed();
  assert.equal(shown.status, 'acknowledged', 'the fleet shows it acknowledged after that sync');
  assert.equal(shown.ackRequest, undefined);
  const again = await api('POST', `/api/fleet/sites/${siteId}/alerts/${alert.id}/acknowledge`);
  assert.deepEqual([again.status, again.body.code], [409, 'alert_not_active']);
  const trail = (await api('GET', `/api/fleet/sites/${siteId}/audit`)).body.items as Array<{ action: string; user: string; detail: { alertId: number } }>;
  assert.deepEqual(
    trail.filter((e) => e.action === 'acknowledge-alert').map((e) => [e.user, e.detail.alertId]),
    [['Fleet Ops', alert.id]],
  );
});

test('acknowledged deletions are kept up to a bound; those above the cursor always stay', () => {
  const { db } = site.service.deps;
  const insert = db.sqlite.prepare('INSERT INTO sync_deleted_alerts (alert_id, sync_seq) VALUES (?, ?)');
  const base = 1_000_000_000;
  for (let i = 1; i <= 6; i++) insert.run(base + i, base + i);
  forgetAcknowledgedDeletions(db, base + 3, 2);
  const left = (
    db.sqlite.prepare('SELECT alert_id AS id FROM sync_deleted_alerts WHERE alert_id > ? ORDER BY alert_id').all(base) as Array<{ id: number }>
  ).map((r) => r.id - base);
  assert.deepEqual(left, [4, 5, 6], 'the two newest are kept, and nothing above the cursor (4) goes, whatever the bound');
  db.sqlite.prepare('DELETE FROM sync_deleted_alerts WHERE alert_id > ?').run(base);
});
