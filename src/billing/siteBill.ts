// The site's side of a period's bill: the data quality of the meters billed, the site's energy per utility and band, the
// standing charges of each day, the demand charges of each month the period touches, and the landlord's share as what
// the tenants' statements leave of the site's bill.
import type { DemandCharges } from '../analysis/index.ts';
import type { Tariffs } from '../pricing/index.ts';
import type { Commodity } from '../platform/db/schema/index.ts';
import { daysBetween } from '../platform/time/calendar.ts';
import { cents, sumBill, UNITS, type Bill, type BilledMeter, type MeterPeriod, type PeriodBill, type Quality } from './bill.ts';
import { round } from '../platform/numbers.ts';

/** A month of the period with a demand charge: the charge × the period's share of its days, and the site at its peak. */
export type DemandMonth = { month: string; share: number; amount: number; billedKw: number; peakAt: number | null; siteAtPeak: number };

/** The standing charges of each utility: the period's sum, and each day's (the version in force that day). */
export type Standing = { standingOf: Map<Commodity, number>; standingByDay: Map<Commodity, Map<string, number>> };

/** The data quality of the meters billed, each counted once. */
export function periodQuality(meters: BilledMeter[], periodOf: (meter: BilledMeter) => MeterPeriod): Quality {
  const quality: Quality = { intervals: 0, missing: 0, estimated: 0, missingPercent: 0, estimatedPercent: 0, billingEstimated: 0 };
  for (const meter of new Map(meters.map((m) => [m.id, m])).values()) {
    const period = periodOf(meter);
    quality.intervals += period.intervals;
    quality.missing += period.missing;
    quality.estimated += period.estimated;
    quality.billingEstimated += period.billingEstimated;
  }
  quality.missingPercent = quality.intervals ? round((100 * quality.missing) / quality.intervals, 3) : 0;
  quality.estimatedPercent = quality.intervals ? round((100 * quality.estimated) / quality.intervals, 3) : 0;
  return quality;
}

/** Each utility's standing charges over [from, to): Σ standingChargePerDay of the version in force each day. */
export function standingCharges(tariffs: Tariffs, utilities: Commodity[], from: string, to: string): Standing {
  const standingOf = new Map<Commodity, number>();
  const standingByDay = new Map<Commodity, Map<string, number>>();
  for (const utility of utilities) {
    let amount = 0;
    const byDay = new Map<string, number>();
    for (const day of daysBetween(from, to)) {
      const version = utility === 'electricity' ? tariffs.versionOn(day) : tariffs.versionFor(utility, day);
      amount += version?.standingChargePerDay ?? 0;
      byDay.set(day, version?.standingChargePerDay ?? 0);
    }
    standingOf.set(utility, amount);
    standingByDay.set(utility, byDay);
  }
  return { standingOf, standingByDay };
}

/** The months [from, to) touches, each with the share of its days inside the period. */
export function months(from: string, to: string): { month: string; share: number }[] {
  const days = new Map<string, { inside: number; all: number }>();
  for (const day of daysBetween(from, to)) {
    const month = day.slice(0, 7);
    if (!days.has(month)) {
      const first = `${month}-01`;
      const [y, m] = month.split('-').map(Number);
      const next = m === 12 ? `${y + 1}-01-01` : `${y}-${String(m + 1).padStart(2, '0')}-01`;
      days.set(month, { inside: 0, all: daysBetween(first, next).length });
    }
    days.get(month)!.inside += 1;
  }
  return [...days].map(([month, { inside, all }]) => ({ month, share: inside / all }));
}

/** The months of [from, to) with a demand charge; `siteAt`: the site's electricity in the interval of the month's peak. */
export function demandMonths(demandCharges: DemandCharges, from: string, to: string, siteAt: (at: number) => number): DemandMonth[] {
  return months(from, to).flatMap(({ month, share }) => {
    // A month without a demand price has no charge: its peaks are not read.
    if (demandCharges.versionFor(month).demandChargePerKw <= 0) return [];
    const charge = demandCharges.month(month);
    if (charge.demandCharge <= 0) return [];
    const peakAt = charge.peak ? Date.parse(charge.peak.at) : null;
    const siteAtPeak = peakAt === null ? 0 : siteAt(peakAt);
    return [{ month, share, amount: charge.demandCharge * share, billedKw: charge.billedKw, peakAt, siteAtPeak }];
  });
}

