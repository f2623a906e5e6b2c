// A period's bill as the billing calculation answers it: the billed meters and their splits, a meter's period, the
// lines of a bill (energy per band, standing, demand, meters), the rules each line quotes, and the rounding (amounts
// kept unrounded until a line is finished, then rounded to the cent; totals are sums of rounded lines).
import type { Commodity } from '../platform/db/schema/index.ts';

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

export const cents = (amount: number) => Math.round(amount * 100);

export const STANDING_RULE = "the utility's standing charges of the period's days, shared by each tenant's share of the site's quantity of that utility";
export const OWN_TARIFF_RULE =
  "energy priced by the tenant's own tariff in force each day, else the meter's own, else the site's; the landlord's share is what the supplier's bill leaves";
export const OWN_STANDING_RULE = "the tenant's own tariff's standing charge on the days it is in force, its share of the site's on the others";
export const DEMAND_RULE =
  "the month's demand charge (billed kW × price, as the supplier bills it), times the period's share of the month's days, shared by the tenant's allocated demand in the 15-minute interval of the site's monthly peak (coincident peak) ÷ the site's demand then";

export function sumBill(bill: Pick<Bill, 'energy' | 'standing' | 'demand'>): number {
  return [...bill.energy, ...bill.standing, ...bill.demand].reduce((sum, line) => sum + line.amountCents, 0);
}

/** The calculation in one paragraph, for the API reference (docs/billing.md has it at length). */
export const CALCULATION_DOC =
  "Energy: each allocated meter's 15-minute intervals in the period, priced per interval as the interval store prices them (the tariff version of the day, its time-of-use band; gas per m³ by the calorific value), " +
  "times the tenant's fraction; lines per utility and band, each rounded to the cent. Standing charges: " +
  STANDING_RULE +
  '. Demand charges: ' +
  DEMAND_RULE +
  ". The site's bill is the same calculation over the site meters; the landlord's share is the site's bill less the statements, line by line, so the statements plus the landlord's share equal the site's bill to the cent.";
