// The wallboard payload: the site or one area, its figures, its active alert titles and an honest data state.
import type { ConfigStore } from '../../site/index.ts';
import type { CollectorStatus } from '../../metering/index.ts';
import { type CommodityFigures, type CommodityFiguresView, type EnergyFigures, type AreaCards, type SiteEnergy, allUtilities } from '../../energy/index.ts';
import { publicAlertTitle } from '../../facility/index.ts';
import { publicGatewayState } from '../../operations/index.ts';
import type { IotHealth } from '../../gateway/index.ts';
import { and, count, eq, inArray, isNull, lte, or, sql } from 'drizzle-orm';
import type { Db } from '../../platform/db/client.ts';
import { alerts } from '../../platform/db/schema/index.ts';
import { addDays, siteDay } from '../../platform/time/calendar.ts';
import { NotFound } from '../../platform/errors.ts';
import { FALLBACK_LANGUAGE, languageOf, languages } from '../../platform/i18n/messages.ts';
import type { OverviewService } from '../overview/service.ts';
import type { DataStateView, UtilityPeriodView, WallboardPayloadView } from './schemas.ts';
import { round } from '../../platform/numbers.ts';

/** Active critical and warning titles listed; the rest is a count. */
export const WALLBOARD_ALERTS = 12;
/** Data is stale when no collection succeeded within this many intervals. */
export const STALE_AFTER_INTERVALS = 2;

export type CollectionFacts = {
  /** 0: collection is off (figures are entered by hand). */
  intervalMs: number;
  collector: CollectorStatus;
  gateway: IotHealth['gateway'];
  startedAt: number;
  now: number;
  /** The site's figures come from meters (not hand-entered cards). */
  metered?: boolean;
};

/**
 * Live, failing or stale, from what the collector last did — never from whether the gateway accepts a TCP connection:
 * a gateway that answers 503 to every read is "reachable" and still freezes the figures.
 */
export function dataStateOf({ intervalMs, collector, gateway, startedAt, now, metered }: CollectionFacts): DataStateView {
  const lastGoodAt = collector.lastOkAt;
  const base = { collectIntervalSec: intervalMs > 0 ? Math.round(intervalMs / 1000) : null, lastGoodAt };
  // Collection off on a site whose figures are meters' (imported history): nothing new comes in, so not "live" (issue 41).
  if (intervalMs <= 0 && metered) {
    return { state: 'stale', since: lastGoodAt ?? new Date(startedAt).toISOString(), reason: 'collection-off', source: 'meters', ...base };
  }
  // Collection off, or on with no meter to read: the figures are the hand-entered cards, as fresh as their last PUT.
  if (intervalMs <= 0 || (collector.lastRunAt !== null && collector.meters === 0 && collector.lastError === null)) {
    return { state: 'live', since: null, reason: null, source: 'manual', ...base };
  }
  const since = lastGoodAt ?? new Date(startedAt).toISOString();
  if (collector.lastError !== null) {
    return { state: 'failing', since, reason: gateway === 'unreachable' ? 'gateway-unreachable' : 'gateway-errors', source: 'meters', ...base };
  }
  const lastGood = lastGoodAt === null ? startedAt : Date.parse(lastGoodAt);
  if (now - lastGood > STALE_AFTER_INTERVALS * intervalMs) {
    return { state: 'stale', since, reason: lastGoodAt === null ? 'no-collection-yet' : 'collector-stalled', source: 'meters', ...base };
  }
  return { state: 'live', since: null, reason: null, source: 'meters', ...base };
}

/**
 * One period of GET /api/energy/commodities as the wallboard shows it: its figures as the API answers them (null: no
 * data); the solar balance where the site meters generation or export.
 */
export function utilityPeriod(view: CommodityFiguresView): UtilityPeriodView {
  const { electricity } = view;
  const commodities = view.commodities.map((entry) => ({
    commodity: entry.commodity as UtilityPeriodView['commodities'][number]['commodity'],
    unit: entry.unit,
    quantity: entry.quantity,
    kwh: entry.kwh,
  }));
  const { generation, export: fedBack } = electricity.coverage;
  const solar: UtilityPeriodView['solar'] =
    generation.meters > 0 || fedBack.meters > 0
      ? {
          generationKwh: electricity.generationKwh,
          exportKwh: electricity.exportKwh,
          selfConsumptionKwh: electricity.selfConsumptionKwh,
          selfConsumptionRate: electricity.selfConsumptionRate,
          selfSufficiency: electricity.selfSufficiency,
        }
      : null;
  return { from: view.from, to: view.to, commodities, solar, allUtilities: allUtilities(view) };
}

