// The billing calculation: a period's energy per meter, utility and time-of-use band from the interval store, priced
// by the dated tariffs as the store prices it; each tenant's share of it; the site's bill for the period; and the
// landlord's share as what remains of the site's bill, so the statements and the landlord's share add up to the bill.
// Amounts are kept unrounded until a line is finished, then rounded to the cent; totals are sums of rounded lines.
import { meterPrices, type Tariffs } from '../pricing/index.ts';
import { FLAG_ESTIMATED, SLICE_MS, yieldToLoop, type IntervalStore, type MeterDirectory } from '../metering/index.ts';
import type { EnergyFigures } from '../energy/index.ts';
import type { DemandCharges } from '../analysis/index.ts';
import type { Db } from '../platform/db/client.ts';
import type { Commodity } from '../platform/db/schema/index.ts';
import { OwnTariffBook, type OwnTariff } from './ownTariffs.ts';
import { addDays, dayOf, daysBetween, INTERVAL_MS, localClock } from '../platform/time/calendar.ts';

export const UNITS: Record<Commodity, string> = { electricity: 'kWh', gas: 'm³', water: 'm³', heat: 'kWh' };

export type BilledMeter = {
  id: number;
  name: string;
  kind: string;
  commodity: Commodity;
  role: string;
  site: boolean;
  area: string | null;
  /** A virtual meter's terms (another meter's value × its sign); empty for a metered one. */
  terms: { meterId: number; sign: 1 | -1 }[];
};

/** A meter's split: tenant id → fraction of its energy; the landlord takes 1 − Σ. */
export type Split = { meter: BilledMeter; fractions: Map<number, number>; method: string };

/** One meter's period: quantity, cost and carbon per band, data quality, the quantity in each 15-minute interval by start. */
export type MeterPeriod = {
  meter: BilledMeter;
  bands: Map<string, { quantity: number; cost: number }>;
  carbonKg: number;
  intervals: number;
  missing: number;
  estimated: number;
  quantity: number;
  /** The quantity of each day. */
  byDay: Map<string, number>;
  /** Missing intervals billing estimated (estimateMissing; they count in `missing` still), their quantity and per band. */
  billingEstimated: number;
  estimatedQuantity: number;
  estimatedBands: Map<string, { quantity: number; cost: number }>;
  /** Each day's intervals as billed (estimates in, NaN where none) and which are estimates: an own tariff reprices them. */
  days: { day: string; start: number; values: Float64Array; guessed: Uint8Array }[];
};

/** How billing fills a split sub-meter's missing interval (docs/billing.md, "Missing sub-meter data"). */
export const ESTIMATE_RULE =
  "a missing interval of a sub-meter is the mean of the meter's measured intervals at the same local time on the same weekday in the period " +
  "(else at the same local time on any day), scaled by the site's supply meter then against its mean at those intervals; none measured: left missing (0)";

export type EnergyLine = {
  utility: Commodity;
  unit: string;
  band: string;
  quantity: number;
  amountCents: number;
  /** Of the line, what rests on estimated intervals of missing sub-meter data (tenant statements). */
  estimatedQuantity?: number;
  estimatedAmountCents?: number;
};
export type ChargeLine = { utility: Commodity; amountCents: number; rule: string };
export type DemandLine = {
  month: string;
  billedKw: number;
  siteKwAtPeak: number;
  shareKw: number;
  share: number;
  amountCents: number;
  peakAt: string | null;
  rule: string;
};
export type MeterLine = {
  meterId: number;
  name: string;
  utility: Commodity;
  unit: string;
  method: string;
  share: number;
  quantity: number;
  billedQuantity: number;
  startReading: number | null;
  endReading: number | null;
  intervals: number;
  missing: number;
  estimated: number;
  /** Of the missing intervals, those billed at an estimate (ESTIMATE_RULE), and the meter's estimated quantity. */
  billingEstimated: number;
  estimatedQuantity: number;
};

export type Bill = {
  energy: EnergyLine[];
  standing: ChargeLine[];
  demand: DemandLine[];
  carbonKg: number;
  totalCents: number;
};

