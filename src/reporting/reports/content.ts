// What a report says: the figures of one template over one period, as tables every format renders (PDF, CSV, JSON).
import type { Comparison, Comparisons, PeriodFigure, DemandCharges, MonthDemandCharge, WeatherNormalisedChange } from '../../analysis/index.ts';
import {
  type CommodityFigures,
  type CommodityFiguresView,
  allUtilities,
  type AllUtilities,
  type Coverage,
  type LoadCurve,
  type PeriodFigures,
  type SiteEnergy,
} from '../../energy/index.ts';
import type { Db } from '../../platform/db/client.ts';
import { siteSettings } from '../../site/index.ts';
import { addDays, dayStart, daysBetween, siteDay } from '../../platform/time/calendar.ts';
import { round } from '../../platform/numbers.ts';

/** What a report asks of the site's energy: the period's figures, how much of it holds data, a day's load curve, and their source (the service's SiteEnergy). */
export type ReportEnergySource = Pick<SiteEnergy, 'source' | 'periodFigures' | 'coverage' | 'loadCurve'>;

export const TEMPLATE_KEYS = ['weekly-energy', 'monthly-energy', 'month-to-date', 'alerts-faults', 'maintenance-due'] as const;
export type TemplateKey = (typeof TEMPLATE_KEYS)[number];

export type Cell = string | number | null;
export type Table = { key: string; title: string; columns: string[]; rows: Cell[][] };

export type ReportContent = {
  template: TemplateKey;
  title: string;
  site: string;
  timezone: string;
  /** BCP 47 tag from the platform config: the PDF's language, number and date formats. */
  locale: string;
  currency: string;
  /** Local dates, `to` exclusive. */
  period: { from: string; to: string };
  generatedAt: string;
  /** The energy templates' figures, also drawn as the daily chart. */
  energy: PeriodFigures | null;
  /** How much of the period holds data (energy templates). */
  coverage: Coverage | null;
  /**
   * The same figures over the period before and the same period a year earlier (energy templates): on a metered site
   * the answer of GET /api/analysis/compare for the site and the report's period (`source: 'analysis'`), else the
   * hand-entered daily totals (`source: 'daily'`).
   */
  comparison: {
    source: 'analysis' | 'daily';
    current: Compared;
    previous: Compared;
    lastYear: Compared;
    /** A monthly report on a metered site: the change against the previous month normalised for weather (the comparisons API's). */
    weatherNormalised: WeatherNormalisedChange | null;
  } | null;
  /**
   * A calendar month's demand charge (capacity tariff) when the tariff version billing it has a price per kW, with the
   * same figure for the two comparison months (null where that month's version has none).
   */
  demandCharge: { current: MonthDemandCharge; previous: MonthDemandCharge | null; lastYear: MonthDemandCharge | null } | null;
  /** The site's load on the day of the period's peak. */
  loadCurve: LoadCurve | null;
  /** Every utility in its own unit (GET /api/energy/commodities for the period) and its days (energy templates, metered site). */
  commodities: ReportCommodities | null;
  /**
   * The headline over every utility (electricity import, gas, heat, water) with carbon by scope (src/energy/allUtilities.ts);
   * the cover's energy, cost and carbon lines are grid electricity only. Null without the commodities figures.
   */
  allUtilities: AllUtilities | null;
  tables: Table[];
};

/**
 * A comparison period's totals; `hasData` false when nothing was recorded then (no change is computed against it).
 * `partial`, `complete`, `coverage` and `missingDays` as the comparisons API marks them (a hand-entered site: complete
 * when every day was entered). The peak is not part of the comparisons API: it is the site's highest 15-minute mean of
 * the period, as on the cover.
 */
export type Compared = {
  from: string;
  to: string;
  hasData: boolean;
  totalKwh: number;
  cost: number;
  carbonKg: number;
  peakKw: number | null;
  partial: boolean;
  complete: boolean;
  coverage: number;
  missingDays: string[];
  /** The month's demand charge and energy cost + demand charge (monthly reports on a tariff with a demand price). */
  demandCharge?: number | null;
  totalCost?: number | null;
};

/**
 * A commodity's part of the report: the period's figures as the commodities API answers them, `hasData` false when no
 * meter of it stored a day of the period (the report says "no data", never 0), and its days (null: no data that day).
 */
