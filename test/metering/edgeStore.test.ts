// The compact interval format: values to 0.1 Wh, flags as runs, rows of the first format (Float32 + a flag byte per
// interval) read as they are and rewritten in the new one, the day-first migration keeping every row, and the bytes a
// meter-interval costs on disk.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { closeDatabase, migrationsFolder, openDatabase } from '../../src/platform/db/client.ts';
import { AuditLog } from '../../src/platform/db/auditTrail.ts';
import { addDays, dayIntervals } from '../../src/platform/time/calendar.ts';
import { decodeFlags, decodeValues, encodeFlags, encodeValues, isLegacyBlob, KWH_SCALE, quantize } from '../../src/metering/intervalCodec.ts';
import { buildEnergy } from '../../src/energy/module.ts';
import { FLAG_BAD_QUALITY, FLAG_ESTIMATED, FLAG_RESET } from '../../src/metering/store.ts';
import { testDatabase } from '../helpers/database.ts';
import { startTestServer, tempDir, type TestServer, type TestUser } from '../helpers/server.ts';

function legacyBlob(values: number[]): Buffer {
  return Buffer.from(new Float32Array(values).buffer);
}

describe('interval codec', () => {
  test('values read back to 0.1 Wh, gaps stay gaps, and the format never looks like a Float32 row', () => {
    const values = Array.from({ length: 96 }, (_, i) =>
      i % 17 === 5 ? NaN : i === 40 ? -3.21987 : i === 41 ? 25_000.00004 : 0.5 + Math.sin(i) * 0.37 + i * 1e-5,
    );
    const blob = encodeValues(values, KWH_SCALE);
    assert.equal(isLegacyBlob(blob), false);
    assert.notEqual(blob.length % 4, 0);
    const decoded = decodeValues(blob, KWH_SCALE);
    assert.equal(decoded.length, 96);
    values.forEach((value, i) => {
      if (Number.isNaN(value)) assert.ok(Number.isNaN(decoded[i]), `interval ${i} has no data`);
      else {
        assert.equal(decoded[i], quantize(value, KWH_SCALE), `interval ${i}`);
        assert.ok(Math.abs(decoded[i] - value) <= 0.5 / KWH_SCALE + 1e-9, `interval ${i} within 0.05 Wh`);
      }
    });
    // Whole days without gaps need no bitmap: ~2.5 bytes an interval for a sub-meter's noisy load.
    const full = Array.from({ length: 96 }, (_, i) => 2 + Math.sin(i / 8) + (i % 3) * 0.013);
    const fullBlob = encodeValues(full, KWH_SCALE);
    assert.ok(fullBlob.length < 96 * 3, `a full day takes ${fullBlob.length} bytes`);
    assert.deepEqual(
      Array.from(decodeValues(encodeValues(new Array(92).fill(NaN), KWH_SCALE), KWH_SCALE)).filter((v) => !Number.isNaN(v)),
      [],
    );
    for (const count of [92, 96, 100]) assert.equal(decodeValues(encodeValues(new Array(count).fill(1.25), KWH_SCALE), KWH_SCALE).length, count);
  });

  test('flags as runs: empty when none, every interval read back', () => {
    assert.equal(encodeFlags(new Uint8Array(96)).length, 0);
    const flags = new Uint8Array(96);
    flags.fill(FLAG_ESTIMATED, 10, 50);
    flags[60] = FLAG_RESET | FLAG_BAD_QUALITY;
    flags[95] = FLAG_BAD_QUALITY;
    const values = encodeValues(new Array(96).fill(1), KWH_SCALE);
    const stored = encodeFlags(flags);
    assert.equal(stored.length, 9);
    assert.deepEqual(Array.from(decodeFlags(stored, values, 96)), Array.from(flags));
    // A row of the first format keeps its byte per interval.
    assert.deepEqual(Array.from(decodeFlags(Buffer.from(flags), legacyBlob(new Array(96).fill(1)), 96)), Array.from(flags));
  });
});

