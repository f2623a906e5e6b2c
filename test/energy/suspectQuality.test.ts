// Suspect runs where a reading's quality shows (issue 52), over real HTTP: the completeness counts a suspect interval
// apart from measured and missing (meter, site and day, and the summary's shares), the CSV export's quality column says
// `suspect` (flag 64), and once a person confirms the run they read as measured again.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { addDays, dayIntervals, siteDay } from '../../src/platform/time/calendar.ts';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { noonZone } from '../helpers/siteClock.ts';

const Q = 15 * 60_000;
const ZONE = noonZone();
const today = siteDay(ZONE);
const DAYS = Array.from({ length: 9 }, (_, i) => addDays(today, -20 + i));
const DEAD = DAYS[8];
/** 6 h of zeros on the last day (intervals 40–63) after 8 days of an office load: a suspect run on an incomer. */
const DEAD_FROM = 40;
const DEAD_TO = 64;

describe('suspect intervals in completeness and the CSV export', () => {
  let server: TestServer;
  let admin: TestUser;
  let main: { id: number };
  const get = async (path: string) => {
    const response = await server.request('GET', path, { token: admin.accessToken });
    assert.equal(response.status, 200, `${path}: ${response.text}`);
    return response;
  };

  before(async () => {
    server = await startTestServer();
    admin = await server.createUser({ role: 'admin' });
    const zoned = await server.request('PUT', '/api/configs', { token: admin.accessToken, body: { timezone: ZONE } });
    assert.equal(zoned.status, 200, zoned.text);
    const created = await server.request('POST', '/api/meters', {
      token: admin.accessToken,
      body: { name: 'Main', code: 'meter.main.kwh', kind: 'energy', site: true },
    });
    assert.equal(created.status, 201, created.text);
    main = created.body;
    const lines = ['meter,start,kwh'];
    for (const d of DAYS) {
      const { start, count } = dayIntervals(ZONE, d);
      for (let i = 0; i < count; i += 1) {
        const dead = d === DEAD && i >= DEAD_FROM && i < DEAD_TO;
        lines.push(`meter.main.kwh,${new Date(start + i * Q).toISOString()},${dead ? 0 : (i >= 28 && i < 76 ? 6 : 2) + (i % 7) * 0.1}`);
      }
    }
    const imported = await server.request('POST', '/api/energy/import', {
      token: admin.accessToken,
      raw: `${lines.join('\n')}\n`,
      headers: { 'content-type': 'text/csv' },
    });
    assert.equal(imported.status, 200, imported.text);
    assert.equal(imported.body.meters[0].suspect.runs, 1);
  });
  after(() => server.close());

  test('suspect apart from measured and missing; the CSV says suspect; confirmed, they are measured', async () => {
    const { count } = dayIntervals(ZONE, DEAD);
    const share = (n: number) => Math.round((n / count) * 10_000) / 10_000;
    const completeness = async () => (await get(`/api/energy/completeness?meterId=${main.id}&from=${DEAD}&to=${addDays(DEAD, 1)}`)).body;
    const before = await completeness();
    const day = before.meters[0].days[0];
    assert.deepEqual(
      { measured: day.measured, suspect: day.suspect, estimated: day.estimated, missing: day.missing },
      { measured: share(count - 24), suspect: share(24), estimated: 0, missing: 0 },
    );
    assert.equal(before.meters[0].suspect, share(24));
    // The site (its one site meter) says the same; the summary's day too.
    const site = (await get(`/api/energy/completeness?from=${DEAD}&to=${addDays(DEAD, 1)}`)).body.site;
    assert.equal(site.days[0].suspect, share(24));
    const summary = (await get(`/api/energy/summary?from=${DEAD}&to=${addDays(DEAD, 1)}`)).body;
    assert.equal(summary.days[0].suspect, share(24));
    assert.equal(summary.completeness.suspect, share(24));

    const csv = (await get(`/api/energy/export.csv?meterId=${main.id}&from=${DEAD}&to=${addDays(DEAD, 1)}`)).text.trim().split('\n');
    assert.equal(csv[0], 'start,end,kwh,mean_kw,flags,quality');
    const quality = csv.slice(1).map((line) => line.split(',')[5]);
    assert.deepEqual(
      quality.map((q, i) => [i, q]).filter(([, q]) => q === 'suspect'),
      Array.from({ length: 24 }, (_, k) => [DEAD_FROM + k, 'suspect']),
    );
    assert.equal(csv[1 + DEAD_FROM].split(',')[2], '0', 'a suspect interval keeps its value');
    assert.ok(Number(csv[1 + DEAD_FROM].split(',')[4]) & 64);

    const runs = (await get(`/api/energy/suspect-runs?meterId=${main.id}`)).body.items;
    const confirmed = await server.request('POST', `/api/energy/suspect-runs/${runs[0].id}/confirm`, { token: admin.accessToken });
    assert.equal(confirmed.status, 200, confirmed.text);
    const after = (await completeness()).meters[0].days[0];
    assert.deepEqual({ measured: after.measured, suspect: after.suspect }, { measured: 1, suspect: 0 });
    const again = (await get(`/api/energy/export.csv?meterId=${main.id}&from=${DEAD}&to=${addDays(DEAD, 1)}`)).text;
    assert.ok(!again.includes(',suspect'));
  });
});