export type ReportCommodity = {
  commodity: CommodityFiguresView['commodities'][number];
  hasData: boolean;
  days: { day: string; quantity: number | null; kwh: number | null }[];
};
export type ReportCommodities = {
  view: CommodityFiguresView;
  entries: ReportCommodity[];
  /** The site has PV generation or grid-export meters: the balance (self-consumption, self-sufficiency) is shown. */
  solar: { hasData: boolean; days: { day: string; generationKwh: number | null; exportKwh: number | null; selfConsumptionKwh: number | null }[] } | null;
};

/** The two things a report asks of the analysis feature (src/analysis): comparisons, and a month's demand charge. */
export type ReportAnalysis = { comparisons: Pick<Comparisons, 'compare'>; demandCharges?: Pick<DemandCharges, 'month'> };

/**
 * The comparisons API's question for a report period: a whole calendar month is `period=month`, anything else (the
 * weekly report's last seven days) `period=custom` with the same from and to.
 */
export function comparisonQuery(period: { from: string; to: string }): { kind: 'month'; at: string } | { kind: 'custom'; from: string; to: string } {
  if (period.from.endsWith('-01') && period.to.endsWith('-01') && monthsBetween(period.from, period.to) === 1) return { kind: 'month', at: period.from };
  return { kind: 'custom', from: period.from, to: period.to };
}

/** The last day of a period whose `to` is exclusive. */
export function lastDay(to: string): string {
  return addDays(to, -1);
}

/** The period a template covers when it runs at `now`: whole local days, `to` exclusive. */
export function reportPeriod(template: TemplateKey, timezone: string, now: number): { from: string; to: string } {
  const today = siteDay(timezone, new Date(now));
  switch (template) {
    case 'weekly-energy':
    case 'alerts-faults':
      return { from: addDays(today, -7), to: today };
    case 'monthly-energy': {
      const to = `${today.slice(0, 7)}-01`;
      const [year, month] = to.split('-').map(Number);
      const from = month === 1 ? `${year - 1}-12-01` : `${year}-${String(month - 1).padStart(2, '0')}-01`;
      return { from, to };
    }
    case 'month-to-date':
      // Today included, so far: the first report of a new box shows what it collected.
      return { from: `${today.slice(0, 7)}-01`, to: addDays(today, 1) };
    case 'maintenance-due':
      return { from: today, to: addDays(today, 14) };
  }
}

const TOP_ALERTS = 10;
const TOP_EQUIPMENT_FAULTS = 10;
const LEVEL_RANK = `CASE level WHEN 'critical' THEN 0 WHEN 'warning' THEN 1 ELSE 2 END`;

type Site = { siteName: string; timezone: string; locale: string; currency: string };

/** The period of the same length just before [from, to): the previous calendar month for a whole month. */
export function previousPeriod(period: { from: string; to: string }): { from: string; to: string } {
  if (period.from.endsWith('-01') && period.to.endsWith('-01') && monthsBetween(period.from, period.to) === 1)
    return { from: shiftMonths(period.from, -1), to: period.from };
  const length = Math.round((Date.parse(period.to) - Date.parse(period.from)) / 86_400_000);
  return { from: addDays(period.from, -length), to: period.from };
}

/**
 * A year earlier, by the comparisons API's one rule: a whole calendar month is the same month a year earlier (29
 * February becomes the 28th), any other period the same days 52 weeks (364 days) earlier, the same weekdays.
 */
export function lastYearPeriod(period: { from: string; to: string }): { from: string; to: string } {
  if (period.from.endsWith('-01') && period.to.endsWith('-01') && monthsBetween(period.from, period.to) === 1)
    return { from: shiftMonths(period.from, -12), to: shiftMonths(period.to, -12) };
  return { from: addDays(period.from, -364), to: addDays(period.to, -364) };
}

function monthsBetween(from: string, to: string): number {
  const [fy, fm] = from.split('-').map(Number);
  const [ty, tm] = to.split('-').map(Number);
  return (ty - fy) * 12 + (tm - fm);
}

function shiftMonths(day: string, months: number): string {
  const [y, m, d] = day.split('-').map(Number);
  const index = y * 12 + (m - 1) + months;
  const year = Math.floor(index / 12);
  const month = (index % 12) + 1;
  const last = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return `${year}-${String(month).padStart(2, '0')}-${String(Math.min(d, last)).padStart(2, '0')}`;
}

