// KPI cards and the weekly chart, computed from the tables on each call (one prepared statement each).
import type { Db } from '../db/client.ts';
import { Kept } from '../db/kept.ts';
import { FIGURE_TABLES, type EnergyFigures } from '../energy/figures.ts';
import { addDays, siteDay } from '../energy/calendar.ts';
import { SITE_TOTAL } from '../energy/service.ts';
import type { OverviewStatsView, WeeklyEnergyView } from './schemas.ts';
import type { Comparisons } from '../analysis/comparisons.ts';
import type { DemandCharges } from '../analysis/demandCharges.ts';
import type { CommodityFigures } from '../energy/commodities.ts';

const DUE_WINDOW_MS = 7 * 86_400_000;

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}

type Counts = Omit<OverviewStatsView, 'costToday' | 'carbonTodayKg' | 'costMonth' | 'carbonMonthKg' | 'generatedAt'> & { price: number; carbonFactor: number };

export class OverviewService {
  private readonly counts;
  private readonly settings;
  private readonly daily;

  private readonly keptStats;
  private readonly keptWeekly;

  constructor(
    db: Db,
    private readonly figures?: EnergyFigures,
    private readonly comparisons?: Comparisons,
    private readonly demandCharges?: DemandCharges,
    private readonly commodities?: CommodityFigures,
  ) {
    const sqlite = db.sqlite;
    // What the cards read (src/db/kept.ts): counts of alerts, faults, maintenance, the area cards and settings, the
    // figures, demand, commodities (calorific values) and comparisons.
    this.keptStats = new Kept<OverviewStatsView>(sqlite, {
      name: 'overview.stats',
      tables: [...FIGURE_TABLES, 'energy_areas', 'alerts', 'faults', 'maintenance', 'meter_state', 'calorific_versions'],
      max: 2,
    });
    this.keptWeekly = new Kept<WeeklyEnergyView>(sqlite, { name: 'overview.weekly', tables: [...FIGURE_TABLES, 'energy_daily'], max: 2 });
    this.counts = sqlite.prepare(
      `SELECT
        (SELECT coalesce(sum(today_kwh), 0) FROM energy_areas) AS energyTodayKwh,
        (SELECT coalesce(sum(month_kwh), 0) FROM energy_areas) AS energyMonthKwh,
        (SELECT coalesce(sum(power_kw), 0) FROM energy_areas) AS powerKw,
        (SELECT count(*) FROM alerts WHERE status = 'active' AND (shelved_until IS NULL OR shelved_until <= @now)) AS activeAlerts,
        (SELECT count(*) FROM alerts WHERE status = 'active' AND level = 'critical' AND (shelved_until IS NULL OR shelved_until <= @now)) AS criticalAlerts,
        (SELECT count(*) FROM faults WHERE status IN ('open', 'in_progress')) AS openFaults,
        (SELECT count(*) FROM maintenance WHERE status IN ('planned', 'in_progress') AND scheduled_at < @horizon) AS maintenanceDue,
        (SELECT count(*) FROM maintenance WHERE status IN ('planned', 'in_progress') AND scheduled_at < @now) AS maintenanceOverdue,
        electricity_price AS price, carbon_factor AS carbonFactor, currency
       FROM platform_config WHERE id = 1`,
    );
    this.settings = sqlite.prepare('SELECT timezone FROM platform_config WHERE id = 1').pluck();
    this.daily = sqlite.prepare(`SELECT day, kwh FROM energy_daily WHERE area = '${SITE_TOTAL}' AND day BETWEEN ? AND ?`);
  }

  /** Kept until the next write, and at most within one second (due and shelved counts move with the clock). */
  stats(at?: Date): OverviewStatsView {
    if (at) return this.computeStats(at);
    const now = new Date();
    return this.keptStats.get(String(Math.floor(now.getTime() / 1000)), () => this.computeStats(now));
  }

