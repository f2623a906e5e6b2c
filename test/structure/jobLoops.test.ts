// Structure (issue 40): every loop of the service runs on the job runner (Repeating, src/platform/jobs/) and is
// registered by name, so /metrics (ems_job_*) lists what runs. A timer elsewhere is a one-shot wait with its reason in
// TIMERS (a per-request timeout, a retry's pause, an idle worker's retirement), never a loop of its own.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startTestServer } from '../helpers/server.ts';

const SRC = path.resolve(import.meta.dirname, '../../src');

/** Where timers may be armed freely: the job runner and the cron timer themselves. */
const RUNNER = 'platform/jobs/';
/** Not the service: the staff app runs in the browser. */
const NOT_SCANNED = ['web/app/'];

/** The timers left outside the runner, per file: how many, and why each is not a job. */
const TIMERS: Record<string, { count: number; reason: string }> = {
  'app/compose.ts': {
    count: 2,
    reason: 'shutdown only: idle keep-alive connections closed every 50 ms, the rest cut at the grace deadline; both cleared when the server has closed',
  },
  'platform/http/router.ts': { count: 1, reason: "a request body's read timeout, per request" },
  'platform/busyRetry.ts': { count: 1, reason: 'the pause before a busy write is tried again, per call' },
  'metering/store.ts': { count: 1, reason: 'the back-off before a busy write is tried again, per call' },
  'reporting/exports/service.ts': { count: 1, reason: "a yield to the event loop between an export's chunks, per export" },
  'reporting/reports/offThread.ts': { count: 1, reason: 'an idle report worker stopped after IDLE_MS, re-armed at each use' },
  'access/auth/passwords.ts': { count: 1, reason: 'an idle hashing worker retired after idleMs, re-armed at each use' },
  'gateway/client.ts': { count: 1, reason: 'close waits at most 1 s for the gateway requests in flight' },
  'gateway/simulator/server.ts': { count: 1, reason: "the simulator's `slow` gateway fault (the soak) holds each answer delayMs, once" },
  'facility/notifications/notifier.ts': { count: 1, reason: "a recipient's summary mail sent once its delay has passed, one per pending summary" },
  'analysis/loadSheddingGuard.ts': { count: 1, reason: 'stop waits at most STOP_WAIT_MS for the shed points to be restored' },
  'platform/logger.ts': { count: 1, reason: "stdout's pending log batch written at most BATCH_DELAY_MS after its first line, armed only while a batch waits" },
};

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** Calls of the global timers (not a socket's `.setTimeout(ms)`, not `timers/promises` imported under another name). */
export function timerCalls(text: string): number {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');
  return [...code.matchAll(/(?<![\w.$])(?:setInterval|setTimeout)\s*\(/g)].length;
}

test('no timer loop outside the job runner: each timer left is listed with its reason', () => {
  const found: Record<string, number> = {};
  for (const file of sourceFiles(SRC)) {
    const name = path.relative(SRC, file).split(path.sep).join('/');
    if (name.startsWith(RUNNER) || NOT_SCANNED.some((folder) => name.startsWith(folder))) continue;
    const count = timerCalls(fs.readFileSync(file, 'utf8'));
    if (count) found[name] = count;
  }
  const listed = Object.fromEntries(Object.entries(TIMERS).map(([file, { count }]) => [file, count]));
  assert.deepEqual(
    found,
    listed,
    'run a loop as a Repeating registered with the JobRegistry (src/platform/jobs/), or list a one-shot timer in TIMERS with its reason',
  );
});

test('the timer pattern finds global timers and leaves socket timeouts and comments alone', () => {
  assert.equal(timerCalls('setInterval(() => poll(), 10_000); const t = setTimeout(done, 5);'), 2);
  assert.equal(timerCalls('socket.setTimeout(5_000, () => socket.destroy()); // setTimeout(x)\nawait sleep(100);'), 0);
});

test('every loop of a running service is a named job: /metrics lists the backup re-read and the report wake-ups beside the rest', async () => {
  const token = 'metrics-token-for-the-job-list-0123456789';
  const server = await startTestServer({ EMS_METRICS_TOKEN: token });
  try {
    const names = server.service.deps.jobs.list().map((job) => job.name);
    for (const name of ['WAL checkpoint', 'backup', 'backup schedule reload', 'report plans', 'report plan wake-ups', 'fleet sync', 'verification code sweep'])
      assert.ok(names.includes(name), `${name} is registered (registered: ${names.join(', ')})`);
    const wakeUps = server.service.deps.jobs.list().find((job) => job.name === 'report plan wake-ups')!;
    assert.equal(wakeUps.schedule, "at the soonest plan's time, every 10 s at most");
    const text = await (await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${token}` } })).text();
    for (const name of ['backup schedule reload', 'report plan wake-ups'])
      assert.match(text, new RegExp(`ems_job_runs_total\\{job="${name}",owner="[a-z]+"\\} \\d+`), `${name} in /metrics`);
  } finally {
    await server.close();
  }
});
