// What every feature's routes are built from: the services of every context's module, assembled once by createService.
import type { Access } from '../access/index.ts';
import type { Operations } from '../operations/index.ts';
import type { IotGateway } from '../gateway/index.ts';
import type { Reporting } from '../reporting/index.ts';
import type { Facility } from '../facility/index.ts';
import type { Collector, HistoryImport, ImportJobs, MeterDirectory, Restate, SuspectRuns, TimeZoneMove } from '../metering/index.ts';
import type { Tariffs } from '../pricing/index.ts';
import type { Analysis, LoadShedder } from '../analysis/index.ts';
import type { Energy } from '../energy/index.ts';
import type { BillingContext } from '../billing/index.ts';
import type { FaultDetection } from '../faultDetection/index.ts';
import type { ConfigStore } from '../site/index.ts';
import type { Files } from '../files/index.ts';
import type { Screens } from '../screens/index.ts';
import type { AuditLog } from '../platform/db/auditTrail.ts';
import type { Config } from '../platform/config.ts';
import type { Db } from '../platform/db/client.ts';
import type { Lifecycle } from '../platform/jobs/lifecycle.ts';
import type { JobRegistry } from '../platform/jobs/jobs.ts';
import type { Logger } from '../platform/logger.ts';
import type { Mailer } from '../platform/mail/mailer.ts';

/**
 * Every service, built once (each context's module.ts, called in order by src/app/compose.ts). Caches live inside them,
 * so one instance per service means one cache: a second ConfigStore or OverviewService would keep a second copy.
 */
export type AppDeps = Access &
  Facility &
  Files &
  Reporting &
  Screens & {
    config: Config;
    db: Db;
    logger: Logger;
    mailer: Mailer;
    audit: AuditLog;
    iot: IotGateway;
    /** The whole data path in one object (pricing, metering's stored side, energy's read side): for tests only. */
    energy: Energy;
    /** Pricing's tariff versions; metering's meters, history import and restatement of stored costs (their route tables). */
    tariffs: Tariffs;
    meters: MeterDirectory;
    history: HistoryImport;
    importJobs: ImportJobs;
    restate: Restate;
    analysis: Analysis;
    billing: BillingContext;
    /** Equipment fault detection (issue 54): point model, rule book, episodes, detector. */
    faultDetection: FaultDetection;
    configs: ConfigStore;
    /** Re-keys stored energy when the site time zone changes; the collector pauses for it (src/metering/module.ts). */
    zoneMove: TimeZoneMove;
    backups: Operations['backups'];
    /** The disk-full alert, held while it cannot be written (src/operations/health/storageAlert.ts). */
    storageAlert: Operations['storageAlert'];
    collector: Collector;
    /** Suspect runs of the meters (issue 52): listed and confirmed through the API. */
    suspects: SuspectRuns;
    /** The load-shedding controller (its guard restores on its own timer). */
    loadShedder: LoadShedder;
    lifecycle: Lifecycle;
    jobs: JobRegistry;
    startedAt: number;
  };
