// Budgets: an annual budget per utility for the site, an area or a cost centre, in the utility's unit and in money,
// phased by month (last year's profile, or evenly by days); the year-end forecast is the year to date plus, for the
// rest of the year, what the same months used last year (the phased budget where last year has no data); an alert is
// raised when the forecast passes the budget by more than its margin.
import type { Baselines } from '../analysis/index.ts';
import type { EnergyFigures } from '../energy/index.ts';
import type { GatewayAlarm } from '../facility/index.ts';
import type { Actor, AuditLog } from '../platform/db/auditTrail.ts';
import type { Db } from '../platform/db/client.ts';
import { and, desc, eq } from 'drizzle-orm';
import { billingBudgets, type Commodity } from '../platform/db/schema/index.ts';
import { BadRequest, Conflict, NotFound } from '../platform/errors.ts';
import { addDays, daysBetween } from '../platform/time/calendar.ts';
import { type BilledMeter, UNITS } from './bill.ts';
import type { BillingCalculation } from './calculation.ts';
import type { Billing } from './service.ts';
import { round } from '../platform/numbers.ts';

export type BudgetScope = 'site' | 'area' | 'cost_centre';
export type BudgetInput = {
  year: number;
  utility: Commodity;
  scope: BudgetScope;
  target?: string;
  unit: string;
  quantity: number;
  amount: number;
  phasing?: 'last_year' | 'even';
  marginPercent?: number;
};
export type Budget = Omit<Required<BudgetInput>, 'unit'> & { id: number; unit: string; createdAt: string; updatedAt: string };
export type MonthStatus = {
  month: string;
  budgetQuantity: number;
  budgetAmount: number;
  /** null: the month has not begun, or its meters recorded nothing (no data, never 0). */
  actualQuantity: number | null;
  /** The whole bill of the month so far: energy + standing + demand charges. */
  actualAmount: number | null;
  lastYearQuantity: number;
  data: 'measured' | 'no_data' | 'future';
  charges: { energy: number; standing: number; demand: number } | null;
};
export type ForecastMethod = 'weather_normalised_baseline' | 'last_year_scaled_to_run_rate' | 'run_rate' | 'last_year' | 'none';
export type BudgetStatus = {
  budget: Budget;
  at: string;
  phasingUsed: 'last_year' | 'even';
  months: MonthStatus[];
  ytd: { quantity: number; amount: number; budgetQuantity: number; budgetAmount: number; energy: number; standing: number; demand: number };
  forecast: {
    quantity: number;
    amount: number;
    quantityPercentOfBudget: number;
    amountPercentOfBudget: number;
    /** Whether a forecast could be made; when not, the figures are the year to date only and there is no alert. */
    available: boolean;
    method: ForecastMethod;
    methodNote: string;
  };
  alert: boolean;
  message: string;
};

type Row = typeof billingBudgets.$inferSelect;
export const BUDGET_ALERT_CODE = 'billing.budget.overspend';
const monthsOf = (year: number) => Array.from({ length: 12 }, (_, i) => `${year}-${String(i + 1).padStart(2, '0')}`);
const nextMonthStart = (month: string) => addDays(`${month}-28`, 7).slice(0, 7) + '-01';

export class Budgets {
  private readonly sql;

  constructor(
    private readonly db: Db,
    private readonly audit: AuditLog,
    private readonly figures: EnergyFigures,
    private readonly calculation: BillingCalculation,
    private readonly billing: Billing,
    /** The baselines of GET /api/analysis/baseline: the rest of the year from a weather-normalised one where it holds. */
    private readonly baselines: Pick<Baselines, 'fit'> | null = null,
  ) {
    const orm = db.orm;
    const b = billingBudgets;
    this.sql = {
      all: { all: () => orm.select().from(b).orderBy(desc(b.year), b.utility, b.scope, b.target).all() },
      one: { get: (id: number) => orm.select().from(b).where(eq(b.id, id)).get() },
      clash: {
        get: (key: { year: number; utility: Commodity; scope: BudgetScope; target: string }) =>
          orm
            .select({ id: b.id })
            .from(b)
            .where(and(eq(b.year, key.year), eq(b.utility, key.utility), eq(b.scope, key.scope), eq(b.target, key.target)))
            .get(),
      },
      insert: { run: (row: typeof b.$inferInsert) => ({ lastInsertRowid: orm.insert(b).values(row).returning({ id: b.id }).get().id }) },
    };
  }

