// The area cards' read (GET /api/energy/areas, issue 40): one object answers the whole body, the cards and the site's
// unallocated energy, from one Kept cache (AreaCards.view, built on SiteEnergy). The JSON is pinned byte for byte (as it
// was while the route asked AreaCards and SiteEnergy apart and memoised the pair) through a site's life: no cards,
// hand-entered cards, a metered area, a site meter, collected readings, a replace.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Kept } from '../../src/platform/db/kept.ts';
import { MIN, misbehavingRig, type MisbehavingRig } from '../helpers/rig.ts';
import { noonZone } from '../helpers/siteClock.ts';

const INTERVAL = 15 * MIN;
// The collected hours must lie in the site's today whatever the hour of the run: a zone where it is about noon now.
const start = Math.floor(Date.now() / INTERVAL) * INTERVAL - 3 * 60 * MIN;
let r: MisbehavingRig;
let token: string;
before(async () => {
  r = await misbehavingRig({ start });
  token = r.admin.accessToken;
});
after(() => r?.close());

/** The body as sent, its instants masked (they are the run's). */
const body = async () => {
  const res = await r.server.request('GET', '/api/energy/areas', { token });
  assert.equal(res.status, 200, res.text);
  return res.text.replace(/"(createdAt|updatedAt)":"[^"]+"/g, '"$1":"T"');
};
const put = async (areas: unknown[]) => assert.equal((await r.server.request('PUT', '/api/energy/areas', { token, body: { areas } })).status, 200);
const card = (name: string, kwh: [number, number, number], powerKw: number, id: number, source: 'manual' | 'meters') =>
  `{"id":${id},"name":"${name}","todayKwh":${kwh[0]},"monthKwh":${kwh[1]},"yearKwh":${kwh[2]},"powerKw":${powerKw},"createdAt":"T","updatedAt":"T","source":"${source}"}`;
const read = async () => {
  const hours = (r.clock.now - start) / 3_600_000;
  r.gateway.set('meter.main.kwh', { value: 1000 + 10 * hours });
  r.gateway.set('meter.hvac.kwh', { value: 500 + 4 * hours });
  await r.collector.collect();
};

test('the JSON through a site’s life, byte for byte, and the same text as the one object AreaCards.view answers', async () => {
  const { areas } = r.server.service.deps.energy;
  const masked = () => JSON.stringify(areas.view()).replace(/"(createdAt|updatedAt)":"[^"]+"/g, '"$1":"T"');

  assert.equal(await body(), '{"areas":[],"unallocated":null}');
  await put([
    { name: 'Kitchen', todayKwh: 1.2345, monthKwh: 20, yearKwh: 300, powerKw: 2 },
    { name: 'HVAC', todayKwh: 9, monthKwh: 9, yearKwh: 9, powerKw: 9 },
  ]);
  const kitchen = card('Kitchen', [1.2345, 20, 300], 2, 1, 'manual');
  assert.equal(await body(), `{"areas":[${card('HVAC', [9, 9, 9], 9, 2, 'manual')},${kitchen}],"unallocated":null}`);

  assert.equal((await r.server.request('PUT', '/api/configs', { token, body: { timezone: noonZone() } })).status, 200);
  await r.meter({ name: 'HVAC', code: 'meter.hvac.kwh', kind: 'energy', area: 'HVAC' });
  assert.equal(await body(), `{"areas":[${card('HVAC', [0, 0, 0], 0, 2, 'meters')},${kitchen}],"unallocated":null}`);
  await r.meter({ name: 'Main', code: 'meter.main.kwh', kind: 'energy', site: true });
  assert.equal(await body(), `{"areas":[${card('HVAC', [0, 0, 0], 0, 2, 'meters')},${kitchen}],"unallocated":{"todayKwh":0,"monthKwh":0,"yearKwh":0}}`);

  // Two hours at 10 kW on the site meter and 4 kW on HVAC: 8 kWh for HVAC, 12 kWh unallocated.
  for (let i = 0; i <= 8; i += 1) {
    if (i) r.clock.now += INTERVAL;
    await read();
  }
  const metered = `{"areas":[${card('HVAC', [8, 8, 8], 4, 2, 'meters')},${kitchen}],"unallocated":{"todayKwh":12,"monthKwh":12,"yearKwh":12}}`;
  assert.equal(await body(), metered);
  assert.equal(masked(), metered, 'the route answers AreaCards.view whole');

  await put([{ name: 'Lobby', todayKwh: 0, monthKwh: 0, yearKwh: 0, powerKw: 0 }]);
  const replaced = `{"areas":[${card('HVAC', [8, 8, 8], 4, 2, 'meters')},${card('Lobby', [0, 0, 0], 0, 4, 'manual')}],"unallocated":{"todayKwh":12,"monthKwh":12,"yearKwh":12}}`;
  assert.equal(await body(), replaced);
  assert.equal(masked(), replaced);
});

