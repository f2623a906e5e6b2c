// Assembles the running service: data dir, database, then each context's module in build order, the route tables the
// modules return in their published order; listen() and a bounded graceful close().
import { avatarColumns, buildAccess, ensureInitialAdmin, hashPassword, verifyPassword } from '../access/index.ts';
import { applyPendingRestore, auditRestore, holdServiceLock, buildOperations } from '../operations/index.ts';
import { buildGateway, type IotGateway } from '../gateway/index.ts';
import { buildReporting } from '../reporting/index.ts';
import { buildFacility, type AreaSources } from '../facility/index.ts';
import { buildCollection, buildMetering, ensureSimulatorMeters, meterAreas } from '../metering/index.ts';
import { buildFleetSync } from '../fleetSync/index.ts';
import { areaCardNames, buildDemandWatch, buildEnergyModule, meterAreaCards } from '../energy/index.ts';
import { buildPricingModule, buildPricingRoutes } from '../pricing/index.ts';
import { buildAnalysisModule, buildAnomalyChecks, buildLoadShedding, outdoorDaysZoneKeyed } from '../analysis/index.ts';
import { buildBillingModule } from '../billing/index.ts';
import { buildFaultDetection } from '../faultDetection/index.ts';
import { buildSite, sceneModelRef, siteSettings } from '../site/index.ts';
import { buildScreens } from '../screens/index.ts';
import { buildFiles, sceneModels, staticModels, sweepStaleUploads } from '../files/index.ts';
import fs from 'node:fs';
import type http from 'node:http';
import path from 'node:path';
import type Koa from 'koa';
import type { AppDeps } from './appDeps.ts';
import { createApp } from './app.ts';
import { orderRoutes } from './routes.ts';
import type { Config } from '../platform/config.ts';
import type { AuditLog } from '../platform/db/auditTrail.ts';
import { databasePath, ensureDirectory, openDatabase, restrictFileModes, SERVICE_BUSY_TIMEOUT_MS, type Db } from '../platform/db/client.ts';
import { Lifecycle } from '../platform/jobs/lifecycle.ts';
import { JobRegistry } from '../platform/jobs/jobs.ts';
import type { AnyRoute, RouteGroups } from '../platform/http/route.ts';
import { startModule, type Module } from '../platform/jobs/module.ts';
import { buildPlatform } from '../platform/boot/module.ts';
import { bindListener, StartupError, type Listener } from '../platform/http/listener.ts';
import { createLogger, type Logger } from '../platform/logger.ts';

export const DATA_SUBDIRS = ['uploads', 'models', 'avatars', 'backups', 'tmp', 'reports'] as const;

export type Service = {
  app: Koa;
  deps: AppDeps;
  /** The route table the service serves: every module's routes in ROUTE_ORDER (src/app/routes.ts). */
  routes: AnyRoute[];
  server?: http.Server;
  listener?: Listener;
  /** Serves the app on `bound` (bound before the service was created), else binds EMS_HOST:EMS_PORT now. */
  listen(bound?: Listener): Promise<{ url: string; port: number }>;
  /** keepListener: the port stays bound (a restart in the same process, src/app/host.ts). */
  close(options?: { keepListener?: boolean }): Promise<void>;
};

/** How long a shutdown waits for in-flight requests before cutting connections. */
const SHUTDOWN_GRACE_MS = 10_000;

/**
 * Creates the data dir and its subfolders and checks the service may write in each; a problem is one StartupError
 * naming the folder (checked before the database is opened, so nothing is left half made).
 */
