// The interval store's day and month rollups priced by each meter's commodity (issue 26), over real HTTP on the
// gateway simulator: electricity import at the electricity tariff, export at the feed-in price (a negative cost, no
// CO2), PV generation unpriced, gas per kWh after conversion, water per m³, and heat without a tariff unpriced — never
// the electricity price on a m³ or on a meter the site does not buy through.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { simulatorRig } from '../helpers/rig.ts';

test('day rows: each meter priced by its commodity’s tariff (feed-in for export), unpriced without one; month rows are the sum of their days', async () => {
  // Monday 14 June 2027 (UTC); every version below starts 1 June 2027, after the real today, as a new version must.
  const start = Date.UTC(2027, 5, 14);
  const r = await simulatorRig({ start });
  const { server } = r;
  try {
    const token = r.admin.accessToken;
    for (const body of [
      { validFrom: '2027-06-01', price: 0.25, carbonFactor: 0.4, feedInPrice: 0.08 },
      { validFrom: '2027-06-01', commodity: 'gas', price: 0.1, carbonFactor: 0.2, standingChargePerDay: 1 },
      { validFrom: '2027-06-01', commodity: 'water', price: 2.5, carbonFactor: 0.3 },
    ]) {
      const created = await server.request('POST', '/api/energy/tariffs', { token, body });
      assert.equal(created.status, 201, created.text);
    }
    const ids: Record<string, number> = {};
    for (const [key, body] of Object.entries({
      main: { name: 'Main incomer', code: 'meter.main.kwh', kind: 'energy', site: true },
      pv: { name: 'PV', code: 'meter.pv.kwh', kind: 'energy', role: 'generation' },
      export: { name: 'Export', code: 'meter.export.kwh', kind: 'energy', role: 'export' },
      gas: { name: 'Gas', code: 'meter.gas.m3', kind: 'energy', commodity: 'gas' },
      water: { name: 'Water', code: 'meter.water.m3', kind: 'energy', commodity: 'water' },
      // A heat meter (read from a kWh counter of the simulator): no heat tariff exists.
      heat: { name: 'Heat', code: 'meter.hvac.kwh', kind: 'energy', commodity: 'heat' },
    })) {
      const created = await server.request('POST', '/api/meters', { token, body });
      assert.equal(created.status, 201, created.text);
      ids[key] = created.body.id;
    }
    const { deps } = server.service;
    await r.collector.collect();

    const kwhPerM3 = 11.0 * 1.02264;
    const expected: Record<string, { price: number; carbon: number }> = {
      main: { price: 0.25, carbon: 0.4 },
      export: { price: -0.08, carbon: 0 },
      pv: { price: 0, carbon: 0 },
      gas: { price: 0.1 * kwhPerM3, carbon: 0.2 * kwhPerM3 },
      water: { price: 2.5, carbon: 0.3 },
      heat: { price: 0, carbon: 0 },
    };
    const days = deps.db.sqlite.prepare(
      "SELECT day, total_kwh AS total, cost, carbon_kg AS carbon FROM meter_days WHERE meter_id = ? AND day >= '2027-06-01' ORDER BY day",
    );
    const month = deps.db.sqlite.prepare("SELECT total_kwh AS total, cost, carbon_kg AS carbon FROM meter_months WHERE meter_id = ? AND month = '2027-06'");
    for (const [key, { price, carbon }] of Object.entries(expected)) {
      const rows = days.all(ids[key]) as { day: string; total: number; cost: number; carbon: number }[];
      assert.ok(rows.length >= 6, `${key}: ${rows.length} day rows`);
      assert.ok(
        rows.some((row) => row.total > 0),
        `${key} recorded something`,
      );
      for (const row of rows) {
        assert.ok(Math.abs(row.cost - row.total * price) < 1e-6 * Math.max(1, row.total), `${key} ${row.day}: cost ${row.cost} for ${row.total} at ${price}`);
        assert.ok(
          Math.abs(row.carbon - row.total * carbon) < 1e-6 * Math.max(1, row.total),
          `${key} ${row.day}: CO2 ${row.carbon} for ${row.total} at ${carbon}`,
        );
      }
      const sum = (field: 'total' | 'cost' | 'carbon') => rows.reduce((s, row) => s + row[field], 0);
      const monthRow = month.get(ids[key]) as { total: number; cost: number; carbon: number };
      for (const field of ['total', 'cost', 'carbon'] as const) assert.ok(Math.abs(monthRow[field] - sum(field)) < 1e-6, `${key} month ${field}`);
    }
    // The figures that read the store agree: gas cost in the commodities API = its kWh × 0.1 + 1 a day.
    const figures = (await server.request('GET', '/api/energy/commodities?from=2027-06-08&to=2027-06-14', { token })).body;
    const gas = figures.commodities.find((c: any) => c.commodity === 'gas');
    const stored =
      (deps.db.sqlite
        .prepare("SELECT sum(cost) FROM meter_days WHERE meter_id = ? AND day >= '2027-06-08' AND day < '2027-06-14'")
        .pluck()
        .get(ids.gas) as number) + 6;
    assert.ok(Math.abs(gas.cost - stored) < 0.02, `gas ${gas.cost} vs stored ${stored}`);
  } finally {
    await r.close();
  }
});
