// The billing calculation: a period's energy per meter, utility and time-of-use band from the interval store, priced
// by the dated tariffs as the store prices it; each tenant's share of it; the site's bill for the period; and the
// landlord's share as what remains of the site's bill, so the statements and the landlord's share add up to the bill.
// Amounts are kept unrounded until a line is finished, then rounded to the cent; totals are sums of rounded lines.
// The pieces: a meter's period (meterPeriod.ts), an own tariff's pricing (ownPricing.ts), the site's bill and the
// landlord's share (siteBill.ts), a tenant's statement (tenantBill.ts); the shapes and rules in bill.ts.
import type { MeterCommodity, Tariffs } from '../pricing/index.ts';
import { meterCommodity, SLICE_MS, yieldToLoop, type IntervalStore, type MeterDirectory } from '../metering/index.ts';
import type { EnergyFigures } from '../energy/index.ts';
import type { DemandCharges } from '../analysis/index.ts';
import type { Db } from '../platform/db/client.ts';
import type { Commodity } from '../platform/db/schema/index.ts';
import { OwnTariffBook } from './ownTariffs.ts';
import { addDays, dayOf, daysBetween } from '../platform/time/calendar.ts';
import type { BilledMeter, MeterPeriod, PeriodBill, Split } from './bill.ts';
import { meterPeriod, quantityAt, type PeriodSource } from './meterPeriod.ts';
import { ownPricing } from './ownPricing.ts';
import { demandMonths, landlordShare, months, periodQuality, siteBill, standingCharges } from './siteBill.ts';
import { tenantBill } from './tenantBill.ts';
import { round } from '../platform/numbers.ts';

export class BillingCalculation {
  /** A meter's commodity and role, which price its days (pricing's port MeterCommodity, metering's lookup). */
  private readonly meterOf: MeterCommodity;

  constructor(
    private readonly db: Db,
    private readonly store: IntervalStore,
    /** Metering's directory: the meters billing splits and prices, and their last readings (a period's closing register). */
    private readonly meters: Pick<MeterDirectory, 'lastReading' | 'summaries' | 'summary'>,
    private readonly tariffs: Tariffs,
    private readonly figures: EnergyFigures,
    private readonly demandCharges: DemandCharges,
    private readonly timezone: () => string,
    /** Tenants' and meters' own tariffs (issue 51); none: every meter at the site's. */
    private readonly ownTariffs: () => OwnTariffBook = () => new OwnTariffBook([]),
    /** kWh per m³ of gas by site day (the calorific value in force): an own gas tariff is priced per kWh. */
    private readonly kwhPerM3: (days: string[]) => Map<string, number> = (days) => new Map(days.map((day) => [day, Number.NaN])),
  ) {
    this.meterOf = meterCommodity(db);
  }

  /** Every meter, by id, with what billing splits and prices it by. */
  billedMeters(): BilledMeter[] {
    return this.meters.summaries();
  }

  /** One meter (see billedMeters), or undefined. */
  billedMeter(id: number): BilledMeter | undefined {
    return this.meters.summary(id);
  }

  /** The site's meters per utility: electricity's are the figures' site meters; another utility's its site meters, else its area meters. */
  siteMeters(all: BilledMeter[]): BilledMeter[] {
    const electricity = new Set(this.figures.ids());
    const site = all.filter((meter) => meter.commodity === 'electricity' && electricity.has(meter.id));
    for (const utility of ['gas', 'water', 'heat'] as const) {
      const own = all.filter((meter) => meter.commodity === utility && meter.role === 'import');
      const flagged = own.filter((meter) => meter.site);
      site.push(...(flagged.length ? flagged : own.filter((meter) => meter.area !== null && meter.kind !== 'virtual')));
    }
    return site;
  }

  /** What reading a meter's period needs, with the site's zone as it is now. */
  private source(): PeriodSource {
    return { db: this.db, store: this.store, tariffs: this.tariffs, meterOf: this.meterOf, timezone: this.timezone() };
  }

  meterPeriod(meter: BilledMeter, from: string, to: string, estimate?: () => { supply: BilledMeter[] }): MeterPeriod {
    return meterPeriod(this.source(), meter, from, to, estimate);
  }

  /**
   * Every meter's period, read with the event loop free every SLICE_MS (a month of 200 meters is ~0.4 s of decoding and
   * pricing): what compute() then bills inside its transaction without reading the intervals again.
   */
  async readPeriods(meters: BilledMeter[], from: string, to: string, estimated: Set<number> = new Set()): Promise<Map<number, MeterPeriod>> {
    const periods = new Map<number, MeterPeriod>();
    const all = this.billedMeters();
    let since = performance.now();
    for (const meter of meters) {
      if (periods.has(meter.id)) continue;
      periods.set(meter.id, this.meterPeriod(meter, from, to, estimated.has(meter.id) ? () => this.estimateBasis(meter, all) : undefined));
      if (performance.now() - since > SLICE_MS) {
        await yieldToLoop();
        since = performance.now();
      }
    }
    return periods;
  }

