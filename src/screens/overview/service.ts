// KPI cards and the weekly chart: the site's energy from SiteEnergy (meters or hand-entered cards), the counts from the tables.
import { siteTimezone } from '../../site/index.ts';
import { FIGURE_TABLES, type EnergyFigures, SiteEnergy, type CommodityFigures, allUtilities } from '../../energy/index.ts';
import type { Comparisons, DemandCharges } from '../../analysis/index.ts';
import { and, eq, inArray, isNull, lt, lte, or, sql } from 'drizzle-orm';
import type { Db } from '../../platform/db/client.ts';
import { alerts, faults, maintenance, platformConfig } from '../../platform/db/schema/index.ts';
import { Kept } from '../../platform/db/kept.ts';
import { addDays, siteDay } from '../../platform/time/calendar.ts';
import type { OverviewStatsView, WeeklyEnergyView } from './schemas.ts';
import { round } from '../../platform/numbers.ts';

const DUE_WINDOW_MS = 7 * 86_400_000;

export class OverviewService {
  private readonly counts;
  private readonly settings: { get(): string };
  private readonly energy: SiteEnergy;

  private readonly keptStats;
  private readonly keptWeekly;

  constructor(
    db: Db,
    /** The site's energy; the meters' figures are wrapped in one (without either, the site has only its cards). */
    energy?: SiteEnergy | EnergyFigures,
    private readonly comparisons?: Comparisons,
    private readonly demandCharges?: DemandCharges,
    private readonly commodities?: CommodityFigures,
  ) {
    const sqlite = db.sqlite;
    this.energy = energy instanceof SiteEnergy ? energy : new SiteEnergy(db, energy);
    // What the cards read (src/platform/db/kept.ts): counts of alerts, faults, maintenance, the area cards and settings, the
    // figures, demand, commodities (calorific values) and comparisons (their weather normalisation: outdoor_days;
    // test/structure/keptTables.test.ts derives what a cache reads).
    this.keptStats = new Kept<OverviewStatsView>(sqlite, {
      name: 'overview.stats',
      tables: [...FIGURE_TABLES, 'energy_areas', 'energy_daily', 'alerts', 'faults', 'maintenance', 'meter_state', 'calorific_versions', 'outdoor_days'],
      max: 2,
    });
    this.keptWeekly = new Kept<WeeklyEnergyView>(sqlite, { name: 'overview.weekly', tables: [...FIGURE_TABLES, 'energy_daily'], max: 2 });
    const now = sql.placeholder('now');
    const horizon = sql.placeholder('horizon');
    // Active as everywhere (AlertService.counts, the Active tab): status active, not shelved now, still in alarm.
    const shown = and(eq(alerts.status, 'active'), or(isNull(alerts.shelvedUntil), lte(alerts.shelvedUntil, now)), isNull(alerts.clearedAt));
    const pending = inArray(maintenance.status, ['planned', 'in_progress']);
    this.counts = db.orm
      .select({
        activeAlerts: db.orm.$count(alerts, shown),
        criticalAlerts: db.orm.$count(alerts, and(shown, eq(alerts.level, 'critical'))),
        openFaults: db.orm.$count(faults, inArray(faults.status, ['open', 'in_progress'])),
        maintenanceDue: db.orm.$count(maintenance, and(pending, lt(maintenance.scheduledAt, horizon))),
        maintenanceOverdue: db.orm.$count(maintenance, and(pending, lt(maintenance.scheduledAt, now))),
        currency: platformConfig.currency,
      })
      .from(platformConfig)
      .where(eq(platformConfig.id, 1))
      .prepare();
    // The weekly key's site day: settings.get() is the site's time zone.
    this.settings = { get: siteTimezone(db) };
  }

  /** Kept until the next write, and at most within one second (due and shelved counts move with the clock). */
  stats(at?: Date): OverviewStatsView {
    if (at) return this.computeStats(at);
    const now = new Date();
    return this.keptStats.get(String(Math.floor(now.getTime() / 1000)), () => this.computeStats(now));
  }

