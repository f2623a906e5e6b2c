// Structure (issue 40): every table belongs to one context, and only that context's code touches it, through drizzle
// (a table identifier imported from the schema) or raw SQL (the table's name after FROM, JOIN, INTO, UPDATE, TABLE or
// ON). Another context asks the owner's face (metering's StoredDays for the stored day rows, AlertService for
// alerts, …). What is left is listed in CROSSINGS, each with its reason; a crossing that is gone must leave the list.
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
  'fdd_episodes ← reporting/reports/content.ts':
    "a monthly report's costliest equipment faults over its period, a ranked read in SQL in the report's read (reporting is built before faultDetection)",
  'alerts ← reporting/reports/content.ts': "a report's alert list and counts by level over its period, aggregates in SQL in the report's read",
  'alerts ← screens/dashboard/service.ts': "the public dashboard's recent alerts: only public fields (publicTitle), kept with the dashboard's payload",
  'alerts ← screens/overview/service.ts':
    "the overview's open-alert counts, one statement among the overview's counts (kept together in one Kept over the tables it reads)",
  'alerts ← screens/wallboard/service.ts': "the wallboard's active, unshelved alerts of an area; the screen's own projection",
  'area_floor_areas ← fleetSync/batch.ts':
    'the fleet sync batch is the change feed of every synced table: it reads the rows above its cursor (sync_seq, stamped by the triggers of migration 0017) of each table in one read transaction, so one batch is one consistent snapshot',
  'audit_log ← access/audit/service.ts': 'the audit trail reader (GET /api/audit): access reads the log AuditLog writes on the floor',
  'energy_areas ← metering/meters.ts':
    "a meter's new area gets its area card row in the meter's own write transaction (and a name clash with a card is refused); metering is built before energy",
  'faults ← reporting/reports/content.ts': "a report's fault counts by severity and the mean time to resolve, aggregates in SQL",
  'faults ← screens/overview/service.ts': "the overview's open-fault counts (one Kept over the tables it reads)",
  'maintenance ← reporting/reports/content.ts': "a report's overdue maintenance, an aggregate in SQL",
  'maintenance ← screens/overview/service.ts': "the overview's upcoming and overdue maintenance counts (one Kept over the tables it reads)",
  'calorific_versions ← fleetSync/batch.ts':
    "a gas day's kWh is sent beside its m³: the calorific versions are read in the batch's own read transaction so both come from one snapshot; the rule itself is pricing's kwhPerM3ByDay",
  'meter_days ← fleetSync/batch.ts':
    'the fleet sync batch is the change feed of every synced table: it reads the rows above its cursor (sync_seq, stamped by the triggers of migration 0017) of each table in one read transaction, so one batch is one consistent snapshot',
  'meter_days ← fleetSync/link.ts':
    "counts the day rows above the fleet cursor (what the box still has to send) for `emsctl fleet status`: the change feed's own question",
  'meters ← energy/figures.ts':
    "the figures' layout (which meters make the site and each area, virtual meters' terms) read once per meters write into a Kept; the day and month rows it sums are read through metering's StoredDays",
  'meters ← fleetSync/batch.ts':
    'the fleet sync batch is the change feed of every synced table: it reads the rows above its cursor (sync_seq, stamped by the triggers of migration 0017) of each table in one read transaction, so one batch is one consistent snapshot',
  'outdoor_days ← metering/rezone.ts':
    "a time-zone move drops the outdoor days keyed by the old zone's site days, in the move's transaction; metering is built before analysis",
  'platform_config ← fleetSync/batch.ts':
    'the fleet sync batch is the change feed of every synced table: it reads the rows above its cursor (sync_seq, stamped by the triggers of migration 0017) of each table in one read transaction, so one batch is one consistent snapshot',
  'platform_config ← reporting/reports/runs.ts': "the site's zone and name joined with a plan in the run's one read",
  'platform_config ← reporting/reports/scheduler.ts':
    "the site's zone joined with the enabled plans in the scheduler's one read (a zone change re-times every plan)",
  'platform_config ← screens/overview/service.ts': "the overview's site name, zone and currency, in the overview's one Kept",
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

/** The tables a source text touches: drizzle table identifiers imported (as values) from the schema, and table names in SQL. */
export function touchedTables(text: string, importsSchema: (specifier: string) => boolean, tables: Map<string, string>): Set<string> {
  const names = new Set(tables.values());
  const touched = new Set<string>();
  for (const match of text.matchAll(/import\s+(type\s+)?\{([^}]*)\}\s+from\s+'([^']+)'/g)) {
    if (match[1] || !importsSchema(match[3])) continue;
    for (const part of match[2].split(',')) {
      const imported = part.trim();
      if (!imported || imported.startsWith('type ')) continue;
      const table = tables.get(imported.split(/\s+as\s+/)[0]);
      if (table) touched.add(table);
    }
  }
  // SQL keywords are written in capitals here; comments are left out (they name tables in prose).
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  for (const match of code.matchAll(/\b(?:FROM|JOIN|INTO|UPDATE|TABLE|ON)\s+([a-z_][a-z_0-9]*)\b/g)) if (names.has(match[1])) touched.add(match[1]);
  return touched;
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

test('a table is touched only by its owning context; each crossing left is listed with its reason', () => {
  const tables = schemaTables();
  const crossings: string[] = [];
  for (const file of sourceFiles(SRC)) {
    const name = path.relative(SRC, file).split(path.sep).join('/');
    if (NOT_SCANNED.some((folder) => name.startsWith(folder))) continue;
    const importsSchema = (specifier: string) =>
      specifier.startsWith('.') &&
      path
        .relative(SRC, path.resolve(path.dirname(file), specifier))
        .split(path.sep)
        .join('/')
        .startsWith('platform/db/schema');
    for (const table of touchedTables(fs.readFileSync(file, 'utf8'), importsSchema, tables)) {
      if (table in SHARED || OWNERS[table] === contextOf(name)) continue;
      crossings.push(`${table} ← ${name}`);
    }
  }
  const listed = Object.keys(CROSSINGS);
  assert.deepEqual(
    crossings.filter((crossing) => !listed.includes(crossing)).sort(),
    [],
    "ask the owner's face (or list the crossing in CROSSINGS with its reason)",
  );
  assert.deepEqual(
    listed.filter((crossing) => !crossings.includes(crossing)),
    [],
    'a crossing that is gone leaves CROSSINGS',
  );
  for (const [crossing, reason] of Object.entries(CROSSINGS)) assert.ok(reason.length > 20, `${crossing}: give the reason`);
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
