// What every emsctl command shares: the data dir, the database, output in table or --json form, one-line errors.
import fs from 'node:fs';
import type { Command } from 'commander';
import { ConfigError, loadConfig, type Config } from '../src/config.ts';
import { closeDatabase, databasePath, openDatabase, type Db } from '../src/db/client.ts';

export class CliError extends Error {
  override name = 'CliError';
}

export type GlobalOptions = { dataDir?: string; json?: boolean };

/** --data-dir, else EMS_DATA_DIR, else ./data; every other setting from the environment like the server. */
export function cliConfig(command: Command): Config {
  const options = command.optsWithGlobals() as GlobalOptions;
  try {
    return loadConfig({ ...process.env, ...(options.dataDir ? { EMS_DATA_DIR: options.dataDir } : {}) });
  } catch (error) {
    if (error instanceof ConfigError) throw new CliError(error.message);
    throw error;
  }
}

export function wantsJson(command: Command): boolean {
  return Boolean((command.optsWithGlobals() as GlobalOptions).json);
}

/** Opens the same SQLite file as the server (WAL: safe while it runs), runs fn, closes. */
export async function withDb<T>(command: Command, fn: (db: Db, config: Config) => T | Promise<T>): Promise<T> {
  const config = cliConfig(command);
  const file = databasePath(config.dataDir);
  // Never create an empty database by accident: a wrong --data-dir would look like a box with no users.
  if (!fs.existsSync(file)) throw new CliError(`no database at ${file}: start the service once, or pass the right --data-dir`);
  let db: Db;
  try {
    db = openDatabase(file);
  } catch (error) {
    throw new CliError((error as Error).message);
  }
  try {
    return await fn(db, config);
  } finally {
    closeDatabase(db);
  }
}

/** Rows as aligned columns, or as JSON with --json. */
export function printRows(command: Command, rows: Record<string, unknown>[], columns: string[]): void {
  if (wantsJson(command)) {
    process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
    return;
  }
  const cell = (value: unknown) => (value === null || value === undefined ? '-' : String(value));
  const widths = columns.map((column) => Math.max(column.length, ...rows.map((row) => cell(row[column]).length)));
  const line = (values: string[]) => values.map((value, i) => value.padEnd(widths[i])).join('  ').trimEnd();
  process.stdout.write(`${line(columns.map((c) => c.toUpperCase()))}\n`);
  for (const row of rows) process.stdout.write(`${line(columns.map((column) => cell(row[column])))}\n`);
}

export function printResult(command: Command, result: Record<string, unknown>, text: string): void {
  process.stdout.write(wantsJson(command) ? `${JSON.stringify(result)}\n` : `${text}\n`);
}

/** A commander option parser for an integer within bounds; anything else is a one-line error. */
export function integerOption(name: string, min: number, max: number) {
  return (raw: string): number => {
    const value = Number(raw);
    if (!/^\d+$/.test(raw) || value < min || value > max) throw new CliError(`${name}: expected an integer from ${min} to ${max}, got "${raw}"`);
    return value;
  };
}
