// Background writes that leave the event loop free (issue 29): a backfill's day rows are written in slices, one
// transaction each with whole meters (a meter's state never ahead of its rows), and a virtual meter's history is
// rebuilt after the meter write in slices, superseded by a newer write and stopped by a delete.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { addDays, dayIntervals, siteDay } from '../../src/platform/time/calendar.ts';
import { storedKwh } from '../../src/metering/store.ts';
import { DAY, MIN, sumKwh, misbehavingRig, type MisbehavingRig } from '../helpers/rig.ts';

/** Runs `probe` on every timer turn while `work` runs; answers what it saw. */
async function watchWhile<T>(work: () => Promise<unknown>, probe: () => T): Promise<T[]> {
  const seen: T[] = [probe()];
  const timer = setInterval(() => seen.push(probe()), 1);
  try {
    await work();
  } finally {
    clearInterval(timer);
  }
  seen.push(probe());
  return seen;
}

describe('a backfill written in slices', () => {
  let r: MisbehavingRig;
  before(async () => {
    r = await misbehavingRig();
  });
  after(() => r.close());

  test('requests get turns while 320 meters × 3 days (1,280 day rows, more than one write takes) are written; each meter lands whole with its state; every kWh counted', async () => {
    const { deps } = r.server.service;
    const meters = 320;
    const codes: string[] = [];
    const ids: number[] = [];
    deps.db.sqlite.transaction(() => {
      for (let m = 0; m < meters; m += 1) {
        const code = `meter.backfill.${m}.kwh`;
        codes.push(code);
        ids.push(deps.energy.meters.create({ name: `Backfill ${m}`, code, kind: 'energy', area: 'Backfill' }, null).id);
      }
    })();
    // Three days of 15-minute counter readings, 1 kWh an interval, then the value now.
    const now = r.clock.now;
    const from = now - 3 * DAY;
    codes.forEach((code, m) => {
      const rows: { at: number; value: number }[] = [];
      for (let at = from, value = 1000 * m; at < now; at += 15 * MIN, value += 1) rows.push({ at, value });
      r.gateway.history.set(code, rows);
      r.gateway.set(code, { value: rows.at(-1)!.value + 1, ts: now });
    });
    const sqlite = deps.db.sqlite;
    const written = sqlite.prepare('SELECT count(*) FROM meter_state WHERE meter_id IN (SELECT value FROM json_each(?))').pluck();
    // A meter whose state is written but not (all) its days would count twice after a power cut.
    const ahead = sqlite
      .prepare(
        `SELECT count(*) FROM meter_state s WHERE s.meter_id IN (SELECT value FROM json_each(?)) AND (SELECT count(*) FROM meter_days d WHERE d.meter_id = s.meter_id) < ?`,
      )
      .pluck();
    const days = new Set<string>();
    for (let at = from; at <= now; at += 15 * MIN) days.add(siteDay('UTC', new Date(at)));
    const list = JSON.stringify(ids);
    let turns = 0;
    const seen = await watchWhile(
      () => r.collector.collect(),
      () => {
        turns += 1;
        return { written: written.get(list) as number, ahead: ahead.get(list, days.size) as number };
      },
    );
    assert.ok(turns > 3, `timers ran ${turns} times during the collection`);
    assert.equal(seen.at(-1)!.written, meters, 'every meter written');
    const partial = seen.filter((s) => s.written > 0 && s.written < meters);
    assert.ok(partial.length > 0, `part of the meters was committed while the collection went on: ${JSON.stringify(seen.map((s) => s.written))}`);
    assert.deepEqual(
      seen.filter((s) => s.ahead > 0),
      [],
      'no meter state without its day rows at any turn',
    );
    // Each meter's 3 days: 288 intervals of 1 kWh, plus the last one up to now.
    for (const m of [0, 57, meters - 1]) {
      const rows = sqlite.prepare('SELECT kwh FROM meter_days WHERE meter_id = ?').all(ids[m]) as { kwh: Buffer }[];
      const total = rows.reduce((sum, row) => sum + sumKwh(storedKwh(row.kwh)), 0);
      assert.ok(Math.abs(total - 288) < 1e-6, `meter ${m}: ${total} kWh`);
    }
  });
});