export class ReportContentBuilder {
  private readonly site;
  private readonly topAlerts;
  private readonly alertCounts;
  private readonly faultCounts;
  private readonly mttr;
  private readonly maintenanceDue;
  private readonly equipmentFaults;

  constructor(
    db: Db,
    private readonly energy: ReportEnergySource,
    private readonly analysis: ReportAnalysis | null = null,
    /** Whether comparisons and utilities come from the meters (the analysis and commodities services): by default, the energy source says. */
    private readonly fromMeters: () => boolean = () => energy.source() === 'meters',
    private readonly commodityFigures: Pick<CommodityFigures, 'period'> | null = null,
  ) {
    // Counts per status with CASE orderings, read as arrays: plain SQL says these more plainly than drizzle's sql`` fragments.
    const sqlite = db.sqlite;
    // The site's settings as site/ keeps them (one reader per connection: the worker's own read-only one too).
    this.site = siteSettings(db);
    // raw SQL: a report's alert list of its period, ordered by level rank (CASE) and time, limited
    this.topAlerts = sqlite
      .prepare(
        `SELECT occurred_at, level, title, area, status FROM alerts WHERE occurred_at >= ? AND occurred_at < ?
         ORDER BY ${LEVEL_RANK}, occurred_at DESC, id DESC LIMIT ${TOP_ALERTS}`,
      )
      .raw();
    // raw SQL: a report's alert counts by level (GROUP BY, ordered by level rank)
    this.alertCounts = sqlite
      .prepare(
        `SELECT level, SUM(status = 'active'), SUM(status = 'acknowledged'), SUM(status = 'resolved'), COUNT(*)
         FROM alerts WHERE occurred_at >= ? AND occurred_at < ? GROUP BY level ORDER BY ${LEVEL_RANK}`,
      )
      .raw();
    // raw SQL: a report's fault counts by severity (GROUP BY)
    this.faultCounts = sqlite
      .prepare(
        `SELECT severity, SUM(status = 'open'), SUM(status = 'in_progress'), SUM(status = 'resolved'), SUM(status = 'closed'), COUNT(*)
         FROM faults WHERE reported_at >= ? AND reported_at < ? GROUP BY severity
         ORDER BY CASE severity WHEN 'critical' THEN 0 WHEN 'high' THEN 1 WHEN 'medium' THEN 2 ELSE 3 END`,
      )
      .raw();
    // raw SQL: the mean time to resolve in hours (AVG over julianday differences)
    this.mttr = sqlite
      .prepare(
        `SELECT ROUND(AVG((julianday(resolved_at) - julianday(reported_at)) * 24), 4) FROM faults
         WHERE status IN ('resolved', 'closed') AND resolved_at >= ? AND resolved_at < ?`,
      )
      .pluck();
    // raw SQL: a monthly report's costliest equipment faults (issue 54): the fault-detection episodes overlapping the
    // period, "not a fault" left out, by money wasted per day; each with its whole episode's waste
    this.equipmentFaults = sqlite
      .prepare(
        `SELECT equipment, rule_id, started_at, ended_at, ROUND(waste_kwh, 1), ROUND(waste_kwh_per_day, 1), ROUND(waste_money_per_day, 2)
         FROM fdd_episodes WHERE not_a_fault_at IS NULL AND started_at < ? AND COALESCE(ended_at, last_seen_at) >= ?
         ORDER BY waste_money_per_day DESC, id DESC LIMIT ${TOP_EQUIPMENT_FAULTS}`,
      )
      .raw();
    // raw SQL: overdue maintenance of a report (status IN, due before the end), ordered
    this.maintenanceDue = sqlite
      .prepare(
        `SELECT scheduled_at, equipment, type, status, assignee, CASE WHEN scheduled_at < ? THEN 'yes' ELSE 'no' END
         FROM maintenance WHERE status IN ('planned', 'in_progress') AND scheduled_at IS NOT NULL AND scheduled_at < ?
         ORDER BY scheduled_at, id`,
      )
      .raw();
  }

