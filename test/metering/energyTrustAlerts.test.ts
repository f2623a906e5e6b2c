// Data problems reach people through the alert pipeline and clear themselves, against a misbehaving gateway over real
// HTTP and a real SMTP server: collection failing for three intervals, a meter whose readings are refused, a meter silent.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startMailCatcher, type MailCatcher } from '../helpers/smtp.ts';
import { eventually } from '../helpers/server.ts';
import { MIN, misbehavingRig, type MisbehavingRig } from '../helpers/rig.ts';
import { CLEAR_AFTER_CHECKS, CLEAR_AFTER_MS } from '../../src/metering/dataAlertDamping.ts';

describe('energy data alerts', () => {
  let r: MisbehavingRig;
  let mail: MailCatcher;
  before(async () => {
    mail = await startMailCatcher();
    r = await misbehavingRig({ env: { EMS_SMTP_URL: mail.url } });
    const rule = await r.server.request('POST', '/api/notification-rules', {
      token: r.admin.accessToken,
      body: { name: 'Energy data', levels: ['warning', 'critical'], recipients: ['energy@example.test'] },
    });
    assert.equal(rule.status, 201, rule.text);
    await r.meter({ name: 'Main', code: 'meter.main.kwh', kind: 'energy', site: true });
    r.gateway.set('meter.main.kwh', { value: 100 });
    await r.collector.collect();
  });
  after(async () => {
    await r.close();
    await mail.close();
  });

  const alerts = async (source: string) => (await r.get(`/api/alerts?pageSize=50`)).items.filter((alert: any) => alert.source === source);
  const tick = async () => {
    r.clock.now += MIN;
    await r.collector.collect();
  };
  /** The first good collection does not clear an alert; the hold-off (checks and minutes) does. */
  const holdOff = async () => {
    const ticks = Math.max(CLEAR_AFTER_CHECKS, CLEAR_AFTER_MS / MIN + 1);
    for (let i = 1; i < ticks; i += 1) await tick();
  };

  test('collection failing: one critical alert after three failed intervals, mailed; cleared when it works again', async () => {
    r.gateway.readStatus = 503;
    await tick();
    await tick();
    assert.equal((await alerts('energy.collection')).length, 0, 'two failures are not news yet');
    await tick();
    await tick();
    const [alert, ...more] = await alerts('energy.collection');
    assert.equal(more.length, 0, 'one alert per episode');
    assert.equal(alert.level, 'critical');
    assert.match(alert.title, /Energy collection failing since/);
    assert.equal(alert.clearedAt, null);
    await eventually(
      async () => (mail.messages.some((m) => m.to.includes('energy@example.test') && /Energy collection failing/.test(m.raw)) ? true : undefined),
      'the alert mail',
    );

    r.gateway.readStatus = null;
    r.gateway.set('meter.main.kwh', { value: 101 });
    await tick();
    assert.equal((await alerts('energy.collection'))[0].clearedAt, null, 'one good collection is not the end of it');
    await holdOff();
    const [cleared] = await alerts('energy.collection');
    assert.ok(cleared.clearedAt, 'cleared by itself after the hold-off');
  });

  test('readings refused: a warning naming the meter and the reason, cleared after the hold-off of good readings', async () => {
    const meter = await r.meter({ name: 'Clockless', code: 'meter.clockless.kwh', kind: 'energy' });
    r.gateway.set('meter.clockless.kwh', { value: 5 });
    await tick();
    r.gateway.set('meter.clockless.kwh', { value: 6, ts: '2200-01-01T00:00:00.000Z' });
    await tick();
    const [alert] = await alerts(`energy.meter.${meter.id}.refused`);
    assert.equal(alert.level, 'warning');
    assert.match(alert.title, /Meter "Clockless": readings refused/);
    assert.match(alert.message, /a time in the future/);
    r.gateway.set('meter.clockless.kwh', { value: 6 });
    await tick();
    await holdOff();
    assert.ok((await alerts(`energy.meter.${meter.id}.refused`))[0].clearedAt);
  });

  test('many meters silent at once are one alert, not one per meter; cleared when they read again (issue 56)', async () => {
    // An outage the collection alert did not cover raised ~490 "meter silent" alerts within a second at 500 meters.
    const meters = [];
    for (const name of ['Together A', 'Together B', 'Together C']) {
      const code = `meter.together.${name.slice(-1).toLowerCase()}.kwh`;
      meters.push(await r.meter({ name, code, kind: 'energy' }));
      r.gateway.set(code, { value: 10 });
    }
    await tick();
    // Their gateway answers the same reading from now on: nothing more counts.
    for (const meter of meters) r.gateway.set(meter.code!, { value: 10, ts: r.clock.now });
    for (let i = 0; i < 7; i += 1) await tick();
    const perMeter = (await Promise.all(meters.map((meter) => alerts(`energy.meter.${meter.id}.silent`)))).flat();
    assert.deepEqual(
      perMeter.map((alert: any) => alert.title),
      [],
      'no alert per meter',
    );
    const [together, ...more] = await alerts('energy.meters.silent');
    assert.equal(more.length, 0, 'one alert');
    assert.match(together.title, /^3 of \d+ meters silent since /);
    assert.match(together.message, /Together A, Together B, Together C/);
    for (const meter of meters) r.gateway.set(meter.code!, { value: 11 });
    await tick();
    await holdOff();
    assert.ok((await alerts('energy.meters.silent'))[0].clearedAt, 'cleared once they read again');
  });

  test('a meter silent for five intervals: a warning, cleared once it has read again for the hold-off', async () => {
    const meter = await r.meter({ name: 'Quiet', code: 'meter.quiet.kwh', kind: 'energy' });
    r.gateway.set('meter.quiet.kwh', { value: 7, ts: r.clock.now });
    await tick();
    for (let i = 0; i < 4; i += 1) await tick();
    assert.equal((await alerts(`energy.meter.${meter.id}.silent`)).length, 0, 'four intervals are not yet silence');
    await tick();
    await tick();
    const [alert] = await alerts(`energy.meter.${meter.id}.silent`);
    assert.match(alert.title, /Meter "Quiet" silent since/);
    r.gateway.set('meter.quiet.kwh', { value: 7.5 });
    await tick();
    await holdOff();
    assert.ok((await alerts(`energy.meter.${meter.id}.silent`))[0].clearedAt);
  });
});