  list(): Budget[] {
    return this.sql.all.all().map(view);
  }

  get(id: number): Budget {
    const row = this.sql.one.get(id);
    if (!row) throw new NotFound('Budget not found');
    return view(row);
  }

  /** The meters a budget is measured on, each with the share of it that counts (a cost centre's split). */
  private meters(budget: { utility: Commodity; scope: BudgetScope; target: string }): { meterId: number; weight: number }[] {
    const all: BilledMeter[] = this.calculation.billedMeters();
    if (budget.scope === 'site')
      return this.calculation
        .siteMeters(all)
        .filter((m) => m.commodity === budget.utility)
        .map((m) => ({ meterId: m.id, weight: 1 }));
    if (budget.scope === 'area')
      return all.filter((m) => m.area === budget.target && m.commodity === budget.utility && m.role === 'import').map((m) => ({ meterId: m.id, weight: 1 }));
    const tenantId = Number(budget.target);
    const byId = new Map(all.map((m) => [m.id, m]));
    return this.billing
      .allocations()
      .filter((a) => byId.get(a.meterId)?.commodity === budget.utility)
      .flatMap((a) => a.fractions.filter((f) => f.tenantId === tenantId && f.fraction > 0).map((f) => ({ meterId: a.meterId, weight: f.fraction })));
  }

  create(input: BudgetInput, actor: Actor): Budget {
    const target = input.scope === 'site' ? '' : (input.target ?? '');
    const details: { path: string; message: string }[] = [];
    if (input.unit !== UNITS[input.utility])
      details.push({ path: 'body.unit', message: `${input.utility} is measured in ${UNITS[input.utility]}, not ${input.unit}` });
    if (input.scope !== 'site' && !target)
      details.push({ path: 'body.target', message: `an ${input.scope} budget names its ${input.scope === 'area' ? 'area' : 'cost centre id'}` });
    if (input.scope === 'cost_centre' && target && !this.billing.tenants().some((t) => String(t.id) === target))
      details.push({ path: 'body.target', message: `no tenant or cost centre ${target}` });
    if (!details.length && !this.meters({ ...input, target }).length)
      details.push({
        path: 'body.utility',
        message: `${input.scope === 'site' ? 'the site' : `${input.scope.replace('_', ' ')} ${target}`} has no ${input.utility} meter to measure a budget in ${UNITS[input.utility]}`,
      });
    if (details.length) throw new BadRequest('Invalid budget', details);
    return this.db.sqlite.transaction(() => {
      const clash = this.sql.clash.get({ year: input.year, utility: input.utility, scope: input.scope, target });
      if (clash) throw new Conflict(`A ${input.year} ${input.utility} budget for this ${input.scope.replace('_', ' ')} exists (id ${clash.id})`);
      const { lastInsertRowid } = this.sql.insert.run({
        year: input.year,
        utility: input.utility,
        scope: input.scope,
        target,
        quantity: input.quantity,
        amount: input.amount,
        phasing: input.phasing ?? 'last_year',
        marginPercent: input.marginPercent ?? 5,
      });
      const budget = this.get(Number(lastInsertRowid));
      this.audit.record({ actor, action: 'create', resource: 'billing_budgets', resourceId: budget.id, after: budget });
      return budget;
    })();
  }

  /** Quantity and energy cost of the budget's meters over [from, to), each meter weighted by its share. */
  private totals(meters: { meterId: number; weight: number }[], from: string, to: string): { quantity: number; amount: number; recorded: boolean } {
    let quantity = 0;
    let amount = 0;
    let recorded = false;
    for (const { meterId, weight } of meters) {
      const totals = this.figures.totals(from, to, { meterId });
      quantity += totals.kwh * weight;
      amount += totals.cost * weight;
      if (totals.kwh !== 0) recorded = true;
    }
    return { quantity, amount, recorded };
  }

