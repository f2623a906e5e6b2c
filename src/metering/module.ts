// The metering context's running side, built once by the composition root: the time-zone move (built with the
// features: the site settings re-zone through it) and the collector with its data-problem watch (built last of the
// data path, after the demand watch and load shedding it asks after each collection).
import type { IotGateway } from '../gateway/index.ts';
import type { Db } from '../platform/db/client.ts';
import type { Config } from '../platform/config.ts';
import type { RouteGroups } from '../platform/http/route.ts';
import type { Module } from '../platform/jobs/module.ts';
import type { Logger } from '../platform/logger.ts';
import { Collector, EDGE_WRITE_MS } from './collector.ts';
import { DataWatch } from './dataWatch.ts';
import type { HistoryImport } from './historyImport.ts';
import { collectorRoutes, suspectRunRoutes, type CollectorRouteNeeds, type SuspectRunRouteNeeds } from './routes.ts';
import type { SuspectRuns } from './suspectRuns.ts';
import type { IntervalStore } from './store.ts';
import { TimeZoneMove } from './rezone.ts';

export function buildMetering({
  db,
  store,
  timezone,
  logger,
}: {
  db: Db;
  store: IntervalStore;
  timezone: () => string;
  logger: Logger;
}): Module<{ zoneMove: TimeZoneMove }> {
  /** Re-keys stored energy when the site time zone changes; the collector pauses for it. */
  return { context: 'metering', services: { zoneMove: new TimeZoneMove({ db, store, timezone, logger }) } };
}

export type CollectionNeeds = {
  config: Config;
  db: Db;
  logger: Logger;
  iot: IotGateway;
  store: IntervalStore;
  timezone: () => string;
  history: Pick<HistoryImport, 'takeTurnsWith' | 'afterSuspects'>;
  /** Suspect runs (issue 52): the data watch looks for them and raises one alert per run. */
  suspects: SuspectRuns;
  zoneMove: TimeZoneMove;
  alerts: ConstructorParameters<typeof DataWatch>[0]['alerts'];
  /** Asked after each good collection: the peak warning (energy's DemandWatch). */
  demand: { check(now: number): void };
  /** Asked after the peak warning, from the same projection (analysis's LoadShedder, issue 25). */
  loadShedder: { evaluate(now: number): Promise<unknown> };
  /** How often what the collector holds is written, asked at every collection (default EDGE_WRITE_MS). */
  writeEveryMs?: () => number;
  /** Meters the simulated building on a first start (energy's ensureSimulatorMeters); run before the first collection. */
  meterSimulator?: () => void;
  /** The collector's clock (tests move it); the box's by default. */
  now?: () => number;
};

/** Metering's route tables: the collector's state (GET /api/energy/collector), the suspect runs. */
export function meteringRouteGroups(needs: CollectorRouteNeeds & SuspectRunRouteNeeds): RouteGroups {
  return { collector: collectorRoutes(needs), suspectRuns: suspectRunRoutes(needs) };
}

/** Async: a time-zone move cut short by a stop is carried to its end before the first collection. */
export async function buildCollection(needs: CollectionNeeds): Promise<Module<{ collector: Collector; dataWatch: DataWatch }>> {
  const { config, db, logger, iot, demand, loadShedder } = needs;
  const collector = new Collector({
    db,
    iot,
    store: needs.store,
    logger,
    intervalMs: config.collectIntervalMs,
    timezone: needs.timezone,
    now: needs.now,
    // Edge boxes run on flash: day rows are written hourly, joined to a fleet or not (its sync sends what is held), not every
    // collection; readers add what is held (docs/performance-edge.md, "When energy is written").
    holdOpenInterval: true,
    writeEveryMs: needs.writeEveryMs ?? (() => EDGE_WRITE_MS),
    afterCollect: (now, ok) => {
      if (ok) demand.check(now);
      if (ok) void loadShedder.evaluate(now);
      dataWatch.check(now);
    },
  });
  const dataWatch = new DataWatch({ db, collector, alerts: needs.alerts, logger, suspects: needs.suspects });
  needs.zoneMove.pauseCollection(collector);
  needs.history.takeTurnsWith(collector);
  // An import's suspect runs are alerts at once, not at the next collection (there may be none: collection off).
  needs.history.afterSuspects(() => dataWatch.suspectsFound(Date.now()));
  await needs.zoneMove.resume();
  const collecting = config.collectIntervalMs > 0;
  if (collecting) needs.meterSimulator?.();
  return {
    context: 'metering',
    services: { collector, dataWatch },
    routes: meteringRouteGroups({ collector, suspects: needs.suspects }),
    running: [
      {
        name: 'energy collector',
        start: collecting ? () => collector.start() : undefined,
        jobs: collecting ? [collector.job] : [],
        stop: () => collector.stop(),
      },
    ],
  };
}