export type TenantBill = Bill & {
  meters: MeterLine[];
  /** Where some of the energy is priced by the tenant's or a meter's own tariff: the rule. */
  tariffRule?: string;
  /** Where some of the statement rests on estimated sub-meter data: how much money, and the rule. */
  estimatedAmountCents?: number;
  estimateRule?: string;
};

export type Quality = {
  intervals: number;
  /** Intervals with no data, whether billing estimated them or not: the site's missing-data limit reads this. */
  missing: number;
  estimated: number;
  missingPercent: number;
  estimatedPercent: number;
  /** Of the missing intervals, those of split sub-meters billed at an estimate (ESTIMATE_RULE). */
  billingEstimated: number;
};

export type PeriodBill = {
  from: string;
  to: string;
  currency: string;
  site: Bill & { meters: { meterId: number; name: string; utility: Commodity }[] };
  tenants: Map<number, TenantBill>;
  landlord: Bill;
  quality: Quality;
};

const cents = (amount: number) => Math.round(amount * 100);
const round = (value: number, places: number) => Math.round(value * 10 ** places) / 10 ** places;

export const STANDING_RULE = "the utility's standing charges of the period's days, shared by each tenant's share of the site's quantity of that utility";
export const OWN_TARIFF_RULE =
  "energy priced by the tenant's own tariff in force each day, else the meter's own, else the site's; the landlord's share is what the supplier's bill leaves";
export const OWN_STANDING_RULE = "the tenant's own tariff's standing charge on the days it is in force, its share of the site's on the others";
export const DEMAND_RULE =
  "the month's demand charge (billed kW × price, as the supplier bills it), times the period's share of the month's days, shared by the tenant's allocated demand in the 15-minute interval of the site's monthly peak (coincident peak) ÷ the site's demand then";

