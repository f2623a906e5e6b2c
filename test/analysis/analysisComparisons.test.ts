// Kept comparisons, over real HTTP against the gateway simulator: the same question is answered from memory until new
// data is written (by the collector on this connection, or by another connection), and a kept answer is never stale.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import path from 'node:path';
import { addDays } from '../../src/platform/time/calendar.ts';
import { DAY, simulatorRig, type SimulatorRig } from '../helpers/rig.ts';

const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

describe('kept comparisons', () => {
  let r: SimulatorRig;
  let meterId: number;
  let end: number;
  before(async () => {
    end = Date.now();
    r = await simulatorRig({ start: end - 4 * DAY });
    meterId = (await r.meter({ name: 'Main', code: 'meter.main.kwh', kind: 'energy', site: true })).id;
    await r.collector.collect();
  });
  after(() => r?.close());

  test('a question asked again is answered from memory; new data from the collector is seen at once', async () => {
    const stats = r.server.service.deps.analysis.comparisons.keptStats;
    // Collected up to yesterday noon: yesterday is half there.
    const yesterday = addDays(utcDay(end), -1);
    await r.run(Date.parse(`${yesterday}T12:00:00Z`), 7 * DAY);
    const question = `/api/analysis/compare?period=day&meterId=${meterId}&at=${yesterday}`;
    const first = await r.get(question);
    assert.equal(first.current.complete, true, 'a stored row exists for the half day');
    const hits = stats.hits;
    const again = await r.get(question);
    assert.deepEqual(again, first);
    assert.equal(stats.hits, hits + 1, 'the second answer came from memory');
    const halfDay = first.current.kwh;
    const expectedHalf = r.counter('meter.main.kwh', Date.parse(`${yesterday}T12:00:00Z`)) - r.counter('meter.main.kwh', Date.parse(`${yesterday}T00:00:00Z`));
    assert.ok(Math.abs(halfDay - expectedHalf) <= expectedHalf * 0.01, `half day ${halfDay} vs counters ${expectedHalf}`);

    // The collector writes the rest of the day: the kept answer is dropped, not served.
    await r.run(end, 7 * DAY);
    const whole = await r.get(question);
    const expectedWhole =
      r.counter('meter.main.kwh', Date.parse(`${utcDay(end)}T00:00:00Z`)) - r.counter('meter.main.kwh', Date.parse(`${yesterday}T00:00:00Z`));
    assert.ok(Math.abs(whole.current.kwh - expectedWhole) <= expectedWhole * 0.001, `whole day ${whole.current.kwh} vs counters ${expectedWhole}`);
    assert.ok(whole.current.kwh > halfDay * 1.2, `${whole.current.kwh} after the write vs ${halfDay} before`);
  });

  test("another connection's commit (emsctl, a restore) drops kept answers too", async () => {
    const day = addDays(utcDay(end), -2);
    const question = `/api/analysis/compare?period=day&meterId=${meterId}&at=${day}`;
    const before = await r.get(question);
    assert.equal(before.current.complete, true);
    assert.equal((await r.get(question)).current.kwh, before.current.kwh);
    const other = new Database(path.join(r.server.dataDir, 'ems.db'));
    try {
      other.pragma('busy_timeout = 10000');
      const removed = other.prepare('DELETE FROM meter_days WHERE meter_id = ? AND day = ?').run(meterId, day).changes;
      assert.equal(removed, 1);
    } finally {
      other.close();
    }
    const afterDelete = await r.get(question);
    assert.equal(afterDelete.current.complete, false);
    assert.deepEqual(afterDelete.current.missingDays, [day]);
    assert.equal(afterDelete.current.coverage, 0);
  });

  test('a kept answer is frozen: a caller cannot change what the next caller gets', async () => {
    const day = addDays(utcDay(end), -3);
    const comparisons = r.server.service.deps.analysis.comparisons;
    const answer = comparisons.compare('day', { meterId }, { at: day });
    assert.ok(Object.isFrozen(answer) && Object.isFrozen(answer.current));
    assert.throws(() => {
      (answer.current as { kwh: number }).kwh = -1;
    }, TypeError);
    assert.equal(comparisons.compare('day', { meterId }, { at: day }).current.kwh, answer.current.kwh);
  });

  test('50 questions in flight at once get the answers asked one at a time', async () => {
    const days = Array.from({ length: 3 }, (_, i) => addDays(utcDay(end), -1 - i));
    const questions = Array.from(
      { length: 50 },
      (_, i) => `/api/analysis/compare?period=${['day', 'week', 'month'][i % 3]}&meterId=${meterId}&at=${days[i % 3]}`,
    );
    const alone = new Map<string, unknown>();
    for (const question of new Set(questions)) alone.set(question, await r.get(question));
    const together = await Promise.all(questions.map((question) => r.get(question)));
    together.forEach((body, i) => {
      assert.deepEqual(body, alone.get(questions[i]));
    });
  });
});
