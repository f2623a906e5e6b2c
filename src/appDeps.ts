// What every feature's routes are built from; createService assembles it once.
import type { AuditLog } from './db/auditTrail.ts';
import type { AuthService } from './auth/service.ts';
import type { BackupScheduler } from './backup/service.ts';
import type { Config } from './config.ts';
import type { FeatureServices, PortalServices } from './features.ts';
import type { Db } from './db/client.ts';
import type { IotGateway } from './iot/service.ts';
import type { Lifecycle } from './lifecycle.ts';
import type { Logger } from './logger.ts';
import type { Mailer } from './mail/mailer.ts';
import type { ReportRunner } from './reports/runs.ts';
import type { AlarmNotifier } from './alarms/notifier.ts';
import type { Collector } from './energy/collector.ts';
import type { LoadShedder } from './analysis/loadShedding.ts';

export type AppDeps = FeatureServices &
  PortalServices & {
    config: Config;
    db: Db;
    logger: Logger;
    mailer: Mailer;
    auth: AuthService;
    audit: AuditLog;
    iot: IotGateway;
    backups: BackupScheduler;
    reportRuns: ReportRunner;
    notifier: AlarmNotifier;
    collector: Collector;
    /** The load-shedding controller (its guard restores on its own timer). */
    loadShedder: LoadShedder;
    lifecycle: Lifecycle;
    startedAt: number;
  };
