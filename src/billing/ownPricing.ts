// A meter's period priced for one tenant by an own tariff (issue 51): the tenant's own tariff in force each day, else the
// meter's own, else the site's, band by band as the site's pricing does it.
import { meterPrices, type Tariffs } from '../pricing/index.ts';
import type { MeterPeriod } from './bill.ts';
import type { PeriodSource } from './meterPeriod.ts';
import type { OwnTariff, OwnTariffBook } from './ownTariffs.ts';

/**
 * A meter's period priced for one tenant where an own tariff is in force on some day (the tenant's, else the meter's):
 * every day's intervals as billed, by the own version's bands and prices, or the site's on days without one; null
 * when no own tariff touches the period (the site's pricing, already in the period, holds).
 */
export function ownPricing(
  source: PeriodSource,
  kwhPerM3: (days: string[]) => Map<string, number>,
  book: OwnTariffBook,
  tenantId: number,
  period: MeterPeriod,
): { bands: Map<string, { quantity: number; cost: number }>; estimatedBands: Map<string, { quantity: number; cost: number }> } | null {
  if (book.empty) return null;
  const { meter } = period;
  const versionOf = (day: string): OwnTariff | null =>
    book.inForce({ tenantId }, meter.commodity, day) ?? book.inForce({ meterId: meter.id }, meter.commodity, day);
  if (!period.days.some(({ day }) => versionOf(day))) return null;
  const { timezone } = source;
  const bands = new Map<string, { quantity: number; cost: number }>();
  const estimatedBands = new Map<string, { quantity: number; cost: number }>();
  const add = (into: Map<string, { quantity: number; cost: number }>, name: string, quantity: number, cost: number) => {
    const band = into.get(name) ?? { quantity: 0, cost: 0 };
    band.quantity += quantity;
    band.cost += cost;
    into.set(name, band);
  };
  const calorific = meter.commodity === 'gas' ? kwhPerM3(period.days.map(({ day }) => day)) : null;
  for (const { day, start, values, guessed } of period.days) {
    const count = values.length;
    const own = versionOf(day);
    let prices: Float64Array;
    let names: string[];
    if (own && meter.commodity === 'gas') {
      // Gas per kWh: the own price × the calorific value in force that day (kWh per m³); no bands.
      prices = new Float64Array(count).fill(own.price * (calorific?.get(day) ?? Number.NaN));
      names = new Array<string>(count).fill('base');
    } else if (own) {
      // An own version has the fields the band pricing reads (price, bands, holidays).
      const version = own as unknown as Parameters<Tariffs['bandPrices']>[0];
      prices = source.tariffs.bandPrices(version, timezone, day, start, count).prices;
      names = source.tariffs.bandNames(version, timezone, day, start, count);
    } else {
      prices = meterPrices(source.db, source.tariffs, source.meterOf, meter.id, timezone, day, start, count).prices;
      const site = meter.commodity === 'electricity' ? source.tariffs.versionOn(day) : source.tariffs.versionFor(meter.commodity, day);
      names = site ? source.tariffs.bandNames(site, timezone, day, start, count) : new Array<string>(count).fill('base');
    }
    for (let i = 0; i < count; i += 1) {
      const value = values[i];
      if (Number.isNaN(value)) continue;
      add(bands, names[i], value, value * prices[i]);
      if (guessed[i]) add(estimatedBands, names[i], value, value * prices[i]);
    }
  }
  return { bands, estimatedBands };
}
