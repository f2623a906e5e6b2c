// The simulator's HVAC plant (issue 54) over HTTP: off by default (the catalogue and the main incomer as before); on, its
// points answer, its meters count the exact sum of their slots, their energy adds to the main incomer, and a fault
// injected through /sim/faults moves the meters by the energy the plant says it injected. Bad fault requests are refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startGatewaySimulator } from '../../src/gateway/simulator/server.ts';

const START = Date.UTC(2026, 0, 12, 9); // Monday 09:00 UTC, winter: free cooling with the hot-water loop on
const HOUR = 3_600_000;

async function token(url: string): Promise<string> {
  const response = await fetch(`${url}/auth/token`, { method: 'POST', body: JSON.stringify({ username: 'ems', password: 'ems-simulator' }) });
  return ((await response.json()) as { token: string }).token;
}

async function values(url: string, bearer: string, codes: string[]): Promise<Record<string, number>> {
  const response = await fetch(`${url}/codes/values`, { method: 'POST', headers: { authorization: `Bearer ${bearer}` }, body: JSON.stringify({ codes }) });
  const { data } = (await response.json()) as { data: Array<{ code: string; value: number }> };
  return Object.fromEntries(data.map((row) => [row.code, row.value]));
}

test('off by default: no plant codes, the main incomer as it was; on: the plant adds its meters to the main incomer', async () => {
  const clock = { now: START };
  const plain = await startGatewaySimulator({ now: () => clock.now, tokenTtlSec: 86_400 });
  const withPlant = await startGatewaySimulator({ now: () => clock.now, equipment: {}, tokenTtlSec: 86_400 });
  try {
    assert.equal(plain.building.plant, undefined);
    assert.equal(
      plain.building.catalogue().some((point) => point.code === 'ahu1.sat' || point.code.startsWith('chiller1.')),
      false,
    );
    assert.ok(withPlant.building.catalogue().some((point) => point.code === 'ahu1.sat'));
    const codes = ['meter.main.kwh', 'meter.ahu1.kwh', 'meter.boiler.kwh', 'meter.chiller1.kwh'];
    const [a, b] = [await token(plain.url), await token(withPlant.url)];
    const before = { plain: await values(plain.url, a, codes.slice(0, 1)), plant: await values(withPlant.url, b, codes) };
    clock.now += 2 * HOUR;
    const after = { plain: await values(plain.url, a, codes.slice(0, 1)), plant: await values(withPlant.url, b, codes) };
    const plantKwh = codes.slice(1).reduce((sum, code) => sum + after.plant[code]! - before.plant[code]!, 0);
    // Two hours of a running fan (7.2 kW) at least.
    assert.ok(after.plant['meter.ahu1.kwh']! - before.plant['meter.ahu1.kwh']! > 14);
    const mainGap = after.plant['meter.main.kwh']! - before.plant['meter.main.kwh']! - (after.plain['meter.main.kwh']! - before.plain['meter.main.kwh']!);
    assert.ok(Math.abs(mainGap - plantKwh) < 0.05, `main incomer moved ${mainGap} kWh more, the plant's meters ${plantKwh}`);
    // A plant point is read-only for a plain write.
    const refused = await fetch(`${withPlant.url}/codes/set`, {
      method: 'POST',
      headers: { authorization: `Bearer ${b}` },
      body: JSON.stringify({ code: 'ahu1.satsp', value: 18 }),
    });
    assert.equal(refused.status, 409);
  } finally {
    await plain.close();
    await withPlant.close();
  }
});

