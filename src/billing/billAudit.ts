// A supplier bill audited line by line, as a bill auditor would (issue 51): each printed line against the meters
// (quantity per band: the shadow bill), the tariff in force (rate) and its own arithmetic (amount = quantity × rate),
// the lines against the total, and the bill against the supply's other bills (duplicate, overlap, a missing period, a
// gap between readings) and its history (demand against the interval peak, use against the same days last year).
// Each result names the line, what was expected, what was billed and the money at stake, under its own tolerance.
import type { Tariffs } from '../pricing/index.ts';
import type { DemandCharges } from '../analysis/index.ts';
import type { SupplierBillLine } from '../platform/db/schema/index.ts';
import { addDays, daysBetween } from '../platform/time/calendar.ts';
import type { BilledMeter, MeterPeriod } from './bill.ts';
import type { BillingCalculation } from './calculation.ts';
import { round } from '../platform/numbers.ts';

/** The tolerance of each check; the defaults are documented in docs/billing.md ("The audit's checks"). */
export type AuditTolerances = {
  /** Line quantity against the meters (kWh per band), percent of the meters' figure. */
  quantityPercent: number;
  /** Line rate against the tariff in force, percent of the tariff's rate. */
  ratePercent: number;
  /** Line amount against quantity × rate, in money. */
  amount: number;
  /** The sum of the lines against the bill's total, in money. */
  total: number;
  /** Billed kW against the month's demand from the intervals, percent. */
  demandPercent: number;
  /** A bill's start reading against the previous bill's end reading, in the register's unit. */
  readingGap: number;
  /** The bill's use against the same days a year earlier, percent of last year's. */
  yearOnYearPercent: number;
};
export const DEFAULT_TOLERANCES: AuditTolerances = {
  quantityPercent: 2,
  ratePercent: 0.1,
  amount: 0.01,
  total: 0.01,
  demandPercent: 2,
  readingGap: 0.5,
  yearOnYearPercent: 25,
};

export const AUDIT_CHECKS = [
  'quantity',
  'rate',
  'amount',
  'total',
  'duplicate',
  'overlap',
  'missing_bill',
  'reading_gap',
  'demand',
  'year_on_year',
  'adjustment',
] as const;
export type AuditCheck = (typeof AUDIT_CHECKS)[number];

export type AuditItem = {
  check: AuditCheck;
  /** The line as printed ("line 2: energy peak 2026-10-16 – 2026-11-01"), or "bill" for a bill-level check. */
  line: string;
  lineIndex: number | null;
  unit: string;
  expected: number | null;
  billed: number | null;
  difference: number | null;
  /** Money the difference is worth (positive: the supplier asks this much more than it should); null where none can be said. */
  moneyAtStake: number | null;
  tolerance: string;
  flagged: boolean;
  message: string;
};

/** The stored bill as the audit reads it. */
export type AuditedBill = {
  id: number;
  meterId: number;
  from: string;
  to: string;
  reference: string;
  bands: Record<string, number>;
  total: number;
  lines: SupplierBillLine[];
  startReading: number | null;
  endReading: number | null;
};

const money = (value: number) => round(value, 2);
/** Whether `billed` is further from `expected` than `percent` of it (any billed amount is, against nothing expected). */
const beyond = (billed: number, expected: number, percent: number) =>
  expected === 0 ? Math.abs(billed) > 1e-9 : Math.abs(billed - expected) > (Math.abs(expected) * percent) / 100 + 1e-9;

/** What one audit's checks share: the bill's meter and tolerances, its periods read once, the tariff in force, the items found. */
type AuditRun = {
  meter: BilledMeter;
  tolerances: AuditTolerances;
  items: AuditItem[];
  periodOf: (from: string, to: string) => MeterPeriod;
  gasKwh: (period: MeterPeriod, from: string, to: string) => number;
  shadowBand: (band: string, from: string, to: string) => { quantity: number; cost: number };
  versionOn: (day: string) => ReturnType<Tariffs['versionFor']>;
  tariffRate: (band: string, from: string, to: string) => { rate: number | null; why: string };
  push: (item: Omit<AuditItem, 'difference'> & { difference?: number | null }) => void;
};

