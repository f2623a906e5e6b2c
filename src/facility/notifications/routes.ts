// /api/notification-rules (admins write, operators read), an alert's notification record, and maintenance opened
// from an alert or a fault in one call.
import { Type } from '@sinclair/typebox';
import type { AlertService } from '../alerts/service.ts';
import type { FaultService } from '../faults/service.ts';
import { defineRoute, Reply } from '../../platform/http/route.ts';
import { ErrorBody, IdParams, Page } from '../../platform/http/schemas.ts';
import { Maintenance, MaintenanceFromBody } from '../maintenance/schemas.ts';
import type { MaintenanceService } from '../maintenance/service.ts';
import type { AlarmNotifier } from './notifier.ts';
import type { NotificationRules } from './rules.ts';
import { NotificationRule, NotificationRuleCreate, NotificationRuleListQuery, NotificationRuleUpdate, NotificationSend } from './schemas.ts';

const tags = ['alerts'];

export type AlarmRouteNeeds = {
  alerts: AlertService;
  faults: FaultService;
  maintenance: MaintenanceService;
  notificationRules: NotificationRules;
  notifier: AlarmNotifier;
};

export function alarmRoutes({ alerts, faults, maintenance, notificationRules: rules, notifier }: AlarmRouteNeeds) {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/notification-rules',
      access: 'operator',
      summary: 'Notification rules: who is mailed about which new alerts, and who next when a critical one stays unacknowledged',
      description: 'A page of the rules: the levels (and optionally the area) each covers, its recipients and its escalation. Changes nothing.',
      tags,
      schemas: { query: NotificationRuleListQuery, response: { 200: Page(NotificationRule) } },
      handler: ({ query }) => rules.page(query.page, query.pageSize),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/notification-rules',
      access: 'admin',
      summary: 'Add a notification rule',
      description:
        'Adds a rule: new alerts of its levels (and area, if set) are mailed to its recipients; a critical one still unacknowledged after escalateAfterMin goes to escalateTo. Takes effect for the next alert.',
      example: {
        name: 'Critical to facilities',
        levels: ['critical'],
        recipients: ['facilities@example.com'],
        escalateAfterMin: 30,
        escalateTo: ['duty.manager@example.com'],
        enabled: true,
      },
      tags,
      schemas: { body: NotificationRuleCreate, response: { 201: NotificationRule } },
      handler: ({ body, user }) => new Reply(201, rules.create(body, user)),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/notification-rules/:id',
      access: 'operator',
      summary: 'Read one notification rule',
      description: 'One notification rule. Changes nothing.',
      tags,
      schemas: { params: IdParams, response: { 200: NotificationRule, 404: ErrorBody } },
      handler: ({ params }) => rules.get(params.id),
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/notification-rules/:id',
      access: 'admin',
      summary: 'Change a notification rule (partial)',
      description: 'Changes the fields sent; the others keep their value. Takes effect for the next alert and the next escalation check.',
      example: { enabled: false },
      tags,
      schemas: { params: IdParams, body: NotificationRuleUpdate, response: { 200: NotificationRule, 404: ErrorBody } },
      handler: ({ params, body, user }) => rules.update(params.id, body, user),
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/notification-rules/:id',
      access: 'admin',
      summary: 'Remove a notification rule',
      description: 'Removes the rule: no further mail or escalation goes out under it; the record of what was sent stays.',
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
      description: 'The delivery record of one alert, oldest first (rule, recipient, escalation or not, outcome). Changes nothing.',
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
      description:
        "Creates a planned maintenance record for the alert's equipment (its source, else its area) with the alert's text, linked by alertId; the alert itself does not change.",
      example: { type: 'corrective', scheduledAt: '2026-12-01T08:00:00Z', assignee: 'J. Smith' },
      tags,
      schemas: { params: IdParams, body: MaintenanceFromBody, response: { 201: Maintenance, 404: ErrorBody } },
      handler: ({ params, body, user }) => {
        const alert = alerts.get(params.id);
        const origin = {
          alertId: alert.id,
          equipment: alert.source ?? alert.area ?? 'unknown',
          description: `${alert.title}${alert.message ? `\n${alert.message}` : ''}`,
        };
        return new Reply(201, maintenance.openFrom(origin, body, user));
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/faults/:id/maintenance',
      access: 'operator',
      summary: 'Open a maintenance record for a fault (linked by faultId)',
      description:
        "Creates a planned maintenance record for the fault's device with the fault's code and text, linked by faultId; the fault itself does not change.",
      example: { type: 'corrective', description: 'Replace the fan belt', scheduledAt: '2026-12-01T08:00:00Z' },
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
