// The energy context, the read side, built once by the composition root on metering's stored days and pricing's
// tariffs: the meters' figures, the other utilities, the hand-entered area cards and the site's energy over both
// (SiteEnergy); the peak-demand watch. buildEnergy builds the whole data path over one connection (the report worker's).
import { buildMeterStore, type MeterDirectory, type MeterStore, type IntervalStore, type StoredDays } from '../metering/index.ts';
import { siteTimezone } from '../site/index.ts';
import { buildPricing, type CalorificValues, type Pricing, type Tariffs } from '../pricing/index.ts';
import type { AuditLog } from '../platform/db/auditTrail.ts';
import type { Db } from '../platform/db/client.ts';
import type { Logger } from '../platform/logger.ts';
import { CommodityFigures } from './commodities.ts';
import { EnergyFigures } from './figures.ts';
import { AreaCards, meterAreaCards } from './areaCards.ts';
import { SiteEnergy } from './siteEnergy.ts';
import { DemandWatch, type PeakWarningLog } from './demandWatch.ts';
import type { AlertService } from '../facility/index.ts';
import { commodityRoutes, type CommodityRouteNeeds } from './commodityRoutes.ts';
import { energyAreaRoutes, energyRoutes, type EnergyAreaRouteNeeds, type EnergyRouteNeeds } from './routes.ts';
import type { RouteGroups } from '../platform/http/route.ts';
import type { Module } from '../platform/jobs/module.ts';
import type { RestateCosts } from '../pricing/index.ts';

/** The energy context's read side: what it builds, once each. */
export type EnergyReads = {
  /** The meters' figures (the interval store): what a meter, an area's meters or the site meters measured. */
  figures: EnergyFigures;
  /** The hand-entered area cards (PUT /api/energy/areas), metered areas listed with their meters' figures; their read whole (view). */
  areas: AreaCards;
  /** The site's energy from meters where they exist and from the cards where not: what the overview, reports and anomalies ask. */
  site: SiteEnergy;
  /** Every utility over a period (gas, water, heat, the electricity balance with PV). */
  commodities: CommodityFigures;
};

export type EnergyReadNeeds = {
  db: Db;
  audit: AuditLog;
  tariffs: Tariffs;
  calorific: CalorificValues;
  days: StoredDays;
  store: IntervalStore;
  meters: MeterDirectory;
};

/** The read side over the stored days of one connection. */
export function buildEnergyReads({ db, audit, tariffs, calorific, days, store, meters }: EnergyReadNeeds): EnergyReads {
  const figures = new EnergyFigures(db, tariffs, days, store);
  const commodities = new CommodityFigures(db, figures, tariffs, calorific, meters, days);
  const site = new SiteEnergy(db, figures, (from, to) => commodities.period(from, to).electricity.consumptionKwh);
  const areas = new AreaCards(db, audit, meters, site);
  return { figures, areas, site, commodities };
}

/**
 * The whole data path over one connection: pricing, metering's stored side and energy's read side together, with the
 * site's time zone. The report worker builds it on its own read-only connection; tests and benchmarks build it alone.
 * The service builds each part in its own context's module (src/app/compose.ts) and hands each context what it needs.
 */
export type Energy = Pricing & MeterStore & EnergyReads & { timezone: () => string };

export function buildEnergy(db: Db, audit: AuditLog): Energy {
  const timezone = siteTimezone(db);
  const pricing = buildPricing({ db, audit, timezone });
  const stored = buildMeterStore({ db, audit, tariffs: pricing.tariffs, timezone, cards: meterAreaCards(db) });
  return { ...pricing, ...stored, ...buildEnergyReads({ db, audit, ...pricing, ...stored }), timezone };
}

export type EnergyContextRouteNeeds = EnergyAreaRouteNeeds & EnergyRouteNeeds & CommodityRouteNeeds;

/** The energy context's route tables: area cards, figures, the other utilities. */
export function energyRouteGroups(needs: EnergyContextRouteNeeds): RouteGroups {
  return { energyAreas: energyAreaRoutes(needs), energy: energyRoutes(needs), commodities: commodityRoutes(needs) };
}

/** The energy context as the composition root builds it: its read side (above), no jobs of its own; its routes. */
export function buildEnergyModule(needs: EnergyReadNeeds & { restate: RestateCosts }): Module<{ energy: EnergyReads }> {
  const energy = buildEnergyReads(needs);
  const { meters, calorific, restate } = needs;
  return {
    context: 'energy',
    services: { energy },
    routes: energyRouteGroups({ energy: { ...energy, meters, calorific, restate } }),
  };
}

/**
 * The peak-demand watch (the collector asks it after each collection): built once the alert intake runs, just before
 * the collector, since it reads the open episode's key as it is built.
 */
export function buildDemandWatch({
  db,
  figures,
  tariffs,
  timezone,
  warnings,
  alerts,
  logger,
}: {
  db: Db;
  figures: EnergyFigures;
  tariffs: Tariffs;
  timezone: () => string;
  /** Where the warnings are recorded: analysis's PeakWarnings, the owner of peak_warnings (built after energy). */
  warnings: PeakWarningLog;
  alerts: Pick<AlertService, 'fromGatewayAlarm' | 'openAlarmKeyOf'>;
  logger: Logger;
}): Module<{ demand: DemandWatch }> {
  return { context: 'energy', services: { demand: new DemandWatch({ db, warnings, figures, tariffs, alerts, logger, timezone }) } };
}
