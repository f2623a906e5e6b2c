// A viewer cannot make the service send thousands of gateway requests through temperatureCode (issue 39, item 8): against
// the misbehaving gateway over real HTTP, counting its codes/history requests. 8 viewers in flight at once over the same
// half year read it from the gateway once, one request at a time; a point other than the site's outdoor temperature is
// read from the gateway for admins only (403 for a viewer, nothing asked); a span with more days not kept than the bound
// per call is a 400 before anything is asked.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_UNCACHED_DAYS, OUTDOOR_TEMPERATURE_CODE } from '../../src/analysis/weather.ts';
import { misbehavingRig, type MisbehavingRig } from '../helpers/rig.ts';

const FROM = '2025-01';
const TO = '2025-07';
/** 2025-01-01 … 2025-06-30: 181 days, read 2 days a request. */
const DAYS = 181;

/** The gateway's history of `code`: a reading every 20 minutes through 2025 (every hour of every day has three). */
function seedHistory(r: MisbehavingRig, code: string) {
  const rows: { at: number; value: number }[] = [];
  for (let at = Date.parse('2024-12-30T00:00:00Z'); at < Date.parse('2026-01-02T00:00:00Z'); at += 20 * 60_000)
    rows.push({ at, value: 8 + 6 * Math.sin(at / 86_400_000) });
  r.gateway.history.set(code, rows);
}

const historyCalls = (r: MisbehavingRig) => r.gateway.counts.get('/codes/history') ?? 0;

test('8 viewers in flight at once: the half year read from the gateway once, one request at a time', async (t) => {
  const r = await misbehavingRig();
  t.after(() => r.close());
  seedHistory(r, OUTDOOR_TEMPERATURE_CODE);
  r.gateway.historyDelayMs = 5;
  const viewers = await Promise.all(Array.from({ length: 8 }, () => r.server.createUser({ role: 'viewer' })));
  const answers = await Promise.all(
    viewers.map((viewer) => r.server.request('GET', `/api/analysis/enpi?from=${FROM}&to=${TO}`, { token: viewer.accessToken })),
  );
  for (const answer of answers) assert.equal(answer.status, 200, answer.text);
  const calls = historyCalls(r);
  t.diagnostic(`8 parallel viewers, ${DAYS} days: ${calls} gateway history requests, at most ${r.gateway.maxHistoryInFlight} at once`);
  assert.ok(calls <= Math.ceil(DAYS / 2), `${calls} requests: the days once, not once per viewer`);
  assert.equal(r.gateway.maxHistoryInFlight, 1, 'one temperature fetch at a time service-wide');
  assert.equal(answers[0].body.months.length, 6);
  assert.deepEqual(
    answers.map((answer) => JSON.stringify(answer.body)),
    Array(8).fill(JSON.stringify(answers[0].body)),
    'every viewer the same answer',
  );
  // Kept: asked again, nothing is read from the gateway.
  assert.equal((await r.server.request('GET', `/api/analysis/enpi?from=${FROM}&to=${TO}`, { token: viewers[0].accessToken })).status, 200);
  assert.equal(historyCalls(r), calls);
});

test('another temperature point: read from the gateway for admins only; a span beyond the bound is a 400, nothing asked', async (t) => {
  const r = await misbehavingRig();
  t.after(() => r.close());
  seedHistory(r, 'temp.zone1');
  seedHistory(r, OUTDOOR_TEMPERATURE_CODE);
  const viewer = await r.server.createUser({ role: 'viewer' });
  const operator = await r.server.createUser({ role: 'operator' });
  const zone = `/api/analysis/enpi?from=${FROM}&to=${TO}&temperatureCode=temp.zone1`;
  for (const user of [viewer, operator]) {
    const refused = await r.server.request('GET', zone, { token: user.accessToken });
    assert.equal(refused.status, 403, refused.text);
    assert.match(refused.body.error, /only admins may read a temperature point other than temp\.outdoor/);
  }
  assert.equal(historyCalls(r), 0, 'nothing asked of the gateway for a refused call');
  assert.equal((await r.server.request('GET', zone, { token: r.admin.accessToken })).status, 200);
  const byAdmin = historyCalls(r);
  assert.ok(byAdmin > 0 && byAdmin <= Math.ceil(DAYS / 2));
  // Kept by the admin's call: a viewer reads those days from the store.
  assert.equal((await r.server.request('GET', zone, { token: viewer.accessToken })).status, 200);
  assert.equal(historyCalls(r), byAdmin);

  // Ten years of days not kept: 400 naming the bound, before any request.
  const long = await r.server.request('GET', '/api/analysis/enpi?from=2015-01&to=2025-01', { token: viewer.accessToken });
  assert.equal(long.status, 400, long.text);
  assert.match(long.body.details[0].message, new RegExp(`at most ${MAX_UNCACHED_DAYS} are read from the gateway per request`));
  assert.equal(historyCalls(r), byAdmin);
});
