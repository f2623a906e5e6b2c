// The fleet sync, built once by the composition root: it ticks always and sends only while the box is joined (the
// link row); a join or leave needs no restart.
import type { Db } from '../platform/db/client.ts';
import type { Config } from '../platform/config.ts';
import { Repeating } from '../platform/jobs/lifecycle.ts';
import type { Module } from '../platform/jobs/module.ts';
import type { Logger } from '../platform/logger.ts';
import type { HeldDay } from '../metering/index.ts';
import type { FleetAlertPort } from './fleetAcks.ts';
import { identityOf } from './identity.ts';
import { FleetSync, type SyncHealth } from './sync.ts';

export function buildFleetSync({
  config,
  db,
  logger,
  health,
  held,
  alerts,
}: {
  config: Config;
  db: Db;
  logger: Logger;
  health: SyncHealth;
  /** What the collector holds ahead of its rows (IntervalStore.heldDays), sent between its hourly writes. */
  held?: () => readonly HeldDay[];
  /** The box's alerts: a fleet user's acknowledgement, carried in the fleet's answer, is made here (fleetAcks.ts). */
  alerts?: FleetAlertPort;
}): Module<{ fleetSync: FleetSync }> {
  // The box's install id and credential key are made at its first start (beside the database, never in a backup).
  identityOf(db);
  const fleetSync = new FleetSync({
    db,
    logger,
    catchUpDelayMs: config.fleetSync.catchUpDelayMs,
    intervalMs: config.fleetSync.intervalMs,
    health,
    held,
    alerts,
  });
  const ticks = new Repeating(
    () => fleetSync.tick().catch((error) => logger.error({ err: error }, 'fleet sync failed')),
    // It looks every 30 s at most (a join is noticed soon); it sends every EMS_FLEET_SYNC_INTERVAL (FleetSync decides).
    Math.min(30_000, config.fleetSync.intervalMs),
    'fleet sync',
  );
  // Listed under "fleet", as before the module (the /metrics owner label).
  return { context: 'fleet', services: { fleetSync }, running: [{ name: 'fleet sync', start: () => ticks.start(), jobs: [ticks], stop: () => ticks.stop() }] };
}
