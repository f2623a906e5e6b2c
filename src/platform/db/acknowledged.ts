// Tombstones the fleet sync carries (deleted alerts, meter days dropped at a clock step back) stay on the box after the
// fleet acknowledged them: a fleet that lost acknowledged batches asks for everything above its older cursor again, and
// a tombstone has nothing else left to send. Each owner forgets its own table's oldest ones with this one rule.
import { and, desc, lt, lte } from 'drizzle-orm';
import type { SQLiteColumn, SQLiteTable } from 'drizzle-orm/sqlite-core';
import type { Db } from './client.ts';

/** Deletes the rows acknowledged (`seq` at or below `cursor`) that are older than the newest `keep` rows by `seq`. */
export function forgetAcknowledged(db: Db, table: SQLiteTable, seq: SQLiteColumn, cursor: number, keep: number): void {
  const oldestKept = db.orm
    .select({ seq })
    .from(table)
    .orderBy(desc(seq))
    .limit(1)
    .offset(keep - 1)
    .get() as { seq: number } | undefined;
  if (oldestKept)
    db.orm
      .delete(table)
      .where(and(lte(seq, cursor), lt(seq, oldestKept.seq)))
      .run();
}
