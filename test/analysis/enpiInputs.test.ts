// The EnPI inputs written twice (issue 40 moved their upserts into drizzle): a floor-area replace updates the listed
// areas in place and drops the others; a drivers PUT overwrites a name and month already set (value and unit) and keeps
// the figures not listed; the lists come back in their order (area; name, month).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let token: string;
before(async () => {
  server = await startTestServer();
  token = (await server.createUser({ role: 'operator' })).accessToken;
});
after(() => server?.close());

const put = async (path: string, body: unknown) => {
  const res = await server.request('PUT', path, { token, body });
  assert.equal(res.status, 200, res.text);
  return res.body;
};

test('a floor-area replace updates listed areas in place, drops the rest, and lists them by area', async () => {
  await put('/api/analysis/floor-areas', {
    areas: [
      { area: 'Plant room', floorAreaM2: 180 },
      { area: 'Office', floorAreaM2: 1250 },
      { area: 'Lab', floorAreaM2: 90 },
    ],
  });
  const second = await put('/api/analysis/floor-areas', {
    areas: [
      { area: 'Office', floorAreaM2: 1300.5 },
      { area: 'Atrium', floorAreaM2: 40 },
    ],
  });
  const expected = [
    { area: 'Atrium', floorAreaM2: 40 },
    { area: 'Office', floorAreaM2: 1300.5 },
  ];
  assert.deepEqual(second.areas, expected);
  assert.deepEqual((await server.request('GET', '/api/analysis/floor-areas', { token })).body.areas, expected);
});

test('a drivers PUT overwrites a name and month already set (value and unit) and keeps the others, listed by name and month', async () => {
  await put('/api/analysis/drivers', {
    values: [
      { name: 'units', month: '2026-10', value: 100, unit: 'pcs' },
      { name: 'units', month: '2026-09', value: 90, unit: 'pcs' },
      { name: 'desk-days', month: '2026-10', value: 2100 },
    ],
  });
  const second = await put('/api/analysis/drivers', { values: [{ name: 'units', month: '2026-10', value: 120, unit: 'units' }] });
  assert.deepEqual(second.items, [
    { name: 'desk-days', month: '2026-10', value: 2100, unit: '' },
    { name: 'units', month: '2026-09', value: 90, unit: 'pcs' },
    { name: 'units', month: '2026-10', value: 120, unit: 'units' },
  ]);
});