/** One printed line as its checks read it: its days (the bill's where it prints none) and the label its items carry. */
type LineAt = { line: SupplierBillLine; from: string; to: string; base: { line: string; lineIndex: number } };

export class BillAudit {
  constructor(
    private readonly calculation: BillingCalculation,
    private readonly tariffs: Tariffs,
    private readonly demandCharges: DemandCharges,
    private readonly calorific: (days: string[]) => Map<string, number>,
  ) {}

  /** Every check of `bill` (flagged or not), given the supply's other bills. */
  audit(bill: AuditedBill, others: AuditedBill[], tolerances: AuditTolerances): AuditItem[] {
    const run = this.startRun(this.calculation.billedMeter(bill.meterId) as BilledMeter, tolerances);
    for (const [index, line] of bill.lines.entries()) this.checkLine(run, bill, line, index);
    if (bill.lines.length) totalCheck(run, bill);
    // The supply's other bills: the same bill twice, bills over the same days, days no bill covers, readings that jump.
    sameDaysChecks(run, bill, others);
    this.missingBillCheck(run, bill, others);
    readingGapCheck(run, bill, others);
    yearOnYearCheck(run, bill);
    return run.items;
  }

  /** The shared reads of one audit of a bill of `meter`: periods cached by their days, rates from the tariff in force. */
  private startRun(meter: BilledMeter, tolerances: AuditTolerances): AuditRun {
    const items: AuditItem[] = [];
    const periods = new Map<string, MeterPeriod>();
    const periodOf = (from: string, to: string) => {
      const key = `${from}|${to}`;
      let found = periods.get(key);
      if (!found) periods.set(key, (found = this.calculation.meterPeriod(meter, from, to)));
      return found;
    };
    const gasKwh = (period: MeterPeriod, from: string, to: string) => {
      const cv = this.calorific(daysBetween(from, to));
      let kwh = 0;
      for (const [day, m3] of period.byDay) kwh += m3 * (cv.get(day) ?? Number.NaN);
      return kwh;
    };
    /** What the meters say of a band over days: quantity in the bill's unit (gas: kWh) and its cost at the tariff. */
    const shadowBand = (band: string, from: string, to: string) => {
      const period = periodOf(from, to);
      if (meter.commodity === 'gas') {
        const cost = [...period.bands.values()].reduce((sum, b) => sum + b.cost, 0);
        return { quantity: gasKwh(period, from, to), cost };
      }
      const figures = period.bands.get(band);
      return { quantity: figures?.quantity ?? 0, cost: figures?.cost ?? 0 };
    };
    const versionOn = (day: string) => (meter.commodity === 'electricity' ? this.tariffs.versionOn(day) : this.tariffs.versionFor(meter.commodity, day));
    /** The rate the tariff in force sets for a band over days: one rate, or null with the reason when none or several. */
    const tariffRate = (band: string, from: string, to: string): { rate: number | null; why: string } => {
      const rates = new Set<number>();
      for (const day of daysBetween(from, to)) {
        const version = versionOn(day);
        if (!version) return { rate: null, why: `no ${meter.commodity} tariff is in force on ${day}` };
        const rate = band === 'base' ? version.price : version.bands.find((candidate) => candidate.name === band)?.price;
        if (rate === undefined) return { rate: null, why: `the tariff in force on ${day} has no band "${band}"` };
        rates.add(rate);
      }
      if (rates.size > 1)
        return {
          rate: null,
          why: `the tariff's rate for "${band}" changes within the line's days (${[...rates].join(', ')}): give each version's days a line of its own`,
        };
      return { rate: [...rates][0] ?? null, why: '' };
    };
    const push = (item: Omit<AuditItem, 'difference'> & { difference?: number | null }) => {
      const difference = item.difference ?? (item.expected === null || item.billed === null ? null : round(item.billed - item.expected, 6));
      items.push({
        ...item,
        expected: item.expected === null ? null : round(item.expected, 6),
        difference,
        moneyAtStake: item.moneyAtStake === null ? null : money(item.moneyAtStake),
      });
    };
    return { meter, tolerances, items, periodOf, gasKwh, shadowBand, versionOn, tariffRate, push };
  }

