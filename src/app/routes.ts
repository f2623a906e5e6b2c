// Every route of the service, in one list: the router, the public allow-list and the OpenAPI document come from it.
import { authRoutes, oauthRoutes, userRoutes, auditRoutes, avatarRoutes } from '../access/index.ts';
import { healthRoutes, backupRoutes } from '../operations/index.ts';
import { alertRoutes, faultRoutes, alarmRoutes, alarmAreaRoutes, maintenanceRoutes } from '../facility/index.ts';
import { reportRoutes, exportRoutes } from '../reporting/index.ts';
import { dashboardRoutes, wallboardRoutes, overviewRoutes } from '../screens/index.ts';
import { energyRoutes, commodityRoutes } from '../energy/index.ts';
import { analysisRoutes } from '../analysis/index.ts';
import { billingRoutes } from '../billing/index.ts';
import { configRoutes } from '../site/index.ts';
import { fileRoutes, modelRoutes } from '../files/index.ts';
import { iotRoutes } from '../gateway/index.ts';
import type { AppDeps } from './appDeps.ts';
import type { AnyRoute } from '../platform/http/route.ts';

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
