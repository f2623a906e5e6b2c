// WAL checkpoints off the commit path (issue 29): the service's connection never checkpoints inside a COMMIT
// (wal_autocheckpoint 0); its job checkpoints from 1,000 frames on in a worker thread, and the WAL stays bounded.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { WAL_SIZE_LIMIT } from '../src/db/client.ts';
import { walCheckpointJob, walFrames, WAL_CHECKPOINT_FRAMES } from '../src/walCheckpoint.ts';
import { eventually, startTestServer, type TestServer } from './helpers/server.ts';

describe('WAL checkpoints', () => {
  let server: TestServer;
  let insert: (count: number) => void;
  let written = 0;
  const walBytes = () => fs.statSync(`${server.service.deps.db.path}-wal`).size;

  before(async () => {
    server = await startTestServer();
    const { sqlite } = server.service.deps.db;
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
  after(() => server.close());

  test('no checkpoint inside a commit: the WAL grows past 1,000 frames until the job runs', async () => {
    const { sqlite, path } = server.service.deps.db;
    assert.equal(sqlite.pragma('wal_autocheckpoint', { simple: true }), 0);
    assert.equal(sqlite.pragma('journal_size_limit', { simple: true }), WAL_SIZE_LIMIT);
    const frames = walFrames(path);
    for (let round = 0; round < 6; round += 1) insert(300);
    // SQLite's automatic checkpoint would have reset the WAL at the commit crossing 1,000 frames.
    assert.ok(walFrames(path) >= frames + 1800, `${walFrames(path)} frames after 1,800 pages written`);
    // The service's own job (every 10 s) checkpoints them; the next write starts the WAL from its beginning again.
    await eventually(
      async () => {
        insert(1);
        return walFrames(path) < WAL_CHECKPOINT_FRAMES ? true : undefined;
      },
      'the checkpoint job',
      60_000,
    );
  });

  test('the WAL file stays bounded over 12,000 pages of writes, checkpointed as the job does', async () => {
    const { path } = server.service.deps.db;
    const errors: unknown[] = [];
    const job = walCheckpointJob(path, (error) => errors.push(error));
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
});
