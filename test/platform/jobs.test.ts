// The job registry (src/platform/jobs/jobs.ts): every periodic job by name, with its runs, failures and times.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { JobRegistry, RunRecord } from '../../src/platform/jobs/jobs.ts';
import { Repeating } from '../../src/platform/jobs/lifecycle.ts';

/** Polls until the condition holds (a loaded box may take long to run a timer; the test waits, it does not time). */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}

test('a Repeating reports its runs, how long the last took and when it runs next; stopped, it has no next run', async () => {
  let calls = 0;
  let release: () => void = () => {};
  const job = new Repeating(
    () => {
      calls += 1;
      return new Promise<void>((resolve) => {
        release = resolve;
      });
    },
    60_000,
    'test job',
  );
  assert.deepEqual([job.name, job.schedule], ['test job', 'every 1 min']);
  assert.equal(job.state().runs, 0);
  job.start();
  await until(() => job.state().running);
  assert.equal(job.state().running, true);
  assert.equal(job.state().nextAt, null, 'no next run while one is in flight');
  await new Promise((resolve) => setTimeout(resolve, 15));
  release();
  await until(() => !job.state().running);
  const state = job.state();
  assert.equal(calls, 1);
  assert.equal(state.runs, 1);
  assert.equal(state.running, false);
  assert.ok(state.lastDurationMs !== null && state.lastDurationMs >= 10, `lasted ${state.lastDurationMs} ms`);
  assert.ok(state.nextAt !== null && state.nextAt > Date.now() + 50_000 && state.nextAt <= Date.now() + 60_000, 'next run an interval after the last ended');
  await job.stop();
  assert.equal(job.state().nextAt, null);
});

test('a run that throws counts as a failure and the error reaches the caller', async () => {
  const record = new RunRecord();
  await assert.rejects(
    record.track(async () => {
      throw new Error('boom');
    }),
    /boom/,
  );
  await record.track(async () => 'fine');
  assert.deepEqual([record.runs, record.failures, record.running], [2, 1, false]);
});

test('the registry lists jobs with their owner, and refuses a second job of the same name', () => {
  const jobs = new JobRegistry();
  jobs.add('metering', new Repeating(async () => {}, 15_000, 'collect'));
  jobs.add('platform', new Repeating(async () => {}, 1_500, 'check'));
  assert.deepEqual(
    jobs.list().map(({ name, owner, schedule }) => ({ name, owner, schedule })),
    [
      { name: 'collect', owner: 'metering', schedule: 'every 15 s' },
      { name: 'check', owner: 'platform', schedule: 'every 1500 ms' },
    ],
  );
  assert.throws(() => jobs.add('other', new Repeating(async () => {}, 1_000, 'collect')), /"collect" is registered twice/);
});

test('a Repeating that says when it is due wakes then (capped at its interval): the report plans wait for their soonest time', async () => {
  let runs = 0;
  let due = 30;
  const job = new Repeating(
    async () => {
      runs += 1;
    },
    60_000,
    'wakes when due',
    { delayMs: () => due, schedule: 'when due, every 1 min at most', unref: true },
  );
  assert.equal(job.schedule, 'when due, every 1 min at most');
  job.start();
  // Each run asks for the next one 30 ms later, not a minute later: a few runs pass while the test waits.
  await until(() => runs >= 3);
  due = Infinity;
  await until(() => job.state().nextAt !== null && job.state().nextAt! > Date.now() + 50_000);
  const settled = runs;
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal(runs, settled, 'a due time beyond the interval waits the interval');
  await job.stop();
});
