// The reporting context, built once by the composition root: report plans, the runner with its worker and scheduler
// (startReports registers their close hooks and jobs as it starts them), and the energy exports.
import type { Analysis } from '../analysis/index.ts';
import type { Energy } from '../energy/index.ts';
import type { AlertService } from '../facility/index.ts';
import type { AuditLog } from '../platform/db/auditTrail.ts';
import type { Db } from '../platform/db/client.ts';
import type { Config } from '../platform/config.ts';
import type { JobRegistry } from '../platform/jobs/jobs.ts';
import type { Lifecycle } from '../platform/jobs/lifecycle.ts';
import type { Module } from '../platform/jobs/module.ts';
import type { Logger } from '../platform/logger.ts';
import type { Mailer } from '../platform/mail/mailer.ts';
import { EnergyExport } from './exports/service.ts';
import type { ReportRunner } from './reports/runs.ts';
import { ReportService } from './reports/service.ts';
import { startReports } from './reports/start.ts';

export type Reporting = {
  reports: ReportService;
  /** Multi-meter CSV/XLSX exports (GET /api/exports/energy). */
  exports: EnergyExport;
  reportRuns: ReportRunner;
};

export type ReportingNeeds = {
  config: Config;
  db: Db;
  audit: AuditLog;
  logger: Logger;
  mailer: Mailer;
  lifecycle: Lifecycle;
  jobs: JobRegistry;
  alerts: AlertService;
  energy: Energy;
  analysis: Analysis;
};

export function buildReporting(needs: ReportingNeeds): Module<Reporting> {
  const { config, db, audit, energy } = needs;
  const reports = new ReportService(db, audit, config.reports.minIntervalMin);
  const exports = new EnergyExport(energy.days, energy.meters, energy.timezone);
  const reportRuns = startReports({ ...needs, energy: energy.site, commodities: energy.commodities });
  return { context: 'reporting', services: { reports, exports, reportRuns } };
}
