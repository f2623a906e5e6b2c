// What the service holds in memory from its start (issue 29, docs/performance-edge.md "Memory and scale"): the page
// cache is small from the connection's first statement, and the gateway client is node:http's: no undici, whose HTTP
// parser is WebAssembly that V8 compiled at the first gateway call (a 37 MiB peak of compiler memory malloc kept).
// test:fast: own process (it checks which modules its process loaded)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { closeDatabase, openDatabase } from '../../src/platform/db/client.ts';
import { eventually, startTestServer, tempDir } from '../helpers/server.ts';

const require = createRequire(import.meta.url);

test('cacheKiB is the connection page cache from its start; without it SQLite keeps its default', () => {
  const dir = tempDir();
  try {
    const small = openDatabase(path.join(dir, 'small.db'), { cacheKiB: 2048 });
    const plain = openDatabase(path.join(dir, 'plain.db'));
    try {
      assert.equal(small.sqlite.pragma('cache_size', { simple: true }), -2048);
      const fallback = plain.sqlite.pragma('cache_size', { simple: true }) as number;
      assert.notEqual(fallback, -2048);
      // The start-up check and the migrations ran with the small cache: the opened database is whole and migrated.
      assert.equal(small.sqlite.pragma('quick_check', { simple: true }), 'ok');
      const tables = small.sqlite.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all();
      assert.ok(tables.includes('alerts'));
    } finally {
      closeDatabase(small);
      closeDatabase(plain);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('the service keeps a 2 MiB page cache, and its gateway client works without loading undici', async (t) => {
  const server = await startTestServer();
  t.after(() => server.close());
  assert.equal(server.service.deps.db.sqlite.pragma('cache_size', { simple: true }), -2048);

  // A request through the gateway client to the built-in simulator, over real HTTP.
  const admin = await server.createUser({ role: 'admin' });
  const configs = await server.request('GET', '/api/iot/alarm-configs', { token: admin.accessToken });
  assert.equal(configs.status, 200);

  const loaded = Object.keys(require.cache);
  assert.deepEqual(
    loaded.filter((file) => file.includes(`${path.sep}node_modules${path.sep}undici${path.sep}`)),
    [],
    'no module of undici is loaded',
  );
});

test('start-up, a collection and the overview build no Intl.DateTimeFormat: ICU date data stays out of memory', async (t) => {
  // The first Intl.DateTimeFormat maps ~4.6 MiB of node's ICU data and ~1.3 MiB of its code into the process for good
  // (src/platform/time/zoneinfo.ts); day boundaries, cron times and the box's zone come from the tz database instead.
  const built: unknown[] = [];
  const original = Intl.DateTimeFormat;
  Intl.DateTimeFormat = new Proxy(original, {
    construct(target, args) {
      built.push(args);
      return Reflect.construct(target, args);
    },
    apply(target, self, args) {
      built.push(args);
      return Reflect.apply(target, self, args);
    },
  });
  t.after(() => {
    Intl.DateTimeFormat = original;
  });
  const server = await startTestServer({ EMS_COLLECT_INTERVAL: '60s', EMS_ALARM_POLL_INTERVAL: '30s' });
  t.after(() => server.close());
  const admin = await server.createUser({ role: 'admin' });
  await eventually(
    async () => {
      const stats = await server.request<{ energyTodayKwh: number }>('GET', '/api/overview/stats', { token: admin.accessToken });
      return stats.body.energyTodayKwh > 0 ? true : undefined;
    },
    'a collection metered the simulated building',
    30_000,
  );
  for (const pathname of ['/api/overview/energy/weekly', '/api/energy/areas', '/api/system/backup-schedule'])
    assert.equal((await server.request('GET', pathname, { token: admin.accessToken })).status, 200, pathname);
  assert.deepEqual(built, [], 'no Intl.DateTimeFormat was built');
});
