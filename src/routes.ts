// Every route of the service, in one list: the router, the public allow-list and the OpenAPI document come from it.
import type { AppDeps } from './appDeps.ts';
import type { AnyRoute } from './http/route.ts';
import { authRoutes } from './auth/routes.ts';
import { healthRoutes } from './health/routes.ts';
import { backupRoutes } from './backup/routes.ts';
import { oauthRoutes } from './oauth/routes.ts';
import { alertRoutes } from './alerts/routes.ts';
import { faultRoutes } from './faults/routes.ts';
import { alarmRoutes } from './alarms/routes.ts';
import { maintenanceRoutes } from './maintenance/routes.ts';
import { reportRoutes } from './reports/routes.ts';
import { userRoutes } from './users/routes.ts';
import { auditRoutes } from './audit/routes.ts';
import { dashboardRoutes } from './dashboard/routes.ts';
import { wallboardRoutes } from './wallboard/routes.ts';
import { overviewRoutes } from './overview/routes.ts';
import { energyRoutes } from './energy/routes.ts';
import { commodityRoutes } from './energy/commodityRoutes.ts';
import { analysisRoutes } from './analysis/routes.ts';
import { configRoutes } from './configs/routes.ts';
import { fileRoutes } from './files/routes.ts';
import { modelRoutes } from './models/routes.ts';
import { avatarRoutes } from './users/avatarRoutes.ts';
import { iotRoutes } from './iot/routes.ts';
import { exportRoutes } from './exports/routes.ts';

export function allRoutes(deps: AppDeps): AnyRoute[] {
  return [
    ...healthRoutes(deps),
    ...backupRoutes(deps),
    ...authRoutes(deps),
    ...oauthRoutes(deps),
    ...alertRoutes(deps),
    ...faultRoutes(deps),
    ...alarmRoutes(deps),
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