  /** The checks of one printed line, chosen by its kind. */
  private checkLine(run: AuditRun, bill: AuditedBill, line: SupplierBillLine, index: number): void {
    const from = line.from ?? bill.from;
    const to = line.to ?? bill.to;
    const label = `line ${index + 1}: ${line.kind}${line.band ? ` ${line.band}` : ''}${line.from || line.to ? ` ${from} – ${to}` : ''}${line.description ? ` (${line.description})` : ''}`;
    const at: LineAt = { line, from, to, base: { line: label, lineIndex: index } };
    if (line.kind === 'energy') energyLineChecks(run, at);
    else if (line.kind === 'standing') standingLineChecks(run, at);
    else if (line.kind === 'demand') this.demandLineChecks(run, at);
    else if (line.kind === 'tax') taxLineCheck(run, at);
    else
      run.push({
        ...at.base,
        check: 'adjustment',
        unit: 'money',
        expected: null,
        billed: line.amount,
        moneyAtStake: line.amount,
        tolerance: '—',
        flagged: false,
        message: 'an adjustment as printed: not checked, listed with its money',
      });
  }

  /** A demand line's kW against the months' billed demand from the intervals, and its rate against the demand rate. */
  private demandLineChecks(run: AuditRun, { line, from, to, base }: LineAt): void {
    const { tolerances, push } = run;
    const months = this.calculation.months(from, to).map(({ month }) => month);
    const charges = months.map((month) => this.demandCharges.month(month));
    const expectedKw = charges.length ? Math.max(...charges.map((charge) => charge.billedKw)) : 0;
    const perKw = [...new Set(months.map((month) => this.demandCharges.versionFor(month).demandChargePerKw))];
    const peak = charges.map((charge) => charge.peak).find((p) => p !== null) ?? null;
    if (line.quantity !== undefined)
      push({
        ...base,
        check: 'demand',
        unit: 'kW',
        expected: expectedKw,
        billed: line.quantity,
        moneyAtStake: (line.quantity - expectedKw) * (line.rate ?? perKw[0] ?? 0),
        tolerance: `${tolerances.demandPercent} % of the intervals' demand`,
        flagged: beyond(line.quantity, expectedKw, tolerances.demandPercent),
        message: `the month's billed demand from the site's 15-minute intervals (${charges[0]?.version.basis ?? 'monthly_peak'}${peak ? `; interval peak ${round(peak.kw, 3)} kW at ${peak.at}` : ''})`,
      });
    if (line.rate !== undefined)
      push({
        ...base,
        check: 'rate',
        unit: 'per kW',
        expected: perKw.length === 1 ? perKw[0] : null,
        billed: line.rate,
        moneyAtStake: perKw.length === 1 ? (line.rate - perKw[0]) * (line.quantity ?? expectedKw) : null,
        tolerance: `${tolerances.ratePercent} % of the tariff's rate`,
        flagged: perKw.length !== 1 || beyond(line.rate, perKw[0], tolerances.ratePercent),
        message:
          perKw.length === 1
            ? 'demandChargePerKw of the version in effect on the first day of the month'
            : 'the months of the line have different demand rates',
      });
    arithmeticCheck(run, { line, from, to, base });
  }

