// A restore the gateway does not confirm is tried again until it goes through, and its alert is cleared then (issue 56:
// the soak's week ended with two points shed and `energy.load_shedding.restore_failed` open after the simulator answered
// 408). Tries after a failure wait a doubling backoff on the monotonic clock (5 s, 10 s, 20 s … at most a minute), not
// every guard run; and a point the stop could not restore (reportStillShed) has its alert cleared by the restore at the
// next start. Over real HTTP against the misbehaving test gateway (a bare 408 with `Connection: close`, as a Node
// server's own time-out answers), with a controller of the test's own on a monotonic clock the test moves.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RESTORE_FAILED_CODE } from '../../src/analysis/loadShedding.ts';
import { INTERVAL_MS } from '../../src/platform/time/calendar.ts';
import { misbehavingRig, type MisbehavingRig, monotonicShedder } from '../helpers/rig.ts';

const POINT = { code: 'ahu1.run', priority: 1, shedValue: 0, restoreValue: 1 };

/**
 * The service on the misbehaving gateway with the point shed, and a LoadShedder of the test's own on `mono`. The
 * service's own guard stays out of it: its minimum off time (600 s) is not reached on its real clock within the test.
 */
async function rig(t: { after: (fn: () => Promise<void>) => void }) {
  const r = await misbehavingRig();
  t.after(() => r.close());
  r.gateway.set(POINT.code, { value: POINT.shedValue });
  const put = await r.server.request('PUT', '/api/analysis/load-shedding', {
    token: r.admin.accessToken,
    body: { enabled: true, minOffSec: 600, maxShedSec: 3600, points: [POINT] },
  });
  assert.equal(put.status, 200, put.text);
  const { deps } = r.server.service;
  deps.db.sqlite
    .prepare('UPDATE load_shed_points SET shed_at = ?, shed_window = ? WHERE code = ?')
    .run(r.clock.now, Math.floor(r.clock.now / INTERVAL_MS) * INTERVAL_MS, POINT.code);
  const { shedder, mono } = monotonicShedder(t, r);
  return { r, shedder, mono };
}

const writes = (r: MisbehavingRig) => r.gateway.counts.get('/codes/set') ?? 0;
const restoreAlerts = async (r: MisbehavingRig) => (await r.get('/api/alerts?pageSize=50')).items.filter((a: any) => a.source === RESTORE_FAILED_CODE);

test('a restore answered 408: tried again after 5 s, 10 s, 20 s (not at every guard run) until it goes through; its one alert cleared then', async (t) => {
  const { r, shedder, mono } = await rig(t);
  r.gateway.writeStatus = 408;
  r.gateway.writeBare = true;
  assert.deepEqual(await shedder.enforce(r.clock.now), [], 'just shed: nothing due');
  // Past the maximum shed duration on the monotonic clock: due.
  mono.now += 3601_000;
  const first = await shedder.enforce(r.clock.now);
  assert.deepEqual(first, [{ code: POINT.code, action: 'restore', confirmed: false, reason: 'shed for the maximum of 3600 s' }]);
  assert.equal(writes(r), 1);
  // The guard runs every 5 s; each run inside the wait writes nothing. Tries at +5 s, then +10 s, then +20 s.
  const triedAt: number[] = [];
  for (let s = 1; s <= 40; s += 1) {
    mono.now += 1000;
    const before = writes(r);
    await shedder.enforce(r.clock.now);
    if (writes(r) > before) triedAt.push(s);
  }
  assert.deepEqual(triedAt, [5, 15, 35], 'tries after 5 s, 10 s and 20 s');
  const raised = await restoreAlerts(r);
  assert.equal(raised.length, 1, 'one alert however many tries');
  assert.equal(raised[0].clearedAt, null);
  assert.deepEqual((await r.get('/api/health')).loadShedding, { shed: [POINT.code], restoreFailing: [POINT.code] });
  const errors = r.server.logs.map((line) => JSON.parse(line)).filter((line) => line.msg === 'load shedding write not confirmed by the gateway');
  assert.deepEqual(
    errors.map((line) => line.retryInMs),
    [5000, 10000, 20000, 40000],
    'each failed try logged with its wait',
  );

  // The gateway takes writes again: the next try, 40 s after the last (at 35 s), goes through.
  r.gateway.writeStatus = null;
  mono.now += 34_000;
  assert.deepEqual(await shedder.enforce(r.clock.now), [], 'still waiting');
  mono.now += 1000;
  const done = await shedder.enforce(r.clock.now);
  assert.deepEqual(
    done.map((a) => a.confirmed),
    [true],
  );
  assert.equal(r.gateway.points.get(POINT.code)?.value, POINT.restoreValue);
  const after = await restoreAlerts(r);
  assert.equal(after.length, 1);
  assert.notEqual(after[0].clearedAt, null, 'the alert returned to normal');
  assert.deepEqual((await r.get('/api/health')).loadShedding, { shed: [], restoreFailing: [] });
});

test('a point the stop could not restore: its alert is cleared by the restore at the next start', async (t) => {
  const { r, shedder, mono } = await rig(t);
  // The stop's bounded wait ran out (a gateway that did not answer in time): the service raises the alert and goes.
  assert.deepEqual(shedder.reportStillShed(r.clock.now, 'no restore confirmed within 8 s of the stop'), [POINT.code]);
  assert.equal((await restoreAlerts(r))[0]?.clearedAt, null, 'raised');
  // The next start: the point left shed is restored once its minimum off time has passed.
  assert.deepEqual(shedder.adoptLeftovers(r.clock.now), [POINT.code]);
  mono.now += 601_000;
  r.clock.now += 601_000;
  const actions = await shedder.enforce(r.clock.now);
  assert.deepEqual(actions, [{ code: POINT.code, action: 'restore', confirmed: true, reason: 'left shed by an earlier run of the service' }]);
  const alerts = await restoreAlerts(r);
  assert.equal(alerts.length, 1);
  assert.notEqual(alerts[0].clearedAt, null, 'the alert raised at the stop is cleared by the restore');
});
