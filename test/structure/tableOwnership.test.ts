// Structure (issue 40): every table belongs to one context, and only that context's code touches it, through drizzle
// (a table identifier imported from the schema) or raw SQL (the table's name after FROM, JOIN, INTO, UPDATE, TABLE or
// ON). Another context asks the owner's face (metering's StoredDays for the stored day rows, AlertService for
// alerts, …). What is left is listed in CROSSINGS, each with its reason; a crossing that is gone must leave the list.
// A screen or a report that only reads other contexts' tables is a declared read model (READ_MODELS, file ← tables,
// with its reason): the scan holds it to reading them (no INSERT, UPDATE, DELETE or drizzle write on those tables there).
// The fleet sync's change feed (CHANGE_FEED) is held to the same rule for the tables its crossings name.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { getTableName, is } from 'drizzle-orm';
import { SQLiteTable } from 'drizzle-orm/sqlite-core';
import * as schema from '../../src/platform/db/schema/index.ts';

const SRC = path.resolve(import.meta.dirname, '../../src');

/** Not scanned: the schema and migrations declare the tables; the staff app runs in the browser; the fleet service has its own PostgreSQL database. */
const NOT_SCANNED = ['platform/db/schema/', 'platform/db/migrations/', 'web/app/', 'fleet/'];

/** The context that owns each table: the only one whose code reads or writes it. */
const OWNERS: Record<string, string> = {
  users: 'access',
  refresh_tokens: 'access',
  refresh_tokens_retired: 'access',
  oauth_links: 'access',
  login_throttle: 'access',
  setup_links: 'access',
  // AuditLog (the one writer, in every audited transaction) and AuditedTable live on the floor.
  audit_log: 'platform',
  iot_gateway_token: 'gateway',
  tariff_versions: 'pricing',
  calorific_versions: 'pricing',
  files: 'files',
  model_files: 'files',
  alerts: 'facility',
  alert_notes: 'facility',
  faults: 'facility',
  fault_stats: 'facility',
  maintenance: 'facility',
  notification_rules: 'facility',
  notification_sends: 'facility',
  alarm_areas: 'facility',
  meters: 'metering',
  meter_state: 'metering',
  meter_days: 'metering',
  meter_months: 'metering',
  meter_fold: 'metering',
  meter_suspect_runs: 'metering',
  meter_days_dropped: 'metering',
  platform_config: 'site',
  three_d_config: 'site',
  // The hand-entered area cards (AreaCards) and their daily figures.
  energy_areas: 'energy',
  energy_daily: 'energy',
  peak_warnings: 'analysis',
  area_floor_areas: 'analysis',
  enpi_drivers: 'analysis',
  outdoor_days: 'analysis',
  load_shed_settings: 'analysis',
  load_shed_points: 'analysis',
  billing_tenants: 'billing',
  fdd_points: 'faultDetection',
  fdd_equipment: 'faultDetection',
  fdd_rules: 'faultDetection',
  fdd_rule_switches: 'faultDetection',
  fdd_episodes: 'faultDetection',
  billing_allocations: 'billing',
  billing_settings: 'billing',
  billing_periods: 'billing',
  billing_runs: 'billing',
  billing_statements: 'billing',
  billing_tariffs: 'billing',
  supplier_bills: 'billing',
  billing_budgets: 'billing',
  savings_measures: 'billing',
  fleet_link: 'fleetSync',
  sync_sequence: 'fleetSync',
  sync_deleted_alerts: 'fleetSync',
  backup_schedule: 'operations',
  report_templates: 'reporting',
  report_plans: 'reporting',
  report_runs: 'reporting',
  dashboard_settings: 'screens',
};

/** Tables of named rows where each context keeps its own rows: any context may touch the table, only its own keys. */
const SHARED: Record<string, string> = {
  app_settings:
    'key/value rows, one key per owner: the token signing key (access), the interrupted time-zone move (metering), the backup upkeep marks (operations)',
};

