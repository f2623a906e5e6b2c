// /api/maintenance: viewer reads, operator writes.
import { Type } from '@sinclair/typebox';
import { defineRoute, Reply } from '../../platform/http/route.ts';
import { ErrorBody, IdParams, Page } from '../../platform/http/schemas.ts';
import { Maintenance, MaintenanceCreate, MaintenanceListQuery, MaintenanceUpdate } from './schemas.ts';
import type { MaintenanceService } from './service.ts';
import { MAINTENANCE_EXAMPLE, MAINTENANCE_PAGE_EXAMPLE } from '../examples/responses.ts';

const tags = ['maintenance'];

export type MaintenanceRouteNeeds = { maintenance: MaintenanceService };

export function maintenanceRoutes({ maintenance }: MaintenanceRouteNeeds) {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/maintenance',
      responseExample: MAINTENANCE_PAGE_EXAMPLE,
      access: 'viewer',
      summary: 'List maintenance records, newest first',
      description: 'A page of maintenance records; filters combine with AND. Changes nothing.',
      tags,
      schemas: { query: MaintenanceListQuery, response: { 200: Page(Maintenance) } },
      handler: ({ query }) => maintenance.page(query),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/maintenance',
      access: 'operator',
      summary: 'Create a maintenance record',
      description: 'Creates a maintenance record (status planned unless given), audited. A faultId must name an existing fault.',
      example: { equipment: 'Chiller 2', type: 'preventive', description: 'Quarterly service', scheduledAt: '2026-12-01T08:00:00Z', assignee: 'J. Smith' },
      tags,
      schemas: { body: MaintenanceCreate, response: { 201: Maintenance } },
      handler: ({ body, user }) => new Reply(201, maintenance.create(body, user)),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/maintenance/:id',
      responseExample: MAINTENANCE_EXAMPLE,
      access: 'viewer',
      summary: 'Read one maintenance record',
      description: 'One maintenance record. Changes nothing.',
      tags,
      schemas: { params: IdParams, response: { 200: Maintenance, 404: ErrorBody } },
      handler: ({ params }) => maintenance.get(params.id),
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/maintenance/:id',
      access: 'operator',
      summary: 'Update a maintenance record (partial); status done stamps completedAt',
      description: 'Changes the fields sent; status done stamps completedAt. Audited.',
      example: { status: 'done', cost: 420.5 },
      tags,
      schemas: { params: IdParams, body: MaintenanceUpdate, response: { 200: Maintenance, 404: ErrorBody } },
      handler: ({ params, body, user }) => maintenance.update(params.id, body, user),
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/maintenance/:id',
      access: 'operator',
      summary: 'Delete a maintenance record',
      description: 'Removes the maintenance record. Audited.',
      tags,
      schemas: { params: IdParams, response: { 204: Type.Null(), 404: ErrorBody } },
      handler: ({ params, user }) => {
        maintenance.delete(params.id, user);
        return new Reply(204, null);
      },
    }),
  ];
}
