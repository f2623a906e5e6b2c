// Restating stored costs (issue 41, item 4): a tariff or calorific version entered for the past changes what the days
// it covers cost. Each stored day row of the meters it prices is written again through the interval store, which
// prices it by the versions in force now and moves its month rollup by the difference; nothing else changes (the
// stored kWh stay as measured). Done in slices of days, one transaction each, with the event loop free between.
import type { AuditLog, Actor } from '../platform/db/auditTrail.ts';
import type { Db } from '../platform/db/client.ts';
import type { Commodity } from '../platform/db/schema/index.ts';
import { addDays } from '../platform/time/calendar.ts';
import { type IntervalStore, yieldToLoop } from './store.ts';
import { round } from '../platform/numbers.ts';

/** Days restated per transaction: 7 days × a few hundred meters stays well under the 50 ms a request may wait. */
const SLICE_DAYS = 7;

export type Restatement = { from: string; to: string; commodity: Commodity; dayRows: number; costBefore: number; costAfter: number };

/**
 * Re-prices every stored day in [from, to) of the meters of a commodity (all of them for a calorific change: gas) and
 * records one audit entry with the cost before and after.
 */
export async function restateCosts(
  deps: { db: Db; store: IntervalStore; audit: AuditLog },
  scope: { from: string; to: string; commodity: Commodity; reason: { resource: string; resourceId: number } },
  actor: Actor | null,
): Promise<Restatement> {
  const { db, store } = deps;
  // raw SQL: the meters of a commodity, with the default for rows written before the column (coalesce), plucked
  const meters = db.sqlite.prepare("SELECT id FROM meters WHERE coalesce(commodity, 'electricity') = ?").pluck().all(scope.commodity) as number[];
  // raw SQL: a meter's stored days of a range, plucked, in day order
  const days = db.sqlite.prepare('SELECT day FROM meter_days WHERE meter_id = ? AND day >= ? AND day < ? ORDER BY day').pluck();
  // raw SQL: the stored cost of a json_each set of meters over a range, summed from the rollup column
  const sum = db.sqlite
    .prepare('SELECT coalesce(sum(cost), 0) FROM meter_days WHERE meter_id IN (SELECT value FROM json_each(?)) AND day >= ? AND day < ?')
    .pluck();
  const ids = JSON.stringify(meters);
  // Nothing is stored before the first day row: the slices start there (a first version covers every day before it).
  // raw SQL: the first stored day of a json_each set of meters, from the (meter_id, day) key
  const first = db.sqlite
    .prepare('SELECT min(day) FROM meter_days WHERE meter_id IN (SELECT value FROM json_each(?)) AND day >= ?')
    .pluck()
    .get(ids, scope.from) as string | null;
  const start = first && first > scope.from ? first : scope.from;
  const costBefore = sum.get(ids, scope.from, scope.to) as number;
  let dayRows = 0;
  for (let sliceFrom = start; sliceFrom < scope.to; sliceFrom = addDays(sliceFrom, SLICE_DAYS)) {
    const sliceTo = addDays(sliceFrom, SLICE_DAYS) < scope.to ? addDays(sliceFrom, SLICE_DAYS) : scope.to;
    store.transaction(() => {
      for (const meterId of meters) {
        const records = (days.all(meterId, sliceFrom, sliceTo) as string[]).map((day) => store.load(meterId, day, true));
        store.save(records);
        dayRows += records.length;
      }
    });
    await yieldToLoop();
  }
  const costAfter = sum.get(ids, scope.from, scope.to) as number;
  const restatement = { from: scope.from, to: scope.to, commodity: scope.commodity, dayRows, costBefore, costAfter };
  deps.audit.record({
    actor,
    action: 'restate_costs',
    resource: scope.reason.resource,
    resourceId: scope.reason.resourceId,
    before: { from: scope.from, to: scope.to, commodity: scope.commodity, cost: round(costBefore, 2) },
    after: { dayRows, cost: round(costAfter, 2) },
  });
  return restatement;
}