export function prepareDataDir(dataDir: string): void {
  let current = dataDir;
  try {
    restrictFileModes(dataDir);
    fs.accessSync(dataDir, fs.constants.W_OK | fs.constants.X_OK);
    for (const sub of DATA_SUBDIRS) {
      current = path.join(dataDir, sub);
      ensureDirectory(current, 0o750);
      fs.accessSync(current, fs.constants.W_OK | fs.constants.X_OK);
    }
    // A database left by a process running as another user (root) would open, then fail on its first write.
    for (const suffix of ['', '-wal', '-shm']) {
      current = databasePath(dataDir) + suffix;
      if (fs.existsSync(current)) fs.accessSync(current, fs.constants.R_OK | fs.constants.W_OK);
    }
  } catch (error) {
    const { code, path: where } = error as NodeJS.ErrnoException;
    if (code === undefined) throw error;
    if (code === 'ENOTDIR' || code === 'EEXIST') throw new StartupError(`EMS_DATA_DIR: ${where ?? current} is not a directory (a file is in the way)`);
    if (code === 'ENOENT' && where) throw new StartupError(`EMS_DATA_DIR: ${where} cannot be created here (ENOENT: its parent takes no new folders)`);
    throw new StartupError(`EMS_DATA_DIR: ${current} is not writable for this service (${code})`);
  }
}

/** The area names facility's alarm areas check against: metering's meters and energy's cards (a port: facility is built first). */
function areaSources(db: Db): AreaSources {
  return { ...meterAreas(db), cardNames: areaCardNames(db) };
}

/**
 * The data path's lower floors, each context by its own module: pricing (tariffs, calorific values), metering's stored
 * side (the interval store, stored days, meters, history import, restatement), pricing's routes (a back-dated tariff
 * restates metering's days), energy's read side. The site's time zone (its settings) is the port they read the site's day through.
 */
function startDataPath(start: <S>(module: Module<S>) => S, needs: { db: Db; audit: AuditLog; logger: Logger; iot: IotGateway; timezone: () => string }) {
  const { db, audit, timezone } = needs;
  const { tariffs, calorific } = start(buildPricingModule({ db, audit, timezone }));
  // Ports: energy's area cards (a meter's area gets its card) and analysis's outdoor days (a zone move drops them).
  const metering = start(buildMetering({ ...needs, tariffs, timezone, cards: meterAreaCards(db), zoneKeyed: outdoorDaysZoneKeyed(db) }));
  start(buildPricingRoutes({ tariffs, restate: metering.restate }));
  const { energy } = start(buildEnergyModule({ db, audit, tariffs, calorific, ...metering }));
  return { timezone, tariffs, calorific, metering, energy, figures: energy.figures };
}

/** What createService takes besides the config. */
type ServiceOptions = {
  logger?: Logger;
  /** The energy collector's clock (tests move it); the box's by default. */
  collectorNow?: () => number;
  /** Where the first-start password's human line goes (main.ts: stderr); unset: the JSON log line only. */
  announce?: (line: string) => void;
  /** Restarts the service in its process (src/app/host.ts): the guided restore asks for it. */
  restart?: () => void;
};

export async function createService(config: Config, options: ServiceOptions = {}): Promise<Service> {
  const logger = options.logger ?? createLogger(config.logLevel);
  const { serviceLock, restored } = claimDataDir(config.dataDir, logger);
  const db = openServiceDatabase(config, () => serviceLock.release());
  const lifecycle = new Lifecycle();
  // Every periodic job, by name, as it is started (/metrics lists them: ems_job_*).
  const jobs = new JobRegistry();
  lifecycle.onClose('service lock', () => serviceLock.release());
  // Every module's route tables, as each is started; published in ROUTE_ORDER, not in this order.
  const routeTables: RouteGroups[] = [];
  /** Starts a built module's jobs and registers its close hooks, in order (they close in reverse); returns its services. */
  const start = <S>(module: Module<S>): S => {
    if (module.routes) routeTables.push(module.routes);
    return startModule(module, lifecycle, jobs);
  };
  const { deps, auth, metrics, configs } = await startContexts(start, { config, db, logger, lifecycle, jobs, restored, options });

  let routes: AnyRoute[];
  try {
    // A route table left out of ROUTE_ORDER (or given twice) stops the start here, with the jobs closed again.
    routes = orderRoutes(routeTables);
    await ensureInitialAdmin(db, config.dataDir, logger, { hash: hashPassword, verify: verifyPassword }, options.announce, config.publicUrl);
  } catch (error) {
    await lifecycle.close(() => {});
    throw error;
  }

  // Nothing is uploading yet: temp files in tmp/ are leftovers of a crash.
  const staleUploads = sweepStaleUploads(path.join(config.dataDir, 'tmp'));
  if (staleUploads > 0) logger.warn({ removed: staleUploads }, 'removed unfinished uploads left by an earlier run');
  const app = createApp({ routes, auth, config, logger, db, metrics, configs }, { publicMiddleware: [staticModels(path.join(config.dataDir, 'models'))] });
  return serviceOf(app, deps, routes, lifecycle);
}