  /**
   * The budget on a site day (`at`, default today): months phased, the year to date as the whole bill (energy, standing
   * and demand charges), the year-end forecast with its method, and whether it alerts (issue 51, docs/billing.md).
   */
  async status(id: number, at: string = this.figures.today()): Promise<BudgetStatus> {
    const budget = this.get(id);
    const meters = this.meters(budget);
    const months = monthsOf(budget.year);
    const lastYear = months.map((month) => {
      const from = `${budget.year - 1}${month.slice(4)}-01`;
      return this.totals(meters, from, nextMonthStart(from.slice(0, 7))).quantity;
    });
    const lastYearTotal = lastYear.reduce((a, b) => a + b, 0);
    const phasingUsed = budget.phasing === 'last_year' && lastYearTotal > 0 && lastYear.every((q) => q > 0) ? 'last_year' : 'even';
    const yearStart = `${budget.year}-01-01`;
    const yearEnd = `${budget.year + 1}-01-01`;
    const yearDays = daysBetween(yearStart, yearEnd).length;
    const weights = months.map((month, i) =>
      phasingUsed === 'last_year' ? lastYear[i] / lastYearTotal : daysBetween(`${month}-01`, nextMonthStart(month)).length / yearDays,
    );
    const end = at < yearStart ? yearStart : at > yearEnd ? yearEnd : at;
    const { rows, ytd, pastDays, noData } = this.monthsToDate(budget, meters, weights, lastYear, end);
    const ytdAmount = ytd.energy + ytd.standing + ytd.demand;

    // The rest of the year: last year's months scaled to this year's run rate where last year has them, else this
    // year's run rate per day; none when months of the year to date have no data or there is nothing to go on.
    const restDays = daysBetween(end, yearEnd).length;
    const restOfLastYear = months.reduce((sum, month, i) => {
      const from = `${month}-01`;
      const to = nextMonthStart(month);
      const days = daysBetween(from, to).length;
      const rest = to <= end ? 0 : from >= end ? days : daysBetween(end, to).length;
      return sum + (lastYear[i] * rest) / days;
    }, 0);
    const restMonthsHaveLastYear = months.every((month, i) => nextMonthStart(month) <= end || lastYear[i] > 0);
    const lastYearSoFar = end > yearStart ? this.totals(meters, `${budget.year - 1}-01-01`, `${budget.year - 1}${end.slice(4)}`).quantity : 0;
    const normalised = noData.length || restDays === 0 ? null : await this.baselineRest(budget, meters, end, yearEnd);
    const { method, methodNote, restQuantity } = restOfYear(budget, normalised, {
      noData,
      restDays,
      pastDays,
      ytdQuantity: ytd.quantity,
      lastYearSoFar,
      lastYearTotal,
      restOfLastYear,
      restMonthsHaveLastYear,
    });
    const available = method !== 'none';
    // Money of the rest: energy at this year's average price so far (the budget's own before any data), standing charges
    // of the remaining days by the tariff in force, demand charges at this year's rate per day so far; a scope's share
    // of the site's charges as its share of the site's quantity so far.
    const price = ytd.quantity > 0 ? ytd.energy / ytd.quantity : budget.quantity > 0 ? budget.amount / budget.quantity : 0;
    const share = budget.scope === 'site' ? 1 : ytd.siteQuantity > 0 ? ytd.quantity / ytd.siteQuantity : 0;
    const restCharges = restDays > 0 && available ? this.calculation.siteCharges(budget.utility, end, yearEnd) : { standing: 0, demand: 0 };
    const restDemand = pastDays > 0 ? (ytd.demand / pastDays) * restDays : restCharges.demand * share;
    const forecastQuantity = ytd.quantity + restQuantity;
    const forecastAmount = ytdAmount + (available ? restQuantity * price + restCharges.standing * share + restDemand : 0);
    const limit = 1 + budget.marginPercent / 100;
    const alert = available && (forecastQuantity > budget.quantity * limit || forecastAmount > budget.amount * limit);
    const percent = (value: number, of: number) => (of > 0 ? round((value / of) * 100, 2) : 0);
    const message = !available
      ? `The ${budget.year} ${budget.utility} budget of ${budgetTarget(budget)} cannot be forecast: ${methodNote}`
      : alert
        ? `The ${budget.year} ${budget.utility} budget of ${budgetTarget(budget)} is forecast at ${percent(forecastQuantity, budget.quantity)} % of its ${UNITS[budget.utility]} and ${percent(forecastAmount, budget.amount)} % of its money (margin ${budget.marginPercent} %)`
        : `The ${budget.year} ${budget.utility} budget of ${budgetTarget(budget)} is forecast within its margin`;
    return {
      budget,
      at: end,
      phasingUsed,
      months: rows,
      ytd: {
        quantity: round(ytd.quantity, 3),
        amount: round(ytdAmount, 2),
        budgetQuantity: round(ytd.budgetQuantity, 3),
        budgetAmount: round(ytd.budgetAmount, 2),
        energy: round(ytd.energy, 2),
        standing: round(ytd.standing, 2),
        demand: round(ytd.demand, 2),
      },
      forecast: {
        quantity: round(forecastQuantity, 3),
        amount: round(forecastAmount, 2),
        quantityPercentOfBudget: percent(forecastQuantity, budget.quantity),
        amountPercentOfBudget: percent(forecastAmount, budget.amount),
        available,
        method,
        methodNote,
      },
      alert,
      message,
    };
  }

