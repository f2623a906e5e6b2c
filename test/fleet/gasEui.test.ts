// Gas metered in m³ in the fleet's EUI (issue 43): a real site box (in-process, its own SQLite and migrations) with an
// electricity meter, a gas meter in m³ and a water meter syncs to an in-process fleet on a real PostgreSQL. The box sends
// each gas day's kWh by the calorific value × correction in force that day; /api/fleet/eui gives gas and all fuels in
// kWh/m²·year as worked out here by hand, water stays out, and a calorific value back-dated on the box restates the
// fleet's figure through the normal restatement path (the re-priced days take new sequences and go again).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import pino from 'pino';
import { createEnrolmentCode } from '../../src/fleet/enrolment.ts';
import { joinFleet } from '../../src/fleetSync/link.ts';
import { FleetSync } from '../../src/fleetSync/sync.ts';
import { areaFloorAreas } from '../../src/platform/db/schema/index.ts';
import { addDays, dayIntervals } from '../../src/platform/time/calendar.ts';
import { adminToken, enrolSite, type FleetInstance, getJson, sendBatch, startFleet, startFleetDatabase } from '../helpers/fleet.ts';
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

/** The first day of the UTC month `months` before this one. */
function monthStart(months: number): string {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - months, 1)).toISOString().slice(0, 10);
}

const close = (actual: number, expected: number, what: string) =>
  assert.ok(Math.abs(actual - expected) < 1e-6 * Math.max(1, Math.abs(expected)), `${what}: ${actual} ≠ ${expected}`);

test('gas in m³ reaches the fleet EUI in kWh by the calorific value of each day; water stays out; a back-dated value restates it', async () => {
  const { db } = site.service.deps;
  const { meters, store, timezone } = site.service.deps.energy;
  const electricity = meters.create({ name: 'Main incomer', code: 'meter.main.kwh', kind: 'energy', site: true }, null);
  const gas = meters.create({ name: 'Boiler gas', code: 'meter.gas.m3', kind: 'energy', commodity: 'gas' }, null);
  const water = meters.create({ name: 'Water', code: 'meter.water.m3', kind: 'energy', commodity: 'water' }, null);
  const floorAreaM2 = 400;
  db.orm.insert(areaFloorAreas).values({ area: 'Building', floorAreaM2 }).run();

  // Ten days two months back (inside the last 12 complete months whatever the date): every interval measured,
  // electricity 1.5 kWh, gas 0.25 m³, water 0.5 m³ per quarter hour. The days go through the box's own interval store.
  const first = monthStart(2);
  const days = Array.from({ length: 10 }, (_, i) => addDays(first, i));
  const perInterval = new Map([
    [electricity.id, 1.5],
    [gas.id, 0.25],
    [water.id, 0.5],
  ]);
  store.transaction(() => {
    for (const day of days) {
      store.save(
        [...perInterval].map(([meterId, value]) => {
          const record = store.load(meterId, day);
          record.kwh.fill(value);
          return record;
        }),
      );
    }
  });
  const count = (day: string) => dayIntervals(timezone(), day).count;
  const electricityKwh = days.reduce((sum, day) => sum + count(day) * 1.5, 0);
  const gasM3 = (day: string) => count(day) * 0.25;

  const { code } = await createEnrolmentCode(fleet.db.pool, 'Gas site');
  const { siteId } = await joinFleet(db, fleet.url, code);
  const sync = new FleetSync({
    db,
    logger: pino({ level: 'silent' }),
    catchUpDelayMs: 0,
    health: () => ({ version: 'test', collector: 'ok', gateway: 'reachable', lastBackupAt: null }),
  });
  const admin = await adminToken(fleet.db);
  const siteAdmin = (await site.createUser({ role: 'admin' })).accessToken;
  const euiOfSite = async () => {
    const { status, body } = await getJson(`${fleet.url}/api/fleet/eui`, admin);
    assert.equal(status, 200, JSON.stringify(body));
    return body.items.find((row: { id: string }) => row.id === siteId);
  };
  const expectFigures = async (gasKwh: number) => {
    const row = await euiOfSite();
    assert.equal(row.floorAreaM2, floorAreaM2);
    assert.deepEqual(Object.keys(row.byCommodity).sort(), ['electricity', 'gas'], 'water is not energy: no EUI of its own, none in all fuels');
    close(row.byCommodity.electricity.kwh, electricityKwh, 'electricity kWh');
    close(row.byCommodity.gas.kwh, gasKwh, 'gas kWh');
    close(row.byCommodity.gas.eui, gasKwh / floorAreaM2, 'gas EUI');
    close(row.eui, (electricityKwh + gasKwh) / floorAreaM2, 'all-fuels EUI');
    // The site's own gas kWh over the same days (its commodity figures, the same calorific versions) is the fleet's.
    const own = await site.request('GET', `/api/energy/commodities?from=${days[0]}&to=${addDays(days[days.length - 1]!, 1)}`, { token: siteAdmin });
    assert.equal(own.status, 200, own.text);
    const ownGas = own.body.commodities.find((c: { commodity: string }) => c.commodity === 'gas');
    assert.ok(Math.abs(ownGas.kwh - gasKwh) < 0.01, `the site's own gas ${ownGas.kwh} kWh vs the fleet's ${gasKwh}`);
  };

  await sync.tick();
  // What the fleet holds of the gas meter: declared in m³ and counting to the site's gas (a gas meter has no site flag).
  const declared = await sql.query('select key, unit, site_total from site_meters where site_id = $1 order by key', [siteId]);
  assert.deepEqual(
    declared.rows.map((r) => [r.key, r.unit, r.site_total]),
    [
      [String(electricity.id), 'kWh', 1],
      [String(gas.id), 'm3', 1],
      [String(water.id), 'm3', 1],
    ],
  );
  const stored = await sql.query('select value, kwh from day_rollups where site_id = $1 and meter_key = $2 and day = $3', [siteId, String(gas.id), days[0]]);
  close(stored.rows[0].value, gasM3(days[0]!), 'the gas day in m³');
  // The seeded calorific version (from 1970): 11.0 kWh/m³ × 1.02264 volume correction.
  const seeded = 11.0 * 1.02264;
  close(stored.rows[0].kwh, gasM3(days[0]!) * seeded, 'the gas day in kWh');
  const waterDay = await sql.query('select kwh from day_rollups where site_id = $1 and meter_key = $2 and day = $3', [siteId, String(water.id), days[0]]);
  assert.equal(waterDay.rows[0].kwh, null, 'water carries no kWh');
  await expectFigures(days.reduce((sum, day) => sum + gasM3(day) * seeded, 0));

  // A calorific value back-dated from a bill: 10.0 kWh/m³ × 1.01 from the sixth day on. The box restates the gas days
  // it covers (new sequences); the next sync carries them, and the fleet's gas and all-fuels EUI follow.
  const boundary = days[5]!;
  const created = await site.request('POST', '/api/energy/calorific-values', {
    token: siteAdmin,
    body: { validFrom: boundary, kwhPerM3: 10, correctionFactor: 1.01 },
  });
  assert.equal(created.status, 201, created.text);
  await sync.tick();
  await expectFigures(days.reduce((sum, day) => sum + gasM3(day) * (day < boundary ? seeded : 10 * 1.01), 0));
});

