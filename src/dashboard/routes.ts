// /api/dashboard: the public portal payload (no token), recent alerts and each user's own dashboard settings.
import type { AppDeps } from '../appDeps.ts';
import { ConfigStore } from '../configs/service.ts';
import { defineRoute } from '../http/route.ts';
import { gatewayCondition } from '../health/gatewayCondition.ts';
import { ErrorBody } from '../http/schemas.ts';
import { OverviewService } from '../overview/service.ts';
import { DashboardSettings, DashboardSettingsUpdate, PublicDashboard, RecentAlerts, RecentAlertsQuery } from './schemas.ts';
import { DashboardService } from './service.ts';

const tags = ['dashboard'];

export function dashboardRoutes({ db, audit, iot, energy, collector }: AppDeps) {
  const dashboard = new DashboardService(db, audit, {
    configs: new ConfigStore(db, audit),
    energy: energy.areas,
    overview: new OverviewService(db, energy.figures),
    gateway: () => {
      const health = iot.health();
      const collected = collector.health();
      const gateway = gatewayCondition(health, collected);
      return { state: gateway === 'reachable' ? 'up' : gateway === 'unreachable' ? 'down' : gateway, checkedAt: health.checkedAt, dataAt: collected.lastOkAt };
    },
  });
  return [
    defineRoute({
      method: 'GET',
      path: '/api/dashboard',
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
      access: 'viewer',
      summary: 'Recent alerts, newest first',
      tags,
      schemas: { query: RecentAlertsQuery, response: { 200: RecentAlerts, 400: ErrorBody } },
      handler: ({ query }) => ({ items: dashboard.recentAlerts(query) }),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/dashboard/settings',
      access: 'viewer',
      summary: "The caller's dashboard settings (defaults until first saved)",
      tags,
      schemas: { response: { 200: DashboardSettings } },
      handler: ({ user }) => dashboard.settings(user.id),
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/dashboard/settings',
      access: 'viewer',
      summary: "Update the caller's dashboard settings (partial)",
      description: 'Widget ids must be unique within the layout; the layout may take at most 64 KiB as JSON.',
      tags,
      schemas: { body: DashboardSettingsUpdate, response: { 200: DashboardSettings, 400: ErrorBody } },
      handler: ({ user, body }) => dashboard.updateSettings(user, body),
    }),
  ];
}