  /**
   * Each month of the year against its phased budget up to `end` (measured, without data, or to come) and the year to
   * date they add up to: the site's standing and demand charges beside energy, a scope's share of them its share of the
   * site's quantity.
   */
  private monthsToDate(budget: Budget, meters: { meterId: number; weight: number }[], weights: number[], lastYear: number[], end: string) {
    const siteMeters =
      budget.scope === 'site'
        ? meters
        : this.calculation
            .siteMeters(this.calculation.billedMeters())
            .filter((m) => m.commodity === budget.utility)
            .map((m) => ({ meterId: m.id, weight: 1 }));
    const ytd = { quantity: 0, energy: 0, standing: 0, demand: 0, budgetQuantity: 0, budgetAmount: 0, siteQuantity: 0 };
    let pastDays = 0;
    const noData: string[] = [];
    const rows: MonthStatus[] = monthsOf(budget.year).map((month, i) => {
      const from = `${month}-01`;
      const to = nextMonthStart(month);
      const budgetQuantity = budget.quantity * weights[i];
      const budgetAmount = budget.amount * weights[i];
      const days = daysBetween(from, to).length;
      const past = from >= end ? 0 : to <= end ? days : daysBetween(from, end).length;
      const row = {
        month,
        budgetQuantity: round(budgetQuantity, 3),
        budgetAmount: round(budgetAmount, 2),
        actualQuantity: null as number | null,
        actualAmount: null as number | null,
        lastYearQuantity: round(lastYear[i], 3),
        data: 'future' as MonthStatus['data'],
        charges: null as MonthStatus['charges'],
      };
      if (past === 0) return row;
      const until = [to, end].sort()[0];
      ytd.budgetQuantity += (budgetQuantity * past) / days;
      ytd.budgetAmount += (budgetAmount * past) / days;
      const actual = this.totals(meters, from, until);
      if (!actual.recorded) {
        noData.push(month);
        row.data = 'no_data';
        return row;
      }
      // The site's charges beside energy; an area's or cost centre's share of them is its share of the site's quantity.
      const site = budget.scope === 'site' ? actual : this.totals(siteMeters, from, until);
      const share = site.quantity > 0 ? Math.min(1, actual.quantity / site.quantity) : 0;
      const charges = this.calculation.siteCharges(budget.utility, from, until);
      const standing = charges.standing * share;
      const demand = charges.demand * share;
      pastDays += past;
      ytd.quantity += actual.quantity;
      ytd.siteQuantity += site.quantity;
      ytd.energy += actual.amount;
      ytd.standing += standing;
      ytd.demand += demand;
      row.data = 'measured';
      row.actualQuantity = round(actual.quantity, 3);
      row.actualAmount = round(actual.amount + standing + demand, 2);
      row.charges = { energy: round(actual.amount, 2), standing: round(standing, 2), demand: round(demand, 2) };
      return row;
    });
    return { rows, ytd, pastDays, noData };
  }

