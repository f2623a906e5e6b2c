// Fleet sync on the site box: the link to a fleet (absent: sync is off) and the one sequence every synced row takes.
// The site's SQLite is the queue: triggers (migration 0017) stamp meter_days and alerts rows with the next sequence on
// every insert and change, in the writing transaction, so commits and sequences run in the same order.
import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';

/** One row (id 1) while the box is joined to a fleet. The credential is the site's own secret, sent as a bearer token. */
export const fleetLink = sqliteTable('fleet_link', {
  id: integer('id').primaryKey(),
  fleetUrl: text('fleet_url').notNull(),
  siteId: text('site_id').notNull(),
  credential: text('credential').notNull(),
  joinedAt: text('joined_at').notNull(),
  /** Every row with a sequence up to here is acknowledged by the fleet; only its acknowledgement moves it. */
  cursor: integer('cursor').notNull().default(0),
  /** The newest day was sent ahead of history after an outage (its day): not again until the history reaches it. */
  aheadDay: text('ahead_day'),
  /** Written with every batch that moved the cursor or changed the state; a heartbeat only when these are 15 min old. */
  lastAttemptAt: text('last_attempt_at'),
  lastSuccessAt: text('last_success_at'),
  /** The fleet's last refusal or the transport's last error; null after a batch is stored. */
  lastError: text('last_error'),
  lastErrorCode: text('last_error_code'),
  /** Not before this instant (ms): the fleet's Retry-After, or the random delay after an outage. */
  notBefore: integer('not_before').notNull().default(0),
});

/**
 * The next sequence is value + 1 (one row, id 1). `sentThrough`: the highest sequence a batch has carried. A row is
 * stamped anew only when it changes after a batch carried it (its sequence at or below sentThrough); a row not yet
 * carried keeps its number, as the batch that carries it reads its content then. So a box not joined to a fleet, or one
 * whose fleet is away, pays no index writes for rows changing again and again (the collector rewrites today's rows
 * at every write: hourly).
 */
export const syncSequence = sqliteTable('sync_sequence', {
  id: integer('id').primaryKey(),
  value: integer('value').notNull(),
  sentThrough: integer('sent_through').notNull().default(0),
});

/**
 * Alerts deleted on the box, so the deletion reaches the fleet like any change: the trigger alerts_sync_delete
 * (migration 0024) keeps the deleted id under the next sequence. A batch carries them as `deletedAlerts`; once the fleet
 * acknowledged one it stays here below the cursor (sent again if the fleet loses it: KEPT_DELETIONS, src/fleetSync/batch.ts).
 */
export const syncDeletedAlerts = sqliteTable(
  'sync_deleted_alerts',
  {
    alertId: integer('alert_id').primaryKey(),
    syncSeq: integer('sync_seq').notNull(),
  },
  (t) => [index('sync_deleted_alerts_seq').on(t.syncSeq)],
);
