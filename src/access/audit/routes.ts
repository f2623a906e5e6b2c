// GET /api/audit: the trail of writes, for admins reconstructing what happened after an incident.
import type { AuditReader } from './service.ts';
import { defineRoute } from '../../platform/http/route.ts';
import { ErrorBody, Page } from '../../platform/http/schemas.ts';
import { AuditEntry, AuditQuery } from './schemas.ts';

export type AuditRouteNeeds = { auditTrail: AuditReader };

export function auditRoutes({ auditTrail: reader }: AuditRouteNeeds) {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/audit',
      access: 'admin',
      summary: 'The audit trail, newest first',
      description: 'Who changed what and when. Filters combine with AND.',
      tags: ['audit'],
      schemas: { query: AuditQuery, response: { 200: Page(AuditEntry), 400: ErrorBody } },
      handler: ({ query }) => reader.list(query),
    }),
  ];
}
