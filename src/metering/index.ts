// The face of metering/: what the other contexts use of it. Imports from outside metering/ come through this file
// (test/structure/importGraph.test.ts); what is not listed here is metering's own business.
export { Collector } from './collector.ts';
export { EDGE_WRITE_MS } from './collectorHold.ts';
export { forgetAcknowledgedDrops } from './droppedDays.ts';
export type { CollectorStatus } from './collectorHealth.ts';
export { DataWatch } from './dataWatch.ts';
export { HistoryImport } from './historyImport.ts';
export { ImportJobs, type ImportJob } from './importJobs.ts';
export { KWH_SCALE, decodeValuesInto, quantize } from './intervalCodec.ts';
export { MeterDirectory, SITE_TOTAL, commodityOf, type Meter, type MeterAreaCards, type MeterSummary } from './meters.ts';
export { FUTURE_TOLERANCE_MS } from './readingCheck.ts';
export { StoredDays, type DecodedDay, type MeterIdsJson } from './storedDays.ts';
export { SuspectRuns, type SuspectRun } from './suspectRuns.ts';
export { restateCosts, type Restatement } from './restate.ts';
export { TimeZoneMove, type ZoneKeyedDays } from './rezone.ts';
export {
  FLAG_ESTIMATED,
  FLAG_IMPORTED,
  FLAG_SUSPECT,
  type HeldDay,
  IntervalStore,
  SLICE_MS,
  storedFlags,
  storedKwh,
  storedMaxKw,
  yieldToLoop,
  type OpenIntervals,
} from './store.ts';
export {
  buildMetering,
  buildMeterStore,
  buildCollection,
  meteringRouteGroups,
  type CollectionNeeds,
  type Metering,
  type MeterStore,
  type MeteringRouteNeeds,
  type Restate,
} from './module.ts';
export { AreaName } from './schemas.ts';
export { ensureSimulatorMeters } from './simulatorMeters.ts';
export { meterAreas } from './meterAreas.ts';
export { meterCommodity } from './meterCommodity.ts';
