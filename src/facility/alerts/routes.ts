// /api/alerts: viewer reads, operator writes; the lifecycle moves also have their own endpoints.
import { Type } from '@sinclair/typebox';
import { defineRoute, Reply } from '../../platform/http/route.ts';
import { ErrorBody, IdParams, Page } from '../../platform/http/schemas.ts';
import {
  Alert,
  AlertBulk,
  AlertBulkResult,
  AlertCommentBody,
  AlertCounts,
  AlertCreate,
  AlertListQuery,
  AlertMoveBody,
  AlertNote,
  AlertShelveBody,
  AlertUpdate,
} from './schemas.ts';
import type { AlertService } from './service.ts';
import { ALERT_EXAMPLE, ALERT_PAGE_EXAMPLE } from '../examples/responses.ts';

const tags = ['alerts'];

export type AlertRouteNeeds = { alerts: AlertService };

export function alertRoutes({ alerts }: AlertRouteNeeds) {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/alerts',
      responseExample: ALERT_PAGE_EXAMPLE,
      access: 'viewer',
      summary: 'List alerts, newest first by occurredAt',
      description: 'A page of alerts; filters (status, level, area, q in title and message, from/to on occurredAt) combine with AND. Changes nothing.',
      tags,
      schemas: { query: AlertListQuery, response: { 200: Page(Alert) } },
      // A page read again before the next write is the same object: its validated JSON is sent again.
      reusesBody: true,
      handler: ({ query }) => alerts.page(query),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/alerts/counts',
      responseExample: { active: 3, critical: 1, cleared: 1, acknowledged: 2, shelved: 1, resolved: 120 },
      access: 'viewer',
      summary: 'How many alerts each list holds: the one set of counts the overview, the tabs, the wallboard and the live stream show',
      description:
        'active: status active, not shelved now and still in alarm (not cleared at the source), the Active tab; critical: active and level critical; cleared: status active and not shelved but returned to normal at the source (still to be acknowledged); shelved: status active, shelved until a time still ahead; acknowledged; resolved. active, cleared, shelved, acknowledged and resolved part every alert (each in exactly one). Changes nothing.',
      tags,
      schemas: { response: { 200: AlertCounts } },
      handler: () => alerts.counts(),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/alerts',
      access: 'operator',
      summary: 'Raise an alert (status active)',
      description:
        'Creates an alert with status active (occurredAt defaults to now), audited. Notification rules that match its level and area mail their recipients.',
      example: {
        title: 'Chiller 2 supply temperature high',
        message: 'Supply at 11.2 °C for 15 minutes',
        level: 'warning',
        source: 'chiller-2',
        area: 'Plant room',
      },
      tags,
      schemas: { body: AlertCreate, response: { 201: Alert } },
      handler: ({ body, user }) => new Reply(201, alerts.create(body, user)),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/alerts/:id',
      responseExample: ALERT_EXAMPLE,
      access: 'viewer',
      summary: 'Read one alert',
      description: 'One alert with its lifecycle fields (who acknowledged and resolved it, when, shelving). Changes nothing.',
      tags,
      schemas: { params: IdParams, response: { 200: Alert, 404: ErrorBody } },
      handler: ({ params }) => alerts.get(params.id),
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/alerts/:id',
      access: 'operator',
      summary: 'Update an alert (partial); a status change follows the lifecycle',
      example: { level: 'critical', area: 'Plant room' },
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
      example: { note: 'On site, checking the valve' },
      description: 'Sets status acknowledged, acknowledgedAt = now, acknowledgedBy = the caller. 409 unless the alert is active.',
      tags,
      schemas: { params: IdParams, body: AlertMoveBody, response: { 200: Alert, 404: ErrorBody, 409: ErrorBody } },
      handler: ({ params, body, user }) => alerts.transition(params.id, 'acknowledged', user, body.note),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/alerts/:id/resolve',
      access: 'operator',
      summary: 'Resolve an active or acknowledged alert',
      example: { note: 'Valve replaced' },
      description: 'Sets status resolved, resolvedAt = now, resolvedBy = the caller. 409 when already resolved.',
      tags,
      schemas: { params: IdParams, body: AlertMoveBody, response: { 200: Alert, 404: ErrorBody, 409: ErrorBody } },
      handler: ({ params, body, user }) => alerts.transition(params.id, 'resolved', user, body.note),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/alerts/:id/notes',
      access: 'viewer',
      summary: "An alert's notes (acknowledge, resolve, comment, shelve), oldest first, with who and when",
      description: 'Every note on the alert: the ones written with acknowledge, resolve and shelve, and comments. Changes nothing.',
      tags,
      schemas: { params: IdParams, response: { 200: Type.Object({ items: Type.Array(AlertNote) }), 404: ErrorBody } },
      handler: ({ params }) => ({ items: alerts.notes(params.id) }),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/alerts/:id/notes',
      access: 'operator',
      summary: 'Add a comment to an alert',
      description: "Adds a comment note (the caller and the time are recorded) without changing the alert's status.",
      example: { text: 'Spare part ordered, arrives Thursday' },
      tags,
      schemas: { params: IdParams, body: AlertCommentBody, response: { 201: AlertNote, 404: ErrorBody } },
      handler: ({ params, body, user }) => new Reply(201, alerts.comment(params.id, body.text, user)),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/alerts/:id/shelve',
      access: 'operator',
      summary: 'Shelve an alert for a while, with a reason',
      example: { durationMin: 120, reason: 'Sensor under maintenance' },
      description: 'A shelved alert leaves the active counts until shelvedUntil passes or it is unshelved. 409 for a resolved alert.',
      tags,
      schemas: { params: IdParams, body: AlertShelveBody, response: { 200: Alert, 404: ErrorBody, 409: ErrorBody } },
      handler: ({ params, body, user }) => alerts.shelve(params.id, body, user),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/alerts/:id/unshelve',
      access: 'operator',
      summary: 'Put a shelved alert back into the active counts now',
      description: 'Clears shelvedUntil, shelvedBy and shelveReason at once, so the alert counts as active again. 409 when it is not shelved.',
      tags,
      schemas: { params: IdParams, response: { 200: Alert, 404: ErrorBody, 409: ErrorBody } },
      handler: ({ params, user }) => alerts.unshelve(params.id, user),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/alerts/bulk',
      access: 'operator',
      summary: 'Acknowledge, resolve or shelve every alert a filter matches',
      example: { action: 'acknowledge', filter: { status: ['active'], level: ['warning'] }, note: 'Seen during the morning round' },
      description: 'Each change is audited on its own. Alerts the move does not apply to are skipped. At most 5000 alerts per call.',
      tags,
      schemas: { body: AlertBulk, response: { 200: AlertBulkResult } },
      handler: ({ body, user }) => alerts.bulk(body, user),
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/alerts/:id',
      access: 'operator',
      summary: 'Delete an alert',
      description: 'Removes the alert; the deletion is audited.',
      tags,
      schemas: { params: IdParams, response: { 204: Type.Null(), 404: ErrorBody } },
      handler: ({ params, user }) => {
        alerts.delete(params.id, user);
        return new Reply(204, null);
      },
    }),
  ];
}
