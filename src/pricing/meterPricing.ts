// The price of each stored interval of a meter's day by its commodity (issue 26), for the rollups the interval store
// keeps with every write (IntervalStore.save). Kept apart from commodities.ts: the store must not import the figures.
// A meter's commodity and role come through the port MeterCommodity (metering's meterCommodity): metering owns the
// meters table and is built after pricing.
import type { Db } from '../platform/db/client.ts';
import type { Commodity } from '../platform/db/schema/index.ts';
import type { Tariffs } from './tariffs.ts';

/** What the interval store prices one meter's day with: a price per stored unit for each interval, CO2 per unit. */
export type DayPricing = { prices: Float64Array; carbonFactor: number };

/** What a meter is priced by: its commodity and its role (import, export, generation). */
export type PricedMeter = { commodity: Commodity; role: string };
/** The port to a meter's commodity and role by id; undefined for a meter that is not there (priced as electricity import). */
export type MeterCommodity = (meterId: number) => PricedMeter | undefined;

const pricingStatements = new WeakMap<Db, { calorific: Statement }>();
type Statement = ReturnType<Db['sqlite']['prepare']>;

/**
 * The price of each interval of a meter's day by its commodity, for the rollups the interval store keeps (issue 26):
 * an electricity import meter at the electricity tariff (bands included); an export meter at the feed-in price as a
 * negative cost (money the site gets back; no CO2); gas at its tariff's price per kWh × the calorific value in force
 * that day (stored values are m³); water per m³; heat per kWh. A commodity without a tariff version that day, and
 * generation (not billed), is unpriced: 0 cost and 0 CO2, since the rollup columns cannot hold null. Standing charges
 * are per day and stay with the figures, as for electricity.
 */
export function meterPrices(
  db: Db,
  tariffs: Tariffs,
  meterOf: MeterCommodity,
  meterId: number,
  timezone: string,
  day: string,
  start: number,
  count: number,
  /** The electricity tariff's prices of a day (the store passes its per-day memo). */
  electricityPrices: (timezone: string, day: string, start: number, count: number) => ReturnType<Tariffs['prices']> = (...args) => tariffs.prices(...args),
): DayPricing {
  let statements = pricingStatements.get(db);
  if (!statements) {
    statements = {
      // raw SQL: the calorific factor of a day as one product (kwh_per_m3 * correction_factor), newest version before it
      calorific: db.sqlite
        .prepare('SELECT kwh_per_m3 * correction_factor FROM calorific_versions WHERE valid_from <= ? ORDER BY valid_from DESC LIMIT 1')
        .pluck(),
    };
    pricingStatements.set(db, statements);
  }
  const meter = meterOf(meterId);
  const commodity = meter?.commodity ?? 'electricity';
  const role = meter?.role ?? 'import';
  const unpriced = { prices: new Float64Array(count), carbonFactor: 0 };
  if (commodity === 'electricity') {
    if (role === 'generation') return unpriced;
    if (role === 'export') return { prices: new Float64Array(count).fill(-tariffs.versionOn(day).feedInPrice), carbonFactor: 0 };
    const { prices, version } = electricityPrices(timezone, day, start, count);
    return { prices, carbonFactor: version.carbonFactor };
  }
  const version = tariffs.versionFor(commodity, day);
  if (!version) return unpriced;
  const { prices } = tariffs.bandPrices(version, timezone, day, start, count);
  if (commodity !== 'gas') return { prices, carbonFactor: version.carbonFactor };
  const kwhPerM3 = (statements.calorific.get(day) as number | undefined) ?? NaN;
  if (!Number.isFinite(kwhPerM3)) return unpriced;
  return { prices: prices.map((price) => price * kwhPerM3), carbonFactor: version.carbonFactor * kwhPerM3 };
}
