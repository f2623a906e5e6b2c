// Monthly partitions of `intervals`, made before a batch writes into a month that has none yet (never for a month before
// the kept raw months: retention.ts). The DDL runs in its own
// short transaction under an advisory lock (two instances may meet the same new month), never inside an ingest.
import type pg from 'pg';
import { inTransaction } from './db.ts';
import { RETENTION_LOCK, rawFrom } from './retention.ts';

const PARTITION_LOCK = 4_204_302;

/** 'YYYY-MM' (UTC) of an instant. */
export function monthOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 7);
}

function nextMonth(month: string): string {
  const [year, m] = month.split('-').map(Number) as [number, number];
  return m === 12 ? `${year + 1}-01` : `${year}-${String(m + 1).padStart(2, '0')}`;
}

export class IntervalPartitions {
  /** Months known to have a partition (this process made or saw it). Stateless across instances: a miss only costs a query. */
  private readonly known = new Set<string>();

  constructor(private readonly pool: pg.Pool) {}

  /** The months this process has not seen a partition for (the ingest checks a batch before it makes them). */
  missing(months: Iterable<string>): string[] {
    return [...new Set(months)].filter((month) => !this.known.has(month));
  }

  async ensure(months: Iterable<string>): Promise<void> {
    const missing = this.missing(months);
    if (missing.length === 0) return;
    await inTransaction(this.pool, async (client) => {
      await client.query('select pg_advisory_xact_lock($1), pg_advisory_xact_lock_shared($2)', [PARTITION_LOCK, RETENTION_LOCK]);
      // A month whose raw rows were dropped (retention.ts) is never made again: its rows are not stored.
      const from = await rawFrom(client);
      for (const month of missing) {
        if (from !== null && `${month}-01` < from) continue;
        if (!/^\d{4}-\d{2}$/.test(month)) throw new Error(`bad month ${month}`);
        const name = `intervals_${month.replace('-', '_')}`;
        // DDL cannot take bind parameters; the month was checked against its pattern just above.
        await client.query(
          `create table if not exists ${name} partition of intervals for values from ('${month}-01T00:00:00Z') to ('${nextMonth(month)}-01T00:00:00Z')`,
        );
      }
    });
    for (const month of missing) this.known.add(month);
  }
}