/** `table ← file`: a context touching another's table, each with the reason it still does. */
const CROSSINGS: Record<string, string> = {
  'alerts ← fleetSync/batch.ts':
    'the fleet sync batch is the change feed of every synced table: it reads the rows above its cursor (sync_seq, stamped by the triggers of migration 0017) of each table in one read transaction, so one batch is one consistent snapshot',
  'alerts ← fleetSync/link.ts':
    "counts the alerts above the fleet cursor (what the box still has to send) for `emsctl fleet status`: the change feed's own question",
  'area_floor_areas ← fleetSync/batch.ts':
    'the fleet sync batch is the change feed of every synced table: it reads the rows above its cursor (sync_seq, stamped by the triggers of migration 0017) of each table in one read transaction, so one batch is one consistent snapshot',
  'calorific_versions ← fleetSync/batch.ts':
    "a gas day's kWh is sent beside its m³: the calorific versions are read in the batch's own read transaction so both come from one snapshot; the rule itself is pricing's kwhPerM3ByDay",
  'meter_days ← fleetSync/batch.ts':
    'the fleet sync batch is the change feed of every synced table: it reads the rows above its cursor (sync_seq, stamped by the triggers of migration 0017) of each table in one read transaction, so one batch is one consistent snapshot',
  'meter_days ← fleetSync/link.ts':
    "counts the day rows above the fleet cursor (what the box still has to send) for `emsctl fleet status`: the change feed's own question",
  'meter_days_dropped ← fleetSync/batch.ts':
    "the change feed re-stamps the meter days the box dropped (stamped by migration 0043's trigger) with every other row above the fleet's cursor when the box went back (resequenceAbove), in one transaction",
  'meter_days_dropped ← fleetSync/droppedDays.ts':
    "the change feed reads the meter days the box dropped above its cursor (sync_seq, stamped by the trigger of migration 0043) in the batch's own read transaction, and counts them for `emsctl fleet status`; forgetting those the fleet acknowledged long ago is metering's (forgetAcknowledgedDrops through its face)",
  'meters ← fleetSync/batch.ts':
    'the fleet sync batch is the change feed of every synced table: it reads the rows above its cursor (sync_seq, stamped by the triggers of migration 0017) of each table in one read transaction, so one batch is one consistent snapshot',
  'platform_config ← fleetSync/batch.ts':
    'the fleet sync batch is the change feed of every synced table: it reads the rows above its cursor (sync_seq, stamped by the triggers of migration 0017) of each table in one read transaction, so one batch is one consistent snapshot',
};

/**
 * The fleet sync's change feed: the files whose crossings (above) read the synced tables above the cursor. They read
 * them and write nothing of them but the feed's stamp, the `sync_seq` column (the triggers of migration 0017 stamp it;
 * `resequenceAbove` numbers the unsent rows again after a fleet lost a batch), checked below like the read models.
 */
const CHANGE_FEED = ['fleetSync/batch.ts', 'fleetSync/droppedDays.ts', 'fleetSync/link.ts'];

