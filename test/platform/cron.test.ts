// The one cron implementation (src/platform/jobs/cron.ts): node-cron reads the expression, nextCronRun times it in a zone with
// classic cron's daylight-saving rules, CronTimer runs a task at those times (the backup schedule, on the box's clock).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { boxTimezone, CronTimer, nextCronRun } from '../../src/platform/jobs/cron.ts';
import { eventually } from '../helpers/server.ts';

test('the backup timer fires on change days as report plans do: a skipped 02:30 runs at the change, a repeated one once', () => {
  const at = (iso: string, expression: string) => {
    const timer = new CronTimer(
      expression,
      'Europe/Berlin',
      () => {},
      () => Date.parse(iso),
    );
    timer.start();
    try {
      return timer.nextRun()?.toISOString();
    } finally {
      timer.stop();
    }
  };
  assert.equal(at('2026-03-28T23:00:00Z', '30 2 * * *'), '2026-03-29T01:00:00.000Z', 'spring: 03:00 CEST, the moment of the change');
  assert.equal(at('2026-10-24T22:00:00Z', '30 2 * * *'), '2026-10-25T00:30:00.000Z', 'autumn: the first 02:30 (CEST)');
  assert.equal(at('2026-10-25T00:30:00Z', '30 2 * * *'), '2026-10-26T01:30:00.000Z', 'not the second 02:30 (CET): the next day');
  assert.equal(
    at('2026-10-24T22:00:00Z', '30 2 * * *'),
    new Date(nextCronRun('30 2 * * *', 'Europe/Berlin', Date.parse('2026-10-24T22:00:00Z'))!).toISOString(),
  );
});

test('a timer runs its task at each fire time and stops', async (t) => {
  const fired: Date[] = [];
  const timer = new CronTimer('* * * * * *', boxTimezone(), (due) => fired.push(due));
  t.after(() => timer.stop());
  timer.start();
  await eventually(async () => (fired.length >= 2 ? true : undefined), 'two runs of an every-second cron', 20_000);
  assert.ok(
    fired.every((due) => due.getMilliseconds() === 0),
    'each run is for a whole second',
  );
  assert.ok(fired[1].getTime() > fired[0].getTime(), 'each fire time once');
  timer.stop();
  const count = fired.length;
  await new Promise((resolve) => setTimeout(resolve, 1500));
  assert.equal(fired.length, count, 'nothing after stop');
  assert.equal(timer.nextRun(), null);
});

test('an expression node-cron refuses does not start a timer', () => {
  assert.throws(() => new CronTimer('61 * * * *', 'UTC', () => {}).start(), /invalid cron expression "61 \* \* \* \*"/);
});

test('the box zone is an IANA name Intl accepts', () => {
  assert.doesNotThrow(() => new Intl.DateTimeFormat('en', { timeZone: boxTimezone() }));
});
