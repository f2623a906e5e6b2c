// The installer's native-module check: run by the Node that will run the service, on the release tree this file sits
// in, before that tree replaces the installed one. It uses the database the way the service does (WAL, the shipped
// migrations through drizzle, then many statements prepared, run and dropped) and forces garbage collection, because
// that is where a native module built against the wrong headers dies: better-sqlite3 12 on Node >= 24.19 aborts
// with "Assertion failed: (env) != nullptr" when a statement is freed by the collector, seconds after a start that
// looked fine. An abort ends this process with a signal, which the installer reports as a refusal.
//
//   node --expose-gc [the service's V8 flags] installer/check-runtime.mjs
//                                                      prints one line and exits 0 when the tree is fit to run
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const tree = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const requireFromTree = createRequire(path.join(tree, 'package.json'));
/** Statements prepared and dropped (the service prepares this many within its first minutes). */
const STATEMENTS = Number(process.env.EMS_CHECK_STATEMENTS ?? 5000);

if (typeof globalThis.gc !== 'function') {
  console.error('check-runtime: run with --expose-gc (the check forces garbage collection)');
  process.exit(2);
}
const pause = () => new Promise((resolve) => setTimeout(resolve, 20));
const collect = async () => {
  // Every way the collector frees objects in the service: a young-generation scavenge, a full collection from JavaScript,
  // and one run as a task from the event loop with no JavaScript on the stack (the way V8's own collections end).
  globalThis.gc({ type: 'minor' });
  globalThis.gc();
  // Weak callbacks and finalizers of freed native objects run after the collection, as tasks: give them their turn.
  await pause();
  await globalThis.gc({ type: 'major', execution: 'async' });
  await pause();
};

const Database = requireFromTree('better-sqlite3');
const bcrypt = requireFromTree('bcrypt');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ems-check-runtime-'));
try {
  const sqlite = new Database(path.join(dir, 'ems.db'));
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');

  // The shipped migrations, applied as the service applies them (a release whose migrations fail on an empty
  // database is refused here too).
  // Where the service reads them (src/platform/db/client.ts; src/db/migrations before the contexts move). Not any
  // folder with a drizzle journal: the fleet service's PostgreSQL migrations (src/fleet/migrations) have one too.
  const migrationsFolder =
    ['src/platform/db/migrations', 'src/db/migrations'].map((folder) => path.join(tree, folder)).find((folder) => fs.existsSync(path.join(folder, 'meta', '_journal.json'))) ?? null;
  let migrations = 0;
  if (migrationsFolder) {
    const { drizzle } = await import(pathToFileURL(requireFromTree.resolve('drizzle-orm/better-sqlite3')).href);
    const { migrate } = await import(pathToFileURL(requireFromTree.resolve('drizzle-orm/better-sqlite3/migrator')).href);
    migrate(drizzle(sqlite), { migrationsFolder });
    migrations = sqlite.prepare('SELECT count(*) FROM __drizzle_migrations').pluck().get();
  }

  sqlite.exec('CREATE TABLE check_runtime (id INTEGER PRIMARY KEY, at INTEGER NOT NULL, value REAL)');
  for (let i = 0; i < STATEMENTS; i++) {
    // A new statement object every time, dropped at once: the collector frees them in bulk.
    sqlite.prepare('INSERT INTO check_runtime (at, value) VALUES (?, ?)').run(i, i / 7);
    const row = sqlite.prepare(`SELECT count(*) AS n, max(value) AS top FROM check_runtime WHERE at >= ${i % 97}`).get();
    if (row.n < 1) throw new Error('the database lost a row it was given');
    for (const _ of sqlite.prepare('SELECT id FROM check_runtime ORDER BY id DESC LIMIT 3').iterate());
    if (i % 1000 === 999) await collect();
  }
  await collect();
  sqlite.close();
  await collect();

  const hash = bcrypt.hashSync('check-runtime', 4);
  if (!bcrypt.compareSync('check-runtime', hash)) throw new Error('bcrypt does not verify its own hash');
  const version = requireFromTree('better-sqlite3/package.json').version;
  console.log(
    `check-runtime: ok on node ${process.versions.node} (ABI ${process.versions.modules}): better-sqlite3 ${version} ran ${migrations} migrations and ${STATEMENTS * 3} statements prepared and dropped under forced GC; bcrypt hashes`,
  );
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