  /**
   * The rest of the year [end, yearEnd) from a weather-normalised baseline (issue 51): the daily model of GET
   * /api/analysis/baseline (E = a + b·HDD + c·CDD + d·weekend, outdoor point temp.outdoor, bases 15.5 / 21 °C) fitted on
   * the 365 days before `end`, each rest day predicted with its own day type under the weather of the same date a year
   * earlier (the 364th day before where that one has none). Only where the baseline passes its guard rails (length,
   * coverage, fit, dropped terms), the budget's meters are the baseline's target (the site's or an area's electricity
   * meters, none shared by a split) and at least 90 % of the rest days have last year's weather (the others at the mean
   * of those); else null with the reason, and the caller falls back to the run rate.
   */
  private async baselineRest(
    budget: Budget,
    meters: { meterId: number; weight: number }[],
    end: string,
    yearEnd: string,
  ): Promise<{ quantity: number; note: string } | { quantity: null; note: string }> {
    if (!this.baselines) return { quantity: null, note: 'no baselines here' };
    if (budget.utility !== 'electricity') return { quantity: null, note: 'the baseline models electricity in kWh' };
    if (budget.scope === 'cost_centre') return { quantity: null, note: "a cost centre's shares are not a baseline's target" };
    const target = budget.scope === 'area' ? { area: budget.target } : {};
    const ids = this.figures.ids(target);
    const mine = meters.map((m) => m.meterId);
    if (ids.length !== mine.length || !ids.every((id) => mine.includes(id)))
      return { quantity: null, note: `the baseline's ${budget.scope === 'area' ? 'area' : 'site'} meters are not the budget's` };
    const baselineFrom = addDays(end, -365);
    let fit: Awaited<ReturnType<Baselines['fit']>>;
    try {
      fit = await this.baselines.fit(
        {
          target,
          baselineFrom,
          baselineTo: end,
          temperatureCode: 'temp.outdoor',
          heatingBaseC: 15.5,
          coolingBaseC: 21,
          holidays: [],
          changePoint: false,
        },
        // As known on the status day: its days before it (a status of a past day reads no later data).
        Date.parse(`${end}T12:00:00Z`),
      );
    } catch (error) {
      const details = (error as { details?: { message: string }[] }).details;
      return { quantity: null, note: details?.[0]?.message ?? (error as Error).message };
    }
    if (!fit.guardRails.defensible) return { quantity: null, note: fit.guardRails.reasons.join(' ') || 'the baseline fails its guard rails' };
    const weather = new Map(fit.baselineDays.map((d) => [d.day, d]));
    const c = fit.model.coefficients;
    const rest = daysBetween(end, yearEnd);
    let sum = 0;
    let predicted = 0;
    for (const day of rest) {
      const last = weather.get(addDays(day, -365)) ?? weather.get(addDays(day, -364));
      if (!last) continue;
      sum += c.intercept + c.perHdd * last.hdd + c.perCdd * last.cdd + (isWeekend(day) ? c.weekend : 0);
      predicted += 1;
    }
    if (predicted < rest.length * 0.9) return { quantity: null, note: `last year's weather is known for ${predicted} of the ${rest.length} days left` };
    const quantity = (sum / predicted) * rest.length;
    const stats = fit.statistics;
    return {
      quantity,
      note:
        `the rest of the year from the weather-normalised baseline (${baselineFrom} – ${addDays(end, -1)}: ${round(c.intercept, 3)} ${term(c.perHdd)} × HDD ` +
        `${term(c.perCdd)} × CDD ${term(c.weekend)} on weekends, kWh a day; CV(RMSE) ${stats.cvRmsePercent} %, R² ${stats.r2}) under last year's weather ` +
        `of the same days (${predicted} of ${rest.length}${predicted < rest.length ? '; the others at their mean' : ''})`,
    };
  }

