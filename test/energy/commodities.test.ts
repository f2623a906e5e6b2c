// Gas, water, heat and solar over real HTTP on the gateway simulator (issue 26): the site's electricity balance in every
// interval, gas m³ to kWh by the calorific version in force each day, water kept out of every energy total, and a new
// calorific version that leaves past months as they were.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually, startTestServer } from '../helpers/server.ts';
import { DAY, MIN, simulatorRig } from '../helpers/rig.ts';

const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10);

test('PV, export and import over a summer week: import − export + generation is the building’s consumption in every 15-minute interval; water is in no energy total', async () => {
  // Monday 14 June 2027 (UTC): the first read backfills the week before it, a sunny weekend among it.
  const start = Date.UTC(2027, 5, 14);
  const r = await simulatorRig({ start });
  try {
    const token = r.admin.accessToken;
    // A feed-in price from June 2027 (after today, as every new version must be).
    const tariff = await r.server.request('POST', '/api/energy/tariffs', {
      token,
      body: { validFrom: '2027-06-01', price: 0.25, carbonFactor: 0.4, feedInPrice: 0.05 },
    });
    assert.equal(tariff.status, 201, tariff.text);
    assert.equal(tariff.body.commodity, 'electricity');
    const main = await r.meter({ name: 'Main incomer', code: 'meter.main.kwh', kind: 'energy', site: true });
    const pv = await r.meter({ name: 'PV', code: 'meter.pv.kwh', kind: 'energy', commodity: 'electricity', role: 'generation' });
    const exported = await r.meter({ name: 'Export', code: 'meter.export.kwh', kind: 'energy', role: 'export' });
    const water = await r.meter({ name: 'Water', code: 'meter.water.m3', kind: 'energy', commodity: 'water', area: 'Kitchen' });
    assert.deepEqual([main.commodity, main.role, pv.role, exported.role, water.commodity], ['electricity', 'import', 'generation', 'export', 'water']);
    // What makes no sense is refused with a 400 that names the field, and nothing is stored.
    for (const [body, path] of [
      [{ name: 'Bad', code: 'meter.gas.m3', kind: 'energy', commodity: 'gas', role: 'export' }, 'body.role'],
      [{ name: 'Bad', code: 'meter.gas.m3', kind: 'energy', commodity: 'gas', site: true }, 'body.site'],
      [
        {
          name: 'Bad',
          kind: 'virtual',
          terms: [
            { meterId: main.id, sign: 1 },
            { meterId: water.id, sign: 1 },
          ],
        },
        'body.terms.1.meterId',
      ],
      [{ name: 'Bad', code: 'meter.gas.m3', kind: 'energy', commodity: 'steam' }, 'body.commodity'],
    ] as const) {
      const response = await r.server.request('POST', '/api/meters', { token, body });
      assert.equal(response.status, 400, response.text);
      assert.ok(JSON.stringify(response.body).includes(path), response.text);
    }
    const change = await r.server.request('PUT', `/api/meters/${water.id}`, { token, body: { commodity: 'gas' } });
    assert.equal(change.status, 400, change.text);
    assert.equal((await r.server.request('GET', '/api/meters?pageSize=100', { token })).body.items.length, 4);

    // Discovery proposes each utility point with its commodity and role; only the grid import is a site meter.
    const proposals = new Map((await r.server.request('GET', '/api/meters/discover', { token })).body.proposals.map((p: any) => [p.code, p]));
    const proposed = (code: string) => {
      const p = proposals.get(code) as any;
      return [p.commodity, p.role, p.site, p.unit];
    };
    assert.deepEqual(proposed('meter.main.kwh'), ['electricity', 'import', true, 'kWh']);
    assert.deepEqual(proposed('meter.gas.m3'), ['gas', 'import', false, 'm³']);
    assert.deepEqual(proposed('meter.water.m3'), ['water', 'import', false, 'm³']);
    assert.deepEqual(proposed('meter.pv.kwh'), ['electricity', 'generation', false, 'kWh']);
    assert.deepEqual(proposed('meter.export.kwh'), ['electricity', 'export', false, 'kWh']);
    assert.deepEqual(proposed('meter.hvac.kwh'), ['electricity', 'import', false, 'kWh']);

    await r.collector.collect();
    // The backfill's first day starts at its first history sample: whole days from the second on.
    const from = iso(start - 6 * DAY);
    const to = iso(start);
    const series = async (id: number) =>
      (await r.server.request('GET', `/api/energy/series?from=${from}&to=${to}&resolution=15min&meterId=${id}`, { token })).body.points as {
        start: string;
        kwh: number | null;
      }[];
    const [imp, exp, gen] = [await series(main.id), await series(exported.id), await series(pv.id)];
    let checked = 0;
    let exporting = 0;
    for (let i = 0; i < imp.length; i += 1) {
      const at = Date.parse(imp[i].start);
      const consumption = r.sim.building.consumptionAt(at + 15 * MIN) - r.sim.building.consumptionAt(at);
      assert.ok(imp[i].kwh !== null && exp[i].kwh !== null && gen[i].kwh !== null, `interval ${imp[i].start} has data`);
      const balance = imp[i].kwh! - exp[i].kwh! + gen[i].kwh!;
      assert.ok(
        Math.abs(balance - consumption) <= 0.001 * consumption,
        `${imp[i].start}: ${imp[i].kwh} − ${exp[i].kwh} + ${gen[i].kwh} = ${balance} vs ${consumption}`,
      );
      checked += 1;
      if (exp[i].kwh! > 0.1) exporting += 1;
    }
    assert.equal(checked, 6 * 96);
    assert.ok(exporting > 8, `${exporting} intervals exported`);

    const figures = (await r.server.request('GET', `/api/energy/commodities?from=${from}&to=${to}`, { token })).body;
    const e = figures.electricity;
    const sum = (points: { kwh: number | null }[]) => points.reduce((s, p) => s + (p.kwh ?? 0), 0);
    assert.ok(
      Math.abs(e.importKwh - sum(imp)) < 0.05 && Math.abs(e.exportKwh - sum(exp)) < 0.05 && Math.abs(e.generationKwh - sum(gen)) < 0.05,
      JSON.stringify(e),
    );
    assert.ok(Math.abs(e.consumptionKwh - (e.importKwh - e.exportKwh + e.generationKwh)) < 0.002);
    const simConsumption = r.sim.building.consumptionAt(start) - r.sim.building.consumptionAt(start - 6 * DAY);
    assert.ok(Math.abs(e.consumptionKwh - simConsumption) < 0.001 * simConsumption, `${e.consumptionKwh} vs ${simConsumption}`);
    assert.ok(Math.abs(e.selfConsumptionKwh - (e.generationKwh - e.exportKwh)) < 0.002);
    assert.ok(Math.abs(e.selfSufficiency - e.selfConsumptionKwh / e.consumptionKwh) < 1e-4);
    assert.ok(Math.abs(e.selfConsumptionRate - e.selfConsumptionKwh / e.generationKwh) < 1e-4);
    assert.ok(Math.abs(e.netImportKwh - (e.importKwh - e.exportKwh)) < 0.002);
    assert.ok(Math.abs(e.feedInRevenue - e.exportKwh * 0.05) < 0.01, `feed-in ${e.feedInRevenue} for ${e.exportKwh} kWh`);
    assert.ok(e.selfSufficiency > 0 && e.selfSufficiency < 1 && e.exportKwh > 0);

    // Water: its m³ in its own entry, never in an energy total (summary, areas, energyKwh).
    const waterEntry = figures.commodities.find((c: any) => c.commodity === 'water');
    const waterM3 = r.sim.building.counterAt('meter.water.m3', start)! - r.sim.building.counterAt('meter.water.m3', start - 6 * DAY)!;
    assert.equal(waterEntry.unit, 'm³');
    assert.equal(waterEntry.kwh, null);
    assert.ok(Math.abs(waterEntry.quantity - waterM3) < 0.01, `${waterEntry.quantity} vs ${waterM3} m³`);
    assert.ok(Math.abs(figures.energyKwh - e.consumptionKwh) < 0.002, 'energy = electricity consumption alone (no gas or heat meter here)');
    const summary = (await r.server.request('GET', `/api/energy/summary?from=${from}&to=${to}`, { token })).body;
    assert.ok(Math.abs(summary.totalKwh - e.importKwh) < 0.002, `summary ${summary.totalKwh} vs import ${e.importKwh}`);
    assert.ok(!summary.areas.some((a: any) => a.area === 'Kitchen'), 'an area metered only for water has no energy');
    const cards = (await r.server.request('GET', '/api/energy/areas', { token })).body.areas;
    assert.ok(
      cards.every((c: any) => c.name !== 'Kitchen' || (c.todayKwh === 0 && c.monthKwh === 0 && c.yearKwh === 0)),
      JSON.stringify(cards),
    );
    // A water meter's own series is in m³ and carries no electricity price.
    const waterDays = (await r.server.request('GET', `/api/energy/series?from=${from}&to=${to}&resolution=day&meterId=${water.id}`, { token })).body.points;
    assert.ok(Math.abs(waterDays.reduce((s: number, p: any) => s + p.kwh, 0) - waterM3) < 0.01);
    assert.ok(
      waterDays.every((p: any) => p.cost === null),
      JSON.stringify(waterDays[0]),
    );
    const mainDays = (await r.server.request('GET', `/api/energy/series?from=${from}&to=${to}&resolution=day&meterId=${main.id}`, { token })).body.points;
    assert.ok(mainDays.every((p: any) => p.cost > 0));
    const peaks = (await r.server.request('GET', '/api/energy/peaks?month=2027-06', { token })).body;
    assert.ok(!peaks.meters.some((m: any) => m.meterId === water.id), 'a water meter has no kW peak');
  } finally {
    await r.close();
  }
});

