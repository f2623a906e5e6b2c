// A tenant's statement of a period: its fraction of each allocated meter's bands (priced by its own tariff where one is
// in force), its share of the standing charges by quantity, its share of the demand charges by coincident peak, and
// the meters it was billed for with their readings.
import type { Commodity } from '../platform/db/schema/index.ts';
import {
  cents,
  DEMAND_RULE,
  ESTIMATE_RULE,
  OWN_STANDING_RULE,
  OWN_TARIFF_RULE,
  STANDING_RULE,
  sumBill,
  UNITS,
  type BilledMeter,
  type ChargeLine,
  type DemandLine,
  type MeterLine,
  type MeterPeriod,
  type Split,
  type TenantBill,
} from './bill.ts';
import type { OwnTariffBook } from './ownTariffs.ts';
import type { DemandMonth, Standing } from './siteBill.ts';
import { round } from '../platform/numbers.ts';

type Bands = Map<string, { quantity: number; cost: number }>;

/** What every tenant's statement of one period is computed from (the site's side already computed). */
export type TenantBasis = {
  to: string;
  splits: Split[];
  periodOf: (meter: BilledMeter) => MeterPeriod;
  standing: Standing;
  siteQuantity: Map<Commodity, number>;
  demandMonths: DemandMonth[];
  book: OwnTariffBook;
  /** A meter's register at the period's start and end. */
  readings: (meter: BilledMeter, to: string, quantity: number) => { start: number | null; end: number | null };
  /** A meter's stored quantity in the interval starting at `at` (0 where it has none). */
  quantityAt: (meterId: number, at: number) => number;
  /** The meter's period priced by the tenant's (else the meter's) own tariff; null where none touches it. */
  ownPricing: (book: OwnTariffBook, tenantId: number, period: MeterPeriod) => { bands: Bands; estimatedBands: Bands } | null;
};

type TenantEnergy = {
  bands: Map<string, { utility: Commodity; band: string; quantity: number; cost: number; estimatedQuantity: number; estimatedCost: number }>;
  quantity: Map<Commodity, number>;
  ownTariffs: Set<Commodity>;
  carbonKg: number;
  meters: MeterLine[];
};

/** The tenant's fraction of each allocated meter: its meter lines, its energy per utility and band, quantity and carbon. */
function tenantEnergy(basis: TenantBasis, tenantId: number): TenantEnergy {
  const { splits, periodOf, readings, to, book } = basis;
  const bands: TenantEnergy['bands'] = new Map();
  const quantity = new Map<Commodity, number>();
  const ownTariffs = new Set<Commodity>();
  let carbonKg = 0;
  const meters: MeterLine[] = [];
  for (const split of splits) {
    const fraction = split.fractions.get(tenantId) ?? 0;
    if (fraction <= 0) continue;
    const period = periodOf(split.meter);
    const read = readings(split.meter, to, period.quantity);
    meters.push({
      meterId: split.meter.id,
      name: split.meter.name,
      utility: split.meter.commodity,
      unit: UNITS[split.meter.commodity],
      method: split.method,
      share: round(fraction, 6),
      quantity: round(period.quantity, 3),
      billedQuantity: round(period.quantity * fraction, 3),
      startReading: read.start,
      endReading: read.end,
      intervals: period.intervals,
      missing: period.missing,
      estimated: period.estimated,
      billingEstimated: period.billingEstimated,
      estimatedQuantity: round(period.estimatedQuantity, 3),
    });
    carbonKg += period.carbonKg * fraction;
    quantity.set(split.meter.commodity, (quantity.get(split.meter.commodity) ?? 0) + period.quantity * fraction);
    // The tenant's own tariff, else the meter's, else the site's (already in the meter's period).
    const priced = basis.ownPricing(book, tenantId, period) ?? { bands: period.bands, estimatedBands: period.estimatedBands };
    if (priced.bands !== period.bands) ownTariffs.add(split.meter.commodity);
    for (const [band, figures] of priced.bands) {
      const key = `${split.meter.commodity}|${band}`;
      const line = bands.get(key) ?? { utility: split.meter.commodity, band, quantity: 0, cost: 0, estimatedQuantity: 0, estimatedCost: 0 };
      line.quantity += figures.quantity * fraction;
      line.cost += figures.cost * fraction;
      const guess = priced.estimatedBands.get(band);
      if (guess) {
        line.estimatedQuantity += guess.quantity * fraction;
        line.estimatedCost += guess.cost * fraction;
      }
      bands.set(key, line);
    }
  }
  return { bands, quantity, ownTariffs, carbonKg, meters };
}

