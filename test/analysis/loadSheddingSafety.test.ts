// Whatever load shedding switched off is switched back on, whatever the collector does (issue 39, items 1 and 2): with
// the collector off and no meter at all, the guard's own timer restores after maxShedSec and when no contract is in
// effect; turning load shedding off restores at once; a graceful stop restores every shed point; a restore the gateway
// refuses is one critical alert, an error line and a field of /api/health, tried again (with a backoff) until it goes through; and a
// wall clock stepping back cannot keep a point shed (durations also count on the monotonic clock). Over real HTTP
// against the misbehaving test gateway, which holds what is written to it (test/helpers/badGateway.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RESTORE_FAILED_CODE } from '../../src/analysis/loadShedding.ts';
import { INTERVAL_MS } from '../../src/platform/time/calendar.ts';
import { MIN, misbehavingRig, type MisbehavingRig, monotonicShedder } from '../helpers/rig.ts';
import { eventually } from '../helpers/server.ts';

const POINTS = [
  { code: 'ahu1.run', priority: 1, shedValue: 0, restoreValue: 1 },
  { code: 'sp.zone1', priority: 2, shedValue: 28, restoreValue: 21.5 },
];

/** The service on the misbehaving gateway, collector off and no meter; both points at their restore values. */
async function rig(t: { after: (fn: () => Promise<void>) => void }): Promise<MisbehavingRig> {
  const r = await misbehavingRig();
  t.after(() => r.close());
  for (const point of POINTS) r.gateway.set(point.code, { value: point.restoreValue });
  return r;
}

async function settings(r: MisbehavingRig, body: Record<string, unknown>) {
  const response = await r.server.request('PUT', '/api/analysis/load-shedding', {
    token: r.admin.accessToken,
    body: { enabled: true, minOffSec: 60, maxShedSec: 600, points: POINTS, ...body },
  });
  assert.equal(response.status, 200, response.text);
  return response.body;
}

/** As a shed by this service leaves it: the gateway holds the shed value, the row its shed time and window. */
function shedNow(r: MisbehavingRig, at = r.clock.now, points = POINTS) {
  const mark = r.server.service.deps.db.sqlite.prepare('UPDATE load_shed_points SET shed_at = ?, shed_window = ? WHERE code = ?');
  for (const point of points) {
    r.gateway.set(point.code, { value: point.shedValue });
    mark.run(at, Math.floor(at / INTERVAL_MS) * INTERVAL_MS, point.code);
  }
}

const value = (r: MisbehavingRig, code: string) => r.gateway.points.get(code)?.value;
const restoresOf = async (r: MisbehavingRig) =>
  (await r.get('/api/audit?action=load_shedding.restore&pageSize=100')).items.reverse().map((e: any) => [e.resourceId, e.after.reason, e.after.confirmed]);

test('collector off, no meter: the own timer restores after maxShedSec; turning load shedding off restores at once', async (t) => {
  const r = await rig(t);
  await settings(r, { minOffSec: 0, maxShedSec: 60 });
  shedNow(r);
  assert.equal((await r.get('/api/health')).loadShedding.shed.length, 2, 'health names the shed points');
  // No collection runs (EMS_COLLECT_INTERVAL=off, no meter): only the guard's timer can restore them.
  r.clock.now += 61_000;
  await eventually(async () => (value(r, 'ahu1.run') === 1 && value(r, 'sp.zone1') === 21.5 ? true : undefined), 'restored by the timer', 15_000);
  assert.deepEqual(await restoresOf(r), [
    ['sp.zone1', 'shed for the maximum of 60 s', true],
    ['ahu1.run', 'shed for the maximum of 60 s', true],
  ]);
  assert.deepEqual((await r.get('/api/health')).loadShedding, { shed: [], restoreFailing: [] });

  shedNow(r);
  const off = await settings(r, { enabled: false, minOffSec: 300, maxShedSec: 600 });
  // Restored before the answer, whatever the minimum off time.
  assert.deepEqual(
    off.points.map((p: any) => p.shed),
    [false, false],
  );
  assert.equal(value(r, 'ahu1.run'), 1);
  assert.equal(value(r, 'sp.zone1'), 21.5);
  assert.deepEqual((await restoresOf(r)).slice(2), [
    ['sp.zone1', 'load shedding disabled', true],
    ['ahu1.run', 'load shedding disabled', true],
  ]);
});

test('no contracted peak in effect: restored once the window is over, with no collection', async (t) => {
  const r = await rig(t);
  await settings(r, { minOffSec: 60, maxShedSec: 3600, points: [POINTS[0]] });
  shedNow(r, r.clock.now, [POINTS[0]]);
  await new Promise((resolve) => setTimeout(resolve, 6_000));
  assert.equal(value(r, 'ahu1.run'), 0, 'still shed inside its window');
  r.clock.now += INTERVAL_MS;
  await eventually(async () => (value(r, 'ahu1.run') === 1 ? true : undefined), 'restored', 15_000);
  assert.deepEqual(await restoresOf(r), [['ahu1.run', 'no contracted peak in effect', true]]);
});