const labelCache = new Map<string, Record<string, string>>();

/** The page's words in a locale's language: src/platform/i18n's wallboard.* keys, prefix dropped, English where one is missing. */
export function wallboardLabels(locale: string): Record<string, string> {
  const language = languageOf(locale);
  let labels = labelCache.get(language);
  if (!labels) {
    labels = {};
    for (const dictionary of [languages().get(FALLBACK_LANGUAGE)!, languages().get(language)!]) {
      for (const [key, text] of Object.entries(dictionary)) if (key.startsWith('wallboard.')) labels[key.slice('wallboard.'.length)] = text;
    }
    labelCache.set(language, labels);
  }
  return labels;
}

type Parts = {
  configs: ConfigStore;
  overview: OverviewService;
  areas: AreaCards;
  figures: EnergyFigures;
  /** Whether the site is metered is SiteEnergy's question (test/structure/siteEnergy.test.ts). */
  site: Pick<SiteEnergy, 'source'>;
  commodities: CommodityFigures;
  collection: () => Omit<CollectionFacts, 'now'>;
  gatewayCheckedAt: () => string | null;
  /** Fault detection's ongoing equipment faults (a count only); absent when the box has no fault detection. */
  equipmentFaults?: () => number;
};

type AlertRow = { title: string; level: 'critical' | 'warning'; area: string | null; since: string; clearedAt: string | null };

export class WallboardService {
  private readonly activeAlerts;
  private readonly activeCounts;

  constructor(
    db: Db,
    private readonly parts: Parts,
  ) {
    // area NULL: the whole site. Shelved alerts are left out until their shelf time passes, as on the dashboard.
    const now = sql.placeholder('now');
    const area = sql.placeholder('area');
    const active = and(
      eq(alerts.status, 'active'),
      or(isNull(alerts.shelvedUntil), lte(alerts.shelvedUntil, now)),
      or(sql`${area} IS NULL`, eq(alerts.area, area)),
    );
    // A public payload: titles by the one public-title rule (src/facility/alerts/publicTitle.ts), as on /api/dashboard.
    this.activeAlerts = db.orm
      .select({ title: publicAlertTitle(), level: alerts.level, area: alerts.area, since: alerts.occurredAt, clearedAt: alerts.clearedAt })
      .from(alerts)
      .where(and(active, inArray(alerts.level, ['critical', 'warning'])))
      .orderBy(sql`CASE ${alerts.level} WHEN 'critical' THEN 0 ELSE 1 END`, alerts.occurredAt, alerts.id)
      .limit(WALLBOARD_ALERTS)
      .prepare();
    // The counts are the one "active" of every screen (AlertService.counts): still in alarm. The list above also shows
    // the ones cleared at the source and waiting for acknowledgement, marked so.
    this.activeCounts = db.orm
      .select({ level: alerts.level, count: count() })
      .from(alerts)
      .where(and(active, isNull(alerts.clearedAt)))
      .groupBy(alerts.level)
      .prepare();
  }