  private computeStats(at: Date): OverviewStatsView {
    const now = at.toISOString();
    const row = this.counts.get({ now, horizon: new Date(at.getTime() + DUE_WINDOW_MS).toISOString() }) as Counts;
    const { price, carbonFactor, ...counts } = row;
    if (this.figures?.metered()) {
      const figures = this.figures;
      const today = figures.today(at);
      const tomorrow = addDays(today, 1);
      const day = figures.totals(today, tomorrow);
      const month = figures.totals(`${today.slice(0, 7)}-01`, tomorrow);
      const demandCharge = this.demandCharges?.charge(today.slice(0, 7));
      return {
        ...counts,
        energyTodayKwh: round(day.kwh),
        energyMonthKwh: round(month.kwh),
        powerKw: round(figures.demandKw()),
        costToday: Math.round(day.cost * 100) / 100,
        carbonTodayKg: round(day.carbonKg),
        costMonth: Math.round((month.cost + (demandCharge ?? 0)) * 100) / 100,
        carbonMonthKg: round(month.carbonKg),
        generatedAt: now,
        ...(demandCharge === undefined ? {} : { demandChargeMonth: demandCharge }),
        ...(this.comparisons ? { comparison: this.comparison(at) } : {}),
        ...(this.commodities
          ? {
              commodities: this.commodities
                .period(`${today.slice(0, 7)}-01`, tomorrow)
                .commodities.map(({ commodity, unit, quantity, kwh, cost }) => ({ commodity, unit, quantity, kwh, cost })),
            }
          : {}),
      };
    }
    return {
      ...counts,
      energyTodayKwh: round(row.energyTodayKwh),
      energyMonthKwh: round(row.energyMonthKwh),
      powerKw: round(row.powerKw),
      costToday: Math.round(row.energyTodayKwh * price * 100) / 100,
      carbonTodayKg: round(row.energyTodayKwh * carbonFactor),
      costMonth: Math.round(row.energyMonthKwh * price * 100) / 100,
      carbonMonthKg: round(row.energyMonthKwh * carbonFactor),
      generatedAt: now,
    };
  }

  private comparison(at: Date): NonNullable<OverviewStatsView['comparison']> {
    const day = this.comparisons!.compare('day', {}, { now: at.getTime() });
    const month = this.comparisons!.compare('month', {}, { now: at.getTime() });
    return {
      todayVsYesterdayPercent: day.change.previous.percent,
      todayVsLastYearPercent: day.change.lastYear.percent,
      monthVsPreviousPercent: month.change.previous.percent,
      complete: [day.current, day.previous, day.lastYear, month.current, month.previous].every((figure) => figure.complete),
    };
  }

  /**
   * The last 7 site days: from the site meters once meters exist, else from energy_daily's 'total' rows (written by PUT
   * /energy/areas). A day with no data is null, never 0; each day and the week carry their completeness shares.
   */
  weekly(at?: Date): WeeklyEnergyView {
    if (at) return this.computeWeekly(at);
    const now = new Date();
    // Today's shares move as its intervals happen: kept per 15 minutes at most.
    return this.keptWeekly.get(`${siteDay(this.settings.get() as string, now)}|${Math.floor(now.getTime() / 900_000)}`, () => this.computeWeekly(now));
  }

  private computeWeekly(at: Date): WeeklyEnergyView {
    const timezone = this.settings.get() as string;
    const today = siteDay(timezone, at);
    const first = addDays(today, -6);
    if (this.figures?.metered()) {
      const figures = this.figures;
      const byDay = figures.byDay(first, addDays(today, 1));
      const shares = figures.completeness(first, addDays(today, 1));
      // As the summary's days: nothing stored, or every interval so far missing, is no data.
      const days = shares.map(({ day, intervals, measured, estimated, missing }) => {
        const totals = byDay.get(day);
        return { day, kwh: !totals || intervals === 0 || missing === 1 ? null : round(totals.kwh), measured, estimated, missing };
      });
      const complete = figures.completenessTotal(shares);
      return {
        days,
        totalKwh: round(days.reduce((sum, d) => sum + (d.kwh ?? 0), 0)),
        completeness: { measured: complete.measured, estimated: complete.estimated, missing: complete.missing },
        timezone,
      };
    }
    // Hand-entered totals: a day is recorded or not (its share is all measured or all missing).
    const recorded = new Map((this.daily.all(first, today) as { day: string; kwh: number }[]).map((row) => [row.day, row.kwh]));
    const days = Array.from({ length: 7 }, (_, i) => {
      const day = addDays(first, i);
      const kwh = recorded.get(day);
      return kwh === undefined ? { day, kwh: null, measured: 0, estimated: 0, missing: 1 } : { day, kwh: round(kwh), measured: 1, estimated: 0, missing: 0 };
    });
    const known = days.filter((d) => d.kwh !== null).length;
    return {
      days,
      totalKwh: round(days.reduce((sum, d) => sum + (d.kwh ?? 0), 0)),
      completeness: { measured: Math.round((known / 7) * 10_000) / 10_000, estimated: 0, missing: Math.round(((7 - known) / 7) * 10_000) / 10_000 },
      timezone,
    };
  }
}