test('gas kWh = m³ × calorific value × correction of the version in force each day; a new version changes only the days from it, never a past month', async () => {
  // Three days into the month after next: its first day is after today, so a new version may start on it.
  const now = new Date();
  const monthStart = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 2, 1);
  const start = monthStart + 3 * DAY;
  const r = await simulatorRig({ start });
  try {
    const token = r.admin.accessToken;
    const gas = await r.meter({ name: 'Gas', code: 'meter.gas.m3', kind: 'energy', commodity: 'gas' });
    assert.equal(gas.commodity, 'gas');
    await r.collector.collect();
    // The backfill (7 days) starts at monthStart − 4 days; whole days from the next.
    const from = iso(monthStart - 3 * DAY);
    const to = iso(start);
    const boundary = iso(monthStart);
    const read = async (a = from, b = to) => (await r.server.request('GET', `/api/energy/commodities?from=${a}&to=${b}`, { token })).body;
    const before = await read();
    assert.equal(before.gasDays.length, 6);
    for (const day of before.gasDays) {
      const t = Date.parse(`${day.day}T00:00:00Z`);
      const m3 = r.sim.building.counterAt('meter.gas.m3', t + DAY)! - r.sim.building.counterAt('meter.gas.m3', t)!;
      assert.ok(Math.abs(day.m3 - m3) < 0.002, `${day.day}: ${day.m3} vs ${m3} m³`);
      assert.equal(day.kwhPerM3, 11.0 * 1.02264);
      assert.ok(Math.abs(day.kwh - day.m3 * 11.0 * 1.02264) < 0.002);
    }
    const gasEntry = (figures: any) => figures.commodities.find((c: any) => c.commodity === 'gas');
    assert.equal(gasEntry(before).unit, 'm³');
    assert.equal(gasEntry(before).cost, null, 'no gas tariff yet');
    const pastMonth = await read(from, boundary);

    // Writes: admins only, audited; the version in force can no longer change.
    assert.equal(
      (
        await r.server.request('POST', '/api/energy/calorific-values', {
          token: (await r.server.createUser({ role: 'operator' })).accessToken,
          body: { validFrom: boundary, kwhPerM3: 10 },
        })
      ).status,
      403,
    );
    // A back-dated version (validFrom today or earlier) restates the days it covers: test/pricing/backdatedPrices.test.ts.
    assert.equal((await r.server.request('POST', '/api/energy/calorific-values', { token, body: { validFrom: boundary, kwhPerM3: -1 } })).status, 400);
    const seeded = (await r.server.request('GET', '/api/energy/calorific-values', { token })).body.items[0];
    assert.equal((await r.server.request('PUT', `/api/energy/calorific-values/${seeded.id}`, { token, body: { kwhPerM3: 12 } })).status, 409);
    const added = await r.server.request('POST', '/api/energy/calorific-values', {
      token,
      body: { validFrom: boundary, kwhPerM3: 10.5, correctionFactor: 1.01, note: 'new supplier' },
    });
    assert.equal(added.status, 201, added.text);
    assert.equal((await r.server.request('POST', '/api/energy/calorific-values', { token, body: { validFrom: boundary, kwhPerM3: 10 } })).status, 409);
    const audit = r.server.service.deps.db.sqlite.prepare("SELECT count(*) FROM audit_log WHERE resource = 'calorific_versions'").pluck().get();
    assert.equal(audit, 1);
    // The figures are kept (src/platform/db/kept.ts) per period: the new version shows at once, before any other write.
    const afterVersion = await read();
    assert.ok(afterVersion.gasDays.length > 0 && afterVersion.gasDays.some((day: any) => day.day >= boundary));
    for (const day of afterVersion.gasDays) assert.equal(day.kwhPerM3, day.day < boundary ? 11.0 * 1.02264 : 10.5 * 1.01, day.day);
    // A gas tariff from the same day: per kWh after conversion.
    const gasTariff = await r.server.request('POST', '/api/energy/tariffs', {
      token,
      body: { validFrom: boundary, commodity: 'gas', price: 0.1, carbonFactor: 0.2, standingChargePerDay: 1 },
    });
    assert.equal(gasTariff.status, 201, gasTariff.text);
    assert.equal(
      (
        await r.server.request('POST', '/api/energy/tariffs', {
          token,
          body: { validFrom: boundary, commodity: 'gas', price: 0.1, carbonFactor: 0.2, feedInPrice: 0.05 },
        })
      ).status,
      400,
    );

    const after = await read();
    for (const [i, day] of after.gasDays.entries()) {
      assert.equal(day.m3, before.gasDays[i].m3);
      if (day.day < boundary) assert.deepEqual(day, before.gasDays[i], 'a day before the new version is unchanged');
      else {
        assert.equal(day.kwhPerM3, 10.5 * 1.01);
        assert.ok(Math.abs(day.kwh - day.m3 * 10.5 * 1.01) < 0.002);
      }
    }
    assert.deepEqual(await read(from, boundary), pastMonth, 'the month before the version reads as before');
    const thisMonth = await read(boundary, to);
    const kwh = thisMonth.gasDays.reduce((s: number, d: any) => s + d.kwh, 0);
    assert.ok(Math.abs(gasEntry(thisMonth).kwh - kwh) < 0.01);
    assert.ok(Math.abs(gasEntry(thisMonth).cost - (kwh * 0.1 + 3 * 1)) < 0.02, `cost ${gasEntry(thisMonth).cost}`);
    assert.ok(Math.abs(gasEntry(thisMonth).carbonKg - kwh * 0.2) < 0.01);
    assert.ok(Math.abs(thisMonth.energyKwh - (thisMonth.electricity.consumptionKwh + gasEntry(thisMonth).kwh)) < 0.01, 'gas enters the energy total in kWh');
    assert.equal((await r.server.request('GET', `/api/energy/commodities?from=${to}&to=${from}`, { token })).status, 400);
  } finally {
    await r.close();
  }
});