/** The site's bill: energy per utility and band over the site's meters, standing per utility, demand per month; and the site's quantity per utility. */
export function siteBill(
  siteMeters: BilledMeter[],
  periodOf: (meter: BilledMeter) => MeterPeriod,
  { standingOf }: Standing,
  demand: DemandMonth[],
): { site: PeriodBill['site']; siteQuantity: Map<Commodity, number> } {
  const siteBands = new Map<string, { utility: Commodity; band: string; quantity: number; cost: number }>();
  const siteQuantity = new Map<Commodity, number>();
  let siteCarbon = 0;
  for (const meter of siteMeters) {
    const period = periodOf(meter);
    siteCarbon += period.carbonKg;
    siteQuantity.set(meter.commodity, (siteQuantity.get(meter.commodity) ?? 0) + period.quantity);
    for (const [band, figures] of period.bands) {
      const key = `${meter.commodity}|${band}`;
      const line = siteBands.get(key) ?? { utility: meter.commodity, band, quantity: 0, cost: 0 };
      line.quantity += figures.quantity;
      line.cost += figures.cost;
      siteBands.set(key, line);
    }
  }
  const site: PeriodBill['site'] = {
    energy: [...siteBands.values()].map((line) => ({
      utility: line.utility,
      unit: UNITS[line.utility],
      band: line.band,
      quantity: round(line.quantity, 3),
      amountCents: cents(line.cost),
    })),
    standing: [...standingOf].map(([utility, amount]) => ({
      utility,
      amountCents: cents(amount),
      rule: 'Σ standingChargePerDay of the version in effect each day',
    })),
    demand: demand.map((month) => ({
      month: month.month,
      billedKw: month.billedKw,
      siteKwAtPeak: round(month.siteAtPeak * 4, 3),
      shareKw: month.billedKw,
      share: round(month.share, 6),
      amountCents: cents(month.amount),
      peakAt: month.peakAt === null ? null : new Date(month.peakAt).toISOString(),
      rule: "the month's demand charge × the period's share of the month's days",
    })),
    carbonKg: round(siteCarbon, 3),
    totalCents: 0,
    meters: siteMeters.map((meter) => ({ meterId: meter.id, name: meter.name, utility: meter.commodity })),
  };
  site.totalCents = sumBill(site);
  return { site, siteQuantity };
}

/**
 * The landlord's share, line by line: the site's line less the tenants' same lines (its own allocations, unmetered
 * and common use nobody is billed for, losses, and the tenants' rounding), so statements + landlord = the site's bill.
 */
export function landlordShare(site: Bill, tenants: Bill[]): Bill {
  const energy = site.energy.map((line) => {
    const taken = tenants.flatMap((t) => t.energy).filter((own) => own.utility === line.utility && own.band === line.band);
    return {
      ...line,
      quantity: round(line.quantity - taken.reduce((s, own) => s + own.quantity, 0), 3),
      amountCents: line.amountCents - taken.reduce((s, own) => s + own.amountCents, 0),
    };
  });
  // A band a tenant was billed in that the site's meters never saw (an allocated meter outside the site's): negative for the landlord.
  for (const tenant of tenants)
    for (const own of tenant.energy)
      if (!site.energy.some((line) => line.utility === own.utility && line.band === own.band)) {
        const existing = energy.find((line) => line.utility === own.utility && line.band === own.band);
        if (existing) {
          existing.quantity = round(existing.quantity - own.quantity, 3);
          existing.amountCents -= own.amountCents;
        } else energy.push({ ...own, quantity: -own.quantity, amountCents: -own.amountCents });
      }
  const standing = site.standing.map((line) => ({
    ...line,
    amountCents:
      line.amountCents -
      tenants
        .flatMap((t) => t.standing)
        .filter((own) => own.utility === line.utility)
        .reduce((s, own) => s + own.amountCents, 0),
    rule: 'what the tenants do not pay of it',
  }));
  const demand = site.demand.map((line) => {
    const taken = tenants.flatMap((t) => t.demand).filter((own) => own.month === line.month);
    return {
      ...line,
      shareKw: round(line.siteKwAtPeak - taken.reduce((s, own) => s + own.shareKw, 0), 3),
      share: round(1 - taken.reduce((s, own) => s + own.share, 0), 6),
      amountCents: line.amountCents - taken.reduce((s, own) => s + own.amountCents, 0),
      rule: 'what the tenants do not pay of it',
    };
  });
  const bill = { energy, standing, demand, carbonKg: round(site.carbonKg - tenants.reduce((s, t) => s + t.carbonKg, 0), 3), totalCents: 0 };
  bill.totalCents = sumBill(bill);
  return bill;
}
