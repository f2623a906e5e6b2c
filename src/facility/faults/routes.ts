// /api/faults and /api/faults/stats: viewer reads, operator writes.
import { Type } from '@sinclair/typebox';
import { defineRoute, Reply } from '../../platform/http/route.ts';
import { ErrorBody, IdParams, Page } from '../../platform/http/schemas.ts';
import { Fault, FaultCreate, FaultListQuery, FaultStats, FaultUpdate } from './schemas.ts';
import type { FaultService } from './service.ts';
import { FAULT_EXAMPLE, FAULT_PAGE_EXAMPLE } from '../examples/responses.ts';

const tags = ['faults'];

export type FaultRouteNeeds = { faults: FaultService };

export function faultRoutes({ faults }: FaultRouteNeeds) {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/faults',
      responseExample: FAULT_PAGE_EXAMPLE,
      access: 'viewer',
      summary: 'List faults, newest first by reportedAt',
      description: 'A page of faults; filters combine with AND. Changes nothing.',
      tags,
      schemas: { query: FaultListQuery, response: { 200: Page(Fault) } },
      handler: ({ query }) => faults.page(query),
    }),
    // Declared before /api/faults/:id: the router tries routes in order and "stats" would otherwise be read as an id.
    defineRoute({
      method: 'GET',
      path: '/api/faults/stats',
      access: 'viewer',
      summary: 'The fault stats snapshot: counts by status and severity, MTTR',
      description: 'Counts of faults by status and by severity, and the mean time to repair in hours over resolved faults. Changes nothing.',
      tags,
      schemas: { response: { 200: FaultStats } },
      handler: () => faults.stats(),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/faults',
      access: 'operator',
      summary: 'Report a fault',
      description: 'Records a fault (status open unless given; reportedAt defaults to now), audited.',
      example: { device: 'AHU-3', code: 'E42', description: 'Fan belt slipping', severity: 'medium', area: 'Roof' },
      tags,
      schemas: { body: FaultCreate, response: { 201: Fault } },
      handler: ({ body, user }) => new Reply(201, faults.create(body, user)),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/faults/:id',
      responseExample: FAULT_EXAMPLE,
      access: 'viewer',
      summary: 'Read one fault',
      description: 'One fault. Changes nothing.',
      tags,
      schemas: { params: IdParams, response: { 200: Fault, 404: ErrorBody } },
      handler: ({ params }) => faults.get(params.id),
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/faults/:id',
      access: 'operator',
      summary: 'Update a fault (partial); status changes stamp or clear resolvedAt',
      description: 'Changes the fields sent; moving to resolved or closed stamps resolvedAt, moving back clears it. Audited.',
      example: { status: 'in_progress', assignee: 'J. Smith' },
      tags,
      schemas: { params: IdParams, body: FaultUpdate, response: { 200: Fault, 404: ErrorBody } },
      handler: ({ params, body, user }) => faults.update(params.id, body, user),
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/faults/:id',
      access: 'operator',
      summary: 'Delete a fault (maintenance records that pointed at it keep existing with faultId null)',
      description: 'Removes the fault; maintenance records that named it keep existing with faultId null. Audited.',
      tags,
      schemas: { params: IdParams, response: { 204: Type.Null(), 404: ErrorBody } },
      handler: ({ params, user }) => {
        faults.delete(params.id, user);
        return new Reply(204, null);
      },
    }),
  ];
}