  /** Days no bill covers between the last bill before this one and its start, priced by the meters. */
  private missingBillCheck(run: AuditRun, bill: AuditedBill, others: AuditedBill[]): void {
    const before = others.filter((other) => other.to <= bill.from).sort((a, b) => (a.to < b.to ? 1 : a.to > b.to ? -1 : b.id - a.id))[0];
    if (!before || before.to >= bill.from || others.some((other) => other.from < bill.from && other.to > before.to)) return;
    const gap = this.shadowCost(run.meter, before.to, bill.from, run.periodOf(before.to, bill.from));
    run.push({
      check: 'missing_bill',
      line: 'bill',
      lineIndex: null,
      unit: 'money',
      expected: gap,
      billed: 0,
      difference: -money(gap),
      moneyAtStake: -gap,
      tolerance: 'none',
      flagged: true,
      message: `no bill covers ${before.to} – ${bill.from} (between #${before.id} and this one): the meters' energy and standing charges of those days are unbilled`,
    });
  }

  /** The meters' energy cost and standing charges over days (what a missing bill would have charged, demand aside). */
  private shadowCost(meter: BilledMeter, from: string, to: string, period: MeterPeriod): number {
    const energy = [...period.bands.values()].reduce((sum, band) => sum + band.cost, 0);
    const standing = daysBetween(from, to).reduce((sum, day) => {
      const version = meter.commodity === 'electricity' ? this.tariffs.versionOn(day) : this.tariffs.versionFor(meter.commodity, day);
      return sum + (version?.standingChargePerDay ?? 0);
    }, 0);
    return energy + standing;
  }
}

/** A line's amount against its own quantity × rate, where it prints both. */
function arithmeticCheck({ tolerances, push }: AuditRun, { line, base }: LineAt): void {
  if (line.quantity === undefined || line.rate === undefined) return;
  const expected = line.quantity * line.rate;
  push({
    ...base,
    check: 'amount',
    unit: 'money',
    expected,
    billed: line.amount,
    moneyAtStake: line.amount - expected,
    tolerance: `${tolerances.amount} in money`,
    flagged: Math.abs(line.amount - expected) > tolerances.amount + 1e-9,
    message: `amount = quantity ${line.quantity} × rate ${line.rate}`,
  });
}

/** An energy line's kWh against the meters' band (the shadow bill) and its rate against the tariff in force. */
function energyLineChecks(run: AuditRun, at: LineAt): void {
  const { tolerances, push } = run;
  const { line, from, to, base } = at;
  const band = line.band ?? 'base';
  const shadow = run.shadowBand(band, from, to);
  const tariff = run.tariffRate(band, from, to);
  const rateForMoney = line.rate ?? tariff.rate ?? (shadow.quantity > 0 ? shadow.cost / shadow.quantity : 0);
  if (line.quantity !== undefined)
    push({
      ...base,
      check: 'quantity',
      unit: 'kWh',
      expected: shadow.quantity,
      billed: line.quantity,
      moneyAtStake: (line.quantity - shadow.quantity) * rateForMoney,
      tolerance: `${tolerances.quantityPercent} % of the meters' kWh`,
      flagged: beyond(line.quantity, shadow.quantity, tolerances.quantityPercent),
      message: `the supply meter's kWh in band "${band}" over the line's days (the shadow bill)`,
    });
  if (line.rate !== undefined)
    push({
      ...base,
      check: 'rate',
      unit: 'per kWh',
      expected: tariff.rate,
      billed: line.rate,
      moneyAtStake: tariff.rate === null ? null : (line.rate - tariff.rate) * (line.quantity ?? shadow.quantity),
      tolerance: `${tolerances.ratePercent} % of the tariff's rate`,
      flagged: tariff.rate === null || beyond(line.rate, tariff.rate, tolerances.ratePercent),
      message: tariff.rate === null ? tariff.why : `the rate of band "${band}" in the tariff in force`,
    });
  arithmeticCheck(run, at);
}

