// Structure (issue 57): a test that needs a migrated database takes a copy of the one migrated template
// (`testDatabase()`, test/helpers/database.ts; a test server's data dir starts from the same copy), and a test's service
// environment comes from `testEnv` / `testConfig` (test/helpers/testEnv.ts). Read with the TypeScript parser over every
// file under test/ except the benchmarks (test/bench/ measures real, seeded database files of its own):
// - a call of `openDatabase` (which migrates) or an import of drizzle's migrator fails outside MIGRATES, the files that
//   test the migrations or a real file's life themselves, each with its reason; the list only shrinks (a listed file
//   that no longer does so fails until its entry goes);
// - the test config's defaults written out again (`EMS_ALARM_POLL_INTERVAL: 'off'`, `EMS_COLLECT_INTERVAL: 'off'`) fail
//   outside test/helpers/testEnv.ts, in a service's environment (an object of more than one EMS_ setting): a test
//   passes what it changes to testEnv / testConfig / startTestServer.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';
import { loadConfig } from '../../src/platform/config.ts';
import { serviceEnv } from '../helpers/serviceProcess.ts';
import { LOOPS_AS_INSTALLED } from '../helpers/testEnv.ts';

const TEST = path.resolve(import.meta.dirname, '..');

/** Files under test/ that open or migrate a database themselves, and why. Only ever remove entries. */
const MIGRATES: Record<string, string> = {
  'helpers/database.ts': 'the helper: migrates the template once per process',
  'helpers/foldProcess.ts': "the child process of monthFold's power-cut test, opening the file that test made",
  'structure/schemaDrift.test.ts': 'migrates an in-memory database to compare it with the declared drizzle schema',
  'hardening/hardeningOps.test.ts': 'migrates a database made by the migrations up to 0004 (the upgrade path)',
  'metering/edgeStore.test.ts': 'migrates a store written before migration 0011 up (the migration of the day rows)',
  'metering/monthFold.test.ts': 'reopens one file across killed fold processes, as the service does after a power cut',
  'fleet/identity.test.ts': "opens a restored backup's file, migrated as a box restoring it would",
  'platform/startup.test.ts': "tests openDatabase itself: a fresh file's pragmas and tables, a damaged file refused",
  'ops/memoryAtStart.test.ts': "tests openDatabase's cacheKiB on fresh files",
};

/** The test config's defaults (testEnv): written out only there. */
const CONFIG_DEFAULTS = new Set(['EMS_ALARM_POLL_INTERVAL', 'EMS_COLLECT_INTERVAL']);
const CONFIG_HOME = 'helpers/testEnv.ts';

type Finding = { migrates: string[]; config: string[] };

