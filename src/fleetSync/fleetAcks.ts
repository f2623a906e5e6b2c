// Alerts acknowledged from the fleet (issue 55 item 5): the fleet's answer to a stored batch may name alerts of this box
// that a fleet user acknowledged in the portfolio (`acknowledgeAlerts`; an older fleet sends none). The box acknowledges
// each itself, through its alerts service (the audit trail and the alert's note name the fleet user), only while the
// alert is the one asked about (same id and time, still active); its next batch carries the alert acknowledged, which
// is how the fleet learns it is done. A request for an alert acknowledged, resolved or deleted meanwhile is skipped.
import { Conflict, NotFound } from '../platform/errors.ts';

export type FleetAck = { id: number; occurredAt: string; by: string; at: string };

/** What the box's alerts service does for a fleet acknowledgement (the composition root hands it in). */
export type FleetAlertPort = {
  get(id: number): { status: string; occurredAt: string };
  transition(id: number, to: 'acknowledged', actor: { id: null; username: string }, note?: string): unknown;
};

/** At most this many are taken from one answer (the fleet sends at most 100: ACKS_PER_ANSWER). */
export const MAX_FLEET_ACKS = 100;

const instant = (value: unknown): value is string => typeof value === 'string' && value.length <= 40 && Number.isFinite(Date.parse(value));

/** The well-formed requests of a fleet answer; anything else in it is ignored. */
export function fleetAcksIn(answer: unknown): FleetAck[] {
  const list = (answer as { acknowledgeAlerts?: unknown } | null)?.acknowledgeAlerts;
  if (!Array.isArray(list)) return [];
  return list.slice(0, MAX_FLEET_ACKS).filter((item): item is FleetAck => {
    const ack = item as Partial<FleetAck> | null;
    return (
      Number.isSafeInteger(ack?.id) &&
      (ack!.id as number) > 0 &&
      instant(ack!.occurredAt) &&
      instant(ack!.at) &&
      typeof ack!.by === 'string' &&
      ack!.by.length > 0 &&
      ack!.by.length <= 200
    );
  });
}

/** Acknowledges each alert asked about that is still the one asked about and active; answers how many it moved. */
export function acknowledgeFromFleet(alerts: FleetAlertPort, acks: readonly FleetAck[]): number {
  let moved = 0;
  for (const ack of acks) {
    try {
      const alert = alerts.get(ack.id);
      if (alert.status !== 'active' || Date.parse(alert.occurredAt) !== Date.parse(ack.occurredAt)) continue;
      alerts.transition(ack.id, 'acknowledged', { id: null, username: `${ack.by} (fleet)` }, `Acknowledged from the fleet by ${ack.by} at ${ack.at}`);
      moved++;
    } catch (error) {
      // Deleted, or moved by someone on the box meanwhile: nothing left to do.
      if (!(error instanceof NotFound) && !(error instanceof Conflict)) throw error;
    }
  }
  return moved;
}
