// Budgets: an annual budget per utility for the site, an area or a cost centre, in the utility's unit and in money,
// phased by month (last year's profile, or evenly by days); the year-end forecast is the year to date plus, for the
// rest of the year, what the same months used last year (the phased budget where last year has no data); an alert is
// raised when the forecast passes the budget by more than its margin.
import type { EnergyFigures } from '../energy/index.ts';
import type { GatewayAlarm } from '../facility/index.ts';
import type { Actor, AuditLog } from '../platform/db/auditTrail.ts';
import type { Db } from '../platform/db/client.ts';
import { and, desc, eq } from 'drizzle-orm';
import { billingBudgets, type Commodity } from '../platform/db/schema/index.ts';
import { BadRequest, Conflict, NotFound } from '../platform/errors.ts';
import { addDays, daysBetween } from '../platform/time/calendar.ts';
import { type BillingCalculation, type BilledMeter, UNITS } from './calculation.ts';
import type { Billing } from './service.ts';

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
  actualQuantity: number | null;
  actualAmount: number | null;
  lastYearQuantity: number;
};
export type BudgetStatus = {
  budget: Budget;
  at: string;
  phasingUsed: 'last_year' | 'even';
  months: MonthStatus[];
  ytd: { quantity: number; amount: number; budgetQuantity: number; budgetAmount: number };
  forecast: { quantity: number; amount: number; quantityPercentOfBudget: number; amountPercentOfBudget: number };
  alert: boolean;
  message: string;
};

type Row = typeof billingBudgets.$inferSelect;
export const BUDGET_ALERT_CODE = 'billing.budget.overspend';
const round = (value: number, places: number) => Math.round(value * 10 ** places) / 10 ** places;
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

  /** The budget on a site day (`at`, default today): months phased, the year to date, the year-end forecast and whether it alerts. */
  status(id: number, at: string = this.figures.today()): BudgetStatus {
    const budget = this.get(id);
    const meters = this.meters(budget);
    const months = monthsOf(budget.year);
    const lastYear = months.map((month) => {
      const from = `${budget.year - 1}${month.slice(4)}-01`;
      return this.totals(meters, from, nextMonthStart(from.slice(0, 7))).quantity;
    });
    const lastYearTotal = lastYear.reduce((a, b) => a + b, 0);
    const phasingUsed = budget.phasing === 'last_year' && lastYearTotal > 0 && lastYear.every((q) => q > 0) ? 'last_year' : 'even';
    const yearDays = daysBetween(`${budget.year}-01-01`, `${budget.year + 1}-01-01`).length;
    const weights = months.map((month, i) =>
      phasingUsed === 'last_year' ? lastYear[i] / lastYearTotal : daysBetween(`${month}-01`, nextMonthStart(month)).length / yearDays,
    );
    const end = at < `${budget.year}-01-01` ? `${budget.year}-01-01` : at > `${budget.year + 1}-01-01` ? `${budget.year + 1}-01-01` : at;
    let ytdQuantity = 0;
    let ytdAmount = 0;
    let ytdBudgetQuantity = 0;
    let ytdBudgetAmount = 0;
    let restQuantity = 0;
    const rows: MonthStatus[] = months.map((month, i) => {
      const from = `${month}-01`;
      const to = nextMonthStart(month);
      const budgetQuantity = budget.quantity * weights[i];
      const budgetAmount = budget.amount * weights[i];
      // Of the month: the days before `at` happened, the rest is expected like last year's month (else as budgeted).
      const days = daysBetween(from, to).length;
      const past = from >= end ? 0 : to <= end ? days : daysBetween(from, end).length;
      const expected = lastYear[i] > 0 ? lastYear[i] : budgetQuantity;
      restQuantity += (expected * (days - past)) / days;
      let actual: { quantity: number; amount: number } | null = null;
      if (past > 0) {
        actual = this.totals(meters, from, [to, end].sort()[0]);
        ytdQuantity += actual.quantity;
        ytdAmount += actual.amount;
        ytdBudgetQuantity += (budgetQuantity * past) / days;
        ytdBudgetAmount += (budgetAmount * past) / days;
      }
      return {
        month,
        budgetQuantity: round(budgetQuantity, 3),
        budgetAmount: round(budgetAmount, 2),
        actualQuantity: actual ? round(actual.quantity, 3) : null,
        actualAmount: actual ? round(actual.amount, 2) : null,
        lastYearQuantity: round(lastYear[i], 3),
      };
    });
    // Money for the rest at this year's average price so far (the budget's own price before any data).
    const price = ytdQuantity > 0 ? ytdAmount / ytdQuantity : budget.quantity > 0 ? budget.amount / budget.quantity : 0;
    const forecastQuantity = ytdQuantity + restQuantity;
    const forecastAmount = ytdAmount + restQuantity * price;
    const limit = 1 + budget.marginPercent / 100;
    const alert = forecastQuantity > budget.quantity * limit || forecastAmount > budget.amount * limit;
    const percent = (value: number, of: number) => (of > 0 ? round((value / of) * 100, 2) : 0);
    const message = alert
      ? `The ${budget.year} ${budget.utility} budget of ${budgetTarget(budget)} is forecast at ${percent(forecastQuantity, budget.quantity)} % of its ${UNITS[budget.utility]} and ${percent(forecastAmount, budget.amount)} % of its money (margin ${budget.marginPercent} %)`
      : `The ${budget.year} ${budget.utility} budget of ${budgetTarget(budget)} is forecast within its margin`;
    return {
      budget,
      at: end,
      phasingUsed,
      months: rows,
      ytd: {
        quantity: round(ytdQuantity, 3),
        amount: round(ytdAmount, 2),
        budgetQuantity: round(ytdBudgetQuantity, 3),
        budgetAmount: round(ytdBudgetAmount, 2),
      },
      forecast: {
        quantity: round(forecastQuantity, 3),
        amount: round(forecastAmount, 2),
        quantityPercentOfBudget: percent(forecastQuantity, budget.quantity),
        amountPercentOfBudget: percent(forecastAmount, budget.amount),
      },
      alert,
      message,
    };
  }

  /** Checks every budget of the year of `at`: one alert per budget and year, raised the first time its forecast passes it (it stays to be acknowledged). */
  check(raise: (alarm: GatewayAlarm) => unknown, at: string = this.figures.today()): BudgetStatus[] {
    const year = Number(at.slice(0, 4));
    const statuses = this.list()
      .filter((budget) => budget.year === year)
      .map((budget) => this.status(budget.id, at));
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

function budgetTarget(budget: Pick<Budget, 'scope' | 'target'>): string {
  return budget.scope === 'site' ? 'the site' : budget.scope === 'area' ? `area ${budget.target}` : `cost centre ${budget.target}`;
}

function view(row: Row): Budget {
  return { ...row, unit: UNITS[row.utility] };
}
