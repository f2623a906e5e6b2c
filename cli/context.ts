// What every emsctl command shares: the data dir, the settings, the database, output in table or --json form, one-line errors.
//
// Kept light on purpose: `emsctl role list` and `emsctl status` must answer in well under a second on a small box, so
// this module and the command registrations load no database, ORM or service code; each command's action imports
// what it uses when it runs (see cli/emsctl.ts).
import fs from 'node:fs';
import { parseEnv } from 'node:util';
import type { Command } from 'commander';
import { ConfigError, loadConfig, type Config } from '../src/platform/config.ts';
import type { Db } from '../src/platform/db/client.ts';

export class CliError extends Error {
  override name = 'CliError';
}

/** A command line that cannot run as given (a missing argument, a malformed or conflicting option): exit 2, as commander's own. */
export class UsageError extends CliError {
  override name = 'UsageError';
}

export type GlobalOptions = { dataDir?: string; json?: boolean; envFile?: string };

/** The env file the installed service reads (EnvironmentFile= of its unit). */
export const SERVICE_ENV_FILE = '/etc/ems/ems.env';

/**
 * Which env file applies: --env-file, else the service's /etc/ems/ems.env when it exists and neither --data-dir nor
 * EMS_DATA_DIR point elsewhere (emsctl run by hand on the box then sees the port, host and TLS the service uses).
 */
export function envFileOf(options: GlobalOptions, env: NodeJS.ProcessEnv = process.env): string | null {
  if (options.envFile) return options.envFile;
  if (options.dataDir || env.EMS_DATA_DIR) return null;
  return fs.existsSync(SERVICE_ENV_FILE) ? SERVICE_ENV_FILE : null;
}

/** Settings from the env file under those of the environment (as node --env-file: the environment wins). */
function settings(options: GlobalOptions): NodeJS.ProcessEnv {
  const file = envFileOf(options);
  if (!file) return process.env;
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw new CliError(`cannot read the env file ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  return { ...parseEnv(text), ...process.env };
}

/** --data-dir, else EMS_DATA_DIR (environment, then env file), else ./data; every other setting as the server reads it. */
export function cliConfig(command: Command): Config {
  const options = command.optsWithGlobals() as GlobalOptions;
  try {
    return loadConfig({ ...settings(options), ...(options.dataDir ? { EMS_DATA_DIR: options.dataDir } : {}) });
  } catch (error) {
    if (error instanceof ConfigError) throw new CliError(error.message);
    throw error;
  }
}

export function wantsJson(command: Command): boolean {
  return Boolean((command.optsWithGlobals() as GlobalOptions).json);
}

/**
 * Opens the same SQLite file as the server (WAL: safe while it runs), runs fn, closes. The migrations are only
 * checked: the database is migrated (as the service does on start) when the newest shipped migration is missing,
 * which skips reading and hashing every migration file on each call.
 */
export async function withDb<T>(command: Command, fn: (db: Db, config: Config) => T | Promise<T>, options: { quickCheck?: boolean } = {}): Promise<T> {
  const config = cliConfig(command);
  const { closeDatabase, databasePath, openDatabase } = await import('../src/platform/db/client.ts');
  const file = databasePath(config.dataDir);
  // Never create an empty database by accident: a wrong --data-dir would look like a box with no users.
  if (!fs.existsSync(file)) throw new CliError(`no database at ${file}: start the service once, or pass the right --data-dir`);
  let db: Db;
  try {
    db = openDatabase(file, { migrate: false, quickCheck: options.quickCheck });
    if (!(await migrationsCurrent(db))) {
      closeDatabase(db);
      db = openDatabase(file, { quickCheck: options.quickCheck });
    }
  } catch (error) {
    throw new CliError((error as Error).message);
  }
  try {
    return await fn(db, config);
  } finally {
    closeDatabase(db);
  }
}

/** drizzle's own rule: a migration is applied when its folderMillis is not above the newest created_at recorded. */
async function migrationsCurrent(db: Db): Promise<boolean> {
  const { migrationsFolder } = await import('../src/platform/db/client.ts');
  const journal = JSON.parse(fs.readFileSync(`${migrationsFolder()}/meta/_journal.json`, 'utf8')) as { entries: Array<{ when: number }> };
  const newest = Math.max(...journal.entries.map((entry) => entry.when));
  const table = db.sqlite.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = '__drizzle_migrations'").get();
  if (!table) return false;
  const applied = db.sqlite.prepare('SELECT max(created_at) FROM __drizzle_migrations').pluck().get() as number | null;
  return applied !== null && Number(applied) >= newest;
}

/**
 * --json output has one shape per kind of thing: a list is a JSON array of objects, and a command about one thing
 * prints one object with the same fields as that thing's entry in its list (plus what the command adds, such as a
 * generated password). Errors are {"error": "..."} on standard error (see cli/emsctl.ts).
 */
export function printRows(
  command: Command,
  rows: Record<string, unknown>[],
  columns: string[],
  table?: (row: Record<string, unknown>) => Record<string, unknown>,
): void {
  if (wantsJson(command)) {
    process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
    return;
  }
  const shown = table ? rows.map(table) : rows;
  const cell = (value: unknown) => (value === null || value === undefined ? '-' : String(value));
  const widths = columns.map((column) => Math.max(column.length, ...shown.map((row) => cell(row[column]).length)));
  const line = (values: string[]) =>
    values
      .map((value, i) => value.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  process.stdout.write(`${line(columns.map((c) => c.toUpperCase()))}\n`);
  for (const row of shown) process.stdout.write(`${line(columns.map((column) => cell(row[column])))}\n`);
}

export function printResult(command: Command, result: Record<string, unknown>, text: string): void {
  process.stdout.write(wantsJson(command) ? `${JSON.stringify(result)}\n` : `${text}\n`);
}

/** Every required argument and option a command was given without, named together in one error. */
export function requireGiven(given: Array<[name: string, value: unknown]>): void {
  const missing = given.filter(([, value]) => value === undefined || value === '').map(([name]) => name);
  if (missing.length) throw new UsageError(`missing ${missing.join(' and ').replace(/ and (?=.* and )/g, ', ')}`);
}

/** A commander option parser for an integer within bounds; anything else is a one-line error. */
export function integerOption(name: string, min: number, max: number) {
  return (raw: string): number => {
    const value = Number(raw);
    if (!/^\d+$/.test(raw) || value < min || value > max) throw new UsageError(`${name}: expected an integer from ${min} to ${max}, got "${raw}"`);
    return value;
  };
}