describe('rows of the first format', () => {
  let server: TestServer;
  let admin: TestUser;
  before(async () => {
    server = await startTestServer();
    admin = await server.createUser({ role: 'admin' });
  });
  after(() => server.close());

  test('are answered as they were, and a write of their day keeps every value and flag in the new format', async () => {
    const created = await server.request('POST', '/api/meters', {
      token: admin.accessToken,
      body: { name: 'Old box meter', code: 'meter.old.kwh', kind: 'energy', site: true },
    });
    assert.equal(created.status, 201, created.text);
    const meterId = created.body.id as number;
    const day = '2026-03-10';
    const values = Array.from({ length: 96 }, (_, i) => (i === 7 ? NaN : 1.5 + (i % 9) * 0.1234));
    const flags = new Uint8Array(96);
    flags[3] = FLAG_RESET;
    flags.fill(FLAG_ESTIMATED, 20, 24);
    const sqlite = server.service.deps.db.sqlite;
    const total = values.reduce((sum, v) => sum + (Number.isNaN(v) ? 0 : Math.fround(v)), 0);
    sqlite
      .prepare(
        'INSERT INTO meter_days (meter_id, day, kwh, flags, max_kw, total_kwh, cost, carbon_kg, peak_kw, peak_index) VALUES (?, ?, ?, ?, NULL, ?, 0, 0, NULL, NULL)',
      )
      .run(meterId, day, legacyBlob(values), Buffer.from(flags), total);
    const csv = async () => {
      const response = await server.request('GET', `/api/energy/export.csv?meterId=${meterId}&from=${day}&to=${addDays(day, 1)}`, { token: admin.accessToken });
      assert.equal(response.status, 200, response.text);
      return response.text;
    };
    const before = await csv();
    const lines = before.trim().split('\n').slice(1);
    assert.equal(lines.length, 96);
    lines.forEach((line, i) => {
      const [, , kwh, , flag] = line.split(',');
      if (Number.isNaN(values[i])) assert.equal(kwh, '');
      else assert.ok(Math.abs(Number(kwh) - values[i]) < 1e-4, `interval ${i}: ${kwh} vs ${values[i]}`);
      assert.equal(Number(flag), flags[i], `interval ${i} flags`);
    });
    const series = await server.request('GET', `/api/energy/series?meterId=${meterId}&from=${day}&to=${addDays(day, 1)}&resolution=15min`, {
      token: admin.accessToken,
    });
    assert.equal(series.status, 200, series.text);
    assert.equal(series.body.points[8].kwh, Math.round(Math.fround(values[8]) * 1e4) / 1e4);

    // A write of that day (the collector's, a virtual meter's rebuild) stores it in the new format.
    const { store } = server.service.deps.energy;
    store.transaction(() => store.save([store.load(meterId, day)]));
    const row = sqlite.prepare('SELECT kwh, flags, total_kwh AS total FROM meter_days WHERE meter_id = ? AND day = ?').get(meterId, day) as {
      kwh: Buffer;
      flags: Buffer;
      total: number;
    };
    assert.equal(isLegacyBlob(row.kwh), false);
    assert.ok(row.kwh.length + row.flags.length < (96 * 5) / 2, `the row shrank to ${row.kwh.length + row.flags.length} bytes`);
    assert.ok(Math.abs(row.total - total) < 0.005, `day total ${row.total} vs ${total}`);
    assert.equal(await csv(), before);
  });
});

