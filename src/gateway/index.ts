// The face of gateway/: what the other contexts use of it. Imports from outside gateway/ come through this file
// (test/structure/importGraph.test.ts); what is not listed here is gateway's own business.
export { IotHealthSchema } from './schemas.ts';
export type { IotGateway, IotHealth } from './service.ts';
export {
  gatewayPort,
  GatewayRefused,
  type AlarmPage,
  type AlarmRow,
  type GatewayPort,
  type HistoryOnGrid,
  type HistoryPoint,
  type PointInfo,
  type PointValue,
  type SetOutcome,
} from './port.ts';
export { buildGateway, gatewayRouteGroups, type GatewayNeeds } from './module.ts';