test('an injected leak moves the plant meters by the energy the plant says it injected; bad requests are refused', async () => {
  const clock = { now: START };
  const sim = await startGatewaySimulator({ now: () => clock.now, equipment: {}, tokenTtlSec: 86_400 });
  const healthy = await startGatewaySimulator({ now: () => clock.now, equipment: {}, tokenTtlSec: 86_400 });
  try {
    const meters = ['meter.ahu1.kwh', 'meter.boiler.kwh', 'meter.chiller1.kwh'];
    const [a, b] = [await token(sim.url), await token(healthy.url)];
    const inject = (body: unknown) => fetch(`${sim.url}/sim/faults`, { method: 'POST', body: JSON.stringify(body) });
    assert.equal((await inject({ kind: 'melted-fan', minutes: 60 })).status, 400);
    assert.equal((await inject({ kind: 'leaking-valve', minutes: -1 })).status, 400);
    assert.equal((await inject({ kind: 'leaking-valve', from: START - HOUR, minutes: 60 })).status, 400, 'not in the past');
    assert.equal((await fetch(`${healthy.url}/sim/faults`, { method: 'GET' })).status, 200);
    const created = await inject({ kind: 'leaking-valve', minutes: 180, magnitude: 0.2 });
    assert.equal(created.status, 201);
    const before = { sim: await values(sim.url, a, meters), healthy: await values(healthy.url, b, meters) };
    clock.now += HOUR;
    const read = await values(sim.url, a, ['ahu1.hcv', 'ahu1.sat', 'ahu1.mat']);
    assert.equal(read['ahu1.hcv'], 0, 'the valve is shut: the heat is a leak');
    assert.ok(read['ahu1.sat']! - read['ahu1.mat']! > 3.5, `the air rises across the shut coil: ${JSON.stringify(read)}`);
    clock.now += 2 * HOUR;
    const after = { sim: await values(sim.url, a, meters), healthy: await values(healthy.url, b, meters) };
    const moved = (side: 'sim' | 'healthy') => meters.reduce((sum, code) => sum + after[side][code]! - before[side][code]!, 0);
    const injected = sim.building.plant!.injectedKwh(START, START + 3 * HOUR);
    assert.ok(injected > 10, `a 30 kW leak over free-cooling hours injects energy: ${injected}`);
    assert.ok(Math.abs(moved('sim') - moved('healthy') - injected) < 0.05, `${moved('sim')} − ${moved('healthy')} against ${injected}`);
  } finally {
    await sim.close();
    await healthy.close();
  }
});

test("codes/history's optional step: the values on the grid, the same as the plain answer's; a bad step refused; ignored when so configured", async () => {
  const clock = { now: START + 6 * HOUR };
  const sim = await startGatewaySimulator({ now: () => clock.now, equipment: {}, tokenTtlSec: 86_400 });
  const old = await startGatewaySimulator({ now: () => clock.now, equipment: {}, tokenTtlSec: 86_400, historyStep: false });
  try {
    const history = async (url: string, body: Record<string, unknown>) => {
      const response = await fetch(`${url}/codes/history`, {
        method: 'POST',
        headers: { authorization: `Bearer ${await token(url)}` },
        body: JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    const span = { code: 'ahu1.sat', start: new Date(START + 1).toISOString(), end: new Date(START + 2 * HOUR).toISOString() };
    const grid = await history(sim.url, { ...span, step: 300 });
    assert.equal(grid.status, 200);
    assert.equal(grid.body.start, new Date(START + 300_000).toISOString(), 'the first multiple of the step at or after start');
    assert.equal(grid.body.step, 300);
    const plain = (await history(sim.url, span)).body.data as Array<{ ts: string; value: number }>;
    assert.deepEqual(
      grid.body.values,
      plain.map((row) => row.value),
    );
    assert.equal((grid.body.values as number[]).length, 24);
    for (const step of [0, 1.5, 'x']) {
      const bad = await history(sim.url, { ...span, step });
      assert.equal(bad.status, 400, `step ${step}`);
      assert.match(String(bad.body.error), /step/);
    }
    assert.equal((await history(sim.url, { ...span, start: new Date(START - 100 * 86_400_000).toISOString(), step: 60 })).status, 400, 'too many values');
    const ignored = await history(old.url, { ...span, step: 300 });
    assert.equal(ignored.body.values, undefined);
    assert.ok(Array.isArray(ignored.body.data));
  } finally {
    await sim.close();
    await old.close();
  }
});
