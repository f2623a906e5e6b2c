// The hand-entered area cards beside metered areas (the metered names now come from metering's MeterDirectory,
// issue 40): a PUT naming a metered area (any case) leaves that card to its meters, and a PUT leaving it out does not
// remove it; the hand-entered cards are replaced as a set.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let token: string;
before(async () => {
  server = await startTestServer();
  token = (await server.createUser({ role: 'admin' })).accessToken;
  const meter = await server.request('POST', '/api/meters', { token, body: { name: 'HVAC main', code: 'meter.hvac.kwh', kind: 'energy', area: 'HVAC' } });
  assert.equal(meter.status, 201, meter.text);
});
after(() => server?.close());

const card = (name: string, todayKwh: number) => ({ name, todayKwh, monthKwh: todayKwh * 10, yearKwh: todayKwh * 100, powerKw: 1 });
const cards = async (areas: unknown[]) => {
  const res = await server.request('PUT', '/api/energy/areas', { token, body: { areas } });
  assert.equal(res.status, 200, res.text);
  return (await server.request('GET', '/api/energy/areas', { token })).body.areas as Array<{ name: string; source: string; todayKwh: number }>;
};

test('a metered area is never written by hand and never removed by a replace; hand-entered cards are replaced as a set', async () => {
  const first = await cards([card('hvac', 999), card('Kitchen', 5)]);
  const byName = new Map(first.map((area) => [area.name, area]));
  assert.equal(byName.get('HVAC')?.source, 'meters', 'the metered card stays computed from its meters');
  assert.notEqual(byName.get('HVAC')?.todayKwh, 999, 'the hand-entered figure for a metered area is ignored');
  assert.ok(!byName.has('hvac'), 'no second card in another case');
  assert.equal(byName.get('Kitchen')?.source, 'manual');
  const second = await cards([card('Lobby', 2)]);
  assert.deepEqual(
    second.map((area) => [area.name, area.source]),
    [
      ['HVAC', 'meters'],
      ['Lobby', 'manual'],
    ],
  );
});