describe('migration to day-first rows', () => {
  test('keeps every day and month row of a database made before it', () => {
    const dir = tempDir('ems-edge-migrate-');
    try {
      // The migrations up to the one before this change, as a box has them.
      const older = path.join(dir, 'migrations');
      fs.cpSync(migrationsFolder(), older, { recursive: true });
      const journalFile = path.join(older, 'meta', '_journal.json');
      const journal = JSON.parse(fs.readFileSync(journalFile, 'utf8')) as { entries: { tag: string }[] };
      journal.entries = journal.entries.filter((entry) => entry.tag < '0007');
      fs.writeFileSync(journalFile, JSON.stringify(journal));
      const file = path.join(dir, 'ems.db');
      const old = new Database(file);
      migrate(drizzle(old), { migrationsFolder: older });
      const at = new Date().toISOString();
      const meters = [1, 2, 3].map(
        (n) =>
          old
            .prepare("INSERT INTO meters (name, code, kind, terms, created_at, updated_at) VALUES (?, ?, 'energy', '[]', ?, ?) RETURNING id")
            .pluck()
            .get(`M${n}`, `m.${n}.kwh`, at, at) as number,
      );
      const insertDay = old.prepare(
        'INSERT INTO meter_days (meter_id, day, kwh, flags, max_kw, total_kwh, cost, carbon_kg, peak_kw, peak_index) VALUES (?, ?, ?, ?, NULL, ?, ?, 0, 4, 1)',
      );
      const insertMonth = old.prepare('INSERT INTO meter_months (meter_id, month, total_kwh, cost, carbon_kg, peak_kw, peak_at) VALUES (?, ?, ?, 0, 0, 4, 0)');
      for (const id of meters) {
        for (let d = 0; d < 40; d += 1)
          insertDay.run(id, addDays('2026-01-01', d), legacyBlob(new Array(96).fill(id + d / 100)), Buffer.alloc(96), 96 * (id + d / 100), id);
        insertMonth.run(id, '2026-01', 100 * id);
        insertMonth.run(id, '2026-02', 10 * id);
      }
      const dump = (sqlite: Database.Database) => ({
        days: sqlite
          .prepare('SELECT meter_id, day, hex(kwh) AS kwh, hex(flags) AS flags, total_kwh, cost, peak_kw, peak_index FROM meter_days ORDER BY meter_id, day')
          .all(),
        months: sqlite.prepare('SELECT * FROM meter_months ORDER BY meter_id, month').all(),
      });
      const beforeRows = dump(old);
      old.close();

      const db = openDatabase(file);
      try {
        assert.deepEqual(dump(db.sqlite), beforeRows);
        assert.equal(beforeRows.days.length, 120);
        const primaryKey = db.sqlite
          .prepare("SELECT name FROM pragma_index_info((SELECT name FROM pragma_index_list('meter_days') WHERE origin = 'pk'))")
          .pluck()
          .all();
        assert.deepEqual(primaryKey, ['day', 'meter_id']);
        // One meter's range reads through its index, not a scan of every stored day.
        const plan = db.sqlite
          .prepare('EXPLAIN QUERY PLAN SELECT day, kwh FROM meter_days WHERE meter_id = ? AND day >= ? AND day < ?')
          .all(1, '2026-01-01', '2026-02-01') as { detail: string }[];
        assert.match(plan.map((step) => step.detail).join(' | '), /meter_days_meter_day/);
        // And the store reads the old rows as they were.
        const energy = buildEnergy(db, new AuditLog(db));
        const record = energy.store.load(meters[1], '2026-01-05');
        assert.equal(record.kwh.length, 96);
        assert.equal(record.kwh[10], Math.fround(meters[1] + 4 / 100));
      } finally {
        closeDatabase(db);
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('storage per meter-interval', () => {
  test('a seeded quarter of 40 meters costs at most 4 bytes a meter-interval on disk, rollups and indexes included', () => {
    const db = testDatabase();
    const energy = buildEnergy(db, new AuditLog(db));
    const ids: number[] = [];
    db.sqlite.transaction(() => {
      for (let m = 0; m < 40; m += 1)
        ids.push(energy.meters.create({ name: `Meter ${m}`, code: `meter.s${m}.kwh`, kind: 'energy', area: `Area ${m % 4}` }, null).id);
    })();
    let intervals = 0;
    let seed = 7;
    const noise = () => ((seed = (seed * 16807) % 2147483647) / 2147483647 - 0.5) * 0.1;
    for (let day = '2026-01-01'; day < '2026-04-01'; day = addDays(day, 1)) {
      const { start, count } = dayIntervals('UTC', day);
      db.sqlite.transaction(() => {
        energy.store.save(
          ids.map((meterId, m) => {
            const kwh = new Float64Array(count);
            for (let i = 0; i < count; i += 1) kwh[i] = (0.5 + (m % 7)) * (1 + 0.3 * Math.sin((i / count) * 2 * Math.PI + m)) * (1 + noise());
            intervals += count;
            return { meterId, day, start, kwh, flags: new Uint8Array(count), maxKw: null, stored: null };
          }),
        );
      })();
    }
    db.sqlite.exec('VACUUM');
    const bytes = db.sqlite
      .prepare("SELECT sum(pgsize) FROM dbstat WHERE name IN ('meter_days', 'meter_months', 'meter_days_meter_day', 'meter_months_meter_month')")
      .pluck()
      .get() as number;
    const perInterval = bytes / intervals;
    assert.ok(perInterval <= 4, `${perInterval.toFixed(2)} bytes per meter-interval`);
  });
});