  build(template: TemplateKey, title: string, now: number): ReportContent {
    const site: Site = this.site();
    const period = reportPeriod(template, site.timezone, now);
    const window = [new Date(dayStart(site.timezone, period.from)).toISOString(), new Date(dayStart(site.timezone, period.to)).toISOString()];
    const base = {
      template,
      title,
      site: site.siteName,
      timezone: site.timezone,
      locale: site.locale,
      currency: site.currency,
      period,
      generatedAt: new Date(now).toISOString(),
      coverage: null,
      comparison: null,
      demandCharge: null,
      loadCurve: null,
      commodities: null,
      allUtilities: null,
    };
    const topAlerts: Table = {
      key: 'top-alerts',
      title: 'Top alerts',
      columns: ['occurred_at', 'level', 'title', 'area', 'status'],
      rows: this.topAlerts.all(...window) as Cell[][],
    };
    switch (template) {
      case 'weekly-energy':
      case 'monthly-energy':
      case 'month-to-date': {
        const energy = this.energy.periodFigures(period.from, period.to);
        const coverage = this.energy.coverage(period.from, period.to);
        const comparison = this.comparison(period, energy, coverage, now);
        const demandCharge = this.demandCharge(comparison, now);
        const loadCurve = energy.peak ? this.energy.loadCurve(siteDay(site.timezone, new Date(energy.peak.at))) : null;
        const commodities = this.commodities(period);
        const tables = [
          ...energyTables(energy),
          ...(demandCharge ? [demandChargeTable(demandCharge.current)] : []),
          ...(commodities ? commodityTables(commodities) : []),
          topAlerts,
          ...(template === 'monthly-energy'
            ? [
                {
                  key: 'equipment-faults',
                  title: 'Costliest equipment faults',
                  columns: ['equipment', 'rule', 'started_at', 'ended_at', 'waste_kwh', 'waste_kwh_per_day', 'waste_money_per_day'],
                  rows: this.equipmentFaults.all(window[1], window[0]) as Cell[][],
                },
              ]
            : []),
        ];
        return {
          ...base,
          energy,
          coverage,
          comparison,
          demandCharge,
          loadCurve,
          commodities,
          allUtilities: commodities ? allUtilities(commodities.view) : null,
          tables,
        };
      }
      case 'alerts-faults':
        return {
          ...base,
          energy: null,
          tables: [
            {
              key: 'alerts',
              title: 'Alerts by level and status',
              columns: ['level', 'active', 'acknowledged', 'resolved', 'total'],
              rows: this.alertCounts.all(...window) as Cell[][],
            },
            {
              key: 'faults',
              title: 'Faults by severity and status',
              columns: ['severity', 'open', 'in_progress', 'resolved', 'closed', 'total'],
              rows: this.faultCounts.all(...window) as Cell[][],
            },
            { key: 'repair', title: 'Mean time to repair', columns: ['mttr_hours'], rows: [[this.mttr.get(...window) as number | null]] },
            topAlerts,
          ],
        };
      case 'maintenance-due':
        return {
          ...base,
          energy: null,
          tables: [
            {
              key: 'maintenance-due',
              title: 'Maintenance overdue or due',
              columns: ['scheduled_at', 'equipment', 'type', 'status', 'assignee', 'overdue'],
              rows: this.maintenanceDue.all(base.generatedAt, window[1]) as Cell[][],
            },
          ],
        };
    }
  }

  /** One comparison logic: a metered site's report asks the analysis comparisons, the same call as the API. */
  private comparison(period: { from: string; to: string }, energy: PeriodFigures, coverage: Coverage, now: number): NonNullable<ReportContent['comparison']> {
    if (this.analysis && this.fromMeters()) {
      const query = comparisonQuery(period);
      const answer: Comparison =
        query.kind === 'month'
          ? this.analysis.comparisons.compare('month', {}, { at: query.at, now })
          : this.analysis.comparisons.compare('custom', {}, { from: query.from, to: query.to, now });
      const fromApi = (figure: PeriodFigure, peakKw: number | null): Compared => ({
        from: figure.from,
        to: figure.to,
        hasData: figure.coverage > 0,
        totalKwh: figure.kwh,
        cost: figure.cost,
        carbonKg: figure.carbonKg,
        peakKw,
        partial: figure.partial,
        complete: figure.complete,
        coverage: figure.coverage,
        missingDays: figure.missingDays,
      });
      const peakOf = (figure: PeriodFigure) => this.energy.periodFigures(figure.from, figure.to).peak?.kw ?? null;
      return {
        source: 'analysis',
        current: fromApi(answer.current, energy.peak?.kw ?? null),
        previous: fromApi(answer.previous, peakOf(answer.previous)),
        lastYear: fromApi(answer.lastYear, peakOf(answer.lastYear)),
        weatherNormalised: answer.weatherNormalised,
      };
    }
    return {
      source: 'daily',
      current: this.daily(period, energy, coverage),
      previous: this.compared(previousPeriod(period)),
      lastYear: this.compared(lastYearPeriod(period)),
      weatherNormalised: null,
    };
  }

