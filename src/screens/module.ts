// The screens context, built once by the composition root after the collector: the overview, the public dashboard
// payload and the lobby wallboard (they show the collection's state).
import type { Analysis } from '../analysis/index.ts';
import type { Energy } from '../energy/index.ts';
import type { IotGateway } from '../gateway/index.ts';
import type { Collector } from '../metering/index.ts';
import { publicGatewayState } from '../operations/index.ts';
import type { AuditLog } from '../platform/db/auditTrail.ts';
import type { Db } from '../platform/db/client.ts';
import type { Config } from '../platform/config.ts';
import type { RouteGroups } from '../platform/http/route.ts';
import type { Module } from '../platform/jobs/module.ts';
import type { ConfigStore } from '../site/index.ts';
import { dashboardRoutes, type DashboardRouteNeeds } from './dashboard/routes.ts';
import { DashboardService } from './dashboard/service.ts';
import { overviewRoutes, type OverviewRouteNeeds } from './overview/routes.ts';
import { OverviewService } from './overview/service.ts';
import { wallboardRoutes, type WallboardRouteNeeds } from './wallboard/routes.ts';
import { WallboardService } from './wallboard/service.ts';

export type Screens = { overview: OverviewService; dashboard: DashboardService; wallboard: WallboardService };

export type ScreensNeeds = {
  config: Config;
  db: Db;
  audit: AuditLog;
  iot: IotGateway;
  collector: Collector;
  configs: ConfigStore;
  energy: Energy;
  analysis: Analysis;
  startedAt: number;
};

/** The screens' route tables: the public dashboard payload, the wallboard, the overview. */
export function screensRouteGroups(needs: DashboardRouteNeeds & WallboardRouteNeeds & OverviewRouteNeeds): RouteGroups {
  return { dashboard: dashboardRoutes(needs), wallboard: wallboardRoutes(needs), overview: overviewRoutes(needs) };
}

export function buildScreens({ config, db, audit, iot, collector, configs, energy, analysis, startedAt }: ScreensNeeds): Module<Screens> {
  const overview = new OverviewService(db, energy.site, analysis.comparisons, analysis.demandCharges, energy.commodities);
  const services: Screens = {
    overview,
    dashboard: new DashboardService(db, audit, {
      configs,
      energy: energy.areas,
      overview,
      gateway: () => {
        const health = iot.health();
        const collected = collector.health();
        return { state: publicGatewayState(health, collected), checkedAt: health.checkedAt, dataAt: collected.lastOkAt };
      },
    }),
    wallboard: new WallboardService(db, {
      configs,
      overview,
      areas: energy.areas,
      figures: energy.figures,
      site: energy.site,
      commodities: energy.commodities,
      collection: () => ({ intervalMs: config.collectIntervalMs, collector: collector.health(), gateway: iot.health().gateway, startedAt }),
      gatewayCheckedAt: () => iot.health().checkedAt,
    }),
  };
  return { context: 'screens', services, routes: screensRouteGroups(services) };
}
