// The energy-management pieces (comparisons, demand charges, baselines, EnPIs, anomalies), built once on the energy feature.
import type { EnergyReads } from '../energy/index.ts';
import type { MeterDirectory, StoredDays } from '../metering/index.ts';
import type { Tariffs } from '../pricing/index.ts';
import type { GatewayPort } from '../gateway/index.ts';
import type { AlertService } from '../facility/index.ts';
import type { Db } from '../platform/db/client.ts';
import { Baselines } from './baselines.ts';
import { HourlyBaselines } from './hourlyBaselines.ts';
import { Enpis } from './enpi.ts';
import { AnomalyWatch } from './anomalies.ts';
import type { Logger } from '../platform/logger.ts';
import type { AuditLog } from '../platform/db/auditTrail.ts';
import { OutdoorTemperatures } from './weather.ts';
import { Comparisons } from './comparisons.ts';
import { DemandCharges } from './demandCharges.ts';
import { PeakWarnings } from './peakWarnings.ts';
import { LoadShedder, LoadSheddingConfig } from './loadShedding.ts';
import { LoadSheddingGuard } from './loadSheddingGuard.ts';
import { analysisRoutes, type AnalysisRouteNeeds } from './routes.ts';
import type { DemandWatch } from '../energy/index.ts';
import { Repeating } from '../platform/jobs/lifecycle.ts';
import type { RouteGroups } from '../platform/http/route.ts';
import type { Module } from '../platform/jobs/module.ts';

/** What the analysis module builds, once each: the route table names the same set (its needs). */
export type Analysis = AnalysisRouteNeeds['analysis'];

export type AnalysisNeeds = {
  db: Db;
  audit: AuditLog;
  /** Energy's read side: the figures, the site's energy and every utility. */
  energy: EnergyReads;
  /** Metering's stored days and meters; pricing's tariffs; the site's time zone. */
  days: StoredDays;
  meters: Pick<MeterDirectory, 'get' | 'summaries'>;
  tariffs: Tariffs;
  timezone: () => string;
  /** The outdoor temperatures' days not kept yet are read from the gateway's history. */
  iot: Pick<GatewayPort, 'history'>;
  /** Where the anomaly check raises its findings. */
  alerts: Pick<AlertService, 'fromGatewayAlarm'>;
  logger: Logger;
};

/** Each piece once: the baselines, EnPIs and the anomaly check read the outdoor temperatures through one OutdoorTemperatures. */
export function buildAnalysis({ db, audit, energy, days, meters, tariffs, timezone, iot, alerts, logger }: AnalysisNeeds): Analysis {
  const temperatures = new OutdoorTemperatures(db, iot, timezone);
  const baselines = new Baselines(days, energy.figures, tariffs, temperatures);
  const hourlyBaselines = new HourlyBaselines(energy.figures, tariffs, temperatures, days);
  return {
    comparisons: new Comparisons(db, energy.figures, tariffs, days),
    demandCharges: new DemandCharges(energy.figures, tariffs),
    peakWarnings: new PeakWarnings(db),
    loadShedding: new LoadSheddingConfig(db, audit),
    baselines,
    hourlyBaselines,
    enpis: new Enpis(db, audit, energy.figures, temperatures, energy.commodities, days),
    anomalies: new AnomalyWatch({
      energy: energy.site,
      baselines,
      hourlyBaselines,
      alerts,
      logger,
      hasGeneration: () => meters.summaries().some((meter) => meter.role === 'generation'),
    }),
  };
}

/** The analysis context's route table. */
export function analysisRouteGroups(needs: AnalysisRouteNeeds): RouteGroups {
  return { analysis: analysisRoutes(needs) };
}

/** The analysis context's pieces as the composition root builds them (above) and its routes; its jobs are the two modules below. */
export function buildAnalysisModule(needs: AnalysisNeeds): Module<{ analysis: Analysis }> {
  const analysis = buildAnalysis(needs);
  return {
    context: 'analysis',
    services: { analysis },
    routes: analysisRouteGroups({ energy: { meters: needs.meters, figures: needs.energy.figures }, analysis }),
  };
}

export type LoadSheddingNeeds = {
  db: Db;
  audit: AuditLog;
  analysis: Analysis;
  tariffs: Tariffs;
  timezone: () => string;
  iot: GatewayPort;
  demand: DemandWatch;
  alerts: Pick<AlertService, 'fromGatewayAlarm'>;
  logger: Logger;
  now: () => number;
};

/**
 * Load shedding (issue 25, off by default) and its guard. Its safety restores on their own timer, whatever the collector
 * does; at stop every shed point is restored. Started after the gateway client and the database and before the
 * collector, so (hooks run in reverse) it stops before they close, after the collector stops.
 */
export function buildLoadShedding({
  db,
  audit,
  analysis,
  tariffs,
  timezone,
  iot,
  demand,
  alerts,
  logger,
  now,
}: LoadSheddingNeeds): Module<{ loadShedder: LoadShedder }> {
  const loadShedder = new LoadShedder({
    db,
    audit,
    config: analysis.loadShedding,
    iot,
    demand,
    tariffs,
    alerts,
    logger,
    timezone,
  });
  const guard = new LoadSheddingGuard(loadShedder, { now, logger });
  analysis.loadShedding.afterReplace(() => guard.applyNow());
  return {
    context: 'analysis',
    services: { loadShedder },
    running: [{ name: 'load shedding (restores shed points)', start: () => guard.start(), jobs: [guard.job], stop: () => guard.stop() }],
  };
}

/** Energy anomalies of each finished site day (issue 25): hourly, each day checked once; while the collector runs. */
export function buildAnomalyChecks({ analysis, collecting }: { analysis: Analysis; collecting: boolean }): Module<{ anomalies: AnomalyWatch }> {
  const { anomalies } = analysis;
  const runs = new Repeating(() => anomalies.checkYesterday(), 3_600_000, 'energy anomaly check');
  return {
    context: 'analysis',
    services: { anomalies },
    running: [{ name: 'energy anomaly check', start: collecting ? () => runs.start() : undefined, jobs: collecting ? [runs] : [], stop: () => runs.stop() }],
  };
}