/** The tenant's standing charges: its share of the site's by quantity, or its own tariff's on the days one is in force. */
function tenantStanding(basis: TenantBasis, tenantId: number, quantity: Map<Commodity, number>): ChargeLine[] {
  const { standingOf, standingByDay } = basis.standing;
  const standing: ChargeLine[] = [];
  for (const [utility, amount] of standingOf) {
    const own = quantity.get(utility) ?? 0;
    const total = basis.siteQuantity.get(utility) ?? 0;
    const share = own > 0 && total > 0 ? own / total : 0;
    // A tenant with a tariff of its own pays that tariff's standing charge on the days it is in force, its share of
    // the site's on the others.
    let charge = 0;
    let ownDays = 0;
    for (const [day, site] of standingByDay.get(utility) ?? new Map<string, number>()) {
      const mine = basis.book.inForce({ tenantId }, utility, day);
      if (mine) ownDays += 1;
      charge += mine ? mine.standingChargePerDay : site * share;
    }
    if (!ownDays && share <= 0) continue;
    if (!ownDays) charge = amount * share;
    if (ownDays && charge <= 0) continue;
    standing.push({ utility, amountCents: cents(charge), rule: ownDays ? OWN_STANDING_RULE : STANDING_RULE });
  }
  return standing;
}

/** The tenant's demand charges: each month's by its allocated demand in the interval of the site's peak. */
function tenantDemand(basis: TenantBasis, tenantId: number): DemandLine[] {
  const demand: DemandLine[] = [];
  for (const month of basis.demandMonths) {
    if (month.peakAt === null || month.siteAtPeak <= 0) continue;
    let own = 0;
    for (const split of basis.splits)
      if (split.meter.commodity === 'electricity') own += (split.fractions.get(tenantId) ?? 0) * basis.quantityAt(split.meter.id, month.peakAt);
    if (own <= 0) continue;
    const share = own / month.siteAtPeak;
    demand.push({
      month: month.month,
      billedKw: month.billedKw,
      siteKwAtPeak: round(month.siteAtPeak * 4, 3),
      shareKw: round(own * 4, 3),
      share: round(share, 6),
      amountCents: cents(month.amount * share),
      peakAt: new Date(month.peakAt).toISOString(),
      rule: DEMAND_RULE,
    });
  }
  return demand;
}

/** One tenant's statement of the period. */
export function tenantBill(basis: TenantBasis, tenantId: number): TenantBill {
  const { bands, quantity, ownTariffs, carbonKg, meters } = tenantEnergy(basis, tenantId);
  const standing = tenantStanding(basis, tenantId, quantity);
  const demand = tenantDemand(basis, tenantId);
  const bill: TenantBill = {
    energy: [...bands.values()].map((line) => ({
      utility: line.utility,
      unit: UNITS[line.utility],
      band: line.band,
      quantity: round(line.quantity, 3),
      amountCents: cents(line.cost),
      ...(line.estimatedQuantity > 0 ? { estimatedQuantity: round(line.estimatedQuantity, 3), estimatedAmountCents: cents(line.estimatedCost) } : {}),
    })),
    standing,
    demand,
    carbonKg: round(carbonKg, 3),
    totalCents: 0,
    meters,
  };
  bill.totalCents = sumBill(bill);
  if (ownTariffs.size) bill.tariffRule = OWN_TARIFF_RULE;
  const guessed = bill.energy.reduce((sum, line) => sum + (line.estimatedAmountCents ?? 0), 0);
  if (meters.some((meter) => meter.billingEstimated > 0)) {
    bill.estimatedAmountCents = guessed;
    bill.estimateRule = ESTIMATE_RULE;
  }
  return bill;
}