  /**
   * The site's charges beside energy over [from, to) of a utility, as its bill prices them: the standing charge of each
   * day (the version in force) and, for electricity, each month's demand charge × the share of its days inside.
   */
  siteCharges(utility: Commodity, from: string, to: string): { standing: number; demand: number } {
    let standing = 0;
    for (const day of daysBetween(from, to)) {
      const version = utility === 'electricity' ? this.tariffs.versionOn(day) : this.tariffs.versionFor(utility, day);
      standing += version?.standingChargePerDay ?? 0;
    }
    let demand = 0;
    if (utility === 'electricity')
      for (const { month, share } of this.months(from, to)) {
        if (this.demandCharges.versionFor(month).demandChargePerKw <= 0) continue;
        demand += this.demandCharges.month(month).demandCharge * share;
      }
    return { standing, demand };
  }

  /** The split meters whose missing intervals are estimated: every split meter that is not one of the site's meters. */
  estimatedMeters(splits: Split[], siteMeters: BilledMeter[]): Set<number> {
    const site = new Set(siteMeters.map((meter) => meter.id));
    return new Set(splits.map((split) => split.meter.id).filter((id) => !site.has(id)));
  }

  /** What a split sub-meter's missing intervals are estimated against: its utility's site meters (none: unscaled). */
  estimateBasis(meter: BilledMeter, all: BilledMeter[]): { supply: BilledMeter[] } {
    return { supply: this.siteMeters(all).filter((site) => site.commodity === meter.commodity && site.id !== meter.id) };
  }

  /**
   * The register at the period's start and end, from the last reading counted less what was counted since (an energy
   * meter read from the gateway; null for a power or virtual meter, or one never read).
   */
  private readings(meter: BilledMeter, to: string, quantity: number): { start: number | null; end: number | null } {
    if (meter.kind !== 'energy') return { start: null, end: null };
    const state = this.meters.lastReading(meter.id);
    if (!state) return { start: null, end: null };
    const lastDay = dayOf(this.timezone(), state.lastAt);
    const since = lastDay >= to ? this.figures.totals(to, addDays(lastDay, 1), { meterId: meter.id }).kwh : 0;
    const end = state.lastValue - since;
    return { start: round(end - quantity, 3), end: round(end, 3) };
  }

  /** The months [from, to) touches, each with the share of its days inside the period. */
  months(from: string, to: string): { month: string; share: number }[] {
    return months(from, to);
  }

  /** The period's bill; `read`: meter periods read before (readPeriods), any other meter is read now. */
  compute(from: string, to: string, allMeters: BilledMeter[], splits: Split[], tenantIds: number[], read?: Map<number, MeterPeriod>): PeriodBill {
    const { currency } = this.figures.settings();
    const source = this.source();
    const siteMeters = this.siteMeters(allMeters);
    const periods = new Map<number, MeterPeriod>(read);
    const estimated = this.estimatedMeters(splits, siteMeters);
    const periodOf = (meter: BilledMeter) => {
      let found = periods.get(meter.id);
      if (!found)
        periods.set(meter.id, (found = meterPeriod(source, meter, from, to, estimated.has(meter.id) ? () => this.estimateBasis(meter, allMeters) : undefined)));
      return found;
    };
    const billed = [...siteMeters, ...splits.map((split) => split.meter)];
    const quality = periodQuality(billed, periodOf);
    // The site's bill: energy per utility and band, standing charges per utility, demand charges per month.
    const standing = standingCharges(this.tariffs, [...new Set(billed.map((meter) => meter.commodity))], from, to);
    const book = this.ownTariffs();
    const siteElectricity = siteMeters.filter((meter) => meter.commodity === 'electricity');
    const demand = demandMonths(this.demandCharges, from, to, (at) => siteElectricity.reduce((sum, meter) => sum + quantityAt(source, meter.id, at), 0));
    const { site, siteQuantity } = siteBill(siteMeters, periodOf, standing, demand);
    // Each tenant's share: its fraction of each allocated meter's bands, standing by quantity, demand by coincident peak.
    const basis = {
      to,
      splits,
      periodOf,
      standing,
      siteQuantity,
      demandMonths: demand,
      book,
      readings: (meter: BilledMeter, until: string, quantity: number) => this.readings(meter, until, quantity),
      quantityAt: (meterId: number, at: number) => quantityAt(source, meterId, at),
      ownPricing: (own: OwnTariffBook, tenantId: number, period: MeterPeriod) => ownPricing(source, this.kwhPerM3, own, tenantId, period),
    };
    const tenants = new Map(tenantIds.map((tenantId) => [tenantId, tenantBill(basis, tenantId)]));
    return { from, to, currency, site, tenants, landlord: landlordShare(site, [...tenants.values()]), quality };
  }
}