/** A standing-charge line's days and daily rate against the tariff in force (or its amount, where it prints no rate). */
function standingLineChecks(run: AuditRun, at: LineAt): void {
  const { tolerances, push } = run;
  const { line, from, to, base } = at;
  const days = daysBetween(from, to);
  const rates = days.map((day) => run.versionOn(day)?.standingChargePerDay ?? 0);
  const expectedAmount = rates.reduce((a, b) => a + b, 0);
  if (line.quantity !== undefined)
    push({
      ...base,
      check: 'quantity',
      unit: 'days',
      expected: days.length,
      billed: line.quantity,
      moneyAtStake: (line.quantity - days.length) * (line.rate ?? (days.length ? expectedAmount / days.length : 0)),
      tolerance: 'exact',
      flagged: Math.abs(line.quantity - days.length) > 1e-9,
      message: 'the days the line covers',
    });
  if (line.rate !== undefined) {
    const one = new Set(rates).size === 1 ? rates[0] : null;
    push({
      ...base,
      check: 'rate',
      unit: 'per day',
      expected: one,
      billed: line.rate,
      moneyAtStake: one === null ? null : (line.rate - one) * (line.quantity ?? days.length),
      tolerance: `${tolerances.ratePercent} % of the tariff's rate`,
      flagged: one === null || beyond(line.rate, one, tolerances.ratePercent),
      message:
        one === null
          ? "the standing charge changes within the line's days: give each version's days a line of its own"
          : 'standingChargePerDay of the tariff in force',
    });
    arithmeticCheck(run, at);
  } else
    push({
      ...base,
      check: 'amount',
      unit: 'money',
      expected: expectedAmount,
      billed: line.amount,
      moneyAtStake: line.amount - expectedAmount,
      tolerance: `${tolerances.amount} in money`,
      flagged: Math.abs(line.amount - expectedAmount) > tolerances.amount + 1e-9,
      message: "Σ standingChargePerDay of the tariff in force over the line's days",
    });
}

/** A tax line's arithmetic where it prints base and rate; otherwise listed unchecked (EMS holds no tax rates). */
function taxLineCheck(run: AuditRun, at: LineAt): void {
  if (at.line.quantity !== undefined && at.line.rate !== undefined) arithmeticCheck(run, at);
  else
    run.push({
      ...at.base,
      check: 'amount',
      unit: 'money',
      expected: null,
      billed: at.line.amount,
      moneyAtStake: null,
      tolerance: '—',
      flagged: false,
      message: 'a tax or levy without its base and rate: EMS holds no tax rates, only the arithmetic of a line that prints them is checked',
    });
}

/** The bill's total against the sum of its lines. */
function totalCheck({ tolerances, push }: AuditRun, bill: AuditedBill): void {
  const sum = bill.lines.reduce((a, line) => a + line.amount, 0);
  push({
    check: 'total',
    line: 'bill',
    lineIndex: null,
    unit: 'money',
    expected: sum,
    billed: bill.total,
    moneyAtStake: bill.total - sum,
    tolerance: `${tolerances.total} in money`,
    flagged: Math.abs(bill.total - sum) > tolerances.total + 1e-9,
    message: "the bill's total against the sum of its lines",
  });
}

