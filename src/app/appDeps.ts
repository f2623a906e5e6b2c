// What every feature's routes are built from; createService assembles it once.
import type { AuthService } from '../access/index.ts';
import type { BackupScheduler } from '../operations/index.ts';
import type { IotGateway } from '../gateway/index.ts';
import type { ReportRunner } from '../reporting/index.ts';
import type { AlarmNotifier } from '../facility/index.ts';
import type { Collector } from '../metering/index.ts';
import type { LoadShedder } from '../analysis/index.ts';
import type { AuditLog } from '../platform/db/auditTrail.ts';
import type { Config } from '../platform/config.ts';
import type { FeatureServices, PortalServices } from './features.ts';
import type { Db } from '../platform/db/client.ts';
import type { Lifecycle } from '../platform/jobs/lifecycle.ts';
import type { JobRegistry } from '../platform/jobs/jobs.ts';
import type { Logger } from '../platform/logger.ts';
import type { Mailer } from '../platform/mail/mailer.ts';

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
    jobs: JobRegistry;
    startedAt: number;
  };
