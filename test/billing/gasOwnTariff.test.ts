// A tenant's own gas tariff (issue 51): priced per kWh through the calorific value in force each day, as the supplier
// bills gas. Known answer: Tenant G's meter records 48 m³ over two days at 11.2 kWh/m³ = 537.6 kWh; the site's gas
// tariff at €0.08/kWh bills it €43.01, its own contract at €0.10/kWh €53.76; a time-of-use band on gas is refused.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { fillDays } from '../helpers/storedDays.ts';

const DAYS = ['2030-01-01', '2030-01-02'];

describe('a tenant’s own gas tariff', () => {
  let server: TestServer;
  let admin: TestUser;
  const ids: Record<string, number> = {};
  const ok = async (method: string, path: string, body?: unknown, status = 200) => {
    const response = await server.request(method, path, { token: admin.accessToken, body });
    assert.equal(response.status, status, response.text);
    return response.body;
  };
  const fill = (meterId: number, value: number) => fillDays(server, meterId, DAYS, value);
  const gasEnergyCents = async () => {
    const run = await ok('POST', `/api/billing/periods/${ids.period}/runs`);
    const statement = await ok('GET', `/api/billing/statements/${run.statements.find((s: { tenantId: number }) => s.tenantId === ids.g).id}`);
    return statement.content.energy
      .filter((line: { utility?: string; commodity?: string }) => (line.utility ?? line.commodity) === 'gas')
      .reduce((sum: number, line: { amountCents: number }) => sum + line.amountCents, 0);
  };

  before(async () => {
    server = await startTestServer();
    admin = await server.createUser({ role: 'admin' });
    await ok('POST', '/api/energy/tariffs', { validFrom: '2030-01-01', price: 0.2, carbonFactor: 0.5 }, 201);
    await ok('POST', '/api/energy/tariffs', { validFrom: '2030-01-01', commodity: 'gas', price: 0.08, carbonFactor: 0.2 }, 201);
    await ok('POST', '/api/energy/calorific-values', { validFrom: '2030-01-01', kwhPerM3: 11.2, note: 'From the supplier' }, 201);
    ids.main = (await ok('POST', '/api/meters', { name: 'Gas main', code: 'g.main', kind: 'energy', commodity: 'gas', area: 'Plant' }, 201)).id;
    ids.unit = (await ok('POST', '/api/meters', { name: 'Gas unit G', code: 'g.unit', kind: 'energy', commodity: 'gas', area: 'Tenants' }, 201)).id;
    fill(ids.main, 1);
    fill(ids.unit, 0.25);
    ids.g = (await ok('POST', '/api/billing/tenants', { name: 'Tenant G' }, 201)).id;
    await ok('PUT', `/api/billing/allocations/${ids.unit}`, { method: 'percent', shares: [{ tenantId: ids.g, value: 100 }] });
    ids.period = (await ok('POST', '/api/billing/periods', { from: '2030-01-01', to: '2030-01-03' }, 201)).id;
  });
  after(() => server?.close());

  test('priced per kWh by the calorific value in force: the site’s, then its own', async () => {
    // 48 m³ × 11.2 kWh/m³ × €0.08 = €43.008.
    assert.equal(await gasEnergyCents(), 4301);
    await ok('POST', '/api/billing/tariffs', { tenantId: ids.g, commodity: 'gas', validFrom: '2030-01-01', price: 0.1 }, 201);
    // 48 m³ × 11.2 kWh/m³ × €0.10 = €53.76.
    assert.equal(await gasEnergyCents(), 5376);
  });

  test('a time-of-use band on a gas tariff is refused naming the field', async () => {
    const band = { name: 'day', days: ['mon'], from: '08:00', to: '20:00', price: 0.2 };
    const refused = await server.request('POST', '/api/billing/tariffs', {
      token: admin.accessToken,
      body: { tenantId: ids.g, commodity: 'gas', validFrom: '2030-02-01', price: 0.1, bands: [band] },
    });
    assert.equal(refused.status, 400, refused.text);
    assert.ok(refused.body.details.some((d: { path: string }) => d.path === 'body.bands'));
  });
});
