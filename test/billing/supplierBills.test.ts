// Supplier bills checked against the meters: a bill that matches the intervals and tariffs passes, one that differs is
// flagged on the lines that differ; a CSV with bad rows is refused naming the lines and writes nothing; gas is
// compared in kWh by the calorific value in force.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { fillDays } from '../helpers/storedDays.ts';

const DAYS = ['2030-01-01', '2030-01-02'];

describe('supplier bills against the shadow bill', () => {
  let server: TestServer;
  let admin: TestUser;
  let operator: TestUser;
  let viewer: TestUser;
  let main: number;
  let gas: number;

  const request = (user: TestUser, method: string, path: string, body?: unknown) => server.request(method, path, { token: user.accessToken, body });
  const fill = (meterId: number, value: number) => fillDays(server, meterId, DAYS, value);
  const count = () => server.service.deps.db.sqlite.prepare('SELECT count(*) FROM supplier_bills').pluck().get();

  before(async () => {
    server = await startTestServer();
    admin = await server.createUser({ role: 'admin' });
    operator = await server.createUser({ role: 'operator' });
    viewer = await server.createUser({ role: 'viewer' });
    const created = async (path: string, body: unknown) => {
      const response = await request(admin, 'POST', path, body);
      assert.equal(response.status, 201, response.text);
      return response.body;
    };
    // Peak 08:00–20:00 on weekdays at 0.25, else 0.20; 1.00 a day standing; 10 per kW of the month's peak.
    await created('/api/energy/tariffs', {
      validFrom: '2030-01-01',
      price: 0.2,
      carbonFactor: 0.5,
      standingChargePerDay: 1,
      demandChargePerKw: 10,
      bands: [{ name: 'peak', days: ['mon', 'tue', 'wed', 'thu', 'fri'], from: '08:00', to: '20:00', price: 0.25 }],
    });
    await created('/api/energy/tariffs', { validFrom: '2030-01-01', commodity: 'gas', price: 0.08, carbonFactor: 0.2, standingChargePerDay: 0.5 });
    await created('/api/energy/calorific-values', { validFrom: '2030-01-01', kwhPerM3: 11.2, note: 'From the supplier' });
    main = (await created('/api/meters', { name: 'Main', code: 'm.main', kind: 'energy', site: true })).id;
    gas = (await created('/api/meters', { name: 'Gas', code: 'g.main', kind: 'energy', commodity: 'gas', area: 'Boiler' })).id;
    // 3 kWh every 15 minutes for two weekdays: 288 kWh peak, 288 base, 12 kW all along.
    fill(main, 3);
    fill(gas, 1);
  });
  after(() => server?.close());

  // Shadow: 288 × 0.25 + 288 × 0.20 = 129.60, standing 2.00, demand 12 kW × 10 × 2/31 = 7.74; total 139.34.
  const matching = {
    from: '2030-01-01',
    to: '2030-01-03',
    reference: 'INV-1',
    bands: { peak: 288, base: 288 },
    billedKw: 12,
    standingCharges: 2,
    total: 139.34,
  };

  test('a bill that matches the meters is not flagged; one that differs is flagged on the lines that differ', async () => {
    const good = await request(operator, 'POST', '/api/billing/supplier-bills', { meterId: main, ...matching });
    assert.equal(good.status, 201, good.text);
    assert.equal(good.body.flagged, false, JSON.stringify(good.body.lines));
    const total = good.body.lines.find((line: any) => line.line === 'total');
    assert.equal(total.shadow, 139.3419);
    assert.deepEqual(
      good.body.lines.map((line: any) => line.line),
      ['kWh peak', 'kWh base', 'standingCharges', 'billedKw', 'total'],
    );

    // The supplier billed 320 kWh at peak and 14 kW: 8.00 and 20 × 2/31 = 1.29 more.
    const bad = await request(operator, 'POST', '/api/billing/supplier-bills', {
      meterId: main,
      ...matching,
      bands: { peak: 320, base: 288 },
      billedKw: 14,
      total: 148.63,
    });
    assert.equal(bad.status, 201, bad.text);
    assert.equal(bad.body.flagged, true);
    const flagged = bad.body.lines.filter((line: any) => line.flagged).map((line: any) => [line.line, line.difference, line.differencePercent]);
    assert.deepEqual(flagged, [
      ['kWh peak', 32, 11.111],
      ['billedKw', 2, 16.667],
      ['total', 9.2881, 6.666],
    ]);
    const again = await request(viewer, 'GET', `/api/billing/supplier-bills/${bad.body.bill.id}/check`);
    assert.deepEqual(again.body, bad.body);
  });

  test('a bill for gas is compared in kWh by the calorific value in force', async () => {
    // 192 m³ × 11.2 = 2,150.4 kWh; at 0.08 per kWh = 172.03, standing 1.00.
    const good = await request(operator, 'POST', '/api/billing/supplier-bills', {
      meterId: gas,
      from: '2030-01-01',
      to: '2030-01-03',
      bands: { base: 2150.4 },
      standingCharges: 1,
      total: 173.03,
      calorificValue: 11.2,
    });
    assert.equal(good.status, 201, good.text);
    assert.equal(good.body.flagged, false, JSON.stringify(good.body.lines));
    const low = await request(operator, 'POST', '/api/billing/supplier-bills', {
      meterId: gas,
      from: '2030-01-01',
      to: '2030-01-03',
      bands: { base: 2016 },
      standingCharges: 1,
      total: 162.28,
      calorificValue: 10.5,
    });
    assert.deepEqual(
      low.body.lines.filter((line: any) => line.flagged).map((line: any) => line.line),
      ['kWh', 'calorificValue', 'total'],
    );
  });

  test('a CSV with bad rows is refused naming each line, and writes nothing', async () => {
    const initial = count() as number;
    const csv = [
      'meterId,from,to,reference,kwh:peak,kwh:base,billedKw,standingCharges,total',
      `${main},2030-01-01,2030-01-03,A,288,288,12,2,139.34`,
      `${main},2030-01-32,2030-01-03,B,288,288,12,2,139.34`,
      `${main},2030-01-01,2030-01-03,C,lots,288,12,2,139.34`,
      `999,2030-01-01,2030-01-03,D,288,288,12,2,139.34`,
    ].join('\n');
    const refused = await server.request('POST', '/api/billing/supplier-bills/import', {
      token: operator.accessToken,
      raw: csv,
      headers: { 'content-type': 'text/csv' },
    });
    assert.equal(refused.status, 400, refused.text);
    assert.deepEqual(
      refused.body.details.map((d: any) => d.path),
      ['line 3.from', 'line 4.kwh:peak', 'line 5.meterId'],
    );
    assert.equal(count(), initial);

    const good = csv.split('\n').slice(0, 2).join('\n') + `\n${main},2030-01-01,2030-01-03,"E, corrected",320,288,12,2,147.34\n`;
    const imported = await server.request('POST', '/api/billing/supplier-bills/import', {
      token: operator.accessToken,
      raw: good,
      headers: { 'content-type': 'text/csv' },
    });
    assert.equal(imported.status, 201, imported.text);
    // The shadow comparison per figure; the audit's bill-level findings (the same days as the bills entered above:
    // duplicate, overlap) are the audit test's (billAudit.test.ts).
    assert.deepEqual(
      imported.body.items.map((item: any) => [item.bill.reference, item.lines.some((line: any) => line.flagged)]),
      [
        ['A', false],
        ['E, corrected', true],
      ],
    );
    assert.equal(count(), initial + 2);
    const viewerTry = await server.request('POST', '/api/billing/supplier-bills/import', {
      token: viewer.accessToken,
      raw: good,
      headers: { 'content-type': 'text/csv' },
    });
    assert.equal(viewerTry.status, 403);
    const json = await server.request('POST', '/api/billing/supplier-bills/import', { token: operator.accessToken, body: { a: 1 } });
    assert.equal(json.status, 415);
  });
});
