// The operations context, built once by the composition root: the backup scheduler, the box's health as the fleet
// sync reports it, the /metrics counters; its routes: /api/health and the backups.
import type { SyncHealth } from '../fleetSync/index.ts';
import type { IotGateway } from '../gateway/index.ts';
import type { Collector, MeterDirectory } from '../metering/index.ts';
import type { AuditLog } from '../platform/db/auditTrail.ts';
import type { Db } from '../platform/db/client.ts';
import type { Config } from '../platform/config.ts';
import type { RouteGroups } from '../platform/http/route.ts';
import type { Module } from '../platform/jobs/module.ts';
import type { JobRegistry } from '../platform/jobs/jobs.ts';
import type { Logger } from '../platform/logger.ts';
import type { LoadSheddingConfig } from '../analysis/index.ts';
import type { EnergyFigures } from '../energy/index.ts';
import type { AlertService } from '../facility/index.ts';
import { storageWatchOf } from '../platform/db/storageWatch.ts';
import { Repeating } from '../platform/jobs/lifecycle.ts';
import { version } from '../platform/packageRoot.ts';
import { backupRoutes, type BackupRouteNeeds } from './backup/routes.ts';
import { boxRoutes, type BoxRouteNeeds } from './box/routes.ts';
import { restoreRoutes, type RestoreRouteNeeds } from './backup/restoreRoutes.ts';
import { BackupScheduler } from './backup/service.ts';
import { healthRoutes, type HealthRouteNeeds } from './health/routes.ts';
import { Metrics } from './metrics/service.ts';
import { gatewayCondition } from './health/gatewayCondition.ts';
import { STORAGE_CHECK_MS, StorageAlert } from './health/storageAlert.ts';

export type Operations = {
  backups: BackupScheduler;
  /** What the box tells the fleet of itself on each sync (docs/fleet.md). */
  boxHealth: SyncHealth;
  /** The request counters the front door feeds and GET /metrics (src/app/app.ts serves it). */
  metrics: Metrics;
  /** The disk-full alert (health/storageAlert.ts), held in memory while the disk has no room for it. */
  storageAlert: StorageAlert;
};

export type OperationsNeeds = {
  config: Config;
  db: Db;
  logger: Logger;
  iot: IotGateway;
  collector: Collector;
  /** /api/health lists the points load shedding holds shed. */
  analysis: { loadShedding: Pick<LoadSheddingConfig, 'points'> };
  /** /metrics: the meters' demand and the stored days' counts. */
  energy: { meters: MeterDirectory; figures: EnergyFigures };
  /** /metrics lists the periodic jobs. */
  jobs: JobRegistry;
  /** /metrics: the fault-detection rule engine's evaluations and time. */
  faultRules?: { stats: { evaluations: number; seconds: number; runners: number } };
  audit: AuditLog;
  startedAt: number;
  /** The critical alert of a full data disk (health/storageAlert.ts). */
  alerts: Pick<AlertService, 'fromGatewayAlarm' | 'openAlarmKeyOf'>;
  /** Restarts the service in its process (src/app/host.ts), for the guided restore; absent: that route answers 409. */
  restart?: () => void;
};

/** The operations context's route tables: /api/health and the backups. */
export function operationsRouteGroups(needs: HealthRouteNeeds & BackupRouteNeeds & BoxRouteNeeds & RestoreRouteNeeds): RouteGroups {
  return { health: healthRoutes(needs), backup: [...backupRoutes(needs), ...restoreRoutes(needs), ...boxRoutes(needs)] };
}

export function buildOperations({
  config,
  db,
  audit,
  logger,
  iot,
  collector,
  analysis,
  energy,
  jobs,
  faultRules,
  startedAt,
  alerts,
  restart,
}: OperationsNeeds): Module<Operations> {
  const backups = new BackupScheduler({ db, dataDir: config.dataDir, logger, target: config.backupTarget });
  const metrics = new Metrics({
    db,
    token: config.metricsToken,
    collector,
    gateway: iot,
    backups,
    meters: energy.meters,
    figures: energy.figures,
    startedAt,
    jobs,
    faultRules,
  });
  const storageAlert = new StorageAlert({ watch: storageWatchOf(db, config.dataDir), alerts, logger, dataDir: config.dataDir });
  const storageJob = new Repeating(async () => storageAlert.check(), STORAGE_CHECK_MS, 'storage alert');
  return {
    context: 'operations',
    services: {
      backups,
      boxHealth: () => {
        const collected = collector.health();
        return { version, collector: collected.state, gateway: gatewayCondition(iot.health(), collected), lastBackupAt: backups.health().lastGoodAt };
      },
      metrics,
      storageAlert,
    },
    routes: operationsRouteGroups({ db, audit, startedAt, iot, backups, collector, config, analysis, storageAlert, restart }),
    running: [
      {
        name: 'backup scheduler',
        start: () => backups.start(),
        // The two jobs are read after start (the schedule is known then).
        get jobs() {
          return [backups.job, backups.reloadJob];
        },
        stop: () => backups.stop(),
      },
      { name: 'storage alert', start: () => storageJob.start(), jobs: [storageJob], stop: () => storageJob.stop() },
    ],
  };
}