  /** Checks every budget of the year of `at`: one alert per budget and year, raised the first time its forecast passes it (it stays to be acknowledged). */
  async check(raise: (alarm: GatewayAlarm) => unknown, at: string = this.figures.today()): Promise<BudgetStatus[]> {
    const year = Number(at.slice(0, 4));
    const statuses: BudgetStatus[] = [];
    for (const budget of this.list().filter((b) => b.year === year)) statuses.push(await this.status(budget.id, at));
    const now = new Date().toISOString();
    for (const status of statuses.filter((s) => s.alert))
      raise({
        key: `${BUDGET_ALERT_CODE}@${status.budget.id}@${status.budget.year}`,
        code: BUDGET_ALERT_CODE,
        level: 'warning',
        message: status.message,
        detail: `forecast ${status.forecast.quantity} ${status.budget.unit}, ${status.forecast.amount}; budget ${status.budget.quantity} ${status.budget.unit}, ${status.budget.amount}`,
        raisedAt: now,
        clearedAt: null,
      });
    return statuses;
  }
}

/** What the forecast's rest of the year is read from, besides the weather-normalised baseline. */
type RestInputs = {
  noData: string[];
  restDays: number;
  pastDays: number;
  ytdQuantity: number;
  lastYearSoFar: number;
  lastYearTotal: number;
  restOfLastYear: number;
  restMonthsHaveLastYear: boolean;
};

/**
 * The rest of the year's quantity and the method it comes by, in order of preference: none when months of the year to
 * date have no data, the weather-normalised baseline, last year's same days scaled to this year's run rate, this year's
 * run rate, last year's same days; none when there is nothing to go on.
 */
function restOfYear(
  budget: Budget,
  normalised: { quantity: number | null; note: string } | null,
  { noData, restDays, pastDays, ytdQuantity, lastYearSoFar, lastYearTotal, restOfLastYear, restMonthsHaveLastYear }: RestInputs,
): { method: ForecastMethod; methodNote: string; restQuantity: number } {
  let method: ForecastMethod;
  let methodNote: string;
  let restQuantity = 0;
  if (noData.length) {
    method = 'none';
    methodNote = `${noData.length} month(s) of the year to date have no data (${noData.join(', ')}): no year-end forecast rests on them`;
  } else if (restDays === 0) {
    method = 'run_rate';
    methodNote = 'the year is over: the forecast is the year';
  } else if (normalised?.quantity != null) {
    restQuantity = normalised.quantity;
    method = 'weather_normalised_baseline';
    methodNote = normalised.note;
  } else if (ytdQuantity > 0 && lastYearSoFar > 0 && restMonthsHaveLastYear) {
    const factor = ytdQuantity / lastYearSoFar;
    restQuantity = restOfLastYear * factor;
    method = 'last_year_scaled_to_run_rate';
    methodNote = `the rest of the year as last year's same days × this year's run rate (${round(factor, 4)}: ${round(ytdQuantity, 3)} against ${round(lastYearSoFar, 3)} over the same days last year)`;
  } else if (ytdQuantity > 0 && pastDays > 0) {
    restQuantity = (ytdQuantity / pastDays) * restDays;
    method = 'run_rate';
    methodNote = `the rest of the year at this year's run rate (${round(ytdQuantity / pastDays, 3)} ${UNITS[budget.utility]} a day over ${pastDays} days)`;
  } else if (restMonthsHaveLastYear && lastYearTotal > 0) {
    restQuantity = restOfLastYear;
    method = 'last_year';
    methodNote = "no data this year yet: the rest of the year as last year's same days";
  } else {
    method = 'none';
    methodNote = 'no data this year and none last year: no year-end forecast can be made';
  }
  if (normalised && normalised.quantity === null) methodNote += ` (no weather-normalised baseline: ${normalised.note})`;
  return { method, methodNote, restQuantity };
}

/** A model's term as read in a formula: "+ 8", "− 20.002". */
const term = (value: number) => `${value < 0 ? '−' : '+'} ${round(Math.abs(value), 3)}`;
/** A site day's weekday: Saturday or Sunday, as the baseline's day type reads it. */
const isWeekend = (day: string) => [0, 6].includes(new Date(`${day}T00:00:00Z`).getUTCDay());

function budgetTarget(budget: Pick<Budget, 'scope' | 'target'>): string {
  return budget.scope === 'site' ? 'the site' : budget.scope === 'area' ? `area ${budget.target}` : `cost centre ${budget.target}`;
}

function view(row: Row): Budget {
  return { ...row, unit: UNITS[row.utility] };
}
