// Every route of the service, in one published order: the router, the public allow-list and the OpenAPI document come
// from it. Each context's module returns its route tables by key (src/<context>/module.ts, collected by compose.ts);
// ROUTE_ORDER puts them in the order the API has always been published in (the API reference and the staff app's
// generated types, src/web/app/api/schema.d.ts, follow it), whatever order the contexts are built in.
import { accessRouteGroups } from '../access/index.ts';
import { operationsRouteGroups } from '../operations/index.ts';
import { facilityRouteGroups } from '../facility/index.ts';
import { reportingRouteGroups } from '../reporting/index.ts';
import { screensRouteGroups } from '../screens/index.ts';
import { energyRouteGroups } from '../energy/index.ts';
import { meteringRouteGroups } from '../metering/index.ts';
import { pricingRouteGroups } from '../pricing/index.ts';
import { analysisRouteGroups } from '../analysis/index.ts';
import { billingRouteGroups } from '../billing/index.ts';
import { siteRouteGroups } from '../site/index.ts';
import { filesRouteGroups } from '../files/index.ts';
import { gatewayRouteGroups } from '../gateway/index.ts';
import { faultDetectionRouteGroups } from '../faultDetection/index.ts';
import type { AnyRoute, RouteGroups } from '../platform/http/route.ts';

/** The route tables' keys in their published order: each key is given by exactly one module. */
export const ROUTE_ORDER = [
  'health',
  'backup',
  'auth',
  'oauth',
  'alerts',
  'faults',
  'alarms',
  'alarmAreas',
  'maintenance',
  'reports',
  'users',
  'audit',
  'dashboard',
  'wallboard',
  'overview',
  'events',
  'energyAreas',
  'meters',
  'tariffs',
  'energy',
  'historyImport',
  'collector',
  'suspectRuns',
  'commodities',
  'analysis',
  'billing',
  'configs',
  'files',
  'models',
  'avatars',
  'iot',
  'exports',
  'faultDetection',
] as const;

/**
 * The modules' route tables as one list in ROUTE_ORDER. A key given twice, a key the list does not have or a listed
 * key no module gives is a mistake of the composition, refused at start.
 */
export function orderRoutes(groups: RouteGroups[]): AnyRoute[] {
  const order: readonly string[] = ROUTE_ORDER;
  const byKey = new Map<string, AnyRoute[]>();
  for (const group of groups)
    for (const [key, routes] of Object.entries(group)) {
      if (byKey.has(key)) throw new Error(`route table "${key}" is given by two modules`);
      if (!order.includes(key)) throw new Error(`route table "${key}" has no place in ROUTE_ORDER (src/app/routes.ts)`);
      byKey.set(key, routes);
    }
  const missing = order.filter((key) => !byKey.has(key));
  if (missing.length) throw new Error(`no module gives the route tables ${missing.join(', ')}`);
  return order.flatMap((key) => byKey.get(key)!);
}

/** Each context's route tables from its declared needs: the same functions its module.ts calls with its services. */
const CONTEXT_ROUTES = [
  operationsRouteGroups,
  accessRouteGroups,
  facilityRouteGroups,
  reportingRouteGroups,
  screensRouteGroups,
  energyRouteGroups,
  meteringRouteGroups,
  pricingRouteGroups,
  analysisRouteGroups,
  billingRouteGroups,
  siteRouteGroups,
  filesRouteGroups,
  gatewayRouteGroups,
  faultDetectionRouteGroups,
] as const;

/** Everything some route table needs: what the route tables of every context declare, together. */
export type RouteNeeds = UnionToIntersection<Parameters<(typeof CONTEXT_ROUTES)[number]>[0]>;
type UnionToIntersection<U> = (U extends unknown ? (union: U) => void : never) extends (intersection: infer I) => void ? I : never;

/** Every context's route tables built from one object holding all their needs, in ROUTE_ORDER. */
export function routeTables(needs: RouteNeeds): AnyRoute[] {
  return orderRoutes(CONTEXT_ROUTES.map((routesOf) => routesOf(needs)));
}

/** The public allow-list as "METHOD /path/pattern" strings, derived from the route table. */
export function publicRoutes(routes: AnyRoute[]): string[] {
  return routes.filter((route) => route.access === 'public').map((route) => `${route.method} ${route.path}`);
}
