// The gateway context, built by the composition root right after the floor: the client (or the built-in simulator)
// and its probe. startIotGateway registers its own close hooks (simulator, client) as it starts them.
import type { AuditLog } from '../platform/db/auditTrail.ts';
import type { Db } from '../platform/db/client.ts';
import type { Config } from '../platform/config.ts';
import type { Lifecycle } from '../platform/jobs/lifecycle.ts';
import type { RouteGroups } from '../platform/http/route.ts';
import type { Module } from '../platform/jobs/module.ts';
import type { Logger } from '../platform/logger.ts';
import { iotRoutes, type IotRouteNeeds } from './routes.ts';
import { startIotGateway, type IotGateway } from './service.ts';

export type GatewayNeeds = { config: Config; db: Db; logger: Logger; audit: AuditLog; lifecycle: Lifecycle };

/** The gateway's route tables: the /api/iot proxy. */
export function gatewayRouteGroups(needs: IotRouteNeeds): RouteGroups {
  return { iot: iotRoutes(needs) };
}

export async function buildGateway(needs: GatewayNeeds): Promise<Module<{ iot: IotGateway }>> {
  const iot = await startIotGateway(needs);
  // The probe is started by the gateway itself (it runs only against a real gateway); listed here.
  return { context: 'gateway', services: { iot }, running: iot.probeJob ? [{ jobs: [iot.probeJob] }] : [], routes: gatewayRouteGroups({ iot }) };
}
