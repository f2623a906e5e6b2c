// The face of fleetSync/: what the other contexts use of it. Imports from outside fleetSync/ come through this file
// (test/structure/importGraph.test.ts); what is not listed here is fleetSync's own business.
export { syncState } from './link.ts';
export { FleetSync, type SyncHealth } from './sync.ts';
export { buildFleetSync } from './module.ts';
