// Discovery proposes one site meter per physical incomer (a counter and a power point of the same meter are one
// meter), and a meter set that would count the site twice is refused; against a gateway catalogue over real HTTP.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MIN, misbehavingRig, type MisbehavingRig } from '../helpers/rig.ts';

describe('discovery and the site counted once', () => {
  let r: MisbehavingRig;
  before(async () => {
    r = await misbehavingRig();
    r.gateway.catalogue = [
      { code: 'incomer.main.kwh', name: 'Main incomer energy', unit: 'kWh', kind: 'energy' },
      { code: 'incomer.main.kw', name: 'Main incomer power', unit: 'kW', kind: 'power' },
      { code: 'hvac.kwh', name: 'HVAC energy', unit: 'kWh', kind: 'energy' },
      { code: 'hvac.kw', name: 'HVAC power', unit: 'kW', kind: 'power' },
      { code: 'temp.outdoor', name: 'Outdoor temperature', unit: '°C', kind: 'temperature' },
    ];
  });
  after(() => r.close());

  test('the counter and the power point of the incomer are one meter: one site proposal', async () => {
    const found = await r.get('/api/meters/discover');
    const byCode = new Map(found.proposals.map((p: any) => [p.code, p]));
    assert.equal(found.proposals.filter((p: any) => p.site).length, 1, 'one site meter for one incomer');
    assert.equal((byCode.get('incomer.main.kwh') as any).site, true);
    assert.deepEqual(
      { site: (byCode.get('incomer.main.kw') as any).site, sameMeterAs: (byCode.get('incomer.main.kw') as any).sameMeterAs },
      { site: false, sameMeterAs: 'incomer.main.kwh' },
    );
    assert.equal((byCode.get('hvac.kw') as any).sameMeterAs, 'hvac.kwh');
    assert.equal((byCode.get('hvac.kwh') as any).sameMeterAs, null);
  });

  test('accepting every proposal as given counts the site once: the twin site meter is refused with 409', async () => {
    const found = await r.get('/api/meters/discover');
    const statuses = [];
    for (const proposal of found.proposals) {
      const response = await r.server.request('POST', '/api/meters', {
        token: r.admin.accessToken,
        body: { name: proposal.name, code: proposal.code, kind: proposal.kind, site: proposal.site },
      });
      statuses.push(response.status);
    }
    assert.deepEqual(statuses, [201, 201, 201, 201]);
    const twin = await r.server.request(
      'PUT',
      `/api/meters/${(await r.get('/api/meters?pageSize=200')).items.find((m: any) => m.code === 'incomer.main.kw').id}`,
      {
        token: r.admin.accessToken,
        body: { site: true },
      },
    );
    assert.equal(twin.status, 409);
    assert.match(twin.body.error, /count the site twice/);

    // The site's energy is the incomer's once: 10 kW for an hour is 10 kWh, not 20.
    const start = r.clock.now;
    for (let i = 0; i <= 60; i += 5) {
      r.clock.now = start + i * MIN;
      r.gateway.set('incomer.main.kwh', { value: 100 + (10 * i) / 60 });
      r.gateway.set('incomer.main.kw', { value: 10 });
      await r.collector.collect();
    }
    // The service holds the open 15-minute interval in memory (edge): written first, as at the next boundary.
    r.collector.flush();
    const today = new Date(start).toISOString().slice(0, 10);
    const end = new Date(r.clock.now).toISOString().slice(0, 10);
    const summary = await r.get(`/api/energy/summary?from=${today}&to=${new Date(Date.parse(end) + 86_400_000).toISOString().slice(0, 10)}`);
    assert.ok(Math.abs(summary.totalKwh - 10) < 0.01, `site energy ${summary.totalKwh}`);
  });
});