test('one Kept keeps the whole body: the same object until a table it reads is written, and the list is its areas', async () => {
  const { areas } = r.server.service.deps.energy;
  const kept = (areas as unknown as { kept: Kept<unknown> }).kept;
  assert.equal(kept.options.name, 'energy.areaCards');
  const at = new Date();
  const first = areas.view(at);
  const misses = kept.stats.misses;
  assert.equal(areas.view(at), first, 'kept: the same object, so the route sends its JSON again');
  assert.equal(areas.list(at), first.areas, 'the wallboard and dashboard read the same cards');
  assert.equal(kept.stats.misses, misses, 'no second computation');
  assert.ok(first.unallocated, 'the site meter is marked: the unallocated energy is part of the kept body');

  // A collection writes the meters' days (FIGURE_TABLES): both parts are computed again, together.
  r.clock.now += INTERVAL;
  await read();
  const next = areas.view(at);
  assert.notEqual(next, first);
  assert.equal(kept.stats.misses, misses + 1);
  assert.equal(next.unallocated?.todayKwh, 13.5, 'the quarter hour at 6 kW more no area accounts for');
});

test('with PV behind the incomer, what no area accounts for is set against what the site used, not the grid import', async () => {
  // A site of its own: 10 kW drawn from the grid, 6 kW from its own panels, 1 kW of it exported; HVAC's meter reads 14
  // kW. The site used 10 + 6 − 1 = 15 kW: 1 kW no area accounts for (against the grid import alone it was −4).
  const from = Math.floor(Date.now() / INTERVAL) * INTERVAL - 3 * 60 * MIN;
  const site = await misbehavingRig({ start: from });
  try {
    const admin = site.admin.accessToken;
    assert.equal((await site.server.request('PUT', '/api/configs', { token: admin, body: { timezone: noonZone() } })).status, 200);
    await site.meter({ name: 'Main', code: 'meter.main.kwh', kind: 'energy', site: true });
    await site.meter({ name: 'HVAC', code: 'meter.hvac.kwh', kind: 'energy', area: 'HVAC' });
    await site.meter({ name: 'PV', code: 'meter.pv.kwh', kind: 'energy', commodity: 'electricity', role: 'generation' });
    await site.meter({ name: 'Export', code: 'meter.export.kwh', kind: 'energy', role: 'export' });
    for (let i = 0; i <= 8; i += 1) {
      if (i) site.clock.now += INTERVAL;
      const hours = (site.clock.now - from) / 3_600_000;
      site.gateway.set('meter.main.kwh', { value: 1000 + 10 * hours });
      site.gateway.set('meter.hvac.kwh', { value: 500 + 14 * hours });
      site.gateway.set('meter.pv.kwh', { value: 200 + 6 * hours });
      site.gateway.set('meter.export.kwh', { value: 50 + 1 * hours });
      await site.collector.collect();
    }
    const answer = await site.server.request('GET', '/api/energy/areas', { token: admin });
    assert.equal(answer.status, 200, answer.text);
    // Two hours: 20 kWh imported, 12 generated, 2 exported: 30 used; HVAC 28.
    assert.deepEqual(answer.body.unallocated, { todayKwh: 2, monthKwh: 2, yearKwh: 2 });
  } finally {
    await site.close();
  }
});