export class BillingCalculation {
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
  ) {}

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

  meterPeriod(meter: BilledMeter, from: string, to: string, estimate?: () => { supply: BilledMeter[] }): MeterPeriod {
    const timezone = this.timezone();
    const result: MeterPeriod = {
      meter,
      bands: new Map(),
      carbonKg: 0,
      intervals: 0,
      missing: 0,
      estimated: 0,
      quantity: 0,
      byDay: new Map(),
      billingEstimated: 0,
      estimatedQuantity: 0,
      estimatedBands: new Map(),
      days: [],
    };
    const gaps: { day: string; at: number; price: number; band: string; carbonFactor: number; values: Float64Array; guessed: Uint8Array; index: number }[] = [];
    const measured = new Map<string, { at: number; value: number }[]>();
    const addTo = (bands: Map<string, { quantity: number; cost: number }>, name: string, quantity: number, cost: number) => {
      let band = bands.get(name);
      if (!band) bands.set(name, (band = { quantity: 0, cost: 0 }));
      band.quantity += quantity;
      band.cost += cost;
    };
    for (const day of daysBetween(from, to)) {
      const record = this.store.load(meter.id, day);
      const count = record.kwh.length;
      const { prices, carbonFactor } = meterPrices(this.db, this.tariffs, meter.id, timezone, day, record.start, count);
      const version = meter.commodity === 'electricity' ? this.tariffs.versionOn(day) : this.tariffs.versionFor(meter.commodity, day);
      const names = version ? this.tariffs.bandNames(version, timezone, day, record.start, count) : new Array<string>(count).fill('base');
      const values = Float64Array.from(record.kwh);
      const guessed = new Uint8Array(count);
      result.days.push({ day, start: record.start, values, guessed });
      for (let i = 0; i < count; i += 1) {
        result.intervals += 1;
        const value = record.kwh[i];
        const at = record.start + i * INTERVAL_MS;
        if (Number.isNaN(value)) {
          result.missing += 1;
          if (estimate) gaps.push({ day, at, price: prices[i], band: names[i], carbonFactor, values, guessed, index: i });
          continue;
        }
        if (record.flags[i] & FLAG_ESTIMATED) result.estimated += 1;
        addTo(result.bands, names[i], value, value * prices[i]);
        result.quantity += value;
        result.byDay.set(day, (result.byDay.get(day) ?? 0) + value);
        result.carbonKg += value * carbonFactor;
      }
    }
    if (estimate && gaps.length) {
      const { supply } = estimate();
      // The meter's measured intervals by local weekday and time, read only for a meter with gaps (localClock per
      // interval is most of the cost: a month of 200 sub-meters without gaps never pays it).
      for (const { start, values } of result.days)
        for (let i = 0; i < values.length; i += 1) {
          if (Number.isNaN(values[i])) continue;
          const at = start + i * INTERVAL_MS;
          const { weekday, minute } = localClock(timezone, at);
          const key = `${weekday}|${minute}`;
          const list = measured.get(key) ?? [];
          list.push({ at, value: values[i] });
          measured.set(key, list);
        }
      for (const gap of gaps) {
        const value = this.estimateInterval(gap.at, measured, supply, timezone);
        if (value === null) continue;
        gap.values[gap.index] = value;
        gap.guessed[gap.index] = 1;
        result.billingEstimated += 1;
        result.estimatedQuantity += value;
        addTo(result.bands, gap.band, value, value * gap.price);
        addTo(result.estimatedBands, gap.band, value, value * gap.price);
        result.quantity += value;
        result.byDay.set(gap.day, (result.byDay.get(gap.day) ?? 0) + value);
        result.carbonKg += value * gap.carbonFactor;
      }
    }
    return result;
  }

  /**
   * ESTIMATE_RULE for one missing interval: the mean of the meter's measured intervals at the same local time on the
   * same weekday (else on any day), times the supply meters' value now ÷ their mean at those same intervals (when the
   * supply has data at all of them); null when the meter has no measured interval at that local time.
   */
  private estimateInterval(at: number, measured: Map<string, { at: number; value: number }[]>, supply: BilledMeter[], timezone: string): number | null {
    const { weekday, minute } = localClock(timezone, at);
    let references = measured.get(`${weekday}|${minute}`) ?? [];
    if (!references.length) for (let other = 0; other < 7; other += 1) references = references.concat(measured.get(`${other}|${minute}`) ?? []);
    if (!references.length) return null;
    const mean = references.reduce((sum, ref) => sum + ref.value, 0) / references.length;
    if (!supply.length) return mean;
    const supplyAt = (instant: number) => {
      let sum = 0;
      for (const meter of supply) {
        const value = this.storedAt(meter.id, instant, timezone);
        if (value === null) return null;
        sum += value;
      }
      return sum;
    };
    const now = supplyAt(at);
    const then = references.map((ref) => supplyAt(ref.at));
    if (now === null || then.some((value) => value === null)) return mean;
    const supplyMean = (then as number[]).reduce((a, b) => a + b, 0) / then.length;
    return supplyMean > 0 ? (mean * now) / supplyMean : mean;
  }

  /** A meter's stored quantity in the interval starting at `at`, or null where it has none. */
  private storedAt(meterId: number, at: number, timezone: string): number | null {
    const record = this.store.load(meterId, dayOf(timezone, at));
    const value = record.kwh[Math.round((at - record.start) / INTERVAL_MS)];
    return value === undefined || Number.isNaN(value) ? null : value;
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
   * A meter's period priced for one tenant where an own tariff is in force on some day (the tenant's, else the meter's):
   * every day's intervals as billed, by the own version's bands and prices, or the site's on days without one; null
   * when no own tariff touches the period (the site's pricing, already in the period, holds).
   */
  private ownPricing(
    book: OwnTariffBook,
    tenantId: number,
    period: MeterPeriod,
  ): { bands: Map<string, { quantity: number; cost: number }>; estimatedBands: Map<string, { quantity: number; cost: number }> } | null {
    if (book.empty) return null;
    const { meter } = period;
    const versionOf = (day: string): OwnTariff | null =>
      book.inForce({ tenantId }, meter.commodity, day) ?? book.inForce({ meterId: meter.id }, meter.commodity, day);
    if (!period.days.some(({ day }) => versionOf(day))) return null;
    const timezone = this.timezone();
    const bands = new Map<string, { quantity: number; cost: number }>();
    const estimatedBands = new Map<string, { quantity: number; cost: number }>();
    const add = (into: Map<string, { quantity: number; cost: number }>, name: string, quantity: number, cost: number) => {
      const band = into.get(name) ?? { quantity: 0, cost: 0 };
      band.quantity += quantity;
      band.cost += cost;
      into.set(name, band);
    };
    const calorific = meter.commodity === 'gas' ? this.kwhPerM3(period.days.map(({ day }) => day)) : null;
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
        prices = this.tariffs.bandPrices(version, timezone, day, start, count).prices;
        names = this.tariffs.bandNames(version, timezone, day, start, count);
      } else {
        prices = meterPrices(this.db, this.tariffs, meter.id, timezone, day, start, count).prices;
        const site = meter.commodity === 'electricity' ? this.tariffs.versionOn(day) : this.tariffs.versionFor(meter.commodity, day);
        names = site ? this.tariffs.bandNames(site, timezone, day, start, count) : new Array<string>(count).fill('base');
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

  /** A meter's stored quantity in the interval starting at `at` (0 where it has none). */
  private quantityAt(meterId: number, at: number): number {
    const day = dayOf(this.timezone(), at);
    const record = this.store.load(meterId, day);
    const value = record.kwh[Math.round((at - record.start) / INTERVAL_MS)];
    return value === undefined || Number.isNaN(value) ? 0 : value;
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

  /** The period's bill; `read`: meter periods read before (readPeriods), any other meter is read now. */
  compute(from: string, to: string, allMeters: BilledMeter[], splits: Split[], tenantIds: number[], read?: Map<number, MeterPeriod>): PeriodBill {
    const { currency } = this.figures.settings();
    const siteMeters = this.siteMeters(allMeters);
    const periods = new Map<number, MeterPeriod>(read);
    const estimated = this.estimatedMeters(splits, siteMeters);
    const periodOf = (meter: BilledMeter) => {
      let found = periods.get(meter.id);
      if (!found)
        periods.set(meter.id, (found = this.meterPeriod(meter, from, to, estimated.has(meter.id) ? () => this.estimateBasis(meter, allMeters) : undefined)));
      return found;
    };
    const quality: Quality = { intervals: 0, missing: 0, estimated: 0, missingPercent: 0, estimatedPercent: 0, billingEstimated: 0 };
    for (const meter of new Map([...siteMeters, ...splits.map((split) => split.meter)].map((m) => [m.id, m])).values()) {
      const period = periodOf(meter);
      quality.intervals += period.intervals;
      quality.missing += period.missing;
      quality.estimated += period.estimated;
      quality.billingEstimated += period.billingEstimated;
    }
    quality.missingPercent = quality.intervals ? round((100 * quality.missing) / quality.intervals, 3) : 0;
    quality.estimatedPercent = quality.intervals ? round((100 * quality.estimated) / quality.intervals, 3) : 0;

    // The site's bill: energy per utility and band, standing charges per utility, demand charges per month.
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
    const utilities = [...new Set([...siteMeters, ...splits.map((split) => split.meter)].map((meter) => meter.commodity))];
    const standingOf = new Map<Commodity, number>();
    const standingByDay = new Map<Commodity, Map<string, number>>();
    for (const utility of utilities) {
      let amount = 0;
      const byDay = new Map<string, number>();
      for (const day of daysBetween(from, to)) {
        const version = utility === 'electricity' ? this.tariffs.versionOn(day) : this.tariffs.versionFor(utility, day);
        amount += version?.standingChargePerDay ?? 0;
        byDay.set(day, version?.standingChargePerDay ?? 0);
      }
      standingOf.set(utility, amount);
      standingByDay.set(utility, byDay);
    }
    const book = this.ownTariffs();
    const siteElectricity = siteMeters.filter((meter) => meter.commodity === 'electricity');
    const demandMonths = this.months(from, to).flatMap(({ month, share }) => {
      // A month without a demand price has no charge: its peaks are not read.
      if (this.demandCharges.versionFor(month).demandChargePerKw <= 0) return [];
      const charge = this.demandCharges.month(month);
      if (charge.demandCharge <= 0) return [];
      const peakAt = charge.peak ? Date.parse(charge.peak.at) : null;
      const siteAtPeak = peakAt === null ? 0 : siteElectricity.reduce((sum, meter) => sum + this.quantityAt(meter.id, peakAt), 0);
      return [{ month, share, amount: charge.demandCharge * share, billedKw: charge.billedKw, peakAt, siteAtPeak }];
    });

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
      demand: demandMonths.map((month) => ({
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

    // Each tenant's share: its fraction of each allocated meter's bands, standing by quantity, demand by coincident peak.
    const tenants = new Map<number, TenantBill>();
    for (const tenantId of tenantIds) {
      const bands = new Map<string, { utility: Commodity; band: string; quantity: number; cost: number; estimatedQuantity: number; estimatedCost: number }>();
      const quantity = new Map<Commodity, number>();
      const ownTariffs = new Set<Commodity>();
      let carbonKg = 0;
      const meters: MeterLine[] = [];
      for (const split of splits) {
        const fraction = split.fractions.get(tenantId) ?? 0;
        if (fraction <= 0) continue;
        const period = periodOf(split.meter);
        const readings = this.readings(split.meter, to, period.quantity);
        meters.push({
          meterId: split.meter.id,
          name: split.meter.name,
          utility: split.meter.commodity,
          unit: UNITS[split.meter.commodity],
          method: split.method,
          share: round(fraction, 6),
          quantity: round(period.quantity, 3),
          billedQuantity: round(period.quantity * fraction, 3),
          startReading: readings.start,
          endReading: readings.end,
          intervals: period.intervals,
          missing: period.missing,
          estimated: period.estimated,
          billingEstimated: period.billingEstimated,
          estimatedQuantity: round(period.estimatedQuantity, 3),
        });
        carbonKg += period.carbonKg * fraction;
        quantity.set(split.meter.commodity, (quantity.get(split.meter.commodity) ?? 0) + period.quantity * fraction);
        // The tenant's own tariff, else the meter's, else the site's (already in the meter's period).
        const priced = this.ownPricing(book, tenantId, period) ?? { bands: period.bands, estimatedBands: period.estimatedBands };
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
      const standing: ChargeLine[] = [];
      for (const [utility, amount] of standingOf) {
        const own = quantity.get(utility) ?? 0;
        const total = siteQuantity.get(utility) ?? 0;
        const share = own > 0 && total > 0 ? own / total : 0;
        // A tenant with a tariff of its own pays that tariff's standing charge on the days it is in force, its share of
        // the site's on the others.
        let charge = 0;
        let ownDays = 0;
        for (const [day, site] of standingByDay.get(utility) ?? new Map<string, number>()) {
          const mine = book.inForce({ tenantId }, utility, day);
          if (mine) ownDays += 1;
          charge += mine ? mine.standingChargePerDay : site * share;
        }
        if (!ownDays && share <= 0) continue;
        if (!ownDays) charge = amount * share;
        if (ownDays && charge <= 0) continue;
        standing.push({ utility, amountCents: cents(charge), rule: ownDays ? OWN_STANDING_RULE : STANDING_RULE });
      }
      const demand: DemandLine[] = [];
      for (const month of demandMonths) {
        if (month.peakAt === null || month.siteAtPeak <= 0) continue;
        let own = 0;
        for (const split of splits)
          if (split.meter.commodity === 'electricity') own += (split.fractions.get(tenantId) ?? 0) * this.quantityAt(split.meter.id, month.peakAt);
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
      tenants.set(tenantId, bill);
    }
    return { from, to, currency, site, tenants, landlord: landlordShare(site, [...tenants.values()]), quality };
  }
}

function sumBill(bill: Pick<Bill, 'energy' | 'standing' | 'demand'>): number {
  return [...bill.energy, ...bill.standing, ...bill.demand].reduce((sum, line) => sum + line.amountCents, 0);
}

/**
 * The landlord's share, line by line: the site's line less the tenants' same lines (its own allocations, unmetered
 * and common use nobody is billed for, losses, and the tenants' rounding), so statements + landlord = the site's bill.
 */
function landlordShare(site: Bill, tenants: Bill[]): Bill {
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

/** The calculation in one paragraph, for the API reference (docs/billing.md has it at length). */
export const CALCULATION_DOC =
  "Energy: each allocated meter's 15-minute intervals in the period, priced per interval as the interval store prices them (the tariff version of the day, its time-of-use band; gas per m³ by the calorific value), " +
  "times the tenant's fraction; lines per utility and band, each rounded to the cent. Standing charges: " +
  STANDING_RULE +
  '. Demand charges: ' +
  DEMAND_RULE +
  ". The site's bill is the same calculation over the site meters; the landlord's share is the site's bill less the statements, line by line, so the statements plus the landlord's share equal the site's bill to the cent.";
