// The gateway context, built by the composition root right after the floor: the client (or the built-in simulator it
// talks to) and its reachability probe, returned as running parts like every other context's.
import type { AuditLog } from '../platform/db/auditTrail.ts';
import type { Db } from '../platform/db/client.ts';
import type { Config } from '../platform/config.ts';
import type { RouteGroups } from '../platform/http/route.ts';
import type { Module, Running } from '../platform/jobs/module.ts';
import type { Logger } from '../platform/logger.ts';
import { iotRoutes, type IotRouteNeeds } from './routes.ts';
import { IotGateway } from './service.ts';
import { startGatewaySimulator, type RunningSimulator } from './simulator/server.ts';

export type GatewayNeeds = { config: Config; db: Db; logger: Logger; audit: AuditLog };

/** The gateway's route tables: the /api/iot proxy. */
export function gatewayRouteGroups(needs: IotRouteNeeds): RouteGroups {
  return { iot: iotRoutes(needs) };
}

/**
 * The proxy to EMS_IOT_BASE_URL. With `sim`, the built-in simulator listens on a loopback port of this process and the
 * proxy talks to it over real HTTP like to any gateway: it is started here, as the module is built, because the client
 * is built on its URL; its close hook is the module's first part (it closes after the client).
 */
export async function buildGateway({ config, db, logger, audit }: GatewayNeeds): Promise<Module<{ iot: IotGateway }>> {
  let simulator: RunningSimulator | undefined;
  if (config.iot.baseUrl === 'sim') {
    simulator = await startGatewaySimulator({
      host: '127.0.0.1',
      port: 0,
      username: config.iot.username,
      password: config.iot.password,
      subMeters: config.simMeters,
      equipment: config.simEquipment ? {} : undefined,
    });
    logger.info({ url: simulator.url, subMeters: config.simMeters }, 'IoT gateway simulator started');
  }
  let iot: IotGateway;
  try {
    iot = new IotGateway({
      baseUrl: simulator?.url ?? config.iot.baseUrl,
      timeoutMs: config.iot.timeoutMs,
      credentials: { username: config.iot.username, password: config.iot.password },
      db,
      logger,
      audit,
    });
  } catch (error) {
    await simulator?.close();
    throw error;
  }
  iot.simulator = simulator;
  const running: Running[] = [];
  if (simulator) {
    const started = simulator;
    running.push({ name: 'IoT gateway simulator', stop: () => started.close() });
  }
  running.push({ name: 'IoT gateway client', start: () => iot.probeJob.start(), jobs: [iot.probeJob], stop: () => iot.close() });
  return { context: 'gateway', services: { iot }, running, routes: gatewayRouteGroups({ iot }) };
}
