// /api/dashboard: the public portal payload (no token), recent alerts and each user's own dashboard settings.
import type { DashboardService } from './service.ts';
import { defineRoute } from '../../platform/http/route.ts';
import { ErrorBody } from '../../platform/http/schemas.ts';
import { DashboardSettings, DashboardSettingsUpdate, PublicDashboard, RecentAlerts, RecentAlertsQuery } from './schemas.ts';
import { DASHBOARD_ALERTS_EXAMPLE, DASHBOARD_EXAMPLE } from '../examples/responses.ts';

const tags = ['dashboard'];

export type DashboardRouteNeeds = { dashboard: DashboardService };

export function dashboardRoutes({ dashboard }: DashboardRouteNeeds) {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/dashboard',
      responseExample: DASHBOARD_EXAMPLE,
      access: 'public',
      // The payload object is cached between writes: its validated JSON is sent again as long as it is the same object.
      reusesBody: true,
      summary: 'Read-only dashboard payload for the public portal (no token needed)',
      description:
        'Platform name, KPI cards, weekly energy, area cards, the 3D scene and the titles and levels of the latest alerts. ' +
        'Carries no personal data. Wall screens may poll it; it is recomputed when the data changed, at most about once a second otherwise.',
      tags,
      schemas: { response: { 200: PublicDashboard } },
      handler: () => dashboard.publicPayload(),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/dashboard/alerts',
      responseExample: DASHBOARD_ALERTS_EXAMPLE,
      access: 'viewer',
      summary: 'Recent alerts, newest first',
      description:
        'The most recent alerts for the dashboard widget, a page at a time (page and pageSize, as every list). `limit`, the earlier page size, still works and is deprecated. Changes nothing.',
      tags,
      schemas: { query: RecentAlertsQuery, response: { 200: RecentAlerts, 400: ErrorBody } },
      handler: ({ query }) => dashboard.recentAlerts(query),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/dashboard/settings',
      access: 'viewer',
      summary: "The caller's dashboard settings (defaults until first saved)",
      description: "The caller's own layout, refresh interval and theme; the defaults until they first save. Changes nothing.",
      tags,
      schemas: { response: { 200: DashboardSettings } },
      handler: ({ user }) => dashboard.settings(user.id),
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/dashboard/settings',
      access: 'viewer',
      summary: "Update the caller's dashboard settings (partial)",
      example: { layout: [{ id: 'energy-today', type: 'energy', x: 0, y: 0, w: 6, h: 4 }], refreshIntervalSec: 30, theme: 'dark' },
      description: 'Widget ids must be unique within the layout; the layout may take at most 64 KiB as JSON.',
      tags,
      schemas: { body: DashboardSettingsUpdate, response: { 200: DashboardSettings, 400: ErrorBody } },
      handler: ({ user, body }) => dashboard.updateSettings(user, body),
    }),
  ];
}
