// The fleet's PostgreSQL connection pool, its drizzle handle and the shipped migrations (applied at start under an
// advisory lock, so two instances starting together do not race each other's CREATE TABLE).
import path from 'node:path';
import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';
import { packageRoot } from '../platform/packageRoot.ts';
import { FleetError } from './errors.ts';
import * as schema from './schema.ts';

export type FleetOrm = NodePgDatabase<typeof schema>;
export type FleetDb = { pool: pg.Pool; orm: FleetOrm };

/** Any constant: the key of the advisory lock that serialises migrations across instances. */
const MIGRATION_LOCK = 4_204_301;

export function fleetMigrationsFolder(): string {
  return path.join(packageRoot, 'src', 'fleet', 'migrations');
}

export function openFleetDb(url: string, options: { poolSize?: number } = {}): FleetDb {
  // jit=off: the portfolio's queries are many small index lookups whose summed cost estimate crosses the JIT threshold;
  // compiling them cost ~80 ms of a 540 ms health page at 500 sites and saved nothing (measured with EXPLAIN ANALYZE).
  const pool = new pg.Pool({ connectionString: url, max: options.poolSize ?? 10, idleTimeoutMillis: 30_000, options: '-c jit=off' });
  // An idle client whose server went away (PostgreSQL restarted) emits 'error'; without a listener that kills the process.
  pool.on('error', () => {});
  // A client checked out when its connection dies (PostgreSQL restarted mid-batch) emits 'error' as well as failing its
  // query; the query's rejection is what the request handles (503), the event must not kill the process.
  pool.on('connect', (client) => client.on('error', () => {}));
  return { pool, orm: drizzle(pool, { schema }) };
}

export async function migrateFleetDb(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('select pg_advisory_lock($1)', [MIGRATION_LOCK]);
    await migrate(drizzle(client), { migrationsFolder: fleetMigrationsFolder() });
  } finally {
    await client.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => {});
    await client.end();
  }
}

/**
 * Runs `work` in one transaction on one pooled client: committed when it returns, rolled back when it throws (the error
 * goes on to the caller). A client whose statement failed for any reason but a refusal (a FleetError, thrown by the
 * fleet's own checks) is destroyed, not pooled: its connection may be dead (PostgreSQL restarted mid-transaction).
 */
export async function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('begin');
    const result = await work(client);
    await client.query('commit');
    return result;
  } catch (error) {
    if (!(error instanceof FleetError)) broken = error as Error;
    await client.query('rollback').catch(() => {});
    throw error;
  } finally {
    client.release(broken);
  }
}

/** PostgreSQL's SQLSTATE of a failed statement (23505 unique, 23503 foreign key), when the error is one. */
export function sqlState(error: unknown): string | undefined {
  if (error instanceof FleetError) return undefined;
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * A user's site list naming a site that does not exist fails on `fleet_user_sites`' foreign key (23503): that is the
 * caller's 400 on `/sites`, any other error goes on as it is.
 */
export function siteListRefusal(error: unknown): unknown {
  return sqlState(error) === '23503' ? new FleetError('invalid_request', 'sites names a site that does not exist', { details: { field: '/sites' } }) : error;
}
