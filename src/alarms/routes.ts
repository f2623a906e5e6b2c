// /api/notification-rules (admins write, operators read), an alert's notification record, and maintenance opened
// from an alert or a fault in one call.
import { Type } from '@sinclair/typebox';
import type { AlertService } from '../alerts/service.ts';
import type { FaultService } from '../faults/service.ts';
import { defineRoute, Reply } from '../http/route.ts';
import { ErrorBody, IdParams, Page } from '../http/schemas.ts';
import { Maintenance, MaintenanceFromBody } from '../maintenance/schemas.ts';
import type { MaintenanceService } from '../maintenance/service.ts';
import type { AlarmNotifier } from './notifier.ts';
import type { NotificationRules } from './rules.ts';
import { NotificationRule, NotificationRuleCreate, NotificationRuleListQuery, NotificationRuleUpdate, NotificationSend } from './schemas.ts';

const tags = ['alerts'];

type Parts = { alerts: AlertService; faults: FaultService; maintenance: MaintenanceService; notificationRules: NotificationRules; notifier: AlarmNotifier };

export function alarmRoutes({ alerts, faults, maintenance, notificationRules: rules, notifier }: Parts) {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/notification-rules',
      access: 'operator',
      summary: 'Notification rules: who is mailed about which new alerts, and who next when a critical one stays unacknowledged',
      tags,
      schemas: { query: NotificationRuleListQuery, response: { 200: Page(NotificationRule) } },
      handler: ({ query }) => rules.page(query.page, query.pageSize),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/notification-rules',
      access: 'admin',
      summary: 'Add a notification rule',
      tags,
      schemas: { body: NotificationRuleCreate, response: { 201: NotificationRule } },
      handler: ({ body, user }) => new Reply(201, rules.create(body, user)),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/notification-rules/:id',
      access: 'operator',
      summary: 'Read one notification rule',
      tags,
      schemas: { params: IdParams, response: { 200: NotificationRule, 404: ErrorBody } },
      handler: ({ params }) => rules.get(params.id),
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/notification-rules/:id',
      access: 'admin',
      summary: 'Change a notification rule (partial)',
      tags,
      schemas: { params: IdParams, body: NotificationRuleUpdate, response: { 200: NotificationRule, 404: ErrorBody } },
      handler: ({ params, body, user }) => rules.update(params.id, body, user),
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/notification-rules/:id',
      access: 'admin',
      summary: 'Remove a notification rule',
      tags,
      schemas: { params: IdParams, response: { 204: Type.Null(), 404: ErrorBody } },
      handler: ({ params, user }) => {
        rules.delete(params.id, user);
        return new Reply(204, null);
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/alerts/:id/notifications',
      access: 'operator',
      summary: 'Every notification sent about an alert: to whom, when, delivered or failed (with the reason)',
      tags,
      schemas: { params: IdParams, response: { 200: Type.Object({ items: Type.Array(NotificationSend) }), 404: ErrorBody } },
      handler: ({ params }) => {
        alerts.get(params.id);
        return { items: notifier.sends(params.id) };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/alerts/:id/maintenance',
      access: 'operator',
      summary: 'Open a maintenance record for an alert (linked by alertId)',
      tags,
      schemas: { params: IdParams, body: MaintenanceFromBody, response: { 201: Maintenance, 404: ErrorBody } },
      handler: ({ params, body, user }) => {
        const alert = alerts.get(params.id);
        const origin = { alertId: alert.id, equipment: alert.source ?? alert.area ?? 'unknown', description: `${alert.title}${alert.message ? `\n${alert.message}` : ''}` };
        return new Reply(201, maintenance.openFrom(origin, body, user));
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/faults/:id/maintenance',
      access: 'operator',
      summary: 'Open a maintenance record for a fault (linked by faultId)',
      tags: ['faults'],
      schemas: { params: IdParams, body: MaintenanceFromBody, response: { 201: Maintenance, 404: ErrorBody } },
      handler: ({ params, body, user }) => {
        const fault = faults.get(params.id);
        const origin = { faultId: fault.id, equipment: fault.device, description: `${fault.code}: ${fault.description}` };
        return new Reply(201, maintenance.openFrom(origin, body, user));
      },
    }),
  ];
}