/** A source text without the writes of the feed's stamp alone: drizzle's `.update(t).set({ syncSeq: … })`, SQL's `UPDATE t SET sync_seq = …`. */
export const withoutStamps = (text: string) =>
  text
    .replace(/\.\s*update\s*\(\s*[A-Za-z_$][\w$]*\s*\)\s*\.\s*set\s*\(\s*\{\s*syncSeq\s*:[^,{}]*\}\s*\)/g, '.stamp()')
    .replace(/\bUPDATE\s+["`]?[a-z_][a-z_0-9]*["`]?\s+SET\s+sync_seq\s*=\s*[^,'`"]*?\s+WHERE\b/g, 'STAMP WHERE');

/** The tables a change-feed file's crossings name. */
const feedTables = (file: string) =>
  Object.keys(CROSSINGS)
    .filter((crossing) => crossing.endsWith(` ← ${file}`))
    .map((crossing) => crossing.slice(0, crossing.indexOf(' ← ')));

/**
 * Declared read models, `file ← tables`: a screen, a report or a reader that reads other contexts' tables for its own
 * projection (counts, joins, aggregates in SQL, kept in one Kept), each with its reason. Read only, checked below: the
 * file has no INSERT, UPDATE, DELETE (or REPLACE, or a table DDL) in SQL and no drizzle insert/update/delete on them.
 */
const READ_MODELS: Record<string, { tables: string[]; reason: string }> = {
  'screens/overview/service.ts': {
    tables: ['alerts', 'faults', 'maintenance', 'platform_config'],
    reason:
      "the overview's open-alert and open-fault counts, its upcoming and overdue maintenance, the site's name, zone and currency: statements among the overview's counts, kept together in one Kept over the tables it reads",
  },
  'screens/dashboard/service.ts': {
    tables: ['alerts'],
    reason: "the public dashboard's recent alerts: only public fields (publicTitle), kept with the dashboard's payload",
  },
  'screens/wallboard/service.ts': {
    tables: ['alerts'],
    reason: "the wallboard's active, unshelved alerts of an area; the screen's own projection",
  },
  'reporting/reports/content.ts': {
    tables: ['alerts', 'faults', 'fdd_episodes', 'maintenance'],
    reason:
      "a report's alert list and counts by level, fault counts by severity and mean time to resolve, overdue maintenance and costliest equipment faults over its period: ranked reads and aggregates in SQL in the report's read",
  },
  'reporting/reports/runs.ts': {
    tables: ['platform_config'],
    reason: "the site's zone and name joined with a plan in the run's one read",
  },
  'reporting/reports/scheduler.ts': {
    tables: ['platform_config'],
    reason: "the site's zone joined with the enabled plans in the scheduler's one read (a zone change re-times every plan)",
  },
  'energy/figures.ts': {
    tables: ['meters'],
    reason:
      "the figures' layout (which meters make the site and each area, virtual meters' terms) read once per meters write into a Kept; the day and month rows it sums are read through metering's StoredDays",
  },
  'access/audit/service.ts': {
    tables: ['audit_log'],
    reason: 'the audit trail reader (GET /api/audit): access reads the log AuditLog writes on the floor',
  },
};

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** Schema export name → SQL table name, for every table the schema declares. */
function schemaTables(): Map<string, string> {
  return new Map(
    Object.entries(schema)
      .filter(([, value]) => is(value, SQLiteTable))
      .map(([name, value]) => [name, getTableName(value as SQLiteTable)]),
  );
}

/** The schema's table identifiers a source text imports as values (local name → SQL table name), aliases included. */
function schemaIdentifiers(text: string, importsSchema: (specifier: string) => boolean, tables: Map<string, string>): Map<string, string> {
  const identifiers = new Map<string, string>();
  for (const match of text.matchAll(/import\s+(type\s+)?\{([^}]*)\}\s+from\s+'([^']+)'/g)) {
    if (match[1] || !importsSchema(match[3])) continue;
    for (const part of match[2].split(',')) {
      const imported = part.trim();
      if (!imported || imported.startsWith('type ')) continue;
      const [name, local = name] = imported.split(/\s+as\s+/);
      const table = tables.get(name);
      if (table) identifiers.set(local, table);
    }
  }
  return identifiers;
}

/** A source text without its comments (they name tables in prose). */
const codeOf = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');

/** The tables a source text touches: drizzle table identifiers imported (as values) from the schema, and table names in SQL. */
export function touchedTables(text: string, importsSchema: (specifier: string) => boolean, tables: Map<string, string>): Set<string> {
  const names = new Set(tables.values());
  const touched = new Set(schemaIdentifiers(text, importsSchema, tables).values());
  // SQL keywords are written in capitals here; comments are left out.
  for (const match of codeOf(text).matchAll(/\b(?:FROM|JOIN|INTO|UPDATE|TABLE|ON)\s+([a-z_][a-z_0-9]*)\b/g)) if (names.has(match[1])) touched.add(match[1]);
  return touched;
}

/**
 * The tables a source text writes: SQL INSERT [OR …] INTO, REPLACE INTO, UPDATE [OR …], DELETE FROM, CREATE/ALTER/DROP
 * TABLE (names bare or quoted), and drizzle's insert/update/delete on a table identifier imported from the schema.
 */