/** Opens the service's database (releasing the service lock when it cannot be opened). */
function openServiceDatabase(config: Config, releaseLock: () => void): Db {
  try {
    // better-sqlite3 builds SQLite with a 16 MiB page cache per connection; the service keeps 2 MiB (idle RSS −14 MiB,
    // issue 29): the kernel's page cache holds the file anyway, a miss costs a pread, not a disk read. Set as the
    // connection opens, before the start-up quick_check reads every page (a 16 MiB cache filled, then shrunk, left
    // ~10 MiB of freed malloc memory behind). No mmap_size (SQLite's default 0): mapped pages would count in the
    // service's RSS and a disk error would be a SIGBUS.
    return openDatabase(databasePath(config.dataDir), { busyTimeoutMs: SERVICE_BUSY_TIMEOUT_MS, autoCheckpoint: false, cacheKiB: 2048 });
  } catch (error) {
    releaseLock();
    throw error;
  }
}

/** What the contexts are started with: the database, the close order, the job registry, a restore just applied. */
type Starting = {
  config: Config;
  db: Db;
  logger: Logger;
  lifecycle: Lifecycle;
  jobs: JobRegistry;
  restored: ReturnType<typeof applyPendingRestore>;
  options: ServiceOptions;
};

/**
 * Builds each context from the ones above it (its module.ts declares what it needs) and starts it where its jobs start
 * and its close hooks are registered: the order below is the start order, its reverse the close order. Returns the
 * services the route tables are built from, and what the app itself is built with (sign-in, metrics, settings).
 */
