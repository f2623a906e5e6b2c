// The monthly report by commodity: a section and a chart per utility in its own unit (electricity kWh, gas m³ and
// kWh, water m³, heat), the PV yield and the electricity balance; a utility without data says so instead of 0; the
// energy total never adds m³ to kWh. Every figure checked against GET /api/energy/commodities; pages rendered.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { runTool } from '../helpers/tools.ts';
import path from 'node:path';
import { addDays, dayIntervals, siteDay } from '../../src/platform/time/calendar.ts';
import { SiteFormat } from '../../src/platform/i18n/format.ts';
import { pdfText, runReportNow } from '../helpers/reportRun.ts';
import { startTestServer, tempDir, type TestServer, type TestUser } from '../helpers/server.ts';
import { lastWholeMonth } from '../helpers/seededYear.ts';

const TIMEZONE = 'Europe/Berlin';

describe('monthly report by commodity', () => {
  let server: TestServer;
  let admin: TestUser;
  const month = lastWholeMonth(TIMEZONE);
  // A day of the month without gas data (the other meters have it).
  const gasGap = addDays(month.from, 5);
  const outDir = process.env.EMS_REPORT_PNG_DIR ?? tempDir('ems-report-commodities-');

  before(async () => {
    server = await startTestServer();
    admin = await server.createUser({ role: 'admin' });
    const config = await server.request('PUT', '/api/configs', {
      token: admin.accessToken,
      body: { siteName: 'Campus Nord', timezone: TIMEZONE, locale: 'en-GB', currency: 'EUR' },
    });
    assert.equal(config.status, 200, config.text);
    const { energy, db } = server.service.deps;
    const meter = (body: Record<string, unknown>) => energy.meters.create({ kind: 'energy', ...body } as never, null).id;
    const ids = {
      main: meter({ name: 'Grid import', code: 'meter.main.kwh', site: true }),
      pv: meter({ name: 'PV array', code: 'meter.pv.kwh', role: 'generation' }),
      export: meter({ name: 'Grid export', code: 'meter.export.kwh', role: 'export' }),
      gas: meter({ name: 'Gas', code: 'meter.gas.m3', commodity: 'gas' }),
      water: meter({ name: 'Water', code: 'meter.water.m3', commodity: 'water' }),
    };
    // A heat meter that never delivered anything: the report says "no data" for heat.
    meter({ name: 'District heat', code: 'meter.heat.kwh', commodity: 'heat' });
    const today = siteDay(TIMEZONE, new Date());
    for (let day = addDays(month.from, -3); day < today; day = addDays(day, 1)) {
      const { start, count } = dayIntervals(TIMEZONE, day);
      const d = Number(day.slice(8, 10));
      const series = (f: (i: number) => number) => Float32Array.from({ length: count }, (_, i) => f(i));
      const sun = (i: number) => Math.max(0, Math.sin(((i - count / 4) / (count / 2)) * Math.PI)) * (8 + (d % 5));
      const rows = [
        { meterId: ids.main, kwh: series((i) => 12 + (i % 8) - Math.min(10, sun(i))) },
        { meterId: ids.pv, kwh: series(sun) },
        { meterId: ids.export, kwh: series((i) => Math.max(0, sun(i) - 10)) },
        { meterId: ids.water, kwh: series((i) => (i >= count / 4 && i < (3 * count) / 4 ? 0.12 : 0.01)) },
        ...(day === gasGap ? [] : [{ meterId: ids.gas, kwh: series((i) => 1.5 + (d % 3) * 0.25 + (i % 4) * 0.1) }]),
      ];
      db.sqlite.transaction(() => energy.store.save(rows.map((row) => ({ ...row, day, start, flags: new Uint8Array(count), maxKw: null, stored: null }))))();
    }
  });
  after(() => server.close());

  test('a section and chart per utility with the figures of the commodities API; heat: no data; water never in the energy total', async () => {
    const { file } = await runReportNow(server, admin.accessToken, {
      name: 'Utilities',
      templateId: 'monthly-energy',
      cron: '0 6 1 * *',
      recipients: ['energy@example.test'],
    });
    const pdfFile = path.join(outDir, 'commodities.pdf');
    const text = await pdfText(await file('.pdf'), pdfFile);
    const csv = (await file('.csv')).toString();
    const flat = text.replace(/\s+/g, ' ');
    const api = await server.request('GET', `/api/energy/commodities?from=${month.from}&to=${month.to}`, { token: admin.accessToken });
    assert.equal(api.status, 200, api.text);
    const format = new SiteFormat({ locale: 'en-GB', timezone: TIMEZONE, currency: 'EUR' });
    const n1 = (value: number) => format.number(value, 1);
    const entry = (name: string) => api.body.commodities.find((c: { commodity: string }) => c.commodity === name);
    const gas = entry('gas');
    const water = entry('water');
    const electricity = entry('electricity');
    assert.ok(gas.quantity > 0 && water.quantity > 0 && electricity.quantity > 0 && api.body.electricity.exportKwh > 0);
    assert.equal(entry('heat').quantity, null, 'heat recorded nothing: the API says null, the report no data');
    // The table by utility: quantity in its unit, kWh (none for water), cost; heat "no data"; the energy total is kWh only.
    for (const expected of [
      `Electricity kWh ${n1(electricity.quantity)} ${n1(electricity.kwh)}`,
      `Gas m³ ${n1(gas.quantity)} ${n1(gas.kwh)}`,
      `Water m³ ${n1(water.quantity)} –`,
      'Heat kWh no data',
      `Energy total kWh ${n1(api.body.energyKwh)} ${n1(api.body.energyKwh)}`,
      // Charts: one per utility in its unit, and the PV yield.
      'Electricity per day (kWh)',
      'Gas per day (m³)',
      'Water per day (m³)',
      'Heat per day (kWh) No data in this period.',
      'PV generation per day (kWh)',
      // The electricity balance, as the API answers it.
      `Grid import (kWh) ${n1(api.body.electricity.importKwh)}`,
      `Grid export (kWh) ${n1(api.body.electricity.exportKwh)}`,
      `PV generation (kWh) ${n1(api.body.electricity.generationKwh)}`,
      `Self-consumption rate ${format.percent(api.body.electricity.selfConsumptionRate)}`,
      `Self-sufficiency ${format.percent(api.body.electricity.selfSufficiency)}`,
    ]) {
      assert.ok(flat.includes(expected.replace(/\s+/g, ' ')), `PDF has "${expected}":\n${text}`);
    }
    // Never m³ + kWh: the energy total is electricity + gas kWh + heat, without water's m³.
    assert.ok(Math.abs(api.body.energyKwh - (electricity.kwh + gas.kwh)) < 0.01);
    // The CSV block: the API's figures unformatted; heat's empty, never 0.
    const block = csv.split('\r\n\r\n').find((part) => part.startsWith('commodities'))!;
    const lines = block.split('\r\n');
    assert.equal(lines[1], 'commodity,unit,quantity,kwh,cost,carbon_kg');
    assert.ok(lines.includes(`gas,m³,${gas.quantity},${gas.kwh},${gas.cost ?? ''},${gas.carbonKg ?? ''}`), block);
    assert.ok(lines.includes(`water,m³,${water.quantity},,${water.cost ?? ''},${water.carbonKg ?? ''}`), block);
    assert.ok(lines.includes('heat,kWh,,,,'), block);
    // Each day's gas in the chart is the API's figure for that day; the day without gas data has no bar (checked via
    // the content the PDF is drawn from).
    const { ReportContentBuilder } = await import('../../src/reporting/reports/content.ts');
    const { siteEnergyFigures } = await import('../helpers/reportEnergy.ts');
    const { deps } = server.service;
    const builder = new ReportContentBuilder(deps.db, siteEnergyFigures(deps.db, deps.energy.figures), deps.analysis, () => true, deps.energy.commodities);
    const content = builder.build('monthly-energy', 'Utilities', Date.parse(`${month.to}T12:00:00Z`));
    const gasDays = content.commodities!.entries.find((e) => e.commodity.commodity === 'gas')!.days;
    assert.equal(gasDays.find((d) => d.day === gasGap)!.quantity, null, 'no bar on the day without gas data');
    const probe = addDays(month.from, 9);
    const oneDay = (await server.request('GET', `/api/energy/commodities?from=${probe}&to=${addDays(probe, 1)}`, { token: admin.accessToken })).body;
    assert.equal(gasDays.find((d) => d.day === probe)!.quantity, oneDay.commodities.find((c: { commodity: string }) => c.commodity === 'gas').quantity);
    await runTool('pdftoppm', ['-png', '-r', '70', pdfFile, path.join(outDir, 'commodities')]);
  });
});