export function writtenTables(text: string, importsSchema: (specifier: string) => boolean, tables: Map<string, string>): Set<string> {
  const names = new Set(tables.values());
  const identifiers = schemaIdentifiers(text, importsSchema, tables);
  const code = codeOf(text);
  const written = new Set<string>();
  const sqlWrite =
    /\b(?:INSERT(?:\s+OR\s+[A-Z]+)?\s+INTO|REPLACE\s+INTO|UPDATE(?:\s+OR\s+[A-Z]+)?|DELETE\s+FROM|(?:CREATE|ALTER|DROP)\s+TABLE(?:\s+IF(?:\s+NOT)?\s+EXISTS)?)\s+["`]?([a-z_][a-z_0-9]*)\b/g;
  for (const match of code.matchAll(sqlWrite)) if (names.has(match[1])) written.add(match[1]);
  for (const match of code.matchAll(/\.\s*(?:insert|update|delete)\s*\(\s*([A-Za-z_$][\w$]*)\s*\)/g)) {
    const table = identifiers.get(match[1]);
    if (table) written.add(table);
  }
  return written;
}

/** A read model's writes on the tables it declares (each `table ← file`): what the read-model rule refuses. */
export function readModelWrites(file: string, text: string, declared: string[], importsSchema: (specifier: string) => boolean, tables: Map<string, string>) {
  const written = writtenTables(text, importsSchema, tables);
  return declared.filter((table) => written.has(table)).map((table) => `${table} ← ${file}`);
}

/** The context of a file relative to src: its top folder. */
const contextOf = (file: string) => (file.includes('/') ? file.slice(0, file.indexOf('/')) : file);

test('every table of the schema has one owning context (or is a shared table of named rows, with its reason)', () => {
  const tables = [...schemaTables().values()];
  assert.deepEqual(
    tables.filter((table) => !(table in OWNERS) && !(table in SHARED)),
    [],
    'a new table takes its owner in OWNERS',
  );
  assert.deepEqual(
    Object.keys({ ...OWNERS, ...SHARED }).filter((table) => !tables.includes(table)),
    [],
    'a dropped table leaves OWNERS',
  );
});

/** A source file by its path relative to src, with its text and how it imports the schema. */
type Scanned = { name: string; text: string; importsSchema: (specifier: string) => boolean };

function scannedFiles(): Scanned[] {
  return sourceFiles(SRC)
    .map((file) => ({ file, name: path.relative(SRC, file).split(path.sep).join('/') }))
    .filter(({ name }) => !NOT_SCANNED.some((folder) => name.startsWith(folder)))
    .map(({ file, name }) => ({
      name,
      text: fs.readFileSync(file, 'utf8'),
      importsSchema: (specifier: string) =>
        specifier.startsWith('.') &&
        path
          .relative(SRC, path.resolve(path.dirname(file), specifier))
          .split(path.sep)
          .join('/')
          .startsWith('platform/db/schema'),
    }));
}

/** Every `table ← file` where a file touches a table another context owns. */
function foundCrossings(files: Scanned[], tables: Map<string, string>): string[] {
  return files.flatMap(({ name, text, importsSchema }) =>
    [...touchedTables(text, importsSchema, tables)]
      .filter((table) => !(table in SHARED) && OWNERS[table] !== contextOf(name))
      .map((table) => `${table} ← ${name}`),
  );
}

const readModelCrossings = () => Object.entries(READ_MODELS).flatMap(([file, { tables }]) => tables.map((table) => `${table} ← ${file}`));

test('a table is touched only by its owning context; each crossing left is listed with its reason', () => {
  const crossings = foundCrossings(scannedFiles(), schemaTables());
  const listed = [...Object.keys(CROSSINGS), ...readModelCrossings()];
  assert.deepEqual(
    crossings.filter((crossing) => !listed.includes(crossing)).sort(),
    [],
    "ask the owner's face (or declare a read model in READ_MODELS, or list the crossing in CROSSINGS, with its reason)",
  );
  assert.deepEqual(
    listed.filter((crossing) => !crossings.includes(crossing)),
    [],
    'a crossing that is gone leaves CROSSINGS (a read no longer made leaves its READ_MODELS entry)',
  );
  for (const [crossing, reason] of Object.entries(CROSSINGS)) assert.ok(reason.length > 20, `${crossing}: give the reason`);
  for (const [file, { reason }] of Object.entries(READ_MODELS)) assert.ok(reason.length > 20, `${file}: give the reason`);
  assert.deepEqual(
    Object.keys(CROSSINGS).filter((crossing) => readModelCrossings().includes(crossing)),
    [],
    'a crossing is listed once: a read model or a crossing',
  );
});

test('a declared read model only reads the tables it declares: no SQL or drizzle write on them in its file', () => {
  const tables = schemaTables();
  const files = new Map(scannedFiles().map((file) => [file.name, file]));
  const writes = Object.entries(READ_MODELS).flatMap(([name, { tables: declared }]) => {
    const file = files.get(name);
    assert.ok(file, `${name}: a read model's file is a scanned source file`);
    return readModelWrites(name, file.text, declared, file.importsSchema, tables);
  });
  assert.deepEqual(writes, [], "a read model that writes another context's table asks the owner's face (or becomes a listed crossing)");
});

test('the change feed writes nothing of the synced tables its crossings name but their sync_seq stamp', () => {
  const tables = schemaTables();
  const files = new Map(scannedFiles().map((file) => [file.name, file]));
  const writes = CHANGE_FEED.flatMap((name) => {
    const file = files.get(name);
    assert.ok(file, `${name}: a change-feed file is a scanned source file`);
    assert.ok(feedTables(name).length > 0, `${name}: a change-feed file crosses into the synced tables (or leaves CHANGE_FEED)`);
    return readModelWrites(name, withoutStamps(file.text), feedTables(name), file.importsSchema, tables);
  });
  assert.deepEqual(writes, [], "the change feed reads the synced tables and stamps sync_seq; any other write goes through the owner's face");
  // Every crossing left is the change feed's.
  assert.deepEqual(
    Object.keys(CROSSINGS).filter((crossing) => !CHANGE_FEED.some((file) => crossing.endsWith(` ← ${file}`))),
    [],
    'a crossing outside the change feed is a read model (READ_MODELS) or asks the owner',
  );
  // A write added to the batch is found: the rule holds the feed's real text, its stamps left out.
  const batch = files.get('fleetSync/batch.ts')!;
  const added = (write: string) =>
    readModelWrites('fleetSync/batch.ts', withoutStamps(`${batch.text}\n${write}`), feedTables('fleetSync/batch.ts'), batch.importsSchema, tables);
  assert.deepEqual(added("db.sqlite.prepare('UPDATE meter_days SET kwh = 0, sync_seq = 1 WHERE day = ?');"), ['meter_days ← fleetSync/batch.ts']);
  assert.deepEqual(added('tx.update(alerts).set({ syncSeq: next, status: 1 }).run();'), ['alerts ← fleetSync/batch.ts']);
  assert.deepEqual(added('tx.delete(meters).run();'), ['meters ← fleetSync/batch.ts']);
  assert.deepEqual(added("db.sqlite.prepare('UPDATE alerts SET sync_seq = ? WHERE id = ?');"), []);
});

test('the read-model rule catches a write: SQL and drizzle, aliased, quoted, and not a read or a write of another table', () => {
  const tables = new Map([
    ['alerts', 'alerts'],
    ['faults', 'faults'],
    ['reportRuns', 'report_runs'],
  ]);
  const schemaImport = (specifier: string) => specifier.endsWith('schema/index.ts');
  const head = "import { alerts as alertRows, faults, reportRuns } from '../../platform/db/schema/index.ts';";
  const reads = [
    head,
    "db.sqlite.prepare('SELECT level, count(*) FROM alerts JOIN faults ON faults.id = alerts.id GROUP BY level');",
    'db.orm.select().from(alertRows).where(eq(alertRows.id, 1)).all();',
    // its own table: written freely; a Map's delete is not a table's
    'db.orm.update(reportRuns).set({ status: 1 }).run();',
    "db.sqlite.prepare('INSERT INTO report_runs (id) VALUES (1) ON CONFLICT (id) DO UPDATE SET id = excluded.id');",
    'active.delete(planId);',
    '// DELETE FROM alerts is for the owner, not for this screen',
  ].join('\n');
  assert.deepEqual(readModelWrites('screens/x.ts', reads, ['alerts', 'faults'], schemaImport, tables), []);
  const writes: [string, string][] = [
    ["db.sqlite.prepare('DELETE FROM alerts WHERE id = ?');", 'alerts'],
    ["db.sqlite.prepare('UPDATE faults SET state = 1');", 'faults'],
    ["db.sqlite.prepare('INSERT OR IGNORE INTO `alerts` (id) VALUES (1)');", 'alerts'],
    ["db.sqlite.prepare('REPLACE INTO faults (id) VALUES (1)');", 'faults'],
    ['db.orm.update(alertRows).set({ level: 1 }).run();', 'alerts'],
    ['tx\n  .insert(faults)\n  .values({ id: 1 })\n  .run();', 'faults'],
    ['db.orm.delete( alertRows ).run();', 'alerts'],
  ];
  for (const [write, table] of writes)
    assert.deepEqual(readModelWrites('screens/x.ts', `${head}\n${write}`, ['alerts', 'faults'], schemaImport, tables), [`${table} ← screens/x.ts`], write);
});

test('the scan finds drizzle imports and SQL names, and not prose, type imports or other modules', () => {
  const tables = new Map([
    ['meterDays', 'meter_days'],
    ['alerts', 'alerts'],
    ['users', 'users'],
  ]);
  const schemaImport = (specifier: string) => specifier.endsWith('schema/index.ts');
  const text = [
    "import { meterDays as days, type MeterTerm } from '../platform/db/schema/index.ts';",
    "import type { users } from '../platform/db/schema/index.ts';",
    "import { alerts } from './alerts.ts';",
    '// the alerts FROM users are read elsewhere',
    "db.sqlite.prepare('SELECT id FROM alerts WHERE x = 1');",
    'const words = "raise alerts for users";',
  ].join('\n');
  assert.deepEqual([...touchedTables(text, schemaImport, tables)].sort(), ['alerts', 'meter_days']);
});
