// Meter days the box deleted whole at a clock step back (clockStep.ts dropAfter records them in meter_days_dropped, for
// the fleet sync's change feed: src/fleetSync/droppedDays.ts). The feed reads them; forgetting the acknowledged ones is
// a write, so it is metering's, asked through its face.
import { forgetAcknowledged } from '../platform/db/acknowledged.ts';
import type { Db } from '../platform/db/client.ts';
import { meterDaysDropped } from '../platform/db/schema/index.ts';

/**
 * Acknowledged drops kept on the box, like deleted alerts (fleetSync/batch.ts KEPT_DELETIONS): a fleet that lost acknowledged
 * batches asks for everything above its older cursor again, and a drop has nothing else left to send.
 */
export const KEPT_DROPS = 10_000;

/** Drops the acknowledged drops (at or below `cursor`) older than the newest `keep` entries. */
export function forgetAcknowledgedDrops(db: Db, cursor: number, keep = KEPT_DROPS): void {
  forgetAcknowledged(db, meterDaysDropped, meterDaysDropped.syncSeq, cursor, keep);
}
