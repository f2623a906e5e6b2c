// "Readings refused" alerts do not flap (issue 39, item 7), against the misbehaving gateway over real HTTP with the
// service's own collector and data watch: a gateway stamping one reading in three in 2999, collected every 5 s for 11
// minutes, gave 44 alerts before; now one, open all along. A problem back soon after its clear reopens the same alert;
// an operator resolving each one still gets at most MAX_NEW_PER_METER_PER_HOUR new alerts per meter an hour.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CLEAR_AFTER_MS, MAX_NEW_PER_METER_PER_HOUR, REOPEN_WITHIN_MS } from '../../src/metering/dataAlertDamping.ts';
import { MIN, misbehavingRig } from '../helpers/rig.ts';

test('one reading in three refused: one alert, not one per good reading; reopened when back soon; capped per meter an hour', async (t) => {
  const r = await misbehavingRig();
  t.after(() => r.close());
  const meter = await r.meter({ name: 'Flaky', code: 'meter.flaky.kwh', kind: 'energy', site: true });
  const source = `energy.meter.${meter.id}.refused`;
  let value = 100;
  let n = 0;
  /** One collection `stepMs` later; every third reading stamped in 2999 when `flaky`. */
  const collect = async (stepMs: number, flaky: boolean) => {
    r.clock.now += stepMs;
    value += 0.01;
    n += 1;
    r.gateway.set('meter.flaky.kwh', flaky && n % 3 === 0 ? { value, ts: '2999-01-01T00:00:00.000Z' } : { value });
    await r.collector.collect();
  };
  const alerts = async () => (await r.get('/api/alerts?pageSize=100')).items.filter((alert: any) => alert.source === source);

  await collect(5_000, false);
  for (let i = 0; i < 132; i += 1) await collect(5_000, true);
  const flapping = await alerts();
  t.diagnostic(`11 min at 5 s, one reading in 3 refused: ${flapping.length} alert(s)`);
  assert.equal(flapping.length, 1, 'one alert for the whole stretch');
  assert.equal(flapping[0].clearedAt, null, 'still open: good readings in between are not the end of it');

  // Good for the hold-off: cleared. Back 10 minutes later: the same alert reopened, no new one.
  for (let elapsed = 0; elapsed <= CLEAR_AFTER_MS; elapsed += MIN) await collect(MIN, false);
  const [cleared] = await alerts();
  assert.notEqual(cleared.clearedAt, null, 'cleared after the hold-off');
  for (let i = 0; i < 10; i += 1) await collect(MIN, false);
  assert.ok(10 * MIN < REOPEN_WITHIN_MS);
  for (let i = 0; i < 3; i += 1) await collect(MIN, true);
  const reopened = await alerts();
  assert.equal(reopened.length, 1, 'the same alert');
  assert.equal(reopened[0].id, cleared.id);
  assert.equal(reopened[0].clearedAt, null, 'back in alarm');

  // An operator resolves each alert: the next episode is a new alert, up to the cap per meter an hour.
  const resolveAll = async () => {
    for (const alert of await alerts()) {
      if (alert.status === 'resolved') continue;
      const done = await r.server.request('POST', `/api/alerts/${alert.id}/resolve`, { token: r.admin.accessToken, body: {} });
      assert.equal(done.status, 200, done.text);
    }
  };
  for (let episode = 0; episode < MAX_NEW_PER_METER_PER_HOUR + 2; episode += 1) {
    await resolveAll();
    for (let elapsed = 0; elapsed <= CLEAR_AFTER_MS; elapsed += MIN) await collect(MIN, false);
    for (let i = 0; i < 3; i += 1) await collect(MIN, true);
  }
  const all = await alerts();
  const hourAgo = new Date(r.clock.now - 60 * MIN).toISOString();
  const inLastHour = all.filter((alert: any) => alert.occurredAt >= hourAgo).length;
  t.diagnostic(
    `${MAX_NEW_PER_METER_PER_HOUR + 2} resolved episodes in ${Math.round((r.clock.now - Date.parse(all.at(-1).occurredAt)) / MIN)} min: ${all.length} alerts in all, ${inLastHour} in the last hour`,
  );
  assert.ok(inLastHour <= MAX_NEW_PER_METER_PER_HOUR, `at most ${MAX_NEW_PER_METER_PER_HOUR} new alerts an hour (${inLastHour})`);
  const capped = r.server.logs.map((line) => JSON.parse(line)).filter((line) => /capped/.test(line.msg) && line.code === source);
  assert.equal(capped.length, 1, 'the cap is logged once an hour');
});
