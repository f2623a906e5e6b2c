// Figures by commodity (issue 26): each utility in its own unit (electricity and heat kWh, gas and water m³, gas also as
// kWh by the calorific version in force each day), its cost and CO2 where a tariff exists, and the electricity balance
// of a site with its own generation. Nothing here adds m³ to kWh: water never enters an energy total.
import type { MeterDirectory, MeterSummary, StoredDays } from '../metering/index.ts';
import type { CalorificValues, Tariffs } from '../pricing/index.ts';
import type { Db } from '../platform/db/client.ts';
import { COMMODITIES, type Commodity } from '../platform/db/schema/index.ts';
import { daysBetween } from '../platform/time/calendar.ts';
import { FIGURE_TABLES, type EnergyFigures } from './figures.ts';
import { Kept } from '../platform/db/kept.ts';
import { round } from '../platform/numbers.ts';

export const COMMODITY_UNITS: Record<Commodity, string> = { electricity: 'kWh', gas: 'm³', water: 'm³', heat: 'kWh' };

export type CommodityTotals = {
  commodity: Commodity;
  unit: string;
  /** In the commodity's unit: electricity its consumption, gas and water m³, heat kWh thermal. Null: no data. */
  quantity: number | null;
  /** Energy: electricity consumption, gas converted, heat; null for water, and with no data. */
  kwh: number | null;
  /** Null with no data, and when a day with data has no tariff version of the commodity. */
  cost: number | null;
  carbonKg: number | null;
  /** Days of the period with a day row of at least one of its meters: 0 means no data, not a zero. */
  recordedDays: number;
  meters: { id: number; name: string; quantity: number }[];
};

/** How many meters a part of the balance has, and on how many days of the period any of them recorded. */
export type Coverage = { meters: number; recordedDays: number };

/**
 * The balance's figures are null when what they are made of has no data: a part with meters but no recorded day of the
 * period (never the 0 its sum starts from), or, for export and generation, a part with no meter (not metered). In
 * consumption (import − export + generation) a part without meters counts 0: a site without PV generates nothing.
 */
export type ElectricityBalance = {
  importKwh: number | null;
  exportKwh: number | null;
  generationKwh: number | null;
  consumptionKwh: number | null;
  selfConsumptionKwh: number | null;
  selfConsumptionRate: number | null;
  selfSufficiency: number | null;
  netImportKwh: number | null;
  importCost: number | null;
  feedInRevenue: number | null;
  /** A part with no meter is not metered; one with meters but no recorded day has no data (never read as 0). */
  coverage: { import: Coverage; export: Coverage; generation: Coverage };
};

export type CommodityFiguresView = {
  from: string;
  to: string;
  timezone: string;
  currency: string;
  commodities: CommodityTotals[];
  electricity: ElectricityBalance;
  gasDays: { day: string; m3: number; kwhPerM3: number; kwh: number }[];
  energyKwh: number;
};

type MeterRow = MeterSummary;

/** The value where `known`, else null (no data). */
const known = <T>(ok: boolean, value: T): T | null => (ok ? value : null);
const recorded = (part: Coverage) => part.meters > 0 && part.recordedDays > 0;
const silent = (part: Coverage) => part.meters > 0 && part.recordedDays === 0;

export class CommodityFigures {
  private readonly kept: Kept<CommodityFiguresView>;

  constructor(
    db: Db,
    private readonly figures: EnergyFigures,
    private readonly tariffs: Tariffs,
    private readonly calorific: CalorificValues,
    /** The meters by id, with the columns the supply groups are chosen by. */
    private readonly meters: Pick<MeterDirectory, 'summaries'>,
    /** The supply meters' stored day totals (metering's reader). */
    private readonly days: StoredDays,
  ) {
    this.kept = new Kept(db.sqlite, { name: 'energy.commodities', tables: [...FIGURE_TABLES, 'calorific_versions'], max: 16 });
  }

  /**
   * The meters a commodity's supply total sums: electricity export and generation meters; for gas, water and heat the
   * meters without an area (the supply meters), or all of them when every one is in an area. Virtual meters are derived
   * from others and never summed again.
   */
  private supply(meters: MeterRow[], commodity: Commodity, role = 'import'): MeterRow[] {
    const own = meters.filter((meter) => meter.commodity === commodity && meter.role === role && meter.kind !== 'virtual');
    if (commodity === 'electricity') return own;
    const unzoned = own.filter((meter) => meter.area === null);
    return unzoned.length ? unzoned : own;
  }

  /**
   * Kept (src/platform/db/kept.ts) per period until a day row, meter, tariff or calorific value is written: the overview's
   * cards ask for the month every second.
   */
  period(from: string, to: string): CommodityFiguresView {
    return this.kept.get(`${from}|${to}`, () => this.compute(from, to));
  }

