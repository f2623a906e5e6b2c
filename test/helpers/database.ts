// A test's own database: a copy of one migrated template (made once per process), opened, and closed and removed at
// the test's end. Tests that need "a database with the shipped migrations" take it from here instead of migrating a
// new file each time; `test/structure/testDatabases.test.ts` keeps it so (the files that test migrations or a real
// file's life themselves are listed there with their reason).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after } from 'node:test';
import { closeDatabase, databasePath, type Db, openDatabase } from '../../src/platform/db/client.ts';

let template: string | undefined;

/**
 * An empty database with the shipped migrations applied, made once per process and copied for each test database and
 * each test server's data dir: the migrator then finds nothing left to apply. Applying the 27 migrations cost 31–34 ms
 * of CPU and 0.4 s of wall per database at load 20 (fsyncs), the copy 5–7 ms and 0.06–0.12 s (docs/development.md
 * "test:fast").
 */
export function migratedTemplate(): string {
  if (!template) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ems-test-template-'));
    process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
    const file = databasePath(dir);
    closeDatabase(openDatabase(file));
    template = file;
  }
  return template;
}

/** A migrated database of the test's own: `dir` is its temporary data dir (holding `path`, ems.db). */
export type TestDatabase = Db & { dir: string };

/** openDatabase's options for a test database (it is never migrated again), and the prefix of its dir. */
export type TestDatabaseOptions = Omit<NonNullable<Parameters<typeof openDatabase>[1]>, 'migrate'> & { prefix?: string };

/**
 * A copy of the migrated template in a new temporary dir, opened with the service's pragmas (without migrating
 * again). Closed and removed when the test that calls it ends; called in a describe's body or at a file's top level,
 * when the suite ends (not from a `before` hook: node:test runs an `after` registered there as soon as the hook returns).
 */
export function testDatabase(options: TestDatabaseOptions = {}): TestDatabase {
  const { db, close } = openTestDatabase(options);
  after(close);
  return db;
}

/** testDatabase without the hook: the caller closes it (`test/bench/testDatabase.ts`). */
export function openTestDatabase(options: TestDatabaseOptions = {}): { db: TestDatabase; close(): void } {
  const { prefix = 'ems-test-db-', ...open } = options;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const file = databasePath(dir);
  fs.copyFileSync(migratedTemplate(), file);
  const db = Object.assign(openDatabase(file, { ...open, migrate: false }), { dir });
  return {
    db,
    close() {
      closeDatabase(db);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