  /** The payload for the site (no area) or one area; an area that does not exist is a NotFound naming it. */
  payload(areaName?: string, now: number = Date.now()): WallboardPayloadView {
    const at = new Date(now);
    const platform = this.parts.configs.platform();
    const cards = this.parts.areas.list(at);
    let area: (typeof cards)[number] | undefined;
    if (areaName !== undefined) {
      area = cards.find((card) => card.name === areaName);
      if (!area) {
        const folded = cards.filter((card) => card.name.toLowerCase() === areaName.toLowerCase());
        if (folded.length === 1) area = folded[0];
      }
      if (!area) throw new NotFound(`No area named "${areaName}"`);
    }
    const timezone = platform.timezone;
    const today = siteDay(timezone, at);
    const first = addDays(today, -6);
    const tomorrow = addDays(today, 1);

    let figures: WallboardPayloadView['figures'];
    let days: { day: string; kwh: number | null }[];
    if (!area) {
      const stats = this.parts.overview.stats();
      figures = {
        powerKw: stats.powerKw,
        todayKwh: stats.energyTodayKwh,
        monthKwh: stats.energyMonthKwh,
        costToday: stats.costToday,
        costMonth: stats.costMonth,
        carbonTodayKg: stats.carbonTodayKg,
        carbonMonthKg: stats.carbonMonthKg,
        // With meters: the share of the period's intervals the figures rest on (hand-entered cards have none).
        ...(stats.coverage ? { coverageToday: stats.coverage.today, coverageMonth: stats.coverage.month } : {}),
      };
      // A day with no data is null (issue 22): the chart says "No data" there, never 0.
      days = this.parts.overview.weekly().days.map(({ day, kwh }) => ({ day, kwh }));
    } else if (area.source === 'meters') {
      const day = this.parts.figures.totals(today, tomorrow, { area: area.name });
      const month = this.parts.figures.totals(`${today.slice(0, 7)}-01`, tomorrow, { area: area.name });
      figures = {
        powerKw: area.powerKw,
        todayKwh: area.todayKwh,
        monthKwh: area.monthKwh,
        costToday: round(day.cost, 2),
        costMonth: round(month.cost, 2),
        carbonTodayKg: round(day.carbonKg, 3),
        carbonMonthKg: round(month.carbonKg, 3),
      };
      days = [...this.parts.figures.byDay(first, tomorrow, { area: area.name })].map(([day, totals]) => ({ day, kwh: totals && round(totals.kwh, 3) }));
    } else {
      // A hand-entered card: each PUT /api/energy/areas records its day's total in energy_daily, as for the site.
      figures = {
        powerKw: area.powerKw,
        todayKwh: area.todayKwh,
        monthKwh: area.monthKwh,
        costToday: null,
        costMonth: null,
        carbonTodayKg: null,
        carbonMonthKg: null,
      };
      const recorded = new Map(this.parts.areas.daily(area.name, first, today).map((row) => [row.day, row.kwh]));
      days = Array.from({ length: 7 }, (_, i) => {
        const entered = recorded.get(addDays(first, i));
        return { day: addDays(first, i), kwh: entered === undefined ? null : round(entered, 3) };
      });
    }

    const filter = { now: at.toISOString(), area: area?.name ?? null };
    const counts = { critical: 0, warning: 0, info: 0, ...Object.fromEntries(this.activeCounts.all(filter).map((row) => [row.level, row.count])) };
    // The query keeps critical and warning only.
    const active = this.activeAlerts.all(filter) as AlertRow[];
    const collection = this.parts.collection();
    const dataState = dataStateOf({ ...collection, now, metered: this.parts.site.source() === 'meters' });
    // The same answer as the dashboard's: degraded when the gateway answers but the collection fails.
    const gateway = publicGatewayState({ gateway: collection.gateway }, collection.collector);

    const utilityDay = area ? undefined : this.parts.commodities.period(today, tomorrow);
    // A site that meters only its grid import has nothing to add to the figures above.
    const utilities =
      utilityDay &&
      (utilityDay.commodities.length > 1 || utilityDay.electricity.coverage.export.meters > 0 || utilityDay.electricity.coverage.generation.meters > 0)
        ? { today: utilityPeriod(utilityDay), month: utilityPeriod(this.parts.commodities.period(`${today.slice(0, 7)}-01`, tomorrow)) }
        : null;

    return {
      platform: {
        siteName: platform.siteName,
        logoUrl: platform.logoUrl,
        timezone,
        locale: platform.locale,
        currency: platform.currency,
        refreshIntervalSec: platform.refreshIntervalSec,
      },
      labels: wallboardLabels(platform.locale),
      scope: { area: area?.name ?? null },
      figures,
      weeklyEnergy: {
        days,
        totalKwh: round(
          days.reduce((sum, entry) => sum + (entry.kwh ?? 0), 0),
          3,
        ),
      },
      utilities,
      areas: cards
        .map(({ name, powerKw, todayKwh, monthKwh }) => ({ name, powerKw, todayKwh, monthKwh }))
        .sort((a, b) => b.todayKwh - a.todayKwh || b.powerKw - a.powerKw || a.name.localeCompare(b.name)),
      alerts: {
        counts: { critical: counts.critical, warning: counts.warning, info: counts.info },
        active,
        more: Math.max(0, counts.critical + counts.warning - active.length),
      },
      openFaults: this.parts.overview.stats().openFaults,
      ...(this.parts.equipmentFaults ? { equipmentFaults: this.parts.equipmentFaults() } : {}),
      gateway: { state: gateway, checkedAt: this.parts.gatewayCheckedAt() },
      dataState,
      generatedAt: at.toISOString(),
    };
  }
}
