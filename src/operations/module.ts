// The operations context, built once by the composition root: the backup scheduler, and the box's health as the
// fleet sync reports it.
import type { SyncHealth } from '../fleetSync/index.ts';
import type { IotGateway } from '../gateway/index.ts';
import type { Collector } from '../metering/index.ts';
import type { Db } from '../platform/db/client.ts';
import type { Config } from '../platform/config.ts';
import type { Module } from '../platform/jobs/module.ts';
import type { Logger } from '../platform/logger.ts';
import { version } from '../platform/packageRoot.ts';
import { BackupScheduler } from './backup/service.ts';
import { gatewayCondition } from './health/gatewayCondition.ts';

export type Operations = {
  backups: BackupScheduler;
  /** What the box tells the fleet of itself on each sync (docs/fleet.md). */
  boxHealth: SyncHealth;
};

export function buildOperations({
  config,
  db,
  logger,
  iot,
  collector,
}: {
  config: Config;
  db: Db;
  logger: Logger;
  iot: IotGateway;
  collector: Collector;
}): Module<Operations> {
  const backups = new BackupScheduler({ db, dataDir: config.dataDir, logger, target: config.backupTarget });
  return {
    context: 'operations',
    services: {
      backups,
      boxHealth: () => {
        const collected = collector.health();
        return { version, collector: collected.state, gateway: gatewayCondition(iot.health(), collected), lastBackupAt: backups.health().lastGoodAt };
      },
    },
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
    ],
  };
}
