// A billing run on the simulator's tenant sub-meters (6 sub-meters, as EMS_SIM_METERS=6: meter.sub.001–003), collected over real HTTP:
// each tenant is billed what its simulated counter advanced, the readings are the counter's, the site's bill is the
// energy figures' cost, and the statements plus the landlord's share are the site's bill to the cent.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { DAY, simulatorRig, type SimulatorRig } from '../helpers/rig.ts';
import { addDays, dayStart } from '../../src/platform/time/calendar.ts';

let r: SimulatorRig;
const FROM = '2026-03-02';
const TO = '2026-03-05';

before(async () => {
  r = await simulatorRig({ start: Date.parse('2026-03-01T00:00:00Z'), simulator: { subMeters: 6 } });
});
after(() => r?.close());

test('statements on the simulator tenant sub-meters bill each counter, and reconcile with the site bill to the cent', async () => {
  const token = r.admin.accessToken;
  const post = async (path: string, body: unknown, status = 201) => {
    const response = await r.server.request('POST', path, { token, body });
    assert.equal(response.status, status, response.text);
    return response.body;
  };
  await r.meter({ name: 'Main incomer', code: 'meter.main.kwh', kind: 'energy', site: true });
  const subs: { id: number; name: string; code: string }[] = [];
  for (const n of ['001', '002', '003'])
    subs.push(await r.meter({ name: `Tenant sub-meter ${n}`, code: `meter.sub.${n}.kwh`, kind: 'energy', area: 'Tenants' }));
  const timezone = r.server.service.deps.energy.timezone();
  await r.collector.collect();
  await r.run(dayStart(timezone, addDays(TO, 1)), DAY / 4);

  const tenants: { id: number }[] = [];
  for (const n of [1, 2, 3]) tenants.push(await post('/api/billing/tenants', { name: `Shop ${n}` }));
  for (const [i, sub] of subs.entries()) {
    const shares = i < 2 ? [{ tenantId: tenants[i].id, value: 100 }] : [{ tenantId: tenants[2].id, value: 60 }];
    const response = await r.server.request('PUT', `/api/billing/allocations/${sub.id}`, {
      token,
      body: { method: 'percent', shares, landlordValue: i < 2 ? 0 : 40 },
    });
    assert.equal(response.status, 200, response.text);
  }
  const period = await post('/api/billing/periods', { from: FROM, to: TO });
  const run = await post(`/api/billing/periods/${period.id}/runs`, undefined, 200);

  const start = dayStart(timezone, FROM);
  const end = dayStart(timezone, TO);
  for (const [i, sub] of subs.entries()) {
    const statement = (await r.server.request('GET', `/api/billing/statements/${run.statements.find((s: any) => s.tenantId === tenants[i].id).id}`, { token }))
      .body;
    const line = statement.content.meters[0];
    const advanced = r.counter(sub.code, end) - r.counter(sub.code, start);
    // Stored at 0.1 Wh per interval: 288 intervals round to well under 0.05 kWh.
    assert.ok(Math.abs(line.quantity - advanced) < 0.05, `${sub.name}: ${line.quantity} kWh billed, counter advanced ${advanced}`);
    assert.ok(Math.abs(line.startReading - r.counter(sub.code, start)) < 0.05, `${sub.name} start reading ${line.startReading}`);
    assert.ok(Math.abs(line.endReading - r.counter(sub.code, end)) < 0.05, `${sub.name} end reading ${line.endReading}`);
    assert.equal(line.billedQuantity, Math.round(line.quantity * (i < 2 ? 1 : 0.6) * 1000) / 1000);
    assert.ok(statement.totalCents > 0);
  }
  // The site's bill is what the energy figures cost the site meters (energy at the tariff plus the standing charge).
  const site = run.summary.site;
  const energyAndStanding = [...site.energy, ...site.standing].reduce((sum: number, line: any) => sum + line.amountCents, 0);
  const figures = r.server.service.deps.energy.figures.totals(FROM, TO);
  assert.ok(Math.abs(energyAndStanding / 100 - figures.cost) <= 0.02, `site bill ${energyAndStanding / 100} vs figures ${figures.cost}`);
  const kwh = site.energy.reduce((sum: number, line: any) => sum + line.quantity, 0);
  assert.ok(Math.abs(kwh - (r.counter('meter.main.kwh', end) - r.counter('meter.main.kwh', start))) < 0.05);
  const { reconciliation } = run.summary;
  assert.equal(reconciliation.statementsCents + reconciliation.landlordCents, reconciliation.siteTotalCents);
  assert.equal(
    reconciliation.statementsCents,
    run.statements.reduce((sum: number, s: any) => sum + s.totalCents, 0),
  );
  assert.equal(run.summary.quality.missing, 0);
});
