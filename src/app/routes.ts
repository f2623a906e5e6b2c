// Every route of the service, in one list: the router, the public allow-list and the OpenAPI document come from it.
import type { AppDeps } from './appDeps.ts';
import type { AnyRoute } from '../platform/http/route.ts';
import { authRoutes } from '../access/auth/routes.ts';
import { healthRoutes } from '../operations/health/routes.ts';
import { backupRoutes } from '../operations/backup/routes.ts';
import { oauthRoutes } from '../access/oauth/routes.ts';
import { alertRoutes } from '../facility/alerts/routes.ts';
import { faultRoutes } from '../facility/faults/routes.ts';
import { alarmRoutes } from '../facility/notifications/routes.ts';
import { alarmAreaRoutes } from '../facility/alarmAreas/routes.ts';
import { maintenanceRoutes } from '../facility/maintenance/routes.ts';
import { reportRoutes } from '../reporting/reports/routes.ts';
import { userRoutes } from '../access/users/routes.ts';
import { auditRoutes } from '../access/audit/routes.ts';
import { dashboardRoutes } from '../screens/dashboard/routes.ts';
import { wallboardRoutes } from '../screens/wallboard/routes.ts';
import { overviewRoutes } from '../screens/overview/routes.ts';
import { energyRoutes } from '../energy/routes.ts';
import { commodityRoutes } from '../energy/commodityRoutes.ts';
import { analysisRoutes } from '../analysis/routes.ts';
import { billingRoutes } from '../billing/routes.ts';
import { configRoutes } from '../site/routes.ts';
import { fileRoutes } from '../files/routes.ts';
import { modelRoutes } from '../files/models/routes.ts';
import { avatarRoutes } from '../access/users/avatarRoutes.ts';
import { iotRoutes } from '../gateway/routes.ts';
import { exportRoutes } from '../reporting/exports/routes.ts';

export function allRoutes(deps: AppDeps): AnyRoute[] {
  return [
    ...healthRoutes(deps),
    ...backupRoutes(deps),
    ...authRoutes(deps),
    ...oauthRoutes(deps),
    ...alertRoutes(deps),
    ...faultRoutes(deps),
    ...alarmRoutes(deps),
    ...alarmAreaRoutes(deps),
    ...maintenanceRoutes(deps),
    ...reportRoutes(deps),
    ...userRoutes(deps),
    ...auditRoutes(deps),
    ...dashboardRoutes(deps),
    ...wallboardRoutes(deps),
    ...overviewRoutes(deps),
    ...energyRoutes(deps),
    ...commodityRoutes(deps),
    ...analysisRoutes(deps),
    ...billingRoutes(deps),
    ...configRoutes(deps),
    ...fileRoutes(deps),
    ...modelRoutes(deps),
    ...avatarRoutes(deps),
    ...iotRoutes(deps),
    ...exportRoutes(deps),
  ];
}

/** The public allow-list as "METHOD /path/pattern" strings, derived from the route table. */
export function publicRoutes(routes: AnyRoute[]): string[] {
  return routes.filter((route) => route.access === 'public').map((route) => `${route.method} ${route.path}`);
}