test('a fresh install with the built-in simulator meters gas, water, PV and export with their commodity and role; rest of building is the consumption less the sub-meters', async () => {
  const server = await startTestServer({ EMS_COLLECT_INTERVAL: '60s' });
  try {
    const admin = await server.createUser({ role: 'admin' });
    const items = (await server.request('GET', '/api/meters?pageSize=100', { token: admin.accessToken })).body.items as any[];
    const byName = new Map(items.map((m) => [m.name, m]));
    const of = (name: string) => [byName.get(name)?.commodity, byName.get(name)?.role, byName.get(name)?.site];
    assert.deepEqual(of('Main incomer'), ['electricity', 'import', true]);
    assert.deepEqual(of('Gas meter'), ['gas', 'import', false]);
    assert.deepEqual(of('Water meter'), ['water', 'import', false]);
    assert.deepEqual(of('PV generation'), ['electricity', 'generation', false]);
    assert.deepEqual(of('Grid export'), ['electricity', 'export', false]);
    const signs = new Map(
      (byName.get('Rest of building').terms as { meterId: number; sign: number }[]).map((t) => [items.find((m) => m.id === t.meterId).name, t.sign]),
    );
    assert.deepEqual(Object.fromEntries(signs), { 'Main incomer': 1, 'PV generation': 1, 'Grid export': -1, HVAC: -1, Lighting: -1, 'Server room': -1 });
    // The overview cards carry each utility this month in its own unit once the first collection is in.
    const stats = await eventually(
      async () => {
        const body = (await server.request('GET', '/api/overview/stats', { token: admin.accessToken })).body;
        return body.energyMonthKwh > 0 && body.commodities?.some((c: any) => c.commodity === 'gas' && c.quantity > 0) ? body : undefined;
      },
      'the overview shows the first collection',
      60_000,
    );
    const entry = (name: string) => stats.commodities.find((c: any) => c.commodity === name);
    assert.deepEqual(
      stats.commodities.map((c: any) => [c.commodity, c.unit]),
      [
        ['electricity', 'kWh'],
        ['gas', 'm³'],
        ['water', 'm³'],
      ],
    );
    assert.ok(Math.abs(entry('gas').kwh - entry('gas').quantity * 11.0 * 1.02264) < 0.01 * entry('gas').quantity, JSON.stringify(entry('gas')));
    assert.equal(entry('water').kwh, null);
    assert.ok(entry('water').quantity > 0);
    // Consumption = import + generation − export ≥ the grid import the site figure shows.
    assert.ok(entry('electricity').quantity >= stats.energyMonthKwh - 0.01, `${entry('electricity').quantity} vs ${stats.energyMonthKwh}`);
  } finally {
    await server.close();
  }
});