async function startContexts(start: <S>(module: Module<S>) => S, { config, db, logger, lifecycle, jobs, restored, options }: Starting) {
  const collecting = config.collectIntervalMs > 0;
  const now = options.collectorNow;
  const { audit, mailer } = start(buildPlatform({ config, db, logger }));
  auditRestore(audit, restored);
  const { iot } = start(await buildGateway({ config, db, logger, audit }));
  // Ports: access's users row and site's scene (files is built before both); files' models for site's scene.
  const files = start(buildFiles({ db, audit, config, avatarColumns: avatarColumns(db), scene: sceneModelRef(db) }));
  const settings = siteSettings(db); // the port the contexts built before site read its name, locale and zone through
  const access = buildAccess({ config, db, audit, logger, mailer, avatars: files.avatars, siteSettings: settings });
  const facility = buildFacility({ config, db, audit, logger, mailer, iot, siteSettings: settings, areas: areaSources(db) });
  const { timezone, tariffs, calorific, metering, energy, figures } = startDataPath(start, { db, audit, logger, iot, timezone: () => settings().timezone });
  const { store, days, meters, zoneMove } = metering;
  const intake = facility.services.alerts;
  const { analysis } = start(buildAnalysisModule({ db, audit, energy, days, meters, tariffs, timezone, iot, alerts: intake, logger }));
  const billing = buildBillingModule({ db, audit, figures, store, meters, tariffs, calorific, timezone, analysis, alerts: intake, logger, mailer, collecting });
  const price = { entered: metering.setupPrice, inForce: () => tariffs.priceInForce() };
  const { configs } = start(buildSite({ db, audit, zoneMove, mailer, price, models: sceneModels(db) }));
  const reporting = start(buildReporting({ config, db, audit, logger, mailer, alerts: intake, energy, days, meters, timezone, analysis }));
  const { alerts } = start(facility);
  const { demand } = start(buildDemandWatch({ db, figures, tariffs, timezone, warnings: analysis.peakWarnings, alerts, logger }));
  const { loadShedder } = start(buildLoadShedding({ db, audit, analysis, tariffs, timezone, iot, demand, alerts, logger, now: now ?? Date.now }));
  const { collector } = start(
    await buildCollection({
      config,
      db,
      logger,
      iot,
      ...metering,
      timezone,
      alerts,
      demand,
      loadShedder,
      meterSimulator: iot.simulator ? () => ensureSimulatorMeters(db, meters, iot.simulator!.building.catalogue(), logger) : undefined,
      now,
    }),
  );
  start(buildAnomalyChecks({ analysis, collecting }));
  start(billing);
  const { faultDetection } = start(
    buildFaultDetection({ config, db, audit, logger, gateway: iot, faults: facility.services.faults, alerts, now: options.collectorNow }),
  );
  const startedAt = Date.now();
  const equipmentFaults = () => faultDetection.episodes.openCount();
  const screens = start(buildScreens({ config, db, audit, iot, collector, configs, energy, analysis, alerts, jobs, startedAt, equipmentFaults }));
  const operations = buildOperations({
    config,
    db,
    audit,
    logger,
    iot,
    collector,
    analysis,
    energy: { meters, figures },
    jobs,
    faultRules: faultDetection.detector,
    startedAt,
    alerts,
    restart: options.restart,
  });
  // The sync sends what the collector holds as well: a joined box writes hourly like any other (issue 44).
  start(buildFleetSync({ config, db, logger, health: operations.services.boxHealth, held: () => store.heldDays(), alerts }));
  start(access);
  start(operations);

  const deps: AppDeps = {
    ...access.services,
    ...facility.services,
    ...files,
    ...reporting,
    ...screens,
    ...billing.services,
    faultDetection,
    backups: operations.services.backups,
    storageAlert: operations.services.storageAlert,
    analysis,
    configs,
    ...metering,
    tariffs,
    // The whole data path as one object, for tests (service.deps.energy); no context is handed it.
    energy: { tariffs, calorific, ...metering, ...energy, timezone },
    collector,
    loadShedder,
    config,
    db,
    logger,
    mailer,
    audit,
    iot,
    lifecycle,
    jobs,
    startedAt,
  };
  return { deps, auth: access.services.auth, metrics: operations.services.metrics, configs };
}

/** The service over the app: listen on a bound or a new listener; close the server, then every context in reverse. */
function serviceOf(app: Koa, deps: AppDeps, routes: AnyRoute[], lifecycle: Lifecycle): Service {
  const service: Service = {
    app,
    deps,
    routes,
    async listen(bound) {
      const listener = bound ?? (await bindListener(deps.config));
      listener.attach(app.callback());
      service.listener = listener;
      service.server = listener.server;
      return { url: listener.url, port: listener.port };
    },
    async close(closing) {
      if (service.server && !closing?.keepListener) await closeServer(service.server);
      await lifecycle.close((name, error) => deps.logger.error({ err: error, hook: name }, 'error while shutting down'));
    },
  };
  return service;
}

/** Stops taking connections and waits for the open ones, cutting them after SHUTDOWN_GRACE_MS. */
async function closeServer(server: http.Server): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  // A keep-alive connection turns idle when its in-flight request finishes: close it then, not at the deadline.
  const sweep = setInterval(() => server.closeIdleConnections(), 50);
  const timer = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS);
  await closed;
  clearInterval(sweep);
  clearTimeout(timer);
}

/**
 * The data dir made ready, a guided restore that waits applied (before the database opens), then the service lock:
 * it tells emsctl restore that a service runs here; released last, after the database is closed.
 */
function claimDataDir(dataDir: string, logger: Logger) {
  prepareDataDir(dataDir);
  const restored = applyPendingRestore(dataDir, logger);
  return { serviceLock: holdServiceLock(dataDir), restored };
}
