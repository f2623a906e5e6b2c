// The reporting context, built once by the composition root: report plans, the runner with its worker and scheduler
// (running parts: the scheduler's jobs, both close hooks), and the energy exports.
import type { Analysis } from '../analysis/index.ts';
import type { EnergyReads } from '../energy/index.ts';
import type { MeterDirectory, StoredDays } from '../metering/index.ts';
import type { AlertService } from '../facility/index.ts';
import type { AuditLog } from '../platform/db/auditTrail.ts';
import type { Db } from '../platform/db/client.ts';
import type { Config } from '../platform/config.ts';
import type { RouteGroups } from '../platform/http/route.ts';
import type { Module } from '../platform/jobs/module.ts';
import type { Logger } from '../platform/logger.ts';
import type { Mailer } from '../platform/mail/mailer.ts';
import { exportRoutes, type ExportRouteNeeds } from './exports/routes.ts';
import { EnergyExport } from './exports/service.ts';
import { reportRoutes, type ReportRouteNeeds } from './reports/routes.ts';
import type { ReportRunner } from './reports/runs.ts';
import { ReportService } from './reports/service.ts';
import { buildReportRuns } from './reports/start.ts';

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
  alerts: AlertService;
  /** Energy's read side (the reports' figures); metering's stored days and meters and the site's time zone (the exports). */
  energy: EnergyReads;
  days: StoredDays;
  meters: MeterDirectory;
  timezone: () => string;
  analysis: Analysis;
};

/** The reporting context's route tables: report plans and runs; the energy exports. */
export function reportingRouteGroups(needs: ReportRouteNeeds & ExportRouteNeeds): RouteGroups {
  return { reports: reportRoutes(needs), exports: exportRoutes(needs) };
}

export function buildReporting(needs: ReportingNeeds): Module<Reporting> {
  const { config, db, audit, energy } = needs;
  const reports = new ReportService(db, audit, config.reports.minIntervalMin);
  const exports = new EnergyExport(needs.days, needs.meters, needs.timezone);
  const { runner: reportRuns, running } = buildReportRuns({ ...needs, energy: energy.site, commodities: energy.commodities });
  return { context: 'reporting', services: { reports, exports, reportRuns }, running, routes: reportingRouteGroups({ reports, reportRuns, exports, db }) };
}