test('a restore the gateway refuses: one critical alert, an error line, named in /api/health, tried again until it goes through', async (t) => {
  const r = await rig(t);
  await settings(r, { minOffSec: 0, maxShedSec: 60, points: [POINTS[0]] });
  shedNow(r, r.clock.now, [POINTS[0]]);
  r.gateway.writeStatus = 503;
  r.clock.now += 61_000;
  // Tried again by the timer (after 5 s, then 10 s: src/analysis/restoreBackoff.ts): two refused writes are a retry.
  await eventually(async () => ((r.gateway.counts.get('/codes/set') ?? 0) >= 2 ? true : undefined), 'two restore attempts', 25_000);
  const health = await r.get('/api/health');
  assert.deepEqual(health.loadShedding, { shed: ['ahu1.run'], restoreFailing: ['ahu1.run'] });
  const raised = (await r.get('/api/alerts?pageSize=50')).items.filter((a: any) => a.source === RESTORE_FAILED_CODE);
  assert.equal(raised.length, 1, `one alert however many attempts: ${JSON.stringify(raised)}`);
  assert.equal(raised[0].level, 'critical');
  assert.equal(raised[0].clearedAt, null);
  const errors = r.server.logs.map((line) => JSON.parse(line)).filter((line) => line.level === 'error' && line.code === 'ahu1.run');
  assert.ok(errors.length >= 2, 'each failed attempt logged at error');
  assert.equal(value(r, 'ahu1.run'), 0);

  r.gateway.writeStatus = null;
  // The next try comes 10 s after the second (and the guard's 5-s run): within 30 s.
  await eventually(async () => (value(r, 'ahu1.run') === 1 ? true : undefined), 'restored once the gateway takes writes', 30_000);
  const after = (await r.get('/api/alerts?pageSize=50')).items.filter((a: any) => a.source === RESTORE_FAILED_CODE);
  assert.equal(after.length, 1);
  assert.notEqual(after[0].clearedAt, null, 'the alert returned to normal');
  assert.deepEqual((await r.get('/api/health')).loadShedding, { shed: [], restoreFailing: [] });
});

test('a graceful stop restores every shed point; one the gateway refuses is a critical alert and an error line, and the stop still ends', async (t) => {
  const r = await misbehavingRig();
  let closed = false;
  t.after(async () => {
    if (!closed) await r.close();
  });
  for (const point of POINTS) r.gateway.set(point.code, { value: point.restoreValue });
  await settings(r, { minOffSec: 600, maxShedSec: 3600 });
  shedNow(r);
  await r.server.service.close();
  assert.equal(value(r, 'ahu1.run'), 1, 'restored at stop, before the gateway client closed');
  assert.equal(value(r, 'sp.zone1'), 21.5);
  const reasons = r.server.logs
    .map((line) => JSON.parse(line))
    .filter((line) => line.msg === 'load restored')
    .map((line) => [line.code, line.reason]);
  assert.deepEqual(reasons, [
    ['sp.zone1', 'the service is stopping'],
    ['ahu1.run', 'the service is stopping'],
  ]);
  closed = true;
  await r.close();

  const refused = await misbehavingRig();
  t.after(() => refused.close());
  refused.gateway.set('ahu1.run', { value: 1 });
  await settings(refused, { minOffSec: 600, maxShedSec: 3600, points: [POINTS[0]] });
  shedNow(refused, refused.clock.now, [POINTS[0]]);
  refused.gateway.writeStatus = 503;
  const started = performance.now();
  // The alert is read through the stop's own log lines (the database closes with the service).
  await refused.server.service.close();
  const lines = refused.server.logs.map((line) => JSON.parse(line));
  const error = lines.find((line) => line.level === 'error' && line.msg === 'load shedding write not confirmed by the gateway');
  assert.ok(error, 'the refused restore at stop is an error line');
  assert.equal(error.action, 'restore');
  assert.ok(performance.now() - started < 9_000, 'the stop does not wait for the gateway beyond its bound');
  assert.equal(value(refused, 'ahu1.run'), 0);
  await refused.gateway.close();
});

test('the wall clock stepping back 3 h while a point is shed: restored after maxShedSec on the monotonic clock, its times clamped and logged', async (t) => {
  const r = await rig(t);
  // A controller of the test's own on a monotonic clock the test moves.
  const { shedder, mono } = monotonicShedder(t, r);
  await settings(r, { minOffSec: 0, maxShedSec: 60, points: [POINTS[0]] });
  shedNow(r, r.clock.now, [POINTS[0]]);
  assert.deepEqual(await shedder.enforce(r.clock.now), [], 'just shed: nothing due');
  // The box's clock steps back 3 h; 61 s pass on the monotonic clock.
  r.clock.now -= 3 * 60 * MIN;
  mono.now += 61_000;
  const actions = await shedder.enforce(r.clock.now);
  assert.deepEqual(actions, [{ code: 'ahu1.run', action: 'restore', confirmed: true, reason: 'shed for the maximum of 60 s' }]);
  assert.equal(value(r, 'ahu1.run'), 1);
  const clamped = r.server.logs
    .map((line) => JSON.parse(line))
    .find((line) => line.msg === 'the clock stepped back: load-shedding times ahead of now clamped to now');
  assert.ok(clamped, 'the step is logged');
  assert.equal(clamped.code, 'ahu1.run');
  // Its rest after the restore is on the stepped clock, not three hours ahead of it.
  const state = await r.get('/api/analysis/load-shedding');
  assert.equal(state.points[0].notBefore, new Date(r.clock.now).toISOString());
});
