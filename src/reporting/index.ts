// The face of reporting/: what the other contexts use of it. Imports from outside reporting/ come through this file
// (test/structure/importGraph.test.ts); what is not listed here is reporting's own business.
export { EnergyExport } from './exports/service.ts';
export type { ReportRunner } from './reports/runs.ts';
export { ReportService } from './reports/service.ts';
export { buildReporting, reportingRouteGroups, type Reporting, type ReportingNeeds } from './module.ts';
