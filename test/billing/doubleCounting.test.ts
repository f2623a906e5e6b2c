// No double counting (issue 51): a meter split together with a meter beneath it in the meter tree (a sub-meter under
// the site's supply meter, a virtual meter over either) is refused naming both meters, both when the split is set and
// when a run finds such splits already stored; a virtual "rest" (main − sub-meters) may be split beside the sub-meters.
// Known answer: Main 3 kWh, Unit 1 1 kWh and Unit 2 0.5 kWh per interval over two days. Main at 50 % to Tenant B beside
// Unit 1 at 100 % to Tenant A would bill A 192 kWh and B 288 kWh, 96 kWh of which is Unit 1's energy already billed to A.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { fillDays } from '../helpers/storedDays.ts';

const DAYS = ['2030-01-01', '2030-01-02'];

describe('billing never splits the same energy twice', () => {
  let server: TestServer;
  let admin: TestUser;
  const ids: Record<string, number> = {};

  const api = (method: string, path: string, body?: unknown) => server.request(method, path, { token: admin.accessToken, body });
  const created = async (path: string, body: unknown) => {
    const response = await api('POST', path, body);
    assert.equal(response.status, 201, response.text);
    return response.body.id as number;
  };
  const write = (meterId: number, value: number) => fillDays(server, meterId, DAYS, value);
  const splitMeters = async () => ((await api('GET', '/api/billing/allocations')).body.items as { meterId: number }[]).map((a) => a.meterId).sort();

  before(async () => {
    server = await startTestServer();
    admin = await server.createUser({ role: 'admin' });
    await created('/api/energy/tariffs', { validFrom: '2030-01-01', price: 0.2, carbonFactor: 0.5 });
    ids.main = await created('/api/meters', { name: 'Main', code: 'm.main', kind: 'energy', site: true });
    ids.unit1 = await created('/api/meters', { name: 'Unit 1', code: 'm.u1', kind: 'energy', area: 'Tenants' });
    ids.unit2 = await created('/api/meters', { name: 'Unit 2', code: 'm.u2', kind: 'energy', area: 'Tenants' });
    // Written before the virtual meters: a virtual meter is built from its terms' stored days when it is created.
    write(ids.main, 3);
    write(ids.unit1, 1);
    write(ids.unit2, 0.5);
    ids.rest = await created('/api/meters', {
      name: 'Rest of building',
      kind: 'virtual',
      terms: [
        { meterId: ids.main, sign: 1 },
        { meterId: ids.unit1, sign: -1 },
        { meterId: ids.unit2, sign: -1 },
      ],
    });
    ids.units = await created('/api/meters', {
      name: 'Both units',
      kind: 'virtual',
      terms: [
        { meterId: ids.unit1, sign: 1 },
        { meterId: ids.unit2, sign: 1 },
      ],
    });
    ids.a = await created('/api/billing/tenants', { name: 'Tenant A' });
    ids.b = await created('/api/billing/tenants', { name: 'Tenant B' });
    ids.period = await created('/api/billing/periods', { from: '2030-01-01', to: '2030-01-03' });
  });
  after(() => server?.close());

  test('a supply meter and a sub-meter beneath it are refused in either order, naming both meters, writing nothing', async () => {
    const unit1 = await api('PUT', `/api/billing/allocations/${ids.unit1}`, { method: 'percent', shares: [{ tenantId: ids.a, value: 100 }] });
    assert.equal(unit1.status, 200, unit1.text);
    const main = await api('PUT', `/api/billing/allocations/${ids.main}`, { method: 'percent', shares: [{ tenantId: ids.b, value: 50 }], landlordValue: 50 });
    assert.equal(main.status, 409, main.text);
    assert.equal(main.body.code, 'CONFLICT');
    assert.equal(main.body.details[0].message, '"Unit 1" (meter 2) lies beneath "Main" (meter 1): splitting both would bill its energy twice');
    assert.deepEqual(await splitMeters(), [ids.unit1]);

    // The other way round: Main split first, then a sub-meter under it.
    await api('DELETE', `/api/billing/allocations/${ids.unit1}`);
    assert.equal((await api('PUT', `/api/billing/allocations/${ids.main}`, { method: 'percent', shares: [{ tenantId: ids.b, value: 100 }] })).status, 200);
    const unit2 = await api('PUT', `/api/billing/allocations/${ids.unit2}`, { method: 'percent', shares: [{ tenantId: ids.a, value: 100 }] });
    assert.equal(unit2.status, 409, unit2.text);
    assert.match(unit2.body.details[0].message, /"Unit 2" \(meter 3\) lies beneath "Main" \(meter 1\)/);
    assert.deepEqual(unit2.body.details[1], { path: 'meters', message: `${ids.unit2}, ${ids.main}` });
    // A virtual meter over the sub-meters lies beneath Main too.
    const units = await api('PUT', `/api/billing/allocations/${ids.units}`, { method: 'percent', shares: [{ tenantId: ids.a, value: 100 }] });
    assert.equal(units.status, 409, units.text);
    assert.match(units.body.details[0].message, /"Both units" \(meter 5\) lies beneath "Main"/);
    await api('DELETE', `/api/billing/allocations/${ids.main}`);
  });

  test('the rest of the building (main − sub-meters) is split beside the sub-meters; virtual meters sharing a term are not', async () => {
    for (const [meter, tenant] of [
      [ids.unit1, ids.a],
      [ids.unit2, ids.b],
      [ids.rest, ids.b],
    ]) {
      const put = await api('PUT', `/api/billing/allocations/${meter}`, { method: 'percent', shares: [{ tenantId: tenant, value: 50 }], landlordValue: 50 });
      assert.equal(put.status, 200, put.text);
    }
    const units = await api('PUT', `/api/billing/allocations/${ids.units}`, { method: 'percent', shares: [{ tenantId: ids.a, value: 10 }], landlordValue: 90 });
    assert.equal(units.status, 409, units.text);
    assert.match(units.body.details[0].message, /"Unit 1" \(meter 2\) lies beneath "Both units" \(meter 5\)/);
    // Disjoint energy: Unit 1 0.5 × 192 = 96 kWh to A; Unit 2 0.5 × 96 = 48 and the rest 0.5 × (576 − 192 − 96) = 144 to B.
    const run = await api('POST', `/api/billing/periods/${ids.period}/runs`);
    assert.equal(run.status, 200, run.text);
    const kwh = (name: string) => {
      const statement = run.body.statements.find((s: { tenantName: string }) => s.tenantName === name);
      return statement.totalCents;
    };
    assert.equal(kwh('Tenant A'), 1920); // 96 kWh × 0.20
    assert.equal(kwh('Tenant B'), 3840); // 192 kWh × 0.20
    assert.equal(run.body.summary.reconciliation.siteTotalCents, 11520); // 576 kWh × 0.20
    assert.equal(run.body.summary.landlord.totalCents, 11520 - 1920 - 3840);
    for (const meter of [ids.unit1, ids.unit2, ids.rest]) await api('DELETE', `/api/billing/allocations/${meter}`);
  });

  test('splits of a supply and its sub-meters sent at once: the tree holds, whichever wins', async () => {
    const bodies = [ids.main, ids.unit1, ids.unit2, ids.units].flatMap((meter) =>
      Array.from({ length: 5 }, () => ({ meter, body: { method: 'percent', shares: [{ tenantId: ids.a, value: 100 }] } })),
    );
    const answers = await Promise.all(bodies.map(({ meter, body }) => api('PUT', `/api/billing/allocations/${meter}`, body)));
    assert.deepEqual([...new Set(answers.map((answer) => answer.status))].sort(), [200, 409]);
    const split = await splitMeters();
    // Whatever won, no two split meters hold the same energy: Main alone, or sub-meters (Both units excludes the units).
    const allowed = [[ids.main], [ids.units], [ids.unit1, ids.unit2].sort(), [ids.unit1], [ids.unit2]].map((set) => JSON.stringify(set));
    assert.ok(allowed.includes(JSON.stringify(split)), JSON.stringify(split));
    for (const meter of split) await api('DELETE', `/api/billing/allocations/${meter}`);
  });

  test('a run refuses splits stored before the check (409 naming both meters) instead of billing the energy twice', async () => {
    await api('PUT', `/api/billing/allocations/${ids.unit1}`, { method: 'percent', shares: [{ tenantId: ids.a, value: 100 }] });
    // As a split of an older version would be: written beside the check, straight into the table.
    server.service.deps.db.sqlite
      .prepare("INSERT INTO billing_allocations (meter_id, method, shares, landlord_value, updated_at) VALUES (?, 'percent', ?, 50, '2030-01-01T00:00:00Z')")
      .run(ids.main, JSON.stringify([{ tenantId: ids.b, value: 50 }]));
    const run = await api('POST', `/api/billing/periods/${ids.period}/runs`);
    assert.equal(run.status, 409, run.text);
    assert.match(run.body.details[0].message, /"Unit 1" \(meter 2\) lies beneath "Main" \(meter 1\)/);
    const runs = await api('GET', `/api/billing/periods/${ids.period}/runs`);
    assert.equal(runs.body.items.length, 1, 'only the run of the test before');
  });
});