  /**
   * A monthly report's demand charge (GET /api/analysis/demand-charges?month= for the month and its two comparison
   * months), set on the comparison figures so the cover compares it and the total cost like every other figure.
   */
  private demandCharge(comparison: NonNullable<ReportContent['comparison']>, now: number): ReportContent['demandCharge'] {
    const service = this.analysis?.demandCharges;
    if (!service || comparison.source !== 'analysis' || comparisonQuery(comparison.current).kind !== 'month') return null;
    const current = service.month(comparison.current.from.slice(0, 7), now);
    if (current.version.demandChargePerKw <= 0) return null;
    const reference = (compared: Compared): MonthDemandCharge | null => {
      const charge = service.month(compared.from.slice(0, 7), now);
      return charge.version.demandChargePerKw > 0 ? charge : null;
    };
    const previous = reference(comparison.previous);
    const lastYear = reference(comparison.lastYear);
    // Energy cost from the comparison (the compare API's), the charge from the demand-charge API. A month with data
    // whose tariff had no demand price was billed no demand charge: 0, and its total cost is its energy cost (issue 41:
    // the cover said "no data to compare" for a month that had data). No data: nothing to compare.
    const add = (compared: Compared, charge: MonthDemandCharge | null) => {
      const demand = charge ? charge.demandCharge : 0;
      compared.demandCharge = compared.hasData ? demand : null;
      compared.totalCost = compared.hasData ? round(compared.cost + demand, 2) : null;
    };
    add(comparison.current, current);
    add(comparison.previous, previous);
    add(comparison.lastYear, lastYear);
    return { current, previous, lastYear };
  }

  /**
   * By commodity: the period and each of its days through the commodities service (the figures of GET
   * /api/energy/commodities for the same from and to); a commodity or day with no stored meter-day is "no data".
   */
  private commodities(period: { from: string; to: string }): ReportCommodities | null {
    if (!this.commodityFigures || !this.fromMeters()) return null;
    // The commodities API answers null for what has no data (a commodity, a day, a part of the balance): shown as such.
    const view = this.commodityFigures.period(period.from, period.to);
    const dayViews = daysBetween(period.from, period.to).map((day) => ({ day, view: this.commodityFigures!.period(day, addDays(day, 1)) }));
    const entries = view.commodities.map(
      (commodity): ReportCommodity => ({
        commodity,
        hasData: commodity.quantity !== null,
        days: dayViews.map(({ day, view: one }) => {
          const entry = one.commodities.find((c) => c.commodity === commodity.commodity);
          return { day, quantity: entry?.quantity ?? null, kwh: entry?.kwh ?? null };
        }),
      }),
    );
    const { coverage } = view.electricity;
    let solar: ReportCommodities['solar'] = null;
    if (coverage.export.meters > 0 || coverage.generation.meters > 0) {
      solar = {
        hasData: view.electricity.generationKwh !== null || view.electricity.exportKwh !== null,
        days: dayViews.map(({ day, view: one }) => ({
          day,
          generationKwh: one.electricity.generationKwh,
          exportKwh: one.electricity.exportKwh,
          selfConsumptionKwh: one.electricity.selfConsumptionKwh,
        })),
      };
    }
    return { view, entries, solar };
  }

  /** A site without meters: the hand-entered daily totals, complete when every day of the period was entered. */
  private compared(period: { from: string; to: string }): Compared {
    return this.daily(period, this.energy.periodFigures(period.from, period.to), this.energy.coverage(period.from, period.to));
  }

