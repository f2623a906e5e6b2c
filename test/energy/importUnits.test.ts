// The history import's report names each meter's unit (issue 41 item 10: a gas meter's m³ total was reported as
// `kwh`). Known answer: four rows of 0.5 on a gas meter are 2 m³ (kwh null: not converted, not energy), four of 0.5
// on an electricity meter 2 kWh; both in the dry run and in the import written.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { addDays, siteDay } from '../../src/platform/time/calendar.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

describe('history import report: units by commodity', () => {
  let server: TestServer;
  let token: string;
  const day = addDays(siteDay('UTC', new Date()), -3);
  before(async () => {
    server = await startTestServer();
    token = (await server.createUser({ role: 'admin' })).accessToken;
    const { energy } = server.service.deps;
    energy.meters.create({ name: 'Main', code: 'meter.main.kwh', kind: 'energy', site: true }, null);
    energy.meters.create({ name: 'Gas', code: 'meter.gas.m3', kind: 'energy', commodity: 'gas' }, null);
    energy.meters.create({ name: 'Water', code: 'meter.water.m3', kind: 'energy', commodity: 'water' }, null);
  });
  after(() => server?.close());

  const csv = () => {
    const lines = ['meter,start,kwh'];
    for (const code of ['meter.main.kwh', 'meter.gas.m3', 'meter.water.m3'])
      for (let i = 0; i < 4; i += 1) lines.push(`${code},${new Date(Date.parse(`${day}T00:00:00Z`) + i * 900_000).toISOString()},0.5`);
    return `${lines.join('\n')}\n`;
  };

  for (const dryRun of [true, false])
    test(`${dryRun ? 'dry run' : 'import'}: electricity in kWh, gas and water in m³ (kwh null)`, async () => {
      const response = await server.request('POST', `/api/energy/import?dryRun=${dryRun}`, { token, raw: csv(), headers: { 'content-type': 'text/csv' } });
      assert.equal(response.status, 200, response.text);
      const byName = Object.fromEntries(response.body.meters.map((m: { name: string }) => [m.name, m]));
      assert.deepEqual(
        ['Main', 'Gas', 'Water'].map((name) => {
          const { commodity, unit, quantity, kwh } = byName[name];
          return { name, commodity, unit, quantity, kwh };
        }),
        [
          { name: 'Main', commodity: 'electricity', unit: 'kWh', quantity: 2, kwh: 2 },
          { name: 'Gas', commodity: 'gas', unit: 'm³', quantity: 2, kwh: null },
          { name: 'Water', commodity: 'water', unit: 'm³', quantity: 2, kwh: null },
        ],
      );
    });
});
