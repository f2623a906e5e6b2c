// One answer to "is the gateway working" for health, emsctl status and the public dashboard: a gateway that answers
// while the meter collection fails (503 to every read, garbage) is degraded, not reachable.
import type { CollectorStatus } from '../../metering/index.ts';
import type { IotHealth } from '../../gateway/index.ts';

export type GatewayCondition = 'reachable' | 'degraded' | 'unreachable' | 'unknown';

export function gatewayCondition(iot: Pick<IotHealth, 'gateway'>, collector: Pick<CollectorStatus, 'state'>): GatewayCondition {
  if (iot.gateway === 'reachable' && collector.state === 'failing') return 'degraded';
  return iot.gateway;
}

/** The public pages' word for it (dashboard and wallboard alike): up, degraded, down or unknown. */
export type PublicGatewayState = 'up' | 'degraded' | 'down' | 'unknown';

export function publicGatewayState(iot: Pick<IotHealth, 'gateway'>, collector: Pick<CollectorStatus, 'state'>): PublicGatewayState {
  const condition = gatewayCondition(iot, collector);
  return condition === 'reachable' ? 'up' : condition === 'unreachable' ? 'down' : condition;
}