  private computeStats(at: Date): OverviewStatsView {
    const now = at.toISOString();
    const counts = this.counts.get({ now, horizon: new Date(at.getTime() + DUE_WINDOW_MS).toISOString() })!;
    const site = this.energy.now(at);
    // Demand charges, comparisons and the utilities are the meters' (a hand-entered card has no intervals to rest on).
    const metered = site.source === 'meters';
    const month = site.day.slice(0, 7);
    const demandCharge = metered ? this.demandCharges?.charge(month) : undefined;
    return {
      ...counts,
      energyTodayKwh: round(site.today.kwh, 3),
      energyMonthKwh: round(site.month.kwh, 3),
      powerKw: round(site.powerKw, 3),
      costToday: round(site.today.cost, 2),
      carbonTodayKg: round(site.today.carbonKg, 3),
      costMonth: round(site.month.cost + (demandCharge ?? 0), 2),
      carbonMonthKg: round(site.month.carbonKg, 3),
      generatedAt: now,
      ...(demandCharge === undefined ? {} : { demandChargeMonth: demandCharge }),
      // Beside the headline figures: what share of the period's intervals so far they rest on (issue 41).
      ...(metered ? { coverage: this.energy.headlineCoverage(at) } : {}),
      ...(metered && this.comparisons ? { comparison: this.comparison(at) } : {}),
      ...(metered && this.commodities ? this.utilities(`${month}-01`, addDays(site.day, 1)) : {}),
    };
  }

  /** Every utility this month, and the headline over them (the commodities view is kept: asked every second). */
  private utilities(from: string, to: string): Pick<OverviewStatsView, 'commodities' | 'allUtilitiesMonth'> {
    const view = this.commodities!.period(from, to);
    return {
      commodities: view.commodities.map(({ commodity, unit, quantity, kwh, cost }) => ({ commodity, unit, quantity, kwh, cost })),
      allUtilitiesMonth: allUtilities(view),
    };
  }

  private comparison(at: Date): NonNullable<OverviewStatsView['comparison']> {
    const day = this.comparisons!.compare('day', {}, { now: at.getTime() });
    const month = this.comparisons!.compare('month', {}, { now: at.getTime() });
    return {
      todayVsYesterdayPercent: day.change.previous.percent,
      todayVsLastYearPercent: day.change.lastYear.percent,
      monthVsPreviousPercent: month.change.previous.percent,
      // Beside the raw change: normalised for weather by the site's degree-day model, null when it cannot be defended (issue 41).
      monthVsPreviousWeatherNormalisedPercent: month.weatherNormalised?.percent ?? null,
      complete: [day.current, day.previous, day.lastYear, month.current, month.previous].every((figure) => figure.complete),
    };
  }

  /**
   * The last 7 site days (SiteEnergy: the site meters once meters exist, else energy_daily's 'total' rows written by PUT
   * /energy/areas). A day with no data is null, never 0; each day and the week carry their completeness shares.
   */
  weekly(at?: Date): WeeklyEnergyView {
    if (at) return this.computeWeekly(at);
    const now = new Date();
    // Today's shares move as its intervals happen: kept per 15 minutes at most.
    return this.keptWeekly.get(`${siteDay(this.settings.get() as string, now)}|${Math.floor(now.getTime() / 900_000)}`, () => this.computeWeekly(now));
  }

  private computeWeekly(at: Date): WeeklyEnergyView {
    const timezone = this.settings.get();
    const today = siteDay(timezone, at);
    const { days, completeness } = this.energy.days(addDays(today, -6), addDays(today, 1));
    return {
      days,
      totalKwh: round(
        days.reduce((sum, d) => sum + (d.kwh ?? 0), 0),
        3,
      ),
      completeness,
      timezone,
    };
  }
}
