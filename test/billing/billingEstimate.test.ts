// No silent zeros (issue 51): a sub-meter's missing day is billed at an estimate by the documented rule (the same
// weekday's intervals, scaled to the supply meter), marked estimated on the statement (kWh and money, JSON and XLSX),
// the site's missing-data limit still decides whether the run can be issued, and a later run with the measured day is a
// restatement replacing the estimate. Known answer: Unit B draws 1 kWh every 15 minutes for two weeks at €0.20; its
// Tuesday 15 January is missing, when the main meter drew 6 kWh an interval against 4 kWh the Tuesday before, so the
// estimate is 1 × 6 ÷ 4 = 1.5 kWh an interval: 144 kWh, €28.80 (billed as 0 before this rule).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { fillDays } from '../helpers/storedDays.ts';
import { daysBetween } from '../../src/platform/time/calendar.ts';

describe('missing sub-meter data is estimated, marked, and replaced later', () => {
  let server: TestServer;
  let admin: TestUser;
  const ids: Record<string, number> = {};

  const api = (method: string, path: string, body?: unknown) => server.request(method, path, { token: admin.accessToken, body });
  const ok = async (method: string, path: string, body?: unknown, status = 200) => {
    const response = await api(method, path, body);
    assert.equal(response.status, status, response.text);
    return response.body;
  };
  const fill = (meterId: number, days: string[], value: number) => fillDays(server, meterId, days, value);

  before(async () => {
    server = await startTestServer();
    admin = await server.createUser({ role: 'admin' });
    await ok('POST', '/api/energy/tariffs', { validFrom: '2030-01-01', price: 0.2, carbonFactor: 0.5 }, 201);
    ids.main = (await ok('POST', '/api/meters', { name: 'Main', code: 'm.main', kind: 'energy', site: true }, 201)).id;
    ids.unit = (await ok('POST', '/api/meters', { name: 'Unit B', code: 'm.b', kind: 'energy', area: 'Tenants' }, 201)).id;
    ids.b = (await ok('POST', '/api/billing/tenants', { name: 'Tenant B' }, 201)).id;
    await ok('PUT', `/api/billing/allocations/${ids.unit}`, { method: 'percent', shares: [{ tenantId: ids.b, value: 100 }] });
    // Monday 7 to Sunday 20 January 2030; Unit B has no data on Tuesday the 15th; Main draws 6 kWh that day, else 4.
    const days = daysBetween('2030-01-07', '2030-01-21');
    fill(ids.main, days, 4);
    fill(ids.main, ['2030-01-15'], 6);
    fill(
      ids.unit,
      days.filter((day) => day !== '2030-01-15'),
      1,
    );
    ids.period = (await ok('POST', '/api/billing/periods', { from: '2030-01-07', to: '2030-01-21' }, 201)).id;
  });
  after(() => server?.close());

  test('the missing day is billed at the estimate and marked; the limit decides; the measured day restates it', async () => {
    const run = await ok('POST', `/api/billing/periods/${ids.period}/runs`);
    // 96 of 2 meters × 14 days × 96 intervals have no data: 3.571 %, all of them estimated.
    assert.deepEqual(run.summary.quality, { intervals: 2688, missing: 96, estimated: 0, missingPercent: 3.571, estimatedPercent: 0, billingEstimated: 96 });
    const statementId = run.statements[0].id;
    const statement = await ok('GET', `/api/billing/statements/${statementId}`);
    // 13 days × 96 × 1 kWh = 1,248 measured + 144 estimated = 1,392 kWh × 0.20 = 278.40.
    assert.deepEqual(statement.content.energy, [
      { utility: 'electricity', unit: 'kWh', band: 'base', quantity: 1392, amountCents: 27840, estimatedQuantity: 144, estimatedAmountCents: 2880 },
    ]);
    assert.equal(statement.totalCents, 27840);
    assert.equal(statement.content.estimatedAmountCents, 2880);
    assert.match(statement.content.estimateRule, /same local time on the same weekday/);
    const meter = statement.content.meters[0];
    assert.deepEqual([meter.missing, meter.billingEstimated, meter.estimatedQuantity], [96, 96, 144]);
    // The reconciliation holds: the landlord's share is Main's 14 × 96 × 4 + 96 × 2 = 5,568 kWh less the tenant's.
    assert.deepEqual(run.summary.reconciliation, { siteTotalCents: 111360, statementsCents: 27840, landlordCents: 111360 - 27840 });

    // The site's limit (0.5 %) decides: not issued.
    const refused = await api('POST', `/api/billing/runs/${run.id}/issue`);
    assert.equal(refused.status, 400, refused.text);
    assert.match(refused.text, /96 of 2688 metered intervals \(3\.571 %\) have no data; the site allows 0\.5 %/);

    // The statement's XLSX (and PDF, from the same sections) lists the missing data and what rests on the estimate.
    const xlsx = await fetch(`${server.url}/api/billing/statements/${statementId}/xlsx`, { headers: { authorization: `Bearer ${admin.accessToken}` } });
    const { default: ExcelJS } = await import('exceljs');
    const book = new ExcelJS.Workbook();
    await book.xlsx.load(Buffer.from(await xlsx.arrayBuffer()) as never);
    const rows = book.getWorksheet('Statement')!.getSheetValues().filter(Boolean) as unknown[][];
    assert.ok(rows.some((row) => String(row[1]).startsWith('Missing data')));
    assert.deepEqual(rows.find((row) => row[1] === 'Unit B' && row[3] === 96)?.slice(1, 6), ['Unit B', 1344, 96, 96, 144]);
    assert.equal(rows.find((row) => row[1] === 'Of this statement')?.[6], 28.8);

    // With the limit raised it issues; then the day arrives (1.2 kWh an interval, 115.2 kWh) and the rerun restates it.
    await ok('PUT', '/api/billing/settings', { maxMissingPercent: 5, maxEstimatedPercent: 5, supplierBillTolerancePercent: 2 });
    assert.equal((await ok('POST', `/api/billing/runs/${run.id}/issue`)).status, 'issued');
    fill(ids.unit, ['2030-01-15'], 1.2);
    const restated = await ok('POST', `/api/billing/periods/${ids.period}/runs`);
    assert.equal(restated.kind, 'restatement');
    assert.equal(restated.summary.quality.missing, 0);
    const corrected = await ok('GET', `/api/billing/statements/${restated.statements[0].id}`);
    // 115.2 − 144 = −28.8 kWh, −5.76; nothing estimated any more.
    assert.deepEqual(corrected.difference.energy, [{ utility: 'electricity', band: 'base', quantity: -28.8, amountCents: -576 }]);
    assert.equal(corrected.difference.totalCents, -576);
    assert.equal(corrected.content.estimatedAmountCents, undefined);
    assert.equal(corrected.content.energy[0].estimatedQuantity, undefined);
  });
});
