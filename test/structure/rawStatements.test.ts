// Structure (issue 24): drizzle for every query but the energy interval blobs and the report and analysis
// aggregates. Raw statements (`sqlite.prepare('…')`, `sqlite.exec('…')`) are allowed in those folders; elsewhere a
// file may keep at most the ones it has today and a new file has none. Converting one to drizzle lowers its number here.
// Statements that query no table of ours (pragmas, backup copies, temporary triggers, connection probes) are not what
// the rule is about: drizzle has no words for them, so NOT_QUERIES names them and they are allowed anywhere.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

/**
 * A raw statement and the start of its text (up to the first quote: enough to tell what kind of statement it is).
 * Comments between the parenthesis and the text are skipped: the dashboard's public alerts query hid behind one.
 */
const RAW = /\.(?:prepare|exec)\(\s*(?:\/\/[^\n]*\n\s*|\/\*[\s\S]*?\*\/\s*)*[`'"]([^`'"]*)/g;

/** Raw statements that are not queries of the application's tables, by what they are. Anchored: nothing may follow. */
const NOT_QUERIES: Array<{ what: string; pattern: RegExp }> = [
  { what: 'a pragma (settings, PRAGMA data_version: commits by other connections)', pattern: /^PRAGMA [a-z_]+(?:\s*=\s*\w+|\(\w+\))?$/i },
  { what: 'a backup copy of the whole file', pattern: /^VACUUM INTO \?$/i },
  { what: 'a temporary trigger (lives and dies with the connection)', pattern: /^CREATE TEMP(?:ORARY)? TRIGGER\b/i },
  { what: 'a connection probe that reads no table (health ping, the change counter)', pattern: /^SELECT (?:1|total_changes\(\))$/i },
];

/** The raw statements of a source text that are queries: what the ratchet counts. */
function rawQueries(text: string): string[] {
  return [...text.matchAll(RAW)].map((match) => match[1].trim()).filter((statement) => !NOT_QUERIES.some(({ pattern }) => pattern.test(statement)));
}

/** The interval store, the figures and the aggregates built on them read and write encoded blobs with hand-tuned SQL. */
const RAW_ALLOWED = ['src/energy/', 'src/metering/', 'src/pricing/', 'src/reporting/reports/', 'src/reporting/exports/', 'src/analysis/'];

/** The raw statements left elsewhere: a ratchet, never to grow. */
const LEFT = new Map<string, number>([['src/operations/backup/archive.ts', 3]]);

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) return sources(file);
    return entry.name.endsWith('.ts') ? [file] : [];
  });
}

test('no raw SQL statement outside the energy store, reports, exports and analysis beyond those left from before', () => {
  const grown: string[] = [];
  for (const file of sources('src')) {
    const name = file.split(path.sep).join('/');
    if (RAW_ALLOWED.some((folder) => name.startsWith(folder))) continue;
    const count = rawQueries(fs.readFileSync(file, 'utf8')).length;
    const left = LEFT.get(name) ?? 0;
    if (count > left) grown.push(`${name}: ${count} raw statements, at most ${left} (write new queries with drizzle: db.orm)`);
  }
  assert.deepEqual(grown, []);
});

test('the pattern finds raw statements and leaves drizzle alone', () => {
  const sample = 'db.sqlite.prepare(\'SELECT 1\'); sqlite.exec(`PRAGMA x`); orm.select().from(users).prepare(); db.sqlite.prepare(\n  "SELECT 2");';
  assert.equal(sample.match(RAW)?.length, 3);
  const commented = "sqlite.prepare(\n  // why\n  `SELECT id FROM alerts`); sqlite.prepare(/* why */ 'SELECT 3');";
  assert.deepEqual(rawQueries(commented), ['SELECT id FROM alerts', 'SELECT 3']);
});

test('only statements that query no table are let through as not queries', () => {
  const notQueries = [
    "sqlite.prepare('PRAGMA data_version')",
    "sqlite.exec('PRAGMA foreign_keys = ON')",
    "sqlite.exec('PRAGMA wal_checkpoint(TRUNCATE)')",
    'sqlite.prepare(`VACUUM INTO ?`)',
    "sqlite.exec('CREATE TEMP TRIGGER t AFTER INSERT ON alerts BEGIN SELECT 1; END')",
    "sqlite.prepare('SELECT 1')",
    "sqlite.prepare('SELECT total_changes()')",
  ];
  for (const text of notQueries) assert.deepEqual(rawQueries(text), [], text);
  const queries = [
    "sqlite.prepare('SELECT 1 FROM audit_log WHERE resource = ?')",
    "sqlite.prepare('PRAGMA table_info(users); DELETE FROM users')",
    "sqlite.prepare('SELECT total_changes() FROM users')",
    "sqlite.exec('DELETE FROM users')",
    'sqlite.prepare(`SELECT timezone FROM platform_config WHERE id = 1`)',
  ];
  for (const text of queries) assert.equal(rawQueries(text).length, 1, text);
});
