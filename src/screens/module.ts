// The screens context, built once by the composition root after the collector: the overview, the public dashboard
// payload and the lobby wallboard (they show the collection's state).
import type { Analysis } from '../analysis/index.ts';
import type { EnergyReads } from '../energy/index.ts';
import type { AlertService } from '../facility/index.ts';
import type { IotGateway } from '../gateway/index.ts';
import type { Collector } from '../metering/index.ts';
import { publicGatewayState } from '../operations/index.ts';
import type { AuditLog } from '../platform/db/auditTrail.ts';
import type { Db } from '../platform/db/client.ts';
import type { Config } from '../platform/config.ts';
import type { RouteGroups } from '../platform/http/route.ts';
import type { JobRegistry } from '../platform/jobs/jobs.ts';
import { Repeating } from '../platform/jobs/lifecycle.ts';
import type { Module } from '../platform/jobs/module.ts';
import type { ConfigStore } from '../site/index.ts';
import { dashboardRoutes, type DashboardRouteNeeds } from './dashboard/routes.ts';
import { DashboardService } from './dashboard/service.ts';
import { overviewRoutes, type OverviewRouteNeeds } from './overview/routes.ts';
import { OverviewService } from './overview/service.ts';
import { wallboardRoutes, type WallboardRouteNeeds } from './wallboard/routes.ts';
import { WallboardService } from './wallboard/service.ts';
import { liveRoutes, type LiveRouteNeeds } from './live/routes.ts';
import { LiveEvents } from './live/service.ts';
import { round } from '../platform/numbers.ts';

export type Screens = { overview: OverviewService; dashboard: DashboardService; wallboard: WallboardService; live: LiveEvents };

export type ScreensNeeds = {
  config: Config;
  db: Db;
  audit: AuditLog;
  iot: IotGateway;
  collector: Collector;
  configs: ConfigStore;
  energy: EnergyReads;
  analysis: Analysis;
  alerts: AlertService;
  jobs: JobRegistry;
  startedAt: number;
  /** Fault detection's ongoing equipment faults, counted (the wallboard shows the number only). */
  equipmentFaults?: () => number;
};

/** The most streams the box serves at once, all users together. */
const LIVE_TOTAL = 200;
const LIVE_JOB = 'live events';

/** The screens' route tables: the public dashboard payload, the wallboard, the overview. */
export function screensRouteGroups(needs: DashboardRouteNeeds & WallboardRouteNeeds & OverviewRouteNeeds & LiveRouteNeeds): RouteGroups {
  return { dashboard: dashboardRoutes(needs), wallboard: wallboardRoutes(needs), overview: overviewRoutes(needs), events: liveRoutes(needs) };
}

export function buildScreens({
  config,
  db,
  audit,
  iot,
  collector,
  configs,
  energy,
  analysis,
  alerts,
  jobs,
  startedAt,
  equipmentFaults,
}: ScreensNeeds): Module<Screens> {
  const overview = new OverviewService(db, energy.site, analysis.comparisons, analysis.demandCharges, energy.commodities);
  const live = new LiveEvents(
    {
      power: () => {
        const site = energy.site.now();
        return { powerKw: round(site.powerKw, 3), todayKwh: round(site.today.kwh, 3), day: site.day };
      },
      interval: () => {
        const { lastOkAt, state } = collector.health();
        return { collectedAt: lastOkAt, state };
      },
      alerts: () => alerts.counts(),
      // Its own sampler left out: it runs every second and would be news every second.
      jobs: () =>
        jobs
          .list()
          .filter((job) => job.name !== LIVE_JOB)
          .map(({ name, owner, running, failures, lastStartedAt }) => ({ name, owner, running, failures, lastStartedAt })),
      newAlerts: (afterId) => alerts.raisedAfter(afterId),
      newestAlertId: () => alerts.newestId(),
    },
    { heartbeatMs: config.events.heartbeatMs, perUser: config.events.perUser, total: LIVE_TOTAL },
  );
  // A raised alert reaches open streams at once, not at the next second's sample.
  alerts.onCreated(() => live.soon());
  const sampler = new Repeating(async () => live.tick(), 1000, LIVE_JOB);
  const services: Screens = {
    live,
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
      equipmentFaults,
    }),
  };
  return {
    context: 'screens',
    services,
    running: [{ name: 'live events', start: () => sampler.start(), jobs: [sampler], stop: async () => (await sampler.stop(), live.close()) }],
    routes: screensRouteGroups(services),
  };
}
