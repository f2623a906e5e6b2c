// The fleet's PostgreSQL connection pool, its drizzle handle and the shipped migrations (applied at start under an
// advisory lock, so two instances starting together do not race each other's CREATE TABLE).
import path from 'node:path';
import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';
import { packageRoot } from '../platform/packageRoot.ts';
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
