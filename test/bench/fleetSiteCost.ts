// What fleet sync costs the site box in disk writes, at the box's real cadence: the collector writes every meter's day
// row hourly (EDGE_WRITE_MS; BENCH_WRITE_MIN=15 for the cadence before issue 44's hourly writes; one transaction of
// METERS rows), the sync job looks every 30 s and
// sends every EMS_FLEET_SYNC_INTERVAL (5 min) with the real FleetSync against a real fleet (in-process, PostgreSQL).
// HOURS simulated hours on a simulated clock (the box's and the fleet's), in three modes on a fresh SQLite each:
//   no triggers  – the sync_seq triggers dropped: the box as if it had no sync (the baseline, run first and last);
//   not joined   – the triggers on, no fleet link: what every box pays;
//   joined       – live sync: the re-stamping of every carried row at the next write, the batch's read mark and the
//                  link row's writes.
// Measured: the WAL's growth with wal_autocheckpoint off (every frame the box wrote), per simulated day. Prints
// figures; asserts nothing. BENCH_METERS, BENCH_HOURS, BENCH_SYNC_INTERVAL_S (300) vary it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { createEnrolmentCode } from '../../src/fleet/enrolment.ts';
import { joinFleet } from '../../src/fleetSync/link.ts';
import { FleetSync } from '../../src/fleetSync/sync.ts';
import { encodeFlags, encodeValues, KWH_SCALE } from '../../src/metering/intervalCodec.ts';
import { closeDatabase, openDatabase } from '../../src/platform/db/client.ts';
import { startFleet, startFleetDatabase } from '../helpers/fleet.ts';

const METERS = Number(process.env.BENCH_METERS ?? 500);
const HOURS = Number(process.env.BENCH_HOURS ?? 6);
const INTERVAL_MS = 15 * 60_000;
const WRITE_MS = Number(process.env.BENCH_WRITE_MIN ?? 60) * 60_000;
const TICK_MS = 30_000;
const SYNC_MS = Number(process.env.BENCH_SYNC_INTERVAL_S ?? 300) * 1000;

const cluster = await startFleetDatabase();
let clock = 0;
const fleet = await startFleet(cluster.url, { now: () => clock });

type Mode = 'no triggers' | 'not joined' | 'joined';

