// Demand charges (capacity tariffs): a price per kW on the month's billed demand, which is the month's highest site
// 15-minute mean, or the rolling 12-month average of monthly peaks (Flanders), never below a minimum. The running
// month shows its charge so far: its peak can only grow, so the figure is a floor for the bill.
import { type EnergyFigures, type SitePeak, nextMonth } from '../energy/index.ts';
import type { Tariffs } from '../pricing/index.ts';
import { round } from '../platform/numbers.ts';

export type MonthDemandCharge = {
  month: string;
  currency: string;
  /** The month is not over: the figures are month-to-date. */
  running: boolean;
  version: { id: number; validFrom: string; demandChargePerKw: number; basis: 'monthly_peak' | 'rolling_12_month_average'; minimumKw: number };
  peak: SitePeak | null;
  /** The 12 months ending with this one, oldest first; kw null where the month has no data. */
  monthlyPeaks: { month: string; kw: number | null; complete: boolean | null }[];
  /** Every peak the charge rests on had every site meter in every interval (and every month had data). */
  complete: boolean;
  /** What incomplete data the charge rests on, in words (null: nothing to say). */
  dataNote: string | null;
  rollingAverageKw: number | null;
  billedKw: number;
  demandCharge: number;
  /** Energy at the tariff of each interval plus the standing charge of each day (the site's cost figures). */
  energyCost: number;
  totalCost: number;
};

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
    const peaks = months.map((m) => ({ month: m, peak: this.figures.sitePeak(`${m}-01`, `${nextMonth(m)}-01`) }));
    const monthlyPeaks = peaks.map(({ month: m, peak }) => ({ month: m, kw: peak?.kw ?? null, complete: peak ? peak.complete : null }));
    const known = monthlyPeaks.filter((p) => p.kw !== null).map((p) => p.kw!);
    const rollingAverageKw = known.length ? known.reduce((a, b) => a + b, 0) / known.length : null;
    const peak = peaks[peaks.length - 1].peak;
    const rolling = version.demandChargeBasis !== 'monthly_peak';
    const basisKw = rolling ? (rollingAverageKw ?? 0) : (peak?.kw ?? 0);
    // The months the billed kW rests on: this one, or the 12 of the rolling average. A month whose intervals lack a
    // site meter somewhere still counts with what the others measured; the charge then says it rests on a floor.
    const rests = rolling ? peaks.filter((p) => p.peak) : peaks.slice(-1).filter((p) => p.peak);
    const incomplete = rests.filter((p) => !p.peak!.complete);
    const noData = rolling ? monthlyPeaks.filter((p) => p.kw === null).length : peak ? 0 : 1;
    const notes: string[] = [];
    if (incomplete.length)
      notes.push(
        `Incomplete data: ${incomplete.map((p) => `${p.month} (${p.peak!.incompleteIntervals} intervals without every site meter${p.peak!.metersAtPeak < p.peak!.meters ? ', the peak among them' : ''})`).join(', ')}; ` +
          'their peaks count what the meters with data measured, so the billed demand may be higher.',
      );
    if (noData) notes.push(rolling ? `${noData} of the 12 months have no data and are left out of the average.` : 'The month has no data.');
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
      monthlyPeaks: monthlyPeaks.map((p) => ({ month: p.month, kw: p.kw === null ? null : round(p.kw, 3), complete: p.complete })),
      complete: incomplete.length === 0 && noData === 0,
      dataNote: notes.length ? notes.join(' ') : null,
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
