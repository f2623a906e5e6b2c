// The request turn (src/platform/requestTurn.ts, read by src/platform/db/kept.ts): the requests answered in one poll phase share one
// `PRAGMA data_version` read per connection; the turn ends at the check phase after it, so another connection's commit
// is seen from the next turn on, and a read taken outside a turn (a timer) never answers a request.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import Database from 'better-sqlite3';
import { dataVersionReads, Kept } from '../../src/platform/db/kept.ts';
import { requestTurn } from '../../src/platform/requestTurn.ts';
import { testDatabase } from '../helpers/database.ts';
import { startTestServer } from '../helpers/server.ts';
import { repoRoot } from '../helpers/serviceProcess.ts';

function tempDb() {
  const db = testDatabase();
  const other = new Database(db.path);
  after(() => other.close());
  const kept = new Kept<string>(db.sqlite, { name: 'test.turn', tables: [], max: 4 });
  let computed = 0;
  const read = () =>
    kept.get('site', () => {
      computed += 1;
      return db.sqlite.prepare('SELECT site_name FROM platform_config WHERE id = 1').pluck().get() as string;
    });
  const rename = (name: string) => other.prepare('UPDATE platform_config SET site_name = ? WHERE id = 1').run(name);
  return { read, rename, computed: () => computed };
}

/** A later synchronous run of the same phase: the per-run memo (a microtask) has ended, the turn has not. */
const laterRun = () => new Promise<void>((resolve) => process.nextTick(resolve));
/** The check phase after this poll phase: the turn has ended. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

test('inside a turn the runs share one read; a commit elsewhere shows from the next turn on', async () => {
  const { read, rename, computed } = tempDb();
  rename('before');
  await nextTurn();
  requestTurn();
  const reads = dataVersionReads.count;
  assert.equal(read(), 'before');
  await laterRun();
  assert.equal(read(), 'before');
  await laterRun();
  assert.equal(read(), 'before');
  assert.equal(dataVersionReads.count - reads, 1, 'three runs of one turn: one data_version read');
  assert.equal(computed(), 1);

  rename('after');
  await laterRun();
  // Still the turn of the first read: answered as of its start (a request of the commit's own poll phase).
  assert.equal(read(), 'before');
  await nextTurn();
  requestTurn();
  assert.equal(read(), 'after', 'the next turn reads data_version again and drops the entry');
  assert.equal(computed(), 2);
});

test('without a turn every synchronous run reads anew, so a commit shows at the next run', async () => {
  const { read, rename } = tempDb();
  await nextTurn();
  const reads = dataVersionReads.count;
  assert.equal(read(), 'EMS');
  await laterRun();
  read();
  await laterRun();
  read();
  assert.equal(dataVersionReads.count - reads, 3);
  rename('changed');
  await laterRun();
  assert.equal(read(), 'changed');
});

test("a timer's read is not shared with the turn that follows it", async () => {
  const { read, rename } = tempDb();
  await nextTurn();
  // A timer reads (no turn open), another connection commits, and a request of the next poll phase opens a turn.
  await new Promise<void>((resolve) =>
    setTimeout(() => {
      assert.equal(read(), 'EMS');
      rename('renamed after the timer');
      resolve();
    }, 1),
  );
  requestTurn();
  assert.equal(read(), 'renamed after the timer');
});

/**
 * Opens `count` connections and sends each the start of a request; once the service has accepted them all and read
 * those starts, the rest of every request is written in one synchronous run: they complete in one poll phase.
 */
async function burst(url: string, count: number, request: string): Promise<string[]> {
  const { hostname, port } = new URL(url);
  const sockets = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<net.Socket>((resolve, reject) => {
          const socket = net.connect(Number(port), hostname, () => resolve(socket));
          socket.once('error', reject);
        }),
    ),
  );
  const answers = sockets.map(
    (socket) =>
      new Promise<string>((resolve, reject) => {
        let text = '';
        socket.setEncoding('utf8');
        socket.on('data', (chunk) => (text += chunk));
        socket.once('end', () => resolve(text));
        socket.once('error', reject);
      }),
  );
  const cut = request.indexOf('\r\n') + 2;
  for (const socket of sockets) socket.write(request.slice(0, cut));
  await new Promise((resolve) => setTimeout(resolve, 200));
  for (const socket of sockets) socket.write(request.slice(cut));
  return Promise.all(answers);
}

test("requests arriving together share one data_version read; another process's commit is seen by the next request", async () => {
  const server = await startTestServer();
  after(() => server.close());
  const { accessToken, user } = await server.createUser();
  assert.equal((await server.request('GET', '/api/auth/me', { token: accessToken })).status, 200);
  const request = `GET /api/auth/me HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${accessToken}\r\nConnection: close\r\n\r\n`;
  for (let round = 0; round < 3; round++) {
    const reads = dataVersionReads.count;
    const answers = await burst(server.url, 50, request);
    assert.ok(answers.every((answer) => answer.startsWith('HTTP/1.1 200 ')));
    // One a request without the turn (each request is its own synchronous run).
    const used = dataVersionReads.count - reads;
    assert.ok(used <= 10, `round ${round}: ${used} data_version reads for 50 requests that arrived together`);
  }

  // emsctl removing the user: its own process, its own connection; the next request is refused.
  const removed = spawnSync(
    process.execPath,
    [
      '-e',
      `const db = new (require('better-sqlite3'))(process.argv[1]); db.prepare('DELETE FROM refresh_tokens WHERE user_id = ?').run(${user.id}); db.prepare('DELETE FROM users WHERE id = ?').run(${user.id}); db.close();`,
      path.join(server.dataDir, 'ems.db'),
    ],
    { cwd: repoRoot, encoding: 'utf8' },
  );
  assert.equal(removed.status, 0, removed.stderr);
  const refused = await burst(server.url, 5, request);
  assert.ok(
    refused.every((answer) => answer.startsWith('HTTP/1.1 401 ')),
    refused[0],
  );
});