  private daily(period: { from: string; to: string }, figures: PeriodFigures, coverage: Coverage): Compared {
    const days = new Set(coverage.days);
    const missingDays = figures.days.map((d) => d.day).filter((day) => !days.has(day));
    return {
      ...period,
      hasData: coverage.share > 0,
      totalKwh: figures.totalKwh,
      cost: figures.cost,
      carbonKg: figures.carbonKg,
      peakKw: figures.peak?.kw ?? null,
      partial: false,
      complete: missingDays.length === 0,
      coverage: round(coverage.share, 4),
      missingDays: missingDays.slice(0, 31),
    };
  }
}

/**
 * By commodity as the commodities API answers it: quantity in the commodity's unit, kWh (null for water: m³ never
 * enters an energy total), cost and CO2; a commodity without data has null figures. The energy total sums kWh only.
 * With PV or export meters, the electricity balance as one row.
 */
function commodityTables(commodities: ReportCommodities): Table[] {
  const { view, entries, solar } = commodities;
  const rows: Cell[][] = entries.map(({ commodity: c }) => [c.commodity, c.unit, c.quantity, c.kwh, c.cost, c.carbonKg]);
  rows.push(['energy_total', 'kWh', view.energyKwh, view.energyKwh, null, null]);
  const tables: Table[] = [{ key: 'commodities', title: 'By commodity', columns: ['commodity', 'unit', 'quantity', 'kwh', 'cost', 'carbon_kg'], rows }];
  if (solar) {
    const e = view.electricity;
    tables.push({
      key: 'electricity-balance',
      title: 'Electricity balance',
      columns: [
        'import_kwh',
        'export_kwh',
        'generation_kwh',
        'consumption_kwh',
        'self_consumption_kwh',
        'self_consumption_rate',
        'self_sufficiency',
        'net_import_kwh',
        'import_cost',
        'feed_in_revenue',
      ],
      rows: solar.hasData
        ? [
            [
              e.importKwh,
              e.exportKwh,
              e.generationKwh,
              e.consumptionKwh,
              e.selfConsumptionKwh,
              e.selfConsumptionRate,
              e.selfSufficiency,
              e.netImportKwh,
              e.importCost,
              e.feedInRevenue,
            ],
          ]
        : [],
    });
  }
  return tables;
}

/** The month's demand charge as the demand-charge API answers it: billed kW × price per kW, and the cost with it. */
function demandChargeTable(charge: MonthDemandCharge): Table {
  return {
    key: 'demand-charge',
    title: 'Demand charge',
    columns: ['month', 'basis', 'peak_kw', 'billed_kw', 'demand_charge_per_kw', 'demand_charge', 'energy_cost', 'total_cost'],
    rows: [
      [
        charge.month,
        charge.version.basis,
        charge.peak?.kw ?? null,
        charge.billedKw,
        charge.version.demandChargePerKw,
        charge.demandCharge,
        charge.energyCost,
        charge.totalCost,
      ],
    ],
  };
}

/** The energy figures as tables, in the units and precision the energy API answers with. */
function energyTables(energy: PeriodFigures): Table[] {
  return [
    // Metered: each day's shares of measured, estimated and missing intervals (the interval flags), as the completeness API answers.
    energy.completeness
      ? {
          key: 'daily',
          title: 'Energy per day',
          columns: ['day', 'kwh', 'cost', 'carbon_kg', 'measured', 'estimated', 'missing'],
          rows: energy.days.map((d) => [d.day, d.kwh, d.cost, d.carbonKg, d.measured ?? null, d.estimated ?? null, d.missing ?? null]),
        }
      : {
          key: 'daily',
          title: 'Energy per day',
          columns: ['day', 'kwh', 'cost', 'carbon_kg'],
          rows: energy.days.map((d) => [d.day, d.kwh, d.cost, d.carbonKg]),
        },
    {
      key: 'areas',
      title: 'Energy by area',
      columns: ['area', 'kwh', 'cost', 'carbon_kg'],
      rows: energy.areas.map((a) => [a.area, a.kwh, a.cost, a.carbonKg]),
    },
    { key: 'totals', title: 'Period totals', columns: ['kwh', 'cost', 'carbon_kg'], rows: [[energy.totalKwh, energy.cost, energy.carbonKg]] },
    { key: 'peak', title: 'Peak demand', columns: ['kw', 'at'], rows: energy.peak ? [[energy.peak.kw, energy.peak.at]] : [] },
  ];
}
