// Builds the report runner, its worker thread and its scheduler; returns the runner and what runs from them (the
// reporting module's parts): the scheduler starts with the service, and both stop (runs recorded) on close.
import type { AlertService } from '../../facility/index.ts';
import type { SiteEnergy, CommodityFigures } from '../../energy/index.ts';
import type { AuditLog } from '../../platform/db/auditTrail.ts';
import type { Config } from '../../platform/config.ts';
import type { Db } from '../../platform/db/client.ts';
import type { Logger } from '../../platform/logger.ts';
import type { Mailer } from '../../platform/mail/mailer.ts';
import path from 'node:path';
import { databasePath } from '../../platform/db/client.ts';
import { ReportContentBuilder, type ReportAnalysis } from './content.ts';
import { mailBaseUrl, siteMailReader } from '../../platform/mail/siteMail.ts';
import { siteSettings } from '../../site/index.ts';
import { ReportWorkers } from './offThread.ts';
import { ReportRunner, systemClock } from './runs.ts';
import { ReportScheduler } from './scheduler.ts';
import type { Running } from '../../platform/jobs/module.ts';

export function buildReportRuns(deps: {
  config: Config;
  db: Db;
  logger: Logger;
  audit: AuditLog;
  mailer: Mailer;
  alerts: AlertService;
  energy: SiteEnergy;
  analysis?: ReportAnalysis;
  commodities?: Pick<CommodityFigures, 'period'>;
}): { runner: ReportRunner; running: Running[] } {
  const { config, db, logger, audit, mailer, alerts } = deps;
  const workers = new ReportWorkers(databasePath(config.dataDir));
  const runner = new ReportRunner({
    db,
    audit,
    mailer,
    logger,
    directory: path.join(config.dataDir, 'reports'),
    content: new ReportContentBuilder(db, deps.energy, deps.analysis ?? null, undefined, deps.commodities ?? null),
    // Built in a worker thread with its own read-only connection: a PDF held the event loop 0.1–0.3 s (issue 29).
    workers,
    clock: systemClock,
    mailRetryDelaysMs: config.reports.mailRetryDelaysMs,
    keepFilesPerPlan: config.reports.keepFilesPerPlan,
    alerts,
    siteMail: siteMailReader(siteSettings(db), mailBaseUrl(config.publicUrl, config.portalOrigin)),
  });
  const scheduler = new ReportScheduler({ db, logger, runner, clock: systemClock });
  return {
    runner,
    running: [
      // Closed after the scheduler stopped (hooks run in reverse): the runs in progress are built first.
      { name: 'report worker', stop: () => workers.close() },
      {
        name: 'report scheduler',
        start: () => {
          const interrupted = runner.failInterrupted();
          if (interrupted > 0) logger.warn({ runs: interrupted }, 'report runs interrupted by the last shutdown recorded as failed');
          scheduler.start();
        },
        jobs: [scheduler.job, scheduler.wakeJob],
        stop: () => scheduler.stop(),
      },
    ],
  };
}
