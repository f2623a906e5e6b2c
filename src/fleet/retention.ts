// Retention of raw intervals (issue 55 item 3): the 15-minute rows of months older than a kept number are dropped whole
// (their monthly partition), the day rollups kept. Dropping alone is not safe: a box re-sending its history (a re-join,
// a restatement, a restore) would make the month's partition again and fill it with a part of the month. So the month
// the fleet keeps raw rows from (`fleet_retention.raw_from`) is also the raw history limit: the ingest stores no
// interval before it (the batch is taken, its day rows stored) and no partition is made before it. The limit only moves
// forward. Under RETENTION_LOCK: the drop holds it exclusively, every ingest and partition check shares it, so a batch
// either stored its rows before the drop began or reads the new limit after it.
import type pg from 'pg';
import { inTransaction } from './db.ts';
import { FleetError } from './errors.ts';

/** Any constant: the advisory lock key shared by every ingest and taken alone by a drop. */
export const RETENTION_LOCK = 4_204_306;

/** The first month of raw rows kept ('YYYY-MM-01'), or null; read inside a transaction holding RETENTION_LOCK shared. */
export async function rawFrom(client: pg.PoolClient): Promise<string | null> {
  const result = await client.query<{ raw_from: string | null }>('select raw_from::text from fleet_retention where id = 1');
  return result.rows[0]?.raw_from ?? null;
}

/** The interval lists without the rows before the kept raw months (not stored: their month's raw rows were dropped). */
export function keptRaw<T extends { start: string }>(lists: [T[], T[]], from: string | null): [T[], T[]] {
  if (from === null) return lists;
  const limit = Date.parse(`${from}T00:00:00Z`);
  return [lists[0].filter((row) => Date.parse(row.start) >= limit), lists[1].filter((row) => Date.parse(row.start) >= limit)];
}

/**
 * Keeps the raw intervals of the current month and the `keepMonths` before it (UTC months, by the primary's clock):
 * moves `raw_from` there (never back) and drops every partition before it. Answers the limit and the months dropped.
 */
export async function dropRawMonths(pool: pg.Pool, keepMonths: number): Promise<{ rawFrom: string; dropped: string[] }> {
  if (!Number.isInteger(keepMonths) || keepMonths < 1 || keepMonths > 1_200) {
    throw new FleetError('invalid_request', 'keepMonths must be a whole number of months from 1 to 1200', { details: { field: 'keepMonths' } });
  }
  return inTransaction(pool, async (client) => {
    await client.query('select pg_advisory_xact_lock($1)', [RETENTION_LOCK]);
    const moved = await client.query<{ raw_from: string }>(
      `update fleet_retention set raw_from = greatest(raw_from, (date_trunc('month', now() at time zone 'UTC') - make_interval(months => $1))::date)
       where id = 1 returning raw_from::text`,
      [keepMonths],
    );
    const from = moved.rows[0]!.raw_from;
    const partitions = await client.query<{ name: string }>(
      `select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
       where i.inhparent = 'intervals'::regclass and c.relname ~ '^intervals_[0-9]{4}_[0-9]{2}$' order by c.relname`,
    );
    const dropped: string[] = [];
    for (const { name } of partitions.rows) {
      const month = `${name.slice(10, 14)}-${name.slice(15, 17)}`;
      if (`${month}-01` >= from) continue;
      // The name matched its pattern above; DDL takes no bind parameters.
      await client.query(`drop table ${name}`);
      dropped.push(month);
    }
    return { rawFrom: from, dropped };
  });
}
