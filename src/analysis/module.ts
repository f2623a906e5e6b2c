// The energy-management pieces (comparisons, demand charges, baselines, EnPIs, anomalies), built once on the energy feature.
import type { Energy } from '../energy/index.ts';
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
import type { DemandWatch } from '../energy/index.ts';
import { Repeating } from '../platform/jobs/lifecycle.ts';
import type { Module } from '../platform/jobs/module.ts';

export type Analysis = {
  comparisons: Comparisons;
  demandCharges: DemandCharges;
  peakWarnings: PeakWarnings;
  loadShedding: LoadSheddingConfig;
  baselines: (iot: Pick<GatewayPort, 'history'>) => Baselines;
  hourlyBaselines: (iot: Pick<GatewayPort, 'history'>) => HourlyBaselines;
  enpis: (iot: Pick<GatewayPort, 'history'>) => Enpis;
  anomalies: (iot: Pick<GatewayPort, 'history'>, alerts: Pick<AlertService, 'fromGatewayAlarm'>, logger: Logger) => AnomalyWatch;
};

export function buildAnalysis(db: Db, audit: AuditLog, energy: Energy): Analysis {
  return {
    comparisons: new Comparisons(db, energy.figures, energy.tariffs, energy.days),
    demandCharges: new DemandCharges(energy.figures, energy.tariffs),
    peakWarnings: new PeakWarnings(db),
    loadShedding: new LoadSheddingConfig(db, audit),
    // The gateway is started after the features are built: baselines get it when the routes are.
    baselines: (iot) => new Baselines(energy.days, energy.figures, energy.tariffs, new OutdoorTemperatures(db, iot, energy.timezone)),
    hourlyBaselines: (iot) => new HourlyBaselines(energy.figures, energy.tariffs, new OutdoorTemperatures(db, iot, energy.timezone)),
    enpis: (iot) => new Enpis(db, audit, energy.figures, new OutdoorTemperatures(db, iot, energy.timezone), energy.commodities),
    anomalies: (iot, alerts, logger) =>
      new AnomalyWatch({
        energy: energy.site,
        baselines: new Baselines(energy.days, energy.figures, energy.tariffs, new OutdoorTemperatures(db, iot, energy.timezone)),
        hourlyBaselines: new HourlyBaselines(energy.figures, energy.tariffs, new OutdoorTemperatures(db, iot, energy.timezone)),
        alerts,
        logger,
      }),
  };
}

/** The analysis context's pieces as the composition root builds them (above); its jobs are the two modules below. */
export function buildAnalysisModule({ db, audit, energy }: { db: Db; audit: AuditLog; energy: Energy }): Module<{ analysis: Analysis }> {
  return { context: 'analysis', services: { analysis: buildAnalysis(db, audit, energy) } };
}

export type LoadSheddingNeeds = {
  db: Db;
  audit: AuditLog;
  analysis: Analysis;
  energy: Energy;
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
export function buildLoadShedding({ db, audit, analysis, energy, iot, demand, alerts, logger, now }: LoadSheddingNeeds): Module<{ loadShedder: LoadShedder }> {
  const loadShedder = new LoadShedder({
    db,
    audit,
    config: analysis.loadShedding,
    iot,
    demand,
    tariffs: energy.tariffs,
    alerts,
    logger,
    timezone: energy.timezone,
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
export function buildAnomalyChecks({
  analysis,
  iot,
  alerts,
  logger,
  collecting,
}: {
  analysis: Analysis;
  iot: GatewayPort;
  alerts: Pick<AlertService, 'fromGatewayAlarm'>;
  logger: Logger;
  collecting: boolean;
}): Module<{ anomalies: AnomalyWatch }> {
  const anomalies = analysis.anomalies(iot, alerts, logger);
  const runs = new Repeating(() => anomalies.checkYesterday(), 3_600_000, 'energy anomaly check');
  return {
    context: 'analysis',
    services: { anomalies },
    running: [{ name: 'energy anomaly check', start: collecting ? () => runs.start() : undefined, jobs: collecting ? [runs] : [], stop: () => runs.stop() }],
  };
}