describe('a virtual meter rebuilt after its write', () => {
  let r: MisbehavingRig;
  const terms: number[] = [];
  const DAYS = 200;
  let firstDay = '';
  before(async () => {
    r = await misbehavingRig();
    const { deps } = r.server.service;
    const today = siteDay('UTC', new Date(r.clock.now));
    firstDay = addDays(today, -DAYS + 1);
    // 40 meters × 200 days written straight into the store (what a long-running site has).
    deps.db.sqlite.transaction(() => {
      for (let m = 0; m < 40; m += 1)
        terms.push(deps.energy.meters.create({ name: `Term ${m}`, kind: 'energy', code: `meter.term.${m}.kwh`, area: 'Terms' }, null).id);
      for (let day = firstDay; day <= today; day = addDays(day, 1)) {
        const { start, count } = dayIntervals('UTC', day);
        deps.energy.store.save(
          terms.map((meterId, m) => ({
            meterId,
            day,
            start,
            kwh: new Float64Array(count).fill(0.25 * (m + 1)),
            flags: new Uint8Array(count),
            maxKw: null,
            stored: null,
          })),
        );
      }
    })();
  });
  after(() => r.close());

  const virtualDays = (meterId: number) =>
    r.server.service.deps.db.sqlite.prepare('SELECT day, kwh, total_kwh AS total FROM meter_days WHERE meter_id = ? ORDER BY day').all(meterId) as {
      day: string;
      kwh: Buffer;
      total: number;
    }[];

  test('the write answers before the history is rebuilt; slices follow with turns between, and the result is the signed sum', async () => {
    const rebuilds = r.server.service.deps.energy.store.rebuilds;
    const rowCount = r.server.service.deps.db.sqlite.prepare('SELECT count(*) FROM meter_days WHERE meter_id = ?').pluck();
    const created = await r.meter({
      name: 'Terms net',
      kind: 'virtual',
      terms: [{ meterId: terms[0], sign: 1 }, ...terms.slice(1).map((meterId) => ({ meterId, sign: -1 }))],
    });
    const seen = await watchWhile(
      () => rebuilds.idle(),
      () => rowCount.get(created.id) as number,
    );
    assert.equal(seen.at(-1), DAYS, 'every day rebuilt');
    assert.ok(
      seen.some((count) => count > 0 && count < DAYS),
      `the rebuild went in slices with turns between: ${JSON.stringify(seen)}`,
    );
    // 0.25 − (0.5 + 0.75 + … + 10) a interval.
    let expected = 0.25;
    for (let m = 1; m < 40; m += 1) expected -= 0.25 * (m + 1);
    for (const row of virtualDays(created.id)) {
      const kwh = storedKwh(row.kwh);
      assert.ok(Math.abs(kwh[10] - expected) < 1e-6, `${row.day}: ${kwh[10]}`);
      assert.ok(Math.abs(row.total - expected * kwh.length) < 1e-3, `${row.day} total ${row.total}`);
    }
    const month = (
      await r.get(
        `/api/energy/series?from=${firstDay.slice(0, 7)}-01&to=${addDays(siteDay('UTC', new Date(r.clock.now)), 1)}&resolution=day&meterId=${created.id}`,
      )
    ).points;
    assert.equal(month.filter((point: { kwh: number | null }) => point.kwh !== null).length, DAYS);
  });

  test('new terms supersede a rebuild under way; a delete stops one without an error', async () => {
    const { deps } = r.server.service;
    const rebuilds = deps.energy.store.rebuilds;
    const token = r.admin.accessToken;
    const created = await r.meter({ name: 'Changing', kind: 'virtual', terms: terms.map((meterId) => ({ meterId, sign: 1 })) });
    // Sent at once, while the first rebuild is under way.
    const changed = await r.server.request('PUT', `/api/meters/${created.id}`, { token, body: { terms: [{ meterId: terms[3], sign: 1 }] } });
    assert.equal(changed.status, 200, changed.text);
    await rebuilds.idle();
    const rows = virtualDays(created.id);
    assert.equal(rows.length, DAYS);
    for (const row of rows) assert.ok(Math.abs(storedKwh(row.kwh)[0] - 1) < 1e-9, `${row.day} follows the new terms: ${storedKwh(row.kwh)[0]}`);

    const doomed = await r.meter({ name: 'Doomed', kind: 'virtual', terms: terms.map((meterId) => ({ meterId, sign: 1 })) });
    assert.deepEqual(rebuilds.pending(), [doomed.id]);
    assert.equal((await r.server.request('DELETE', `/api/meters/${doomed.id}`, { token })).status, 204);
    await rebuilds.idle();
    assert.equal(virtualDays(doomed.id).length, 0, 'nothing written for a deleted meter');
    assert.equal(rebuilds.lastError, null);
    assert.ok(
      (await r.get('/api/meters?pageSize=100')).items.some((meter: { id: number }) => meter.id === created.id),
      'the service answers on',
    );
  });
});

describe('backup work off the request thread', () => {
  test('the restore drill runs in a worker thread (timers tick during it) and passes; a backup checked in a worker records its row counts', async () => {
    const { startTestServer } = await import('../helpers/server.ts');
    const { performDrillOffThread } = await import('../../src/operations/backup/service.ts');
    const { readManifest } = await import('../../src/operations/backup/archive.ts');
    const server = await startTestServer();
    try {
      const outcome = await server.service.deps.backups.runNow();
      assert.equal(outcome.status, 'ok', JSON.stringify(outcome));
      const backup = (outcome as { backup: { name: string; filesDir: string } }).backup;
      const counts = readManifest(backup.filesDir)?.rowCounts;
      assert.ok(counts && counts.users >= 1, `row counts from the worker: ${JSON.stringify(counts)}`);
      const lines: string[] = [];
      const log = (_: unknown, message?: string) => void lines.push(String(message));
      const logger = { info: log, warn: log, error: log } as unknown as Parameters<typeof performDrillOffThread>[1];
      let ticks = 0;
      const timer = setInterval(() => (ticks += 1), 1);
      let drill;
      try {
        drill = await performDrillOffThread(server.dataDir, logger, { backup: backup.name, trigger: 'test' });
      } finally {
        clearInterval(timer);
      }
      assert.equal(drill?.status, 'ok', JSON.stringify(drill));
      assert.ok(drill!.tables! > 10, JSON.stringify(drill));
      assert.ok(ticks > 3, `the event loop ran timers ${ticks} times during the drill`);
      assert.deepEqual(lines, ['restore drill passed']);
    } finally {
      await server.close();
    }
  });
});
