// AlertService.openAlarmKeyOf: the open episode of exactly one code (energy's demand watch finds its episode by it
// after a restart), not one of a longer code that starts the same, not a cleared one; the newest when several are open.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AlertService } from '../../src/facility/index.ts';
import { AuditLog } from '../../src/platform/db/auditTrail.ts';
import { testDatabase } from '../helpers/database.ts';

test('the newest open alert of exactly one code, by its key', () => {
  const db = testDatabase();
  const alerts = new AlertService(db, new AuditLog(db));
  const raise = (key: string, code: string, clearedAt: string | null = null) =>
    alerts.fromGatewayAlarm({ key, code, level: 'warning', message: code, raisedAt: key.slice(code.length + 1), clearedAt });
  assert.equal(alerts.openAlarmKeyOf('site.demand'), undefined, 'none raised');
  raise('site.demand.warning@2026-11-26T10:00:00.000Z', 'site.demand.warning');
  assert.equal(alerts.openAlarmKeyOf('site.demand'), undefined, 'a longer code that starts the same is not the episode');
  raise('site.demand@2026-11-26T09:00:00.000Z', 'site.demand', '2026-11-26T09:30:00.000Z');
  assert.equal(alerts.openAlarmKeyOf('site.demand'), undefined, 'a cleared episode is not open');
  raise('site.demand@2026-11-26T11:00:00.000Z', 'site.demand');
  assert.equal(alerts.openAlarmKeyOf('site.demand'), 'site.demand@2026-11-26T11:00:00.000Z');
  // Two open at once (the watch never raises a second, but a row written otherwise): the newer one.
  alerts.create({ title: 'another episode', level: 'warning' }, null, { alarmKey: 'site.demand@2026-11-26T12:00:00.000Z' });
  assert.equal(alerts.openAlarmKeyOf('site.demand'), 'site.demand@2026-11-26T12:00:00.000Z', 'the newest open one');
  assert.equal(alerts.openAlarmKeyOf('site.demand.warning'), 'site.demand.warning@2026-11-26T10:00:00.000Z');
});
