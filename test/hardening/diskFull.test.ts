// A full disk (issue 56, item 2): the service's data dir on a small size-limited filesystem made for the test (tmpfs
// with size=, mounted here as root). Filled to the last byte by another writer (an import, logs), the service keeps
// answering reads, refuses writes with 507 naming the cause, keeps what the collector counts in memory and writes it when
// space comes back (nothing lost), and a backup skips with a reason instead of taking the last bytes. Nothing is corrupt
// afterwards (PRAGMA integrity_check).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { siteDay } from '../../src/platform/time/calendar.ts';
import { MIN, simulatorRig, type SimulatorRig } from '../helpers/rig.ts';
import { eventually, tempDir } from '../helpers/server.ts';
import { runTool } from '../helpers/tools.ts';
import { runCli } from '../helpers/cli.ts';

const HOUR = 60 * MIN;
const root = tempDir('ems-disk-full-');
const mountPoint = path.join(root, 'disk');
let mounted = false;
let why = '';
let r: SimulatorRig | undefined;

before(async () => {
  if (process.getuid?.() !== 0) {
    why = 'needs root to mount a size-limited tmpfs (run npm test as root, as CI does)';
    return;
  }
  fs.mkdirSync(mountPoint);
  try {
    await runTool('mount', ['-t', 'tmpfs', '-o', 'size=48m,mode=0700', 'tmpfs', mountPoint]);
    mounted = true;
  } catch (error) {
    why = `could not mount a tmpfs (${(error as Error).message.split('\n')[0]})`;
  }
});
after(async () => {
  await r?.close();
  if (mounted) await runTool('umount', [mountPoint]);
  fs.rmSync(root, { recursive: true, force: true });
});

/** Fills the filesystem of `dir` to its last byte with one file, as an import or a log would; answers the file. */
async function fillDisk(dir: string): Promise<string> {
  const file = path.join(dir, 'an-import-that-took-the-space.bin');
  const handle = await fs.promises.open(file, 'w');
  try {
    for (const size of [1024 * 1024, 64 * 1024, 4096, 512]) {
      const chunk = Buffer.alloc(size, 7);
      for (;;) {
        try {
          await handle.write(chunk);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === 'ENOSPC') break;
          throw error;
        }
      }
    }
  } finally {
    await handle.close();
  }
  return file;
}