/** An earlier bill of the same days and total or reference (a duplicate); failing that, each earlier bill over some of its days. */
function sameDaysChecks({ push }: AuditRun, bill: AuditedBill, others: AuditedBill[]): void {
  const earlier = others.filter((other) => other.id < bill.id);
  const duplicate = earlier.find(
    (other) =>
      other.from === bill.from &&
      other.to === bill.to &&
      (Math.abs(other.total - bill.total) < 0.005 || (bill.reference !== '' && other.reference === bill.reference)),
  );
  if (duplicate)
    push({
      check: 'duplicate',
      line: 'bill',
      lineIndex: null,
      unit: 'money',
      expected: 0,
      billed: bill.total,
      moneyAtStake: bill.total,
      tolerance: 'none',
      flagged: true,
      message: `the same bill as #${duplicate.id}${duplicate.reference ? ` (${duplicate.reference})` : ''}: ${bill.from} – ${bill.to}, ${duplicate.total}`,
    });
  else
    for (const other of earlier) {
      // Days as text compare in calendar order: the later start and the earlier end.
      const from = [other.from, bill.from].sort()[1];
      const to = [other.to, bill.to].sort()[0];
      if (from >= to) continue;
      const days = daysBetween(from, to).length;
      const share = days / daysBetween(bill.from, bill.to).length;
      push({
        check: 'overlap',
        line: 'bill',
        lineIndex: null,
        unit: 'days',
        expected: 0,
        billed: days,
        moneyAtStake: bill.total * share,
        tolerance: 'none',
        flagged: true,
        message: `${days} days (${from} – ${to}) are billed by #${other.id}${other.reference ? ` (${other.reference})` : ''} too; the money is this bill's share of them`,
      });
    }
}

/** The bill's start reading against the end reading of the bill that ends where it starts. */
function readingGapCheck({ meter, tolerances, periodOf, push }: AuditRun, bill: AuditedBill, others: AuditedBill[]): void {
  const previous = others.find((other) => other.to === bill.from && other.endReading !== null);
  if (!previous || bill.startReading === null) return;
  const gap = bill.startReading - previous.endReading!;
  const now = periodOf(bill.from, bill.to);
  const price = averagePrice(now, now.quantity);
  push({
    check: 'reading_gap',
    line: 'bill',
    lineIndex: null,
    unit: meter.commodity === 'gas' || meter.commodity === 'water' ? 'm³' : 'kWh',
    expected: previous.endReading,
    billed: bill.startReading,
    moneyAtStake: -gap * price,
    tolerance: `${tolerances.readingGap} register units`,
    flagged: Math.abs(gap) > tolerances.readingGap + 1e-9,
    message: `the start reading against #${previous.id}'s end reading: energy between them is billed by neither (or twice, when negative)`,
  });
}

/** Use against the same days a year earlier (364 days: the same weekdays), where last year has data. */
function yearOnYearCheck({ meter, tolerances, periodOf, gasKwh, push }: AuditRun, bill: AuditedBill): void {
  const billedKwh = bill.lines.some((line) => line.kind === 'energy' && line.quantity !== undefined)
    ? bill.lines.filter((line) => line.kind === 'energy').reduce((a, line) => a + (line.quantity ?? 0), 0)
    : Object.values(bill.bands).reduce((a, b) => a + b, 0);
  const lastFrom = addDays(bill.from, -364);
  const lastTo = addDays(bill.to, -364);
  const last = periodOf(lastFrom, lastTo);
  if (last.intervals <= last.missing) return;
  const lastKwh = meter.commodity === 'gas' ? gasKwh(last, lastFrom, lastTo) : last.quantity;
  const now = periodOf(bill.from, bill.to);
  const price = averagePrice(now, meter.commodity === 'gas' ? gasKwh(now, bill.from, bill.to) : now.quantity);
  push({
    check: 'year_on_year',
    line: 'bill',
    lineIndex: null,
    unit: 'kWh',
    expected: lastKwh,
    billed: billedKwh,
    moneyAtStake: (billedKwh - lastKwh) * price,
    tolerance: `${tolerances.yearOnYearPercent} % of last year's use`,
    flagged: beyond(billedKwh, lastKwh, tolerances.yearOnYearPercent),
    message: `the bill's use against the supply meter's ${lastFrom} – ${lastTo} (364 days earlier; ${last.missing} of ${last.intervals} intervals missing; not weather-adjusted)`,
  });
}

/** The meters' average energy price over a period (cost ÷ quantity in the unit compared), for the money of a difference. */
function averagePrice(period: MeterPeriod, quantity: number): number {
  const cost = [...period.bands.values()].reduce((sum, band) => sum + band.cost, 0);
  return quantity > 0 && Number.isFinite(quantity) ? cost / quantity : 0;
}