  private compute(from: string, to: string): CommodityFiguresView {
    const { timezone, currency } = this.figures.settings();
    const meters = this.meters.summaries();
    const days = daysBetween(from, to);
    // Electricity: import is the site's (the existing totals: site meters, interval tariff, standing charge).
    const siteIds = new Set(this.figures.ids());
    const siteMeters = meters.filter((meter) => siteIds.has(meter.id));
    const exportMeters = this.supply(meters, 'electricity', 'export');
    const generationMeters = this.supply(meters, 'electricity', 'generation');
    const utilityGroups = COMMODITIES.filter((name) => name !== 'electricity').map((commodity) => ({ commodity, group: this.supply(meters, commodity) }));
    // Only the meters the balance sums: a sub-meter's days are never read here (1,999 of 2,000 meters on a big site).
    const summed = new Set([...siteMeters, ...exportMeters, ...generationMeters, ...utilityGroups.flatMap(({ group }) => group)].map((meter) => meter.id));
    const perMeter = new Map<number, Map<string, number>>();
    for (const [meterId, day, total] of this.days.dayTotals(JSON.stringify([...summed]), from, to)) {
      let byDay = perMeter.get(meterId);
      if (!byDay) perMeter.set(meterId, (byDay = new Map()));
      byDay.set(day, total);
    }
    const sumByDay = (group: MeterRow[]) => {
      const out = new Map<string, number>();
      for (const meter of group) for (const [day, total] of perMeter.get(meter.id) ?? []) out.set(day, (out.get(day) ?? 0) + total);
      return out;
    };
    const coverage = (group: MeterRow[]): Coverage => ({ meters: group.length, recordedDays: sumByDay(group).size });
    const total = (byDay: Map<string, number>) => [...byDay.values()].reduce((sum, value) => sum + value, 0);
    const meterList = (group: MeterRow[]) =>
      group.map((meter) => ({ id: meter.id, name: meter.name, quantity: round(total(perMeter.get(meter.id) ?? new Map()), 3) }));

    const site = this.figures.totals(from, to);
    const exportByDay = sumByDay(exportMeters);
    const exportKwh = total(exportByDay);
    const generationKwh = total(sumByDay(generationMeters));
    const consumptionKwh = site.kwh - exportKwh + generationKwh;
    const selfConsumptionKwh = generationKwh - exportKwh;
    let feedInRevenue = 0;
    for (const [day, kwh] of exportByDay) feedInRevenue += kwh * this.tariffs.versionOn(day).feedInPrice;
    const parts = { import: coverage(siteMeters), export: coverage(exportMeters), generation: coverage(generationMeters) };
    const importKnown = recorded(parts.import);
    const netKnown = importKnown && !silent(parts.export);
    const consumptionKnown = netKnown && !silent(parts.generation);
    const flowsKnown = recorded(parts.generation) && recorded(parts.export);
    const electricity: ElectricityBalance = {
      importKwh: known(importKnown, round(site.kwh, 3)),
      exportKwh: known(recorded(parts.export), round(exportKwh, 3)),
      generationKwh: known(recorded(parts.generation), round(generationKwh, 3)),
      consumptionKwh: known(consumptionKnown, round(consumptionKwh, 3)),
      selfConsumptionKwh: known(flowsKnown, round(selfConsumptionKwh, 3)),
      selfConsumptionRate: flowsKnown && generationKwh > 0 ? round(selfConsumptionKwh / generationKwh, 4) : null,
      selfSufficiency: flowsKnown && consumptionKnown && consumptionKwh > 0 ? round(selfConsumptionKwh / consumptionKwh, 4) : null,
      netImportKwh: known(netKnown, round(site.kwh - exportKwh, 3)),
      importCost: known(importKnown, round(site.cost, 2)),
      feedInRevenue: known(recorded(parts.export), round(feedInRevenue, 2)),
      coverage: parts,
    };
    const commodities: CommodityTotals[] = [
      {
        commodity: 'electricity',
        unit: 'kWh',
        quantity: electricity.consumptionKwh,
        kwh: electricity.consumptionKwh,
        // What the site pays the grid less what the grid pays it back.
        cost: known(netKnown, round(site.cost - feedInRevenue, 2)),
        carbonKg: known(importKnown, round(site.carbonKg, 3)),
        recordedDays: parts.import.recordedDays,
        meters: meterList(meters.filter((meter) => siteIds.has(meter.id) || exportMeters.includes(meter) || generationMeters.includes(meter))),
      },
    ];

    // Gas, water, heat: quantity in the commodity's unit, gas converted day by day; cost and CO2 per the commodity's tariff.
    const kwhPerM3 = this.calorific.kwhPerM3(days);
    const gasDays: CommodityFiguresView['gasDays'] = [];
    for (const { commodity, group } of utilityGroups) {
      if (!group.length) continue;
      const byDay = sumByDay(group);
      let quantity = 0;
      let kwh = 0;
      let cost: number | null = 0;
      let carbonKg: number | null = 0;
      for (const day of days) {
        const amount = byDay.get(day);
        if (amount === undefined) continue;
        quantity += amount;
        const energy = commodity === 'gas' ? amount * kwhPerM3.get(day)! : amount;
        kwh += energy;
        if (commodity === 'gas') gasDays.push({ day, m3: round(amount, 3), kwhPerM3: kwhPerM3.get(day)!, kwh: round(energy, 3) });
        const version = this.tariffs.versionFor(commodity, day);
        // Gas is billed per kWh (after conversion), water per m³, heat per kWh.
        const billed = commodity === 'water' ? amount : energy;
        if (!version || cost === null || carbonKg === null) cost = carbonKg = null;
        else {
          cost += billed * version.price + version.standingChargePerDay;
          carbonKg += billed * version.carbonFactor;
        }
      }
      // No recorded day: no data, not the 0 the sums start from.
      const any = byDay.size > 0;
      commodities.push({
        commodity,
        unit: COMMODITY_UNITS[commodity],
        quantity: known(any, round(quantity, 3)),
        kwh: commodity === 'water' ? null : known(any, round(kwh, 3)),
        cost: cost === null ? null : known(any, round(cost, 2)),
        carbonKg: carbonKg === null ? null : known(any, round(carbonKg, 3)),
        recordedDays: byDay.size,
        meters: meterList(group),
      });
    }
    const energyKwh = commodities.reduce((sum, entry) => sum + (entry.kwh ?? 0), 0);
    return { from, to, timezone, currency, commodities, electricity, gasDays, energyKwh: round(energyKwh, 3) };
  }
}
