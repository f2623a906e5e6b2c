// The cache piece (src/platform/db/kept.ts): bounded, least recently used dropped first, and dropped whole when a table it
// reads is written on this connection or another connection commits; nothing stored inside a transaction.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { Kept, markWritten } from '../../src/platform/db/kept.ts';
import { testDatabase } from '../helpers/database.ts';

function tempDb() {
  const db = testDatabase();
  return { sqlite: db.sqlite, file: db.path };
}

/** A cache over the count of alerts, counting how often it really read. */
function alertCount(sqlite: Database.Database, max = 4) {
  const kept = new Kept<number>(sqlite, { name: 'test.alerts', tables: ['alerts'], max });
  const count = sqlite.prepare('SELECT count(*) FROM alerts').pluck();
  let reads = 0;
  const read = (key = 'all') =>
    kept.get(key, () => {
      reads += 1;
      return count.get() as number;
    });
  return { kept, read, reads: () => reads };
}

const insertAlert = (sqlite: Database.Database, title = 'x') =>
  sqlite
    .prepare(
      "INSERT INTO alerts (title, level, occurred_at, created_at, updated_at) VALUES (?, 'info', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')",
    )
    .run(title);

test('a repeated key is answered from memory; the number of entries is bounded and the least recently used goes first', () => {
  const { sqlite } = tempDb();
  const kept = new Kept<string>(sqlite, { name: 'test.lru', tables: ['alerts'], max: 3 });
  const computed: string[] = [];
  const get = (key: string) =>
    kept.get(key, () => {
      computed.push(key);
      return `value of ${key}`;
    });
  assert.equal(get('a'), 'value of a');
  assert.equal(get('a'), 'value of a');
  assert.deepEqual(computed, ['a']);
  get('b');
  get('c');
  get('a'); // a is now the most recently used; b the least
  get('d'); // over the bound: b goes
  assert.equal(kept.size, 3);
  assert.deepEqual(computed, ['a', 'b', 'c', 'd']);
  assert.equal(kept.has('b'), false);
  assert.ok(kept.has('a') && kept.has('c') && kept.has('d'));
  get('b');
  assert.deepEqual(computed, ['a', 'b', 'c', 'd', 'b'], 'b was dropped, so it is computed again');
  assert.equal(kept.has('c'), false, 'c was the least recently used when b came back');
  assert.deepEqual(kept.stats, { hits: 2, misses: 5, drops: 0 });
});

test('a write on this connection to a table it reads drops every entry; a write to another table does not', () => {
  const { sqlite } = tempDb();
  const alerts = alertCount(sqlite);
  assert.equal(alerts.read('a'), 0);
  assert.equal(alerts.read('b'), 0);
  assert.equal(alerts.reads(), 2);
  sqlite.prepare("UPDATE platform_config SET site_name = 'elsewhere' WHERE id = 1").run();
  assert.equal(alerts.read('a'), 0);
  assert.equal(alerts.reads(), 2, 'platform_config is not read by this cache');
  insertAlert(sqlite);
  assert.equal(alerts.read('a'), 1);
  assert.equal(alerts.read('b'), 1);
  assert.equal(alerts.reads(), 4, 'both keys were dropped');
  const id = sqlite.prepare('SELECT max(id) FROM alerts').pluck().get();
  sqlite.prepare("UPDATE alerts SET title = 'y' WHERE id = ?").run(id);
  alerts.read('a');
  assert.equal(alerts.reads(), 5, 'an update drops too');
  sqlite.prepare('DELETE FROM alerts').run();
  assert.equal(alerts.read('a'), 0, 'a delete of every row (no truncate shortcut with a trigger on the table)');
});

test("markWritten counts a write of a table without one: its caches drop, the others keep (the collector's held days)", async () => {
  const { sqlite } = tempDb();
  const alerts = alertCount(sqlite);
  const other = new Kept<number>(sqlite, { name: 'test.config', tables: ['platform_config'], max: 4 });
  let otherReads = 0;
  const readOther = () => other.get('one', () => ++otherReads);
  alerts.read();
  readOther();
  await nextRun();
  alerts.read();
  readOther();
  assert.equal(alerts.reads(), 1, 'kept');
  markWritten(sqlite, 'alerts');
  alerts.read();
  readOther();
  assert.equal(alerts.reads(), 2, 'dropped as after a write of alerts');
  assert.equal(otherReads, 1, 'a cache on another table keeps its entry');
  markWritten(sqlite, 'faults');
  alerts.read();
  assert.equal(alerts.reads(), 2, 'a table no cache watches moves nothing');
});

/** data_version is read once per synchronous run of JavaScript: another connection's commit shows from the next run. */
const nextRun = () => new Promise<void>((resolve) => setImmediate(resolve));

