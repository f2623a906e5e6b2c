// /api/reports: template listing, plan CRUD (viewer reads, operator writes).
import { Type } from '@sinclair/typebox';
import { defineRoute, Reply } from '../http/route.ts';
import { ErrorBody, IdParams, Page } from '../http/schemas.ts';
import { ReportPlan, ReportPlanCreate, ReportPlanListQuery, ReportPlanUpdate, ReportTemplateList } from './schemas.ts';
import type { ReportService } from './service.ts';

const tags = ['reports'];

export function reportRoutes({ reports }: { reports: ReportService }) {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/reports/templates',
      access: 'viewer',
      summary: 'List the built-in report templates',
      tags,
      schemas: { response: { 200: ReportTemplateList } },
      handler: () => ({ items: reports.listTemplates() }),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/reports/plans',
      access: 'viewer',
      summary: 'List report plans, newest first',
      tags,
      schemas: { query: ReportPlanListQuery, response: { 200: Page(ReportPlan) } },
      handler: ({ query }) => reports.page(query),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/reports/plans',
      access: 'operator',
      summary: 'Create a report plan',
      description: '400 with details for an invalid cron expression, an unknown templateId or a bad recipient email.',
      tags,
      schemas: { body: ReportPlanCreate, response: { 201: ReportPlan } },
      handler: ({ body, user }) => new Reply(201, reports.create(body, user)),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/reports/plans/:id',
      access: 'viewer',
      summary: 'Read one report plan',
      tags,
      schemas: { params: IdParams, response: { 200: ReportPlan, 404: ErrorBody } },
      handler: ({ params }) => reports.get(params.id),
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/reports/plans/:id',
      access: 'operator',
      summary: 'Update a report plan (partial)',
      tags,
      schemas: { params: IdParams, body: ReportPlanUpdate, response: { 200: ReportPlan, 404: ErrorBody } },
      handler: ({ params, body, user }) => reports.update(params.id, body, user),
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/reports/plans/:id',
      access: 'operator',
      summary: 'Delete a report plan',
      tags,
      schemas: { params: IdParams, response: { 204: Type.Null(), 404: ErrorBody } },
      handler: ({ params, user }) => {
        reports.delete(params.id, user);
        return new Reply(204, null);
      },
    }),
  ];
}
