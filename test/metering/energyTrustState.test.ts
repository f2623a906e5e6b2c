// Honest state against a misbehaving gateway over real HTTP: a gateway answering 503 to every read is "degraded" in
// /api/health, the public dashboard and emsctl status, not "reachable"; each meter says whether it is ok, stale,
// failing or refusing readings.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { addDays } from '../../src/platform/time/calendar.ts';
import { runCli } from '../helpers/cli.ts';
import { eventually } from '../helpers/server.ts';
import { MIN, misbehavingRig, type MisbehavingRig } from '../helpers/rig.ts';

describe('a gateway that answers but every read fails', () => {
  let r: MisbehavingRig;
  let meterId: number;
  before(async () => {
    r = await misbehavingRig();
    meterId = (await r.meter({ name: 'Main', code: 'meter.main.kwh', kind: 'energy', site: true })).id;
    r.gateway.set('meter.main.kwh', { value: 100 });
    await r.collector.collect();
  });
  after(() => r.close());

  const health = async () => (await r.server.request('GET', '/api/health')).body;
  const status = async () => runCli(['--data-dir', r.server.dataDir, 'status'], { env: { EMS_PORT: new URL(r.server.url).port, EMS_HOST: '127.0.0.1' } });

  test('while collections work: reachable, collector ok, the meter ok', async () => {
    const body = await health();
    assert.equal(body.iot.gateway, 'reachable');
    assert.equal(body.collector.state, 'ok');
    assert.equal(body.collector.metersNotOk, 0);
    assert.equal((await r.meterState(meterId)).state, 'ok');
  });

  test('503 to every read: degraded in health, the dashboard and emsctl status; the meter failing; then well again', async () => {
    r.gateway.readStatus = 503;
    for (let i = 0; i < 3; i += 1) {
      r.clock.now += MIN;
      await r.collector.collect();
    }
    const body = await health();
    assert.equal(body.iot.gateway, 'degraded');
    assert.equal(body.collector.state, 'failing');
    assert.ok(body.collector.failingSince);
    assert.equal(body.collector.metersNotOk, 1);
    const collector = await r.get('/api/energy/collector');
    assert.equal(collector.state, 'failing');
    assert.equal(collector.consecutiveFailures, 3);
    assert.match(collector.lastError, /503/);
    assert.equal(collector.lagSec, 180);
    assert.equal(collector.meterStates[0].state, 'failing');
    // The public payload is recomputed at most about once a second.
    await eventually(
      async () => ((await r.server.request('GET', '/api/dashboard')).body.gateway.state === 'degraded' ? true : undefined),
      'the dashboard saying degraded',
    );
    const dashboard = (await r.server.request('GET', '/api/dashboard')).body;
    assert.equal(dashboard.gateway.dataAt, collector.lastOkAt);

    const text = await status();
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /gateway\s+DEGRADED \(answers, but the meter collection fails\)/);
    assert.match(text.stdout, /collector\s+1 meters, .*FAILING since/);

    r.gateway.readStatus = null;
    r.clock.now += MIN;
    r.gateway.set('meter.main.kwh', { value: 101 });
    await r.collector.collect();
    const well = await health();
    assert.equal(well.iot.gateway, 'reachable');
    assert.equal(well.collector.state, 'ok');
    assert.equal((await r.meterState(meterId)).state, 'ok');
  });

  test('a meter whose reading never moves on goes stale after two intervals; bad quality is failing', async () => {
    const frozen = (await r.meter({ name: 'Frozen', code: 'meter.frozen.kwh', kind: 'energy' })).id;
    const at = r.clock.now;
    r.gateway.set('meter.frozen.kwh', { value: 5, ts: at });
    await r.collector.collect();
    assert.equal((await r.meterState(frozen)).state, 'ok');
    r.clock.now += 3 * MIN;
    await r.collector.collect();
    const stale = await r.meterState(frozen);
    assert.equal(stale.state, 'stale');
    assert.equal(stale.lagSec, 180);
    r.gateway.set('meter.frozen.kwh', { value: null, quality: 'bad' });
    r.clock.now += MIN;
    await r.collector.collect();
    assert.equal((await r.meterState(frozen)).state, 'failing');
  });

  test('a day row that holds only flags (every reading bad quality) is no data: null in the day series and the wallboard, not 0', async () => {
    const only = (await r.meter({ name: 'Only bad', code: 'meter.onlybad.kwh', kind: 'energy', area: 'Quality' })).id;
    // Stamped with the real time: the wallboard's last day is the real today.
    const at = Date.now();
    r.gateway.set('meter.onlybad.kwh', { value: null, quality: 'bad', ts: at });
    r.clock.now = Math.max(r.clock.now, at) + MIN;
    await r.collector.collect();
    const [row] = r.dayRows(only);
    assert.ok(row && row.kwh.every(Number.isNaN) && row.flags.some((flag) => flag !== 0), 'a row with flags and no energy');
    const day = row.day;
    const series = await r.get(`/api/energy/series?meterId=${only}&from=${day}&to=${addDays(day, 1)}&resolution=day`);
    assert.equal(series.points[0].kwh, null);
    const wallboard = await r.server.request('GET', '/api/wallboard?area=Quality');
    assert.equal(wallboard.status, 200, wallboard.text);
    assert.deepEqual(
      wallboard.body.weeklyEnergy.days.find((d: { day: string }) => d.day === day),
      { day, kwh: null },
    );
  });
});