test("a box that predates the gas kWh still validates: its gas in m³ stays out of the EUI, never summed as kWh; a site's meters give 30 days in kWh too", async () => {
  const admin = await adminToken(fleet.db);
  const older = await enrolSite(fleet, 'Older box');
  const day = addDays(monthStart(2), 3);
  const response = await sendBatch(fleet.url, older.credential, {
    sentAt: new Date().toISOString(),
    after: 0,
    through: 2,
    site: { name: 'Older box', timezone: 'UTC', floorAreaM2: 100 },
    meters: [
      { key: '1', name: 'Main', commodity: 'electricity', unit: 'kWh', area: null, siteTotal: true },
      { key: '2', name: 'Gas', commodity: 'gas', unit: 'm3', area: null, siteTotal: true },
    ],
    days: [
      { meter: '1', day, value: 500, cost: 150, carbonKg: 200, seq: 1 },
      { meter: '2', day, value: 40, cost: 0, carbonKg: 0, seq: 2 },
    ],
  });
  assert.equal(response.status, 200, JSON.stringify(response.body));
  const stored = await sql.query('select value, kwh from day_rollups where site_id = $1 and meter_key = $2', [older.siteId, '2']);
  assert.deepEqual(stored.rows, [{ value: 40, kwh: null }]);
  const { body } = await getJson(`${fleet.url}/api/fleet/eui`, admin);
  const row = body.items.find((r: { id: string }) => r.id === older.siteId);
  assert.deepEqual(Object.keys(row.byCommodity), ['electricity'], '40 m³ are not 40 kWh');
  assert.equal(row.eui, 500 / 100);
  // A site's meters: the last 30 days in the meter's unit and in kWh (gas by the kWh its box sent; water has none).
  const yesterday = addDays(new Date().toISOString().slice(0, 10), -1);
  const recent = await sendBatch(fleet.url, older.credential, {
    sentAt: new Date().toISOString(),
    after: 2,
    through: 5,
    meters: [{ key: '3', name: 'Water', commodity: 'water', unit: 'm3', area: null, siteTotal: true }],
    days: [
      { meter: '1', day: yesterday, value: 300, cost: 90, carbonKg: 120, seq: 3 },
      { meter: '2', day: yesterday, value: 40, kwh: 450, cost: 0, carbonKg: 0, seq: 4 },
      { meter: '3', day: yesterday, value: 7, cost: 14, carbonKg: 0, seq: 5 },
    ],
  });
  assert.equal(recent.status, 200, JSON.stringify(recent.body));
  const meters = await getJson(`${fleet.url}/api/fleet/sites/${older.siteId}/meters`, admin);
  assert.deepEqual(
    meters.body.items.map((m: { key: string; unit: string; last30Days: number; last30DaysKwh: number | null }) => [
      m.key,
      m.unit,
      m.last30Days,
      m.last30DaysKwh,
    ]),
    [
      ['1', 'kWh', 300, 300],
      ['2', 'm3', 40, 450],
      ['3', 'm3', 7, null],
    ],
  );

  // A kWh that is not a number is refused whole, as any malformed batch.
  const bad = await sendBatch(fleet.url, older.credential, {
    sentAt: new Date().toISOString(),
    after: 5,
    through: 6,
    days: [{ meter: '2', day, value: 40, kwh: '400', cost: 0, carbonKg: 0, seq: 6 }],
  });
  assert.equal(bad.status, 400, JSON.stringify(bad.body));
  assert.match(bad.body.error?.message ?? JSON.stringify(bad.body), /kwh/);
});
