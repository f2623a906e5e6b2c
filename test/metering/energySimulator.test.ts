// The simulated building over real HTTP: weather-driven heating and cooling, occupancy with weekends and holidays, a
// night base load, the same figures on every start, and an extra load a test can switch on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startGatewaySimulator } from '../../src/gateway/simulator/server.ts';
import { HEATING_BASE_C } from '../../src/gateway/simulator/climate.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

async function token(url: string): Promise<string> {
  const response = await fetch(`${url}/auth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'ems', password: 'ems-simulator' }),
  });
  return ((await response.json()) as { token: string }).token;
}

async function history(url: string, auth: string, code: string, start: number, end: number): Promise<{ ts: string; value: number }[]> {
  const response = await fetch(`${url}/codes/history`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${auth}` },
    body: JSON.stringify({ code, start: new Date(start).toISOString(), end: new Date(end).toISOString() }),
  });
  assert.equal(response.status, 200);
  return ((await response.json()) as { data: { ts: string; value: number }[] }).data;
}

/** kWh a counter ran over one UTC day, read over HTTP as its history at the two midnights. */
async function dayKwh(url: string, auth: string, code: string, day: number): Promise<number> {
  const samples = await history(url, auth, code, day, day + DAY);
  return samples.at(-1)!.value - samples[0].value;
}

test('days differ as a building’s do: winter above spring, working days above weekends and holidays, nights at the base load; the same on every start', async (t) => {
  const clock = { now: Date.UTC(2026, 11, 31) };
  const sim = await startGatewaySimulator({ now: () => clock.now, tokenTtlSec: 86_400 * 3650 });
  t.after(() => sim.close());
  const auth = await token(sim.url);
  const winterMonday = Date.UTC(2026, 0, 12);
  const winterSunday = Date.UTC(2026, 0, 11);
  const springMonday = Date.UTC(2026, 3, 13);
  const holiday = Date.UTC(2026, 4, 1); // a Friday, 1 May
  const [winter, sunday, spring, mayDay] = await Promise.all(
    [winterMonday, winterSunday, springMonday, holiday].map((day) => dayKwh(sim.url, auth, 'meter.main.kwh', day)),
  );
  assert.ok(winter > spring * 1.1, `winter ${winter} vs spring ${spring}`);
  assert.ok(winter > sunday * 1.2, `working day ${winter} vs Sunday ${sunday}`);
  const friday = await dayKwh(sim.url, auth, 'meter.main.kwh', holiday - 7 * DAY);
  assert.ok(mayDay < friday * 0.8, `holiday ${mayDay} vs the Friday before ${friday}`);
  // Lighting follows occupancy alone: at 03:00 it is its base load, at 11:00 on a working day far above it.
  const lighting = await history(sim.url, auth, 'meter.lighting.kwh', winterMonday, winterMonday + DAY);
  const rate = (hour: number) => {
    const i = lighting.findIndex((s) => Date.parse(s.ts) === winterMonday + hour * HOUR);
    return (lighting[i + 1].value - lighting[i].value) * 12;
  };
  assert.ok(rate(11) > rate(3) * 5, `lighting 11:00 ${rate(11)} kW vs 03:00 ${rate(3)} kW`);
  // The outdoor temperature point is the one the heating follows: every January reading is below the heating base.
  const outdoor = await history(sim.url, auth, 'temp.outdoor', winterMonday, winterMonday + DAY);
  assert.ok(
    outdoor.every((s) => s.value > -20 && s.value < HEATING_BASE_C),
    'a January day is a heating day',
  );
  // Deterministic: a second simulator answers the same history.
  const again = await startGatewaySimulator({ now: () => clock.now, tokenTtlSec: 86_400 * 3650 });
  t.after(() => again.close());
  assert.equal(await dayKwh(again.url, await token(again.url), 'meter.main.kwh', winterMonday), winter);
});

test('an extra load switched on over HTTP raises the main incomer’s power and counter by exactly its integral; bad input is 400', async (t) => {
  const clock = { now: Date.UTC(2026, 5, 10, 10) };
  const sim = await startGatewaySimulator({ now: () => clock.now });
  t.after(() => sim.close());
  const before = sim.building.counterAt('meter.main.kwh', clock.now + 10 * 60_000)!;
  const post = (body: unknown) => fetch(`${sim.url}/sim/load`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  assert.equal((await post({ kw: 'lots', minutes: 5 })).status, 400);
  assert.equal((await post({ kw: 10, minutes: -1 })).status, 400);
  assert.equal((await post({ kw: 60, kwPerMinute: 6, minutes: 10 })).status, 200);
  const after = sim.building.counterAt('meter.main.kwh', clock.now + 10 * 60_000)!;
  // 60 kW rising 6 kW/min for 10 min: (60 × 10 + 6 × 10² / 2) / 60 = 15 kWh.
  assert.ok(Math.abs(after - before - 15) < 0.02, `${after - before} kWh added`);
});
