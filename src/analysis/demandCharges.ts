// Demand charges (capacity tariffs): a price per kW on the month's billed demand, which is the month's highest site
// 15-minute mean, or the rolling 12-month average of monthly peaks (Flanders), never below a minimum. The running
// month shows its charge so far: its peak can only grow, so the figure is a floor for the bill.
import type { EnergyFigures } from '../energy/figures.ts';
import { nextMonth } from '../energy/figures.ts';
import type { Tariffs } from '../pricing/tariffs.ts';

export type MonthDemandCharge = {
  month: string;
  currency: string;
  /** The month is not over: the figures are month-to-date. */
  running: boolean;
  version: { id: number; validFrom: string; demandChargePerKw: number; basis: 'monthly_peak' | 'rolling_12_month_average'; minimumKw: number };
  peak: { kw: number; at: string } | null;
  /** The 12 months ending with this one, oldest first; kw null where the month has no data. */
  monthlyPeaks: { month: string; kw: number | null }[];
  rollingAverageKw: number | null;
  billedKw: number;
  demandCharge: number;
  /** Energy at the tariff of each interval plus the standing charge of each day (the site's cost figures). */
  energyCost: number;
  totalCost: number;
};

const round = (value: number, places: number) => Math.round(value * 10 ** places) / 10 ** places;

export function previousMonth(month: string): string {
  const [y, m] = month.split('-').map(Number);
  return m === 1 ? `${y - 1}-12` : `${y}-${String(m - 1).padStart(2, '0')}`;
}

export class DemandCharges {
  constructor(
    private readonly figures: EnergyFigures,
    private readonly tariffs: Tariffs,
  ) {}

  /** The version that bills a month: the one in effect on its first day. */
  versionFor(month: string) {
    return this.tariffs.versionOn(`${month}-01`);
  }

  month(month: string, now: number = Date.now()): MonthDemandCharge {
    const version = this.versionFor(month);
    const { currency } = this.figures.settings();
    const months: string[] = [month];
    while (months.length < 12) months.unshift(previousMonth(months[0]));
    const monthlyPeaks = months.map((m) => ({ month: m, kw: this.figures.sitePeak(`${m}-01`, `${nextMonth(m)}-01`)?.kw ?? null }));
    const known = monthlyPeaks.filter((p) => p.kw !== null).map((p) => p.kw!);
    const rollingAverageKw = known.length ? known.reduce((a, b) => a + b, 0) / known.length : null;
    const peak = this.figures.sitePeak(`${month}-01`, `${nextMonth(month)}-01`);
    const basisKw = version.demandChargeBasis === 'monthly_peak' ? (peak?.kw ?? 0) : (rollingAverageKw ?? 0);
    const billedKw = Math.max(version.demandChargeMinimumKw, basisKw);
    const demandCharge = version.demandChargePerKw * billedKw;
    const energyCost = this.figures.totals(`${month}-01`, `${nextMonth(month)}-01`).cost;
    return {
      month,
      currency,
      running: this.figures.today(new Date(now)) < `${nextMonth(month)}-01`,
      version: {
        id: version.id,
        validFrom: version.validFrom,
        demandChargePerKw: version.demandChargePerKw,
        basis: version.demandChargeBasis,
        minimumKw: version.demandChargeMinimumKw,
      },
      peak,
      monthlyPeaks: monthlyPeaks.map((p) => ({ month: p.month, kw: p.kw === null ? null : round(p.kw, 3) })),
      rollingAverageKw: rollingAverageKw === null ? null : round(rollingAverageKw, 3),
      billedKw: round(billedKw, 3),
      demandCharge: round(demandCharge, 2),
      energyCost: round(energyCost, 2),
      totalCost: round(energyCost + demandCharge, 2),
    };
  }

  /** Only the charge (for the overview): 0 without a demand price, without reading a peak. */
  charge(month: string): number {
    return this.versionFor(month).demandChargePerKw > 0 ? this.month(month).demandCharge : 0;
  }
}
