// WAL checkpoints off the commit path (issue 29): the service's connection never checkpoints inside a COMMIT
// (wal_autocheckpoint 0); its job checkpoints from 1,000 frames on in a worker thread, and the WAL stays bounded.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { WAL_SIZE_LIMIT } from '../../src/platform/db/client.ts';
import { spawn } from 'node:child_process';
import { WalIndex, walCheckpointJob, WAL_CHECKPOINT_FRAMES } from '../../src/platform/db/walCheckpoint.ts';
import { eventually, startTestServer, type TestServer } from '../helpers/server.ts';

describe('WAL checkpoints', () => {
  let server: TestServer;
  let insert: (count: number) => void;
  let written = 0;
  let index: WalIndex;
  const walFrames = () => index.frames();
  const walBytes = () => fs.statSync(`${server.service.deps.db.path}-wal`).size;

  before(async () => {
    server = await startTestServer();
    const { sqlite } = server.service.deps.db;
    index = new WalIndex(server.service.deps.db.path);
    const statement = sqlite.prepare(
      `INSERT INTO alerts (title, message, level, source, status, occurred_at, created_at, updated_at) VALUES (?, ?, 'info', 'wal-test', 'resolved', ?, ?, ?)`,
    );
    // ~1 page per alert: a 3,000-character message.
    const message = 'x'.repeat(3000);
    insert = (count) =>
      sqlite.transaction(() => {
        const at = new Date().toISOString();
        for (let i = 0; i < count; i += 1) statement.run(`wal ${i}`, message, at, at, at);
        written += count;
      })();
  });
  after(async () => {
    await server.close();
    index.close();
  });

  test('no checkpoint inside a commit: the WAL grows past 1,000 frames until the job runs', async () => {
    const { sqlite } = server.service.deps.db;
    assert.equal(sqlite.pragma('wal_autocheckpoint', { simple: true }), 0);
    assert.equal(sqlite.pragma('journal_size_limit', { simple: true }), WAL_SIZE_LIMIT);
    const frames = walFrames();
    for (let round = 0; round < 6; round += 1) insert(300);
    // SQLite's automatic checkpoint would have reset the WAL at the commit crossing 1,000 frames.
    assert.ok(walFrames() >= frames + 1800, `${walFrames()} frames after 1,800 pages written`);
    // The service's own job (every 10 s) checkpoints them; the next write starts the WAL from its beginning again.
    await eventually(
      async () => {
        insert(1);
        return walFrames() < WAL_CHECKPOINT_FRAMES ? true : undefined;
      },
      'the checkpoint job',
      60_000,
    );
  });

  test('the WAL file stays bounded over 12,000 pages of writes, checkpointed as the job does', async () => {
    const errors: unknown[] = [];
    const job = walCheckpointJob(index, (error) => errors.push(error));
    let largest = 0;
    let checkpoints = 0;
    for (let round = 0; round < 40; round += 1) {
      insert(300);
      largest = Math.max(largest, walBytes());
      if (await job()) checkpoints += 1;
    }
    assert.deepEqual(errors, []);
    assert.ok(checkpoints >= 8, `${checkpoints} checkpoints`);
    // At most the threshold, the writes of one round and the limit the reset WAL is cut back to (4 KiB pages).
    const bound = WAL_SIZE_LIMIT + (WAL_CHECKPOINT_FRAMES + 2 * 300 + 100) * (4096 + 24);
    assert.ok(largest <= bound, `largest WAL ${(largest / 1048576).toFixed(1)} MiB, bound ${(bound / 1048576).toFixed(1)} MiB`);
    // Every row is there: the checkpoints copied, nothing was lost.
    assert.equal(server.service.deps.db.sqlite.prepare("SELECT count(*) FROM alerts WHERE source = 'wal-test'").pluck().get(), written);
  });

  /**
   * The shared lock SQLite's connection holds on the -shm's "dead man switch" byte (offset 128, sqlite3 os_unix.c) as
   * this process holds it in /proc/locks: closing any descriptor of the -shm in the process would drop it.
   */
  function holdsShmLock(): boolean {
    const shm = `${server.service.deps.db.path}-shm`;
    const inode = fs.statSync(shm).ino;
    // "1: POSIX  ADVISORY  READ 1234 fd:01:5678 128 128"
    return fs
      .readFileSync('/proc/locks', 'utf8')
      .split('\n')
      .some((line) => {
        const fields = line.trim().split(/\s+/);
        return fields[1] === 'POSIX' && fields[4] === String(process.pid) && fields[5]?.endsWith(`:${inode}`) && fields[6] === '128';
      });
  }

  test("the job keeps the connection's lock on the -shm: reading the WAL index never closes a descriptor of it", async () => {
    assert.ok(holdsShmLock(), 'the connection holds its lock on the -shm to begin with');
    // The service's own job has looked at the WAL by now (the first test waited for its checkpoint); the job here looks
    // again, many times.
    const job = walCheckpointJob(index, (error) => assert.fail(String(error)));
    for (let round = 0; round < 20; round += 1) await job();
    assert.ok(holdsShmLock(), 'the lock survives the job');
  });

  test('another process opening the database meanwhile (emsctl) leaves the running service alone', async () => {
    // Before the fix, that process found nobody holding the -shm, truncated it under this process's mapping, and this
    // process died of SIGBUS within seconds of writing (it was test/metering/energyTrustClock.test.ts's rare SIGBUS).
    const { sqlite, path } = server.service.deps.db;
    const opener = spawn(
      process.execPath,
      [
        '-e',
        `const Database = require('better-sqlite3'); const end = Date.now() + 2500; let n = 0;
         while (Date.now() < end) { const db = new Database(${JSON.stringify(path)}); db.prepare('SELECT max(id) FROM alerts').get(); db.close(); n += 1; }
         console.log(n);`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let opened = '';
    opener.stdout.on('data', (chunk: Buffer) => (opened += chunk));
    const exited = new Promise<number | null>((resolve) => opener.once('exit', resolve));
    // max(id), not count(*): a read of the last rowid, not a scan of the 12,000 pages the tests above wrote.
    const last = sqlite.prepare('SELECT max(id) FROM alerts').pluck();
    const until = Date.now() + 3000;
    let rounds = 0;
    // Synchronous on purpose: this process touches the mapped -shm without pause while the other one opens and closes.
    while (Date.now() < until) {
      const before = last.get() as number;
      insert(1);
      assert.equal(last.get(), before + 1);
      rounds += 1;
    }
    assert.equal(sqlite.prepare("SELECT count(*) FROM alerts WHERE source = 'wal-test'").pluck().get(), written);
    assert.equal(await exited, 0);
    // Only that both sides ran at once; how often depends on the box's load.
    assert.ok(Number(opened) >= 5, `the other process opened the database ${opened.trim()} times`);
    assert.ok(rounds >= 10, `${rounds} writes meanwhile`);
    assert.ok(holdsShmLock(), 'the lock is still held');
    assert.equal(sqlite.pragma('integrity_check', { simple: true }), 'ok');
  });
});
