// /api/reports: template listing, plan CRUD, run history, run now and the files of a run (viewer reads, operator writes).
import { sendStoredFile, BinaryBody } from '../../files/index.ts';
import { Type } from '@sinclair/typebox';
import { defineRoute, Reply } from '../../platform/http/route.ts';
import { ErrorBody, IdParams, Page } from '../../platform/http/schemas.ts';
import {
  ReportPlan,
  ReportPlanCreate,
  ReportPlanListQuery,
  ReportPlanUpdate,
  ReportRun,
  ReportRunFileParams,
  ReportRunListQuery,
  ReportTemplateList,
} from './schemas.ts';
import type { ReportService } from './service.ts';
import type { ReportRunner } from './runs.ts';
import { REPORT_PLAN_EXAMPLE, REPORT_PLAN_PAGE_EXAMPLE, REPORT_RUN_EXAMPLE, REPORT_RUN_PAGE_EXAMPLE, REPORT_TEMPLATES_EXAMPLE } from './examples.ts';

const tags = ['reports'];

export type ReportRouteNeeds = { reports: ReportService; reportRuns: ReportRunner };

export function reportRoutes({ reports, reportRuns: runner }: ReportRouteNeeds) {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/reports/templates',
      responseExample: REPORT_TEMPLATES_EXAMPLE,
      access: 'viewer',
      summary: 'List the built-in report templates',
      description:
        'The seeded templates (weekly-energy, monthly-energy, month-to-date, alerts-faults, maintenance-due) a plan may name by id or key. Changes nothing.',
      tags,
      schemas: { response: { 200: ReportTemplateList } },
      handler: () => ({ items: reports.listTemplates() }),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/reports/plans',
      responseExample: REPORT_PLAN_PAGE_EXAMPLE,
      access: 'viewer',
      summary: 'List report plans, newest first',
      description: 'A page of report plans with their next scheduled run. Changes nothing.',
      tags,
      schemas: { query: ReportPlanListQuery, response: { 200: Page(ReportPlan) } },
      handler: ({ query }) => reports.page(query),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/reports/plans',
      access: 'operator',
      summary: 'Create a report plan',
      example: { name: 'Weekly energy', templateId: 'weekly-energy', cron: '0 7 * * 1', format: 'pdf', recipients: ['energy@example.com'] },
      description: '400 with details for an invalid cron expression, an unknown templateId or a bad recipient email.',
      tags,
      schemas: { body: ReportPlanCreate, response: { 201: ReportPlan } },
      handler: ({ body, user }) => new Reply(201, reports.create(body, user)),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/reports/plans/:id',
      responseExample: REPORT_PLAN_EXAMPLE,
      access: 'viewer',
      summary: 'Read one report plan',
      description: 'One report plan. Changes nothing.',
      tags,
      schemas: { params: IdParams, response: { 200: ReportPlan, 404: ErrorBody } },
      handler: ({ params }) => reports.get(params.id),
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/reports/plans/:id',
      access: 'operator',
      summary: 'Update a report plan (partial)',
      description: 'Changes the fields sent; a new cron or enabled takes effect on the scheduler at once. Audited.',
      example: { enabled: false },
      tags,
      schemas: { params: IdParams, body: ReportPlanUpdate, response: { 200: ReportPlan, 404: ErrorBody } },
      handler: ({ params, body, user }) => reports.update(params.id, body, user),
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/reports/plans/:id',
      access: 'operator',
      summary: 'Delete a report plan',
      description: 'Removes the plan; it is no longer scheduled. Audited.',
      tags,
      schemas: { params: IdParams, response: { 204: Type.Null(), 404: ErrorBody } },
      handler: ({ params, user }) => {
        reports.delete(params.id, user);
        return new Reply(204, null);
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/reports/plans/:id/runs',
      responseExample: REPORT_RUN_PAGE_EXAMPLE,
      access: 'viewer',
      summary: 'Run history of a report plan, newest first',
      description: "A page of the plan's runs (scheduled and manual) with their status and files. Changes nothing.",
      tags,
      schemas: { params: IdParams, query: ReportRunListQuery, response: { 200: Page(ReportRun), 404: ErrorBody } },
      handler: ({ params, query }) => {
        reports.get(params.id);
        return runner.page(params.id, query.page, query.pageSize);
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/reports/plans/:id/run',
      access: 'operator',
      summary: 'Run a report plan now',
      description:
        'Starts a run at once (also for a disabled plan) and answers 202 with it (status running); follow it with ' +
        'GET /api/reports/runs/{id}. 409 while a run of the plan is in progress: runs of one plan never overlap.',
      tags,
      schemas: { params: IdParams, response: { 202: ReportRun, 404: ErrorBody, 409: ErrorBody, 429: ErrorBody } },
      handler: ({ params, user }) => new Reply(202, runner.start(params.id, 'manual', user).run),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/reports/runs/:id',
      responseExample: REPORT_RUN_EXAMPLE,
      access: 'viewer',
      summary: 'One report run: status, times, size, error and its files',
      description: 'One run; poll it after POST /api/reports/plans/{id}/run until status is no longer running. Changes nothing.',
      tags,
      schemas: { params: IdParams, response: { 200: ReportRun, 404: ErrorBody } },
      handler: ({ params }) => runner.get(params.id),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/reports/runs/:id/files/:name',
      access: 'viewer',
      summary: 'Download a file of a report run (PDF, CSV or JSON)',
      description: '404 for a name the run did not produce, or once retention removed the files (EMS_REPORT_KEEP_FILES runs are kept per plan).',
      tags,
      raw: { contentType: 'application/pdf', contentTypes: ['application/pdf', 'text/csv; charset=utf-8', 'application/json'], storedFile: true },
      schemas: { params: ReportRunFileParams, response: { 200: BinaryBody, 404: ErrorBody } },
      handler: async ({ params, ctx }) => {
        const file = runner.file(params.id, params.name);
        await sendStoredFile(ctx, {
          path: file.path,
          etag: file.storedName,
          contentType: file.contentType,
          downloadName: file.name,
          disposition: 'attachment',
        });
      },
    }),
  ];
}
