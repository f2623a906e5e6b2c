// A meter's commodity and role by id, for the price of its days (pricing's port MeterCommodity): metering owns the
// meters table; pricing, built before it, prices a meter by what this answers (the interval store's writes, billing).
import type { Db } from '../platform/db/client.ts';
import type { MeterCommodity, PricedMeter } from '../pricing/index.ts';

/** The lookup, its statement prepared once per call. */
export function meterCommodity(db: Db): MeterCommodity {
  // raw SQL: a meter's commodity and role by id on the pricing path of every day write, a plain object without drizzle's row mapper
  const meter = db.sqlite.prepare('SELECT commodity, role FROM meters WHERE id = ?');
  return (meterId) => meter.get(meterId) as PricedMeter | undefined;
}
