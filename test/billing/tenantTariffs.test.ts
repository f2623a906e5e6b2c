// Tariffs per tenant or meter (issue 51), on data with a known answer: the site buys at €0.20/kWh with €1.00 a day
// standing; Tenant A has its own contract at €0.30 with €0.50 a day standing; Unit B's meter is resold at €0.10 from the
// second day. Statements price each tenant with its own, the landlord's share is what the supplier's bill leaves, and a
// back-dated version restates an issued period.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { fillDays } from '../helpers/storedDays.ts';

const DAYS = ['2030-01-01', '2030-01-02'];

describe('tariffs of a tenant or a meter of its own', () => {
  let server: TestServer;
  let admin: TestUser;
  const ids: Record<string, number> = {};

  const api = (method: string, path: string, body?: unknown) => server.request(method, path, { token: admin.accessToken, body });
  const ok = async (method: string, path: string, body?: unknown, status = 200) => {
    const response = await api(method, path, body);
    assert.equal(response.status, status, response.text);
    return response.body;
  };
  const fill = (meterId: number, value: number) => fillDays(server, meterId, DAYS, value);
  const statementOf = (run: { statements: { id: number; tenantName: string }[] }, name: string) =>
    ok('GET', `/api/billing/statements/${run.statements.find((s) => s.tenantName === name)!.id}`);

  before(async () => {
    server = await startTestServer();
    admin = await server.createUser({ role: 'admin' });
    await ok('POST', '/api/energy/tariffs', { validFrom: '2030-01-01', price: 0.2, carbonFactor: 0.5, standingChargePerDay: 1 }, 201);
    ids.main = (await ok('POST', '/api/meters', { name: 'Main', code: 'm.main', kind: 'energy', site: true }, 201)).id;
    ids.unitA = (await ok('POST', '/api/meters', { name: 'Unit A', code: 'm.a', kind: 'energy', area: 'Tenants' }, 201)).id;
    ids.unitB = (await ok('POST', '/api/meters', { name: 'Unit B', code: 'm.b', kind: 'energy', area: 'Tenants' }, 201)).id;
    fill(ids.main, 3);
    fill(ids.unitA, 1);
    fill(ids.unitB, 0.5);
    ids.a = (await ok('POST', '/api/billing/tenants', { name: 'Tenant A' }, 201)).id;
    ids.b = (await ok('POST', '/api/billing/tenants', { name: 'Tenant B' }, 201)).id;
    await ok('PUT', `/api/billing/allocations/${ids.unitA}`, { method: 'percent', shares: [{ tenantId: ids.a, value: 100 }] });
    await ok('PUT', `/api/billing/allocations/${ids.unitB}`, { method: 'percent', shares: [{ tenantId: ids.b, value: 100 }] });
    ids.period = (await ok('POST', '/api/billing/periods', { from: '2030-01-01', to: '2030-01-03' }, 201)).id;
  });
  after(() => server?.close());

  test('each tenant is priced by its own tariff, else its meter’s, else the site’s; the landlord keeps what the bill leaves', async () => {
    await ok('POST', '/api/billing/tariffs', { tenantId: ids.a, validFrom: '2030-01-01', price: 0.3, standingChargePerDay: 0.5 }, 201);
    await ok('POST', '/api/billing/tariffs', { meterId: ids.unitB, validFrom: '2030-01-02', price: 0.1, note: 'resold' }, 201);
    const run = await ok('POST', `/api/billing/periods/${ids.period}/runs`);
    const a = await statementOf(run, 'Tenant A');
    const b = await statementOf(run, 'Tenant B');
    // A: 192 kWh × 0.30 = 57.60 and its own standing 2 × 0.50 = 1.00.
    assert.deepEqual([a.content.energy[0].quantity, a.content.energy[0].amountCents, a.content.standing[0].amountCents, a.totalCents], [192, 5760, 100, 5860]);
    assert.match(a.content.tariffRule, /tenant's own tariff/);
    // B: 48 kWh × 0.20 on the first day and 48 × 0.10 on the second = 14.40; standing its share of the site's, 2.00 × 96 ÷ 576.
    assert.deepEqual([b.content.energy[0].amountCents, b.content.standing[0].amountCents, b.totalCents], [1440, 33, 1473]);
    // Site: 576 kWh × 0.20 + 2.00 = 117.20; the landlord's share is what is left: 43.87.
    assert.deepEqual(run.summary.reconciliation, { siteTotalCents: 11720, statementsCents: 5860 + 1473, landlordCents: 11720 - 5860 - 1473 });

    // Issued, then Tenant A's contract is repriced from the 2nd, back-dated: the rerun restates +96 kWh × 0.10 = +9.60.
    await ok('POST', `/api/billing/runs/${run.id}/issue`);
    const later = await ok('POST', '/api/billing/tariffs', { tenantId: ids.a, validFrom: '2030-01-02', price: 0.4, standingChargePerDay: 0.5 }, 201);
    const restated = await ok('POST', `/api/billing/periods/${ids.period}/runs`);
    assert.equal(restated.kind, 'restatement');
    const corrected = await statementOf(restated, 'Tenant A');
    assert.equal(corrected.difference.totalCents, 960);
    const issued = await ok('GET', `/api/billing/statements/${a.id}`);
    assert.deepEqual([issued.status, issued.totalCents, issued.content], ['issued', a.totalCents, a.content], 'the issued statement is unchanged');
    const listed = await ok('GET', '/api/billing/tariffs');
    assert.equal(listed.items.length, 3);
    assert.equal((await api('DELETE', `/api/billing/tariffs/${later.id}`)).status, 204);
  });

  test('bad tariffs are refused naming the field; the same day twice is 409', async () => {
    const cases: [Record<string, unknown>, number, string | null][] = [
      [{ tenantId: ids.a, meterId: ids.unitA, validFrom: '2030-02-01', price: 0.3 }, 400, 'body.tenantId'],
      [{ validFrom: '2030-02-01', price: 0.3 }, 400, 'body.tenantId'],
      [{ tenantId: 999, validFrom: '2030-02-01', price: 0.3 }, 400, 'body.tenantId'],
      [{ meterId: ids.unitB, commodity: 'gas', validFrom: '2030-02-01', price: 0.3 }, 400, 'body.commodity'],
      [{ meterId: ids.unitB, validFrom: '2030-02-01', price: 0.3, standingChargePerDay: 1 }, 400, 'body.standingChargePerDay'],
      [{ tenantId: ids.a, validFrom: '2030-02-01', price: 0.3, prise: 1 }, 400, 'body.prise'],
      [{ tenantId: ids.a, validFrom: '2030-02-01', price: 2e6 }, 400, 'body.price'],
      [{ tenantId: ids.a, validFrom: '2030-01-01', price: 0.3 }, 409, null],
    ];
    for (const [body, status, path] of cases) {
      const response = await api('POST', '/api/billing/tariffs', body);
      assert.equal(response.status, status, `${JSON.stringify(body)}: ${response.text}`);
      if (path)
        assert.ok(
          response.body.details.some((d: { path: string }) => d.path === path),
          `${path}: ${response.text}`,
        );
    }
  });
});