test('no data is null where the figures are made: a metered part or commodity that recorded nothing is null in the API, the overview and the wallboard alike', async () => {
  // Monday 14 June 2027 at noon (UTC): the first read backfills the week before it.
  const start = Date.UTC(2027, 5, 14, 12);
  const r = await simulatorRig({ start });
  try {
    const token = r.admin.accessToken;
    await r.meter({ name: 'Main incomer', code: 'meter.main.kwh', kind: 'energy', site: true });
    await r.meter({ name: 'Export', code: 'meter.export.kwh', kind: 'energy', role: 'export' });
    // Metered, but the gateway has no such points: they never record a day.
    await r.meter({ name: 'PV', code: 'meter.pv.gone.kwh', kind: 'energy', commodity: 'electricity', role: 'generation' });
    await r.meter({ name: 'Heat', code: 'meter.heat.gone.kwh', kind: 'energy', commodity: 'heat' });
    const get = async (path: string) => {
      const response = await r.server.request('GET', path, { token });
      assert.equal(response.status, 200, `${path}: ${response.text}`);
      return response.body;
    };
    // Before any collection nothing has data: no figure is 0.
    const empty = await get('/api/energy/commodities?from=2027-06-13&to=2027-06-14');
    assert.deepEqual(
      empty.commodities.map((c: any) => [c.commodity, c.quantity, c.kwh, c.cost, c.carbonKg, c.recordedDays]),
      [
        ['electricity', null, null, null, null, 0],
        ['heat', null, null, null, null, 0],
      ],
    );
    const e0 = empty.electricity;
    assert.deepEqual(
      [e0.importKwh, e0.exportKwh, e0.generationKwh, e0.consumptionKwh, e0.netImportKwh, e0.importCost, e0.feedInRevenue],
      [null, null, null, null, null, null, null],
    );

    await r.collector.collect();
    const day = await get('/api/energy/commodities?from=2027-06-13&to=2027-06-14');
    const e = day.electricity;
    assert.ok(e.importKwh > 0 && e.exportKwh >= 0 && e.netImportKwh === Math.round((e.importKwh - e.exportKwh) * 1000) / 1000, JSON.stringify(e));
    assert.deepEqual(e.coverage.generation, { meters: 1, recordedDays: 0 });
    // Generation has no data: it, consumption (import − export + generation) and everything made of them are null.
    assert.deepEqual([e.generationKwh, e.consumptionKwh, e.selfConsumptionKwh, e.selfConsumptionRate, e.selfSufficiency], [null, null, null, null, null]);
    const electricity = day.commodities.find((c: any) => c.commodity === 'electricity');
    assert.deepEqual([electricity.quantity, electricity.kwh], [null, null]);
    assert.equal(typeof electricity.cost, 'number', 'what the grid is paid is known');
    const heat = day.commodities.find((c: any) => c.commodity === 'heat');
    assert.deepEqual([heat.quantity, heat.kwh, heat.cost, heat.recordedDays], [null, null, null, 0]);

    // The day series of the PV meter: no data each day, never 0.
    const pv = (await get('/api/meters?pageSize=100')).items.find((m: any) => m.name === 'PV');
    const series = await get(`/api/energy/series?meterId=${pv.id}&from=2027-06-10&to=2027-06-14&resolution=day`);
    assert.deepEqual(
      series.points.map((p: any) => p.kwh),
      [null, null, null, null],
    );
  } finally {
    await r.close();
  }
});
