// The metering context, built once by the composition root: the interval store and its stored-day reader, the meter
// directory, suspect runs, the history import and the restatement of stored costs (buildMetering, built on pricing's
// tariffs and the site's time zone, both handed in); the time-zone move; and the collector with its data-problem watch
// (buildCollection, built last of the data path, after the demand watch and load shedding it asks after each collection).
import type { IotGateway } from '../gateway/index.ts';
import type { Tariffs } from '../pricing/index.ts';
import type { Actor, AuditLog } from '../platform/db/auditTrail.ts';
import type { Db } from '../platform/db/client.ts';
import type { Config } from '../platform/config.ts';
import type { RouteGroups } from '../platform/http/route.ts';
import type { Module } from '../platform/jobs/module.ts';
import type { Logger } from '../platform/logger.ts';
import { Collector } from './collector.ts';
import { EDGE_WRITE_MS } from './collectorHold.ts';
import { DataWatch } from './dataWatch.ts';
import { HistoryImport } from './historyImport.ts';
import { ImportJobs } from './importJobs.ts';
import { historyImportRoutes, type HistoryImportRouteNeeds } from './importRoutes.ts';
import { meterRoutes, type MeterRouteNeeds } from './meterRoutes.ts';
import { MeterDirectory, type MeterAreaCards } from './meters.ts';
import { restateCosts, type Restatement } from './restate.ts';
import { collectorRoutes, suspectRunRoutes, type CollectorRouteNeeds, type SuspectRunRouteNeeds } from './routes.ts';
import { SuspectRuns } from './suspectRuns.ts';
import { IntervalStore } from './store.ts';
import { StoredDays } from './storedDays.ts';
import { TimeZoneMove, type ZoneKeyedDays } from './rezone.ts';

/** Re-prices the stored days a back-dated tariff or calorific version covers, audited (issue 41). */
export type Restate = (scope: Parameters<typeof restateCosts>[1], actor: Actor | null) => Promise<Restatement>;

/** The stored side of metering: what the service and the report worker build over one connection each. */
export type MeterStore = {
  /** The one writer of the stored day rows. */
  store: IntervalStore;
  /** The reader of the stored day and month rows: the one every figure, export and analysis reads them through. */
  days: StoredDays;
  meters: MeterDirectory;
  /** Suspect runs (a flat zero on a meter that reads more): found by the import and the collector's watch, confirmed by a person. */
  suspects: SuspectRuns;
  history: HistoryImport;
  /** The history import as background jobs (progress, cancel): the staff app's import screen (issue 52). */
  importJobs: ImportJobs;
  restate: Restate;
};

export type MeterStoreNeeds = {
  db: Db;
  audit: AuditLog;
  /** Pricing's tariff versions: the store prices each day row as it writes it. */
  tariffs: Tariffs;
  /** The site's time zone (the site settings, a port the root hands in: metering sits below site). */
  timezone: () => string;
  /** Energy's area cards (a port: energy owns them and is built after metering; energy's meterAreaCards). */
  cards: MeterAreaCards;
};

/** The stored side over one connection (the service's, or the report worker's read-only one). */
export function buildMeterStore({ db, audit, tariffs, timezone, cards }: MeterStoreNeeds): MeterStore {
  const store = new IntervalStore(db, tariffs, timezone);
  // The one construction site of the stored-day reader (test/structure/composition.test.ts).
  const days = new StoredDays(db, timezone, () => store.heldDays());
  // A meter write schedules its virtual meters' rebuild through a closure: the directory stays free of the queue's type.
  const meters = new MeterDirectory(db, audit, cards, (meter) => store.rebuilds.schedule(meter));
  const suspects = new SuspectRuns(db, store, timezone, audit);
  const history = new HistoryImport({ store, meters, audit, timezone, suspects });
  const restate: Restate = (scope, actor) => restateCosts({ db, store, audit }, scope, actor);
  return { store, days, meters, suspects, history, importJobs: new ImportJobs(history), restate };
}

export type Metering = MeterStore & {
  /** Re-keys stored energy when the site time zone changes; the collector pauses for it. */
  zoneMove: TimeZoneMove;
  /** The site settings' price made the electricity tariff from today while the site has none of its own, today's costs restated (issue 52). */
  setupPrice: (price: number, actor: Actor | null) => Promise<void>;
};

/** The metering context's stored side as the composition root builds it, with the time-zone move; its routes. */
export function buildMetering(needs: MeterStoreNeeds & { logger: Logger; iot: IotGateway; zoneKeyed: ZoneKeyedDays }): Module<Metering> {
  const { db, tariffs, timezone, logger, iot, zoneKeyed } = needs;
  const stored = buildMeterStore(needs);
  const { store, restate, meters, history, importJobs, suspects } = stored;
  const setupPrice = async (price: number, actor: Actor | null) => {
    const version = tariffs.setupPrice(price, actor ?? { id: null, username: 'system' });
    const span = version && tariffs.restatedDays(version);
    if (version && span) await restate({ ...span, commodity: 'electricity', reason: { resource: 'tariff_versions', resourceId: version.id } }, actor);
  };
  const zoneMove = new TimeZoneMove({ db, store, timezone, logger, zoneKeyed });
  return {
    context: 'metering',
    services: { ...stored, zoneMove, setupPrice },
    routes: { meters: meterRoutes({ meters, iot }), historyImport: historyImportRoutes({ history, importJobs }), suspectRuns: suspectRunRoutes({ suspects }) },
  };
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

export type MeteringRouteNeeds = MeterRouteNeeds & HistoryImportRouteNeeds & CollectorRouteNeeds & SuspectRunRouteNeeds;

/** Metering's route tables: meters, the history import, the collector's state (GET /api/energy/collector), the suspect runs. */
export function meteringRouteGroups(needs: MeteringRouteNeeds): RouteGroups {
  return {
    meters: meterRoutes(needs),
    historyImport: historyImportRoutes(needs),
    collector: collectorRoutes(needs),
    suspectRuns: suspectRunRoutes(needs),
  };
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
    routes: { collector: collectorRoutes({ collector }) },
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
