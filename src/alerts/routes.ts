// /api/alerts: viewer reads, operator writes; the lifecycle moves also have their own endpoints.
import { Type } from '@sinclair/typebox';
import { defineRoute, Reply } from '../http/route.ts';
import { ErrorBody, IdParams, Page } from '../http/schemas.ts';
import { Alert, AlertCreate, AlertListQuery, AlertUpdate } from './schemas.ts';
import type { AlertService } from './service.ts';

const tags = ['alerts'];

export function alertRoutes({ alerts }: { alerts: AlertService }) {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/alerts',
      access: 'viewer',
      summary: 'List alerts, newest first by occurredAt',
      tags,
      schemas: { query: AlertListQuery, response: { 200: Page(Alert) } },
      handler: ({ query }) => alerts.page(query),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/alerts',
      access: 'operator',
      summary: 'Raise an alert (status active)',
      tags,
      schemas: { body: AlertCreate, response: { 201: Alert } },
      handler: ({ body, user }) => new Reply(201, alerts.create(body, user)),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/alerts/:id',
      access: 'viewer',
      summary: 'Read one alert',
      tags,
      schemas: { params: IdParams, response: { 200: Alert, 404: ErrorBody } },
      handler: ({ params }) => alerts.get(params.id),
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/alerts/:id',
      access: 'operator',
      summary: 'Update an alert (partial); a status change follows the lifecycle',
      description: 'acknowledgedBy/At and resolvedBy/At are set by the server from the caller. 409 for a backwards or repeated status move.',
      tags,
      schemas: { params: IdParams, body: AlertUpdate, response: { 200: Alert, 404: ErrorBody, 409: ErrorBody } },
      handler: ({ params, body, user }) => alerts.update(params.id, body, user),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/alerts/:id/acknowledge',
      access: 'operator',
      summary: 'Acknowledge an active alert',
      description: 'Sets status acknowledged, acknowledgedAt = now, acknowledgedBy = the caller. 409 unless the alert is active.',
      tags,
      schemas: { params: IdParams, response: { 200: Alert, 404: ErrorBody, 409: ErrorBody } },
      handler: ({ params, user }) => alerts.transition(params.id, 'acknowledged', user),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/alerts/:id/resolve',
      access: 'operator',
      summary: 'Resolve an active or acknowledged alert',
      description: 'Sets status resolved, resolvedAt = now, resolvedBy = the caller. 409 when already resolved.',
      tags,
      schemas: { params: IdParams, response: { 200: Alert, 404: ErrorBody, 409: ErrorBody } },
      handler: ({ params, user }) => alerts.transition(params.id, 'resolved', user),
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/alerts/:id',
      access: 'operator',
      summary: 'Delete an alert',
      tags,
      schemas: { params: IdParams, response: { 204: Type.Null(), 404: ErrorBody } },
      handler: ({ params, user }) => {
        alerts.delete(params.id, user);
        return new Reply(204, null);
      },
    }),
  ];
}