/** What a source text does: its calls of openDatabase and imports of the migrator, and the config defaults it writes. */
export function findings(file: string, text: string): Finding {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, file.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const found: Finding = { migrates: [], config: [] };
  const line = (node: ts.Node) => source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node)) {
      const callee = node.expression;
      const name = ts.isIdentifier(callee) ? callee.text : ts.isPropertyAccessExpression(callee) ? callee.name.text : '';
      if (name === 'openDatabase') found.migrates.push(`line ${line(node)}: openDatabase(…)`);
    }
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      if (node.moduleSpecifier.text.endsWith('/migrator')) found.migrates.push(`line ${line(node)}: imports ${node.moduleSpecifier.text}`);
    }
    if (ts.isObjectLiteralExpression(node)) {
      const keys = node.properties.flatMap((p) =>
        ts.isPropertyAssignment(p) && (ts.isIdentifier(p.name) || ts.isStringLiteral(p.name)) ? [{ p, key: p.name.text }] : [],
      );
      // A service's environment (more than one EMS_ setting) that turns a default of the test config off again; a
      // literal of one setting is a test of the config's parsing.
      if (keys.filter(({ key }) => key.startsWith('EMS_')).length > 1)
        for (const { p, key } of keys)
          if (CONFIG_DEFAULTS.has(key) && ts.isStringLiteral(p.initializer) && p.initializer.text === 'off')
            found.config.push(`line ${line(p)}: ${key}: 'off'`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function testSources(): string[] {
  return fs
    .readdirSync(TEST, { recursive: true, encoding: 'utf8' })
    .filter((file) => /\.tsx?$/.test(file) && !file.startsWith(`bench${path.sep}`) && !file.includes('node_modules'))
    .map((file) => file.split(path.sep).join('/'))
    .sort();
}

/** Only a file that names one of them is parsed (about 1 in 10). */
const MENTIONS = /openDatabase|\/migrator|EMS_ALARM_POLL_INTERVAL|EMS_COLLECT_INTERVAL/;
const all = testSources().map((file) => {
  const text = fs.readFileSync(path.join(TEST, file), 'utf8');
  return { file, ...(MENTIONS.test(text) ? findings(file, text) : { migrates: [], config: [] }) };
});

test('a test takes its migrated database from testDatabase(); only the listed files open or migrate one themselves', () => {
  const unlisted = all.filter((f) => f.migrates.length > 0 && !(f.file in MIGRATES)).map((f) => `test/${f.file} (${f.migrates.join('; ')})`);
  assert.deepEqual(unlisted, [], 'use testDatabase() from test/helpers/database.ts (or list the file in MIGRATES with the reason it must migrate itself)');
  const stale = Object.keys(MIGRATES).filter((file) => !all.some((f) => f.file === file && f.migrates.length > 0));
  assert.deepEqual(stale, [], 'these no longer open or migrate a database themselves: remove their entries from MIGRATES');
});

test("the test config's defaults are written only in testEnv: tests pass what they change", () => {
  const inline = all.filter((f) => f.config.length > 0 && f.file !== CONFIG_HOME).map((f) => `test/${f.file} (${f.config.join('; ')})`);
  assert.deepEqual(inline, [], 'start from testEnv(dataDir, env) / testConfig(dataDir, env) / startTestServer(env) (test/helpers/testEnv.ts)');
  assert.ok(
    all.some((f) => f.file === CONFIG_HOME && f.config.length === CONFIG_DEFAULTS.size),
    `${CONFIG_HOME} still holds the defaults`,
  );
});

test('the rules see what they are meant to, and not a mention in a comment', () => {
  const sample = [
    "import { migrate } from 'drizzle-orm/better-sqlite3/migrator';",
    "// openDatabase(file) in a comment, and EMS_COLLECT_INTERVAL: 'off' too",
    "const db = openDatabase(path.join(dir, 'ems.db'));",
    "const env = { EMS_DATA_DIR: dir, EMS_ALARM_POLL_INTERVAL: 'off', EMS_COLLECT_INTERVAL: '1s' };",
    "const other = { 'EMS_COLLECT_INTERVAL': 'off', EMS_LOG_LEVEL: 'warn' };",
    "assert.equal(loadConfig({ EMS_COLLECT_INTERVAL: 'off' }).collectIntervalMs, 0);",
  ].join('\n');
  assert.deepEqual(findings('sample.test.ts', sample), {
    migrates: ['line 1: imports drizzle-orm/better-sqlite3/migrator', 'line 3: openDatabase(…)'],
    config: ["line 4: EMS_ALARM_POLL_INTERVAL: 'off'", "line 5: EMS_COLLECT_INTERVAL: 'off'"],
  });
});

test("a spawned service starts from testEnv: alarm poll and collection off unless asked; LOOPS_AS_INSTALLED is the service's own defaults", () => {
  const loops = (env: Record<string, string>) => {
    const { alarmPollIntervalMs, collectIntervalMs } = loadConfig(env);
    return { alarmPollIntervalMs, collectIntervalMs };
  };
  assert.deepEqual(loops(serviceEnv('/data')), { alarmPollIntervalMs: 0, collectIntervalMs: 0 });
  assert.deepEqual(loops(serviceEnv('/data', { EMS_COLLECT_INTERVAL: '1s' })), { alarmPollIntervalMs: 0, collectIntervalMs: 1000 });
  assert.deepEqual(loops(serviceEnv('/data', LOOPS_AS_INSTALLED)), loops({ EMS_DATA_DIR: '/data' }));
  assert.notDeepEqual(loops({ EMS_DATA_DIR: '/data' }), { alarmPollIntervalMs: 0, collectIntervalMs: 0 });
});