async function run(mode: Mode): Promise<{ walBytes: number; frames: number; sends: number; collections: number }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ems-bench-sync-'));
  const file = path.join(dir, 'ems.db');
  const db = openDatabase(file);
  const sqlite = db.sqlite;
  if (mode === 'no triggers') for (const name of ['meter_days_sync_insert', 'meter_days_sync_update']) sqlite.exec(`DROP TRIGGER ${name}`);
  const insertMeter = sqlite.prepare("INSERT INTO meters (name, code, kind, created_at, updated_at) VALUES (?, ?, 'energy', '2026-01-01', '2026-01-01')");
  const ids: number[] = [];
  sqlite.transaction(() => {
    for (let m = 0; m < METERS; m++) ids.push(Number(insertMeter.run(`m${m}`, `c${m}`).lastInsertRowid));
  })();
  const upsert = sqlite.prepare(
    `INSERT INTO meter_days (meter_id, day, kwh, flags, total_kwh, cost, carbon_kg) VALUES (?, ?, ?, ?, ?, ?, 0)
     ON CONFLICT (day, meter_id) DO UPDATE SET kwh = excluded.kwh, flags = excluded.flags, total_kwh = excluded.total_kwh, cost = excluded.cost`,
  );
  const flags = encodeFlags(new Uint8Array(96));
  const days = new Map<string, Float64Array>();
  /** The collector's write at a boundary: the intervals of the write period that just ended, in every meter's day row. */
  const collect = (boundary: number) => {
    const touched = new Set<string>();
    for (let start = boundary - WRITE_MS; start < boundary; start += INTERVAL_MS) {
      const day = new Date(start).toISOString().slice(0, 10);
      const values = days.get(day) ?? new Float64Array(96).fill(Number.NaN);
      days.set(day, values);
      values[(start - Date.parse(`${day}T00:00:00Z`)) / INTERVAL_MS] = 0.25 + (start % 7) / 100;
      touched.add(day);
    }
    sqlite.transaction(() => {
      for (const day of touched) {
        const values = days.get(day)!;
        const blob = encodeValues(values, KWH_SCALE);
        const total = values.reduce((sum, v) => (Number.isNaN(v) ? sum : sum + v), 0);
        for (const id of ids) upsert.run(id, day, blob, flags, total, total * 0.3);
      }
    })();
  };
  // The simulated clock starts at a boundary 12 hours before the real now (the fleet quarantines future rows).
  const t0 = Math.floor(Date.now() / WRITE_MS) * WRITE_MS - 12 * 3_600_000;
  clock = t0;
  collect(clock);
  let sends = 0;
  const sync = new FleetSync({
    db,
    logger: pino({ level: 'silent' }),
    catchUpDelayMs: 60_000,
    intervalMs: SYNC_MS,
    now: () => clock,
    health: () => ({ version: 'bench', collector: 'ok', gateway: 'reachable', lastBackupAt: null }),
  });
  if (mode === 'joined') {
    const { code } = await createEnrolmentCode(fleet.db.pool, `Cost ${Math.random()}`);
    await joinFleet(db, fleet.url, code, new Date(clock));
    await sync.tick(); // the first send: metadata and the first boundary's rows
  }
  const realFetch = globalThis.fetch;
  globalThis.fetch = ((input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]) => {
    if (String(input).endsWith('/api/fleet/ingest')) sends++;
    return realFetch(input, init);
  }) as typeof fetch;
  sqlite.pragma('wal_checkpoint(TRUNCATE)');
  sqlite.pragma('wal_autocheckpoint = 0');
  let collections = 0;
  const end = t0 + HOURS * 3_600_000;
  for (clock = t0 + TICK_MS; clock <= end; clock += TICK_MS) {
    if (clock % WRITE_MS === 0) {
      collect(clock);
      collections++;
    }
    await sync.tick();
  }
  globalThis.fetch = realFetch;
  const walBytes = fs.existsSync(`${file}-wal`) ? fs.statSync(`${file}-wal`).size : 0;
  const pageSize = (sqlite.pragma('page_size', { simple: true }) as number) + 24;
  closeDatabase(db);
  fs.rmSync(dir, { recursive: true, force: true });
  return { walBytes, frames: Math.max(0, Math.round((walBytes - 32) / pageSize)), sends, collections };
}

const perDay = (bytes: number) => +((bytes * (24 / HOURS)) / 1048576).toFixed(2);
const without = await run('no triggers');
const notJoined = await run('not joined');
const joined = await run('joined');
const again = await run('no triggers');
const baseline = (without.walBytes + again.walBytes) / 2;
console.log(
  JSON.stringify({
    meters: METERS,
    simulatedHours: HOURS,
    cadence: `box writes every ${WRITE_MS / 60_000} min; sync looks every 30 s, sends every ${SYNC_MS / 1000} s`,
    walMiBPerDay: {
      withoutTriggers: perDay(without.walBytes),
      notJoined: perDay(notJoined.walBytes),
      joined: perDay(joined.walBytes),
      withoutTriggersAgain: perDay(again.walBytes),
    },
    framesPerDay: { withoutTriggers: without.frames * (24 / HOURS), notJoined: notJoined.frames * (24 / HOURS), joined: joined.frames * (24 / HOURS) },
    sendsPerDay: joined.sends * (24 / HOURS),
    collectionsPerDay: joined.collections * (24 / HOURS),
    extraWalMiBPerDayJoined: perDay(joined.walBytes - baseline),
    extraWalMiBPerDayNotJoined: perDay(notJoined.walBytes - baseline),
    walRatioJoinedToBaseline: +(joined.walBytes / baseline).toFixed(2),
  }),
);
await fleet.close();
cluster.destroy();