test('a full data disk: reads answer, writes are 507, the collector holds its counts and writes them when space is back, backups skip, emsctl status names what takes the space, nothing corrupt', async (t) => {
  if (!mounted) {
    t.skip(`skipped: ${why}`);
    return;
  }
  const dataDir = path.join(mountPoint, 'data');
  // Yesterday 10:00 UTC (the default site zone): the collections below stay within one day.
  const hour = Math.floor(Date.now() / (24 * HOUR)) * 24 * HOUR - 14 * HOUR;
  r = await simulatorRig({ start: hour + 2 * MIN, collector: 'service', env: { EMS_DATA_DIR: dataDir } });
  const { db } = r.server.service.deps;
  const meterId = (await r.meter({ name: 'Main', code: 'meter.main.kwh', kind: 'energy', site: true })).id;
  const token = r.admin.accessToken;
  await r.run(hour + 20 * MIN);
  const writtenUpTo = () => db.sqlite.prepare('SELECT max(last_at) FROM meter_state').pluck().get() as number;
  const beforeFull = writtenUpTo();

  const filler = await fillDisk(dataDir);

  // Reads keep answering.
  assert.equal((await r.server.request('GET', '/api/meters', { token })).status, 200);
  assert.equal((await r.server.request('GET', '/api/alerts', { token })).status, 200);
  const health = await r.server.request('GET', '/api/health');
  assert.equal(health.body.database, 'full', JSON.stringify(health.body));
  // The critical alert of the full disk: in hand within its job's 10 s, shown on /api/health whether or not it could be written.
  const held = await eventually(
    async () => (await r!.server.request('GET', '/api/health')).body.storageAlert ?? undefined,
    'the disk-full alert on /api/health',
    30_000,
  );
  const fullSince = held.since;
  const storageAlerts = () =>
    db.sqlite.prepare("SELECT level, occurred_at AS occurredAt, cleared_at AS clearedAt FROM alerts WHERE alarm_key LIKE 'system.storage.full@%'").all() as {
      level: string;
      occurredAt: string;
      clearedAt: string | null;
    }[];
  const heldWhileFull = held.written === false;
  // Held in memory when it could not be written: then no row yet.
  if (heldWhileFull) assert.deepEqual(storageAlerts(), []);
  t.diagnostic(`the disk-full alert while full: ${heldWhileFull ? 'held in memory (no room to write it)' : 'written'}`);

  // A write is refused with 507 naming the cause (the catalogue's STORAGE_FULL), never a 500.
  let refused;
  for (let i = 0; i < 50 && !refused; i += 1) {
    const answer = await r.server.request('POST', '/api/alerts', { token, body: { title: `note ${i}`, level: 'info', message: 'x'.repeat(2000) } });
    if (answer.status !== 201) refused = answer;
  }
  assert.equal(refused?.status, 507, refused?.text);
  assert.equal(refused.body.code, 'STORAGE_FULL');
  assert.match(refused.body.error, /disk|space|full/i);

  // emsctl status says the disk is full and what takes the space, the filler first.
  const status = await runCli(['--data-dir', dataDir, 'status']);
  assert.match(status.stdout, /free disk\s+.*FULL/, status.stdout + status.stderr);
  assert.match(status.stdout, /taken by\s+an-import-that-took-the-space\.bin \d/, status.stdout);
  const json = JSON.parse((await runCli(['--data-dir', dataDir, '--json', 'status'])).stdout);
  assert.equal(json.disk.dataDirTakenBy[0].path, path.basename(filler));
  assert.ok(json.disk.dataDirTakenBy[0].bytes > 10 * 1024 * 1024, JSON.stringify(json.disk));

  // The collector goes on counting across the hourly write, which cannot be written: what it counted stays held.
  await r.run(hour + 61 * MIN);
  const state = r.collector.meterHealth().find((row) => row.meterId === meterId)!;
  assert.equal(Date.parse(state.lastReadingAt!), hour + 61 * MIN, 'the readings are counted and held');
  assert.equal(writtenUpTo(), beforeFull, 'nothing could be written');

  // A backup skips with a reason instead of taking the last bytes.
  const backup = await r.server.service.deps.backups.runNow('manual');
  assert.equal(backup.status, 'skipped', JSON.stringify(backup));
  assert.match((backup as { reason: string }).reason, /space/);

  // Space comes back: the next collection writes what was held, with every interval of the hour.
  await fs.promises.rm(filler);
  await r.run(hour + 62 * MIN);
  assert.ok(writtenUpTo() >= hour + 61 * MIN, `written once there was room: ${new Date(writtenUpTo()).toISOString()}`);
  const today = siteDay(r.server.service.deps.energy.timezone(), new Date(r.clock.now));
  const day = r.dayRows(meterId).find((row) => row.day === today)!;
  const dayStart = Date.parse(`${today}T00:00:00Z`);
  const first = Math.floor((hour - dayStart) / (15 * MIN));
  let stored = 0;
  for (let index = first; index < first + 4; index += 1) stored += day.kwh[index];
  const truth = r.counter('meter.main.kwh', hour + 60 * MIN) - r.counter('meter.main.kwh', hour);
  assert.ok(Math.abs(stored - truth) <= truth * 0.01 + 0.01, `stored ${stored} kWh for the hour, the counter moved ${truth}`);

  assert.equal((await r.server.request('POST', '/api/alerts', { token, body: { title: 'room again', level: 'info' } })).status, 201);
  assert.equal((await r.server.request('GET', '/api/health')).body.database, 'ok');
  // Space is back: the alert is written (raised at the time the disk filled) and cleared, one for the episode.
  await eventually(
    async () => ((await r!.server.request('GET', '/api/health')).body.storageAlert === null ? true : undefined),
    'the disk-full alert cleared',
    30_000,
  );
  const [alert, ...more] = storageAlerts();
  assert.deepEqual(more, []);
  assert.equal(alert.level, 'critical');
  assert.equal(alert.occurredAt, fullSince);
  assert.ok(alert.clearedAt && alert.clearedAt >= fullSince, JSON.stringify(alert));
  assert.deepEqual(db.sqlite.pragma('integrity_check'), [{ integrity_check: 'ok' }]);
});