test('a commit of a second connection to the same file drops every entry from the next run of JavaScript, whatever table it wrote', async () => {
  const { sqlite, file } = tempDb();
  const alerts = alertCount(sqlite);
  assert.equal(alerts.read(), 0);
  const other = new Database(file);
  after(() => other.close());
  other.pragma('busy_timeout = 5000');
  insertAlert(other, 'from emsctl');
  assert.equal(alerts.read(), 0, 'within one synchronous run the kept answer stands (as if the commit came just after it)');
  await nextRun();
  assert.equal(alerts.read(), 1, "the other connection's row is seen from the next run");
  assert.equal(alerts.reads(), 2);
  assert.equal(alerts.read(), 1);
  assert.equal(alerts.reads(), 2);
  // The other connection fires none of this connection's triggers: data_version is what tells.
  other.prepare("UPDATE platform_config SET site_name = 'other' WHERE id = 1").run();
  await nextRun();
  alerts.read();
  assert.equal(alerts.reads(), 3);
});

test('peek answers a kept, valid entry only (counted as a hit, moved to the most recent), never computes, and counts no miss', async () => {
  const { sqlite, file } = tempDb();
  const kept = new Kept<string>(sqlite, { name: 'test.peek', tables: ['alerts'], max: 2 });
  assert.equal(kept.peek('a'), undefined);
  assert.deepEqual(kept.stats, { hits: 0, misses: 0, drops: 0 });
  kept.get('a', () => 'A');
  kept.get('b', () => 'B');
  assert.equal(kept.peek('a'), 'A');
  assert.equal(kept.peek('c'), undefined);
  assert.deepEqual(kept.stats, { hits: 1, misses: 2, drops: 0 });
  // 'a' was peeked last: a third key pushes out 'b', the least recently used.
  kept.get('c', () => 'C');
  assert.equal(kept.peek('a'), 'A');
  assert.equal(kept.peek('b'), undefined);
  insertAlert(sqlite);
  assert.equal(kept.peek('a'), undefined, 'a write on this connection to its table ends it');
  kept.get('a', () => 'A2');
  const other = new Database(file);
  after(() => other.close());
  other.pragma('busy_timeout = 5000');
  insertAlert(other, 'from emsctl');
  await nextRun();
  assert.equal(kept.peek('a'), undefined, "another connection's commit ends it from the next run");
});

test('inside a transaction a valid entry is answered but nothing is stored; a rolled-back write still drops', () => {
  const { sqlite } = tempDb();
  const alerts = alertCount(sqlite);
  alerts.read();
  sqlite.transaction(() => {
    assert.equal(alerts.read(), 0, 'nothing written since: the kept answer holds');
    assert.equal(alerts.reads(), 1);
    insertAlert(sqlite);
    assert.equal(alerts.read(), 1, 'its own write is seen inside the transaction');
    assert.equal(alerts.read(), 1);
    assert.equal(alerts.reads(), 3, 'computed twice: nothing is stored inside a transaction');
  })();
  assert.equal(alerts.read(), 1);
  assert.equal(alerts.reads(), 4);

  assert.throws(() =>
    sqlite.transaction(() => {
      insertAlert(sqlite, 'rolled back');
      assert.equal(alerts.read(), 2);
      throw new Error('roll back');
    })(),
  );
  assert.equal(alerts.read(), 1, 'the rolled-back row is not counted, and no value read inside survives');
  assert.equal(alerts.read(), 1);
  assert.equal(alerts.reads(), 6);
});

test('a cache built inside a transaction keeps nothing until it can create its triggers outside one', () => {
  const { sqlite } = tempDb();
  let alerts: ReturnType<typeof alertCount> | undefined;
  sqlite.transaction(() => {
    alerts = alertCount(sqlite);
    alerts.read();
    alerts.read();
    assert.equal(alerts.reads(), 2);
  })();
  alerts!.read();
  alerts!.read();
  assert.equal(alerts!.reads(), 3);
  insertAlert(sqlite);
  assert.equal(alerts!.read(), 1, 'the triggers exist: the write is seen');
});

test('two caches on one connection share the triggers; each drops only for its own tables', () => {
  const { sqlite } = tempDb();
  const alerts = alertCount(sqlite);
  const config = new Kept<string>(sqlite, { name: 'test.config', tables: ['platform_config', 'alerts'], max: 2 });
  const siteName = sqlite.prepare('SELECT site_name FROM platform_config WHERE id = 1').pluck();
  let configReads = 0;
  const name = () =>
    config.get('name', () => {
      configReads += 1;
      return siteName.get() as string;
    });
  const onlyOthers = new Kept<number>(sqlite, { name: 'test.others', tables: [], max: 1 });
  let otherReads = 0;
  const others = () => onlyOthers.get('x', () => ++otherReads);
  name();
  alerts.read();
  others();
  sqlite.prepare("UPDATE platform_config SET site_name = 'renamed' WHERE id = 1").run();
  assert.equal(name(), 'renamed');
  alerts.read();
  others();
  assert.deepEqual([configReads, alerts.reads(), otherReads], [2, 1, 1]);
  insertAlert(sqlite);
  name();
  alerts.read();
  others();
  assert.deepEqual([configReads, alerts.reads(), otherReads], [3, 2, 1], 'tables: [] is dropped by no write of this connection');
  assert.throws(() => new Kept(sqlite, { name: 'bad', tables: ['alerts; DROP TABLE users'], max: 1 }), /not a table name/);
  assert.throws(() => new Kept(sqlite, { name: 'bad', tables: ['alerts'], max: 0 }), /max/);
});
