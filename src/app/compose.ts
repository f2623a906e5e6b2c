// Assembles the running service: data dir, database, auth, features; listen() and a bounded graceful close().
import { AuthService, ensureInitialAdmin, hashPassword, verifyPassword } from '../access/index.ts';
import { holdServiceLock, BackupScheduler, gatewayCondition } from '../operations/index.ts';
import { startIotGateway } from '../gateway/index.ts';
import { startReports } from '../reporting/index.ts';
import { AlarmNotifier, AlarmPoller } from '../facility/index.ts';
import { Collector, DataWatch } from '../metering/index.ts';
import { FleetSync } from '../fleetSync/index.ts';
import { ensureSimulatorMeters, DemandWatch } from '../energy/index.ts';
import { LoadShedder, LoadSheddingGuard } from '../analysis/index.ts';
import { staticModels, sweepStaleUploads } from '../files/index.ts';
import fs from 'node:fs';
import type http from 'node:http';
import path from 'node:path';
import type Koa from 'koa';
import type { AppDeps } from './appDeps.ts';
import { createApp } from './app.ts';
import { AuditLog } from '../platform/db/auditTrail.ts';
import type { Config } from '../platform/config.ts';
import { closeDatabase, databasePath, ensureDirectory, openDatabase, restrictFileModes, SERVICE_BUSY_TIMEOUT_MS, type Db } from '../platform/db/client.ts';
import { Lifecycle, Repeating } from '../platform/jobs/lifecycle.ts';
import { JobRegistry } from '../platform/jobs/jobs.ts';
import { CHECK_INTERVAL_MS, WalIndex, walCheckpointJob } from '../platform/db/walCheckpoint.ts';
import { bindListener, StartupError, type Listener } from '../platform/http/listener.ts';
import { createLogger, type Logger } from '../platform/logger.ts';
import { createMailer } from '../platform/mail/mailer.ts';
import { mailBaseUrl, siteMailReader } from '../platform/mail/siteMail.ts';
import { version } from '../platform/packageRoot.ts';
import { buildFeatureServices, buildPortalServices } from './features.ts';

export const DATA_SUBDIRS = ['uploads', 'models', 'avatars', 'backups', 'tmp', 'reports'] as const;

export type Service = {
  app: Koa;
  deps: AppDeps;
  server?: http.Server;
  listener?: Listener;
  /** Serves the app on `bound` (bound before the service was created), else binds EMS_HOST:EMS_PORT now. */
  listen(bound?: Listener): Promise<{ url: string; port: number }>;
  close(): Promise<void>;
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

export async function createService(
  config: Config,
  options: {
    logger?: Logger;
    /** The energy collector's clock (tests move it); the box's by default. */
    collectorNow?: () => number;
    /** Where the first-start password's human line goes (main.ts: stderr); unset: the JSON log line only. */
    announce?: (line: string) => void;
  } = {},
): Promise<Service> {
  const logger = options.logger ?? createLogger(config.logLevel);
  prepareDataDir(config.dataDir);
  // Tells emsctl restore that a service runs here; released last, after the database is closed.
  const serviceLock = holdServiceLock(config.dataDir);
  let db: Db;
  try {
    // better-sqlite3 builds SQLite with a 16 MiB page cache per connection; the service keeps 2 MiB (idle RSS −14 MiB,
    // issue 29): the kernel's page cache holds the file anyway, a miss costs a pread, not a disk read. Set as the
    // connection opens, before the start-up quick_check reads every page (a 16 MiB cache filled, then shrunk, left
    // ~10 MiB of freed malloc memory behind). No mmap_size (SQLite's default 0): mapped pages would count in the
    // service's RSS and a disk error would be a SIGBUS.
    db = openDatabase(databasePath(config.dataDir), { busyTimeoutMs: SERVICE_BUSY_TIMEOUT_MS, autoCheckpoint: false, cacheKiB: 2048 });
  } catch (error) {
    serviceLock.release();
    throw error;
  }
  const lifecycle = new Lifecycle();
  // Every periodic job, by name, as it is started (/metrics lists them: ems_job_*).
  const jobs = new JobRegistry();
  lifecycle.onClose('service lock', () => serviceLock.release());
  // The -shm descriptor the checkpoint job reads through is closed after the database (hooks run in reverse): closed
  // before, it would drop the connection's locks on the file (src/platform/db/walCheckpoint.ts).
  const walIndex = new WalIndex(db.path);
  lifecycle.onClose('WAL index', () => walIndex.close());
  lifecycle.onClose('database', () => closeDatabase(db));
  // The WAL checkpoints SQLite would run inside a COMMIT, off the event loop (src/platform/db/walCheckpoint.ts); stopped before the
  // database closes.
  const checkpoints = new Repeating(
    walCheckpointJob(walIndex, (error) => logger.error({ err: error }, 'WAL checkpoint failed')),
    CHECK_INTERVAL_MS,
    'WAL checkpoint',
  );
  checkpoints.start();
  jobs.add('platform', checkpoints);
  lifecycle.onClose('WAL checkpoints', () => checkpoints.stop());

  const mailer = createMailer({ smtpUrl: config.smtpUrl, from: config.mailFrom, logger });
  lifecycle.onClose('mailer', () => mailer.close());

  const audit = new AuditLog(db);
  const iot = await startIotGateway({ config, db, logger, audit, lifecycle });
  if (iot.probeJob) jobs.add('gateway', iot.probeJob);

  const auth = new AuthService({
    db,
    logger,
    mailer,
    jwtSecret: config.jwtSecret,
    accessTokenTtlSec: config.accessTokenTtlSec,
    refreshTokenTtlSec: config.refreshTokenTtlSec,
    codeTtlSec: config.codeTtlSec,
    siteMail: siteMailReader(db, mailBaseUrl(config.publicUrl, config.portalOrigin)),
  });
  const features = buildFeatureServices({
    db,
    audit,
    dataDir: config.dataDir,
    logger,
    throttle: auth.throttle,
    reportMinIntervalMin: config.reports.minIntervalMin,
  });
  // Writes keep the fault snapshot by deltas; one recount at start gives them a base that matches the table.
  features.faults.recountStats();
  const reportRuns = startReports({
    config,
    db,
    logger,
    audit,
    mailer,
    lifecycle,
    jobs,
    alerts: features.alerts,
    energy: features.energy.site,
    analysis: features.analysis,
    commodities: features.energy.commodities,
  });
  const notifier = new AlarmNotifier({
    db,
    mailer,
    logger,
    publicUrl: config.publicUrl,
    siteMail: siteMailReader(db, mailBaseUrl(config.publicUrl, config.portalOrigin)),
  });
  features.alerts.onCreated((alert) => notifier.alertRaised(alert));
  notifier.start();
  if (notifier.escalationJob) jobs.add('facility', notifier.escalationJob);
  lifecycle.onClose('alert notifications', () => notifier.stop());
  const alarmPoller = new AlarmPoller({ iot, alerts: features.alerts, areas: features.alarmAreas, logger, intervalMs: config.alarmPollIntervalMs });
  if (config.alarmPollIntervalMs > 0) {
    alarmPoller.start();
    jobs.add('facility', alarmPoller.job);
  }
  lifecycle.onClose('gateway alarm poller', () => alarmPoller.stop());
  const { energy } = features;
  const demand = new DemandWatch({ db, figures: energy.figures, tariffs: energy.tariffs, alerts: features.alerts, logger, timezone: energy.timezone });
  const collector = new Collector({
    db,
    iot,
    store: energy.store,
    logger,
    intervalMs: config.collectIntervalMs,
    timezone: energy.timezone,
    now: options.collectorNow,
    // Edge boxes run on flash: day rows are written at 15-minute boundaries, not every collection (docs/performance-edge.md).
    holdOpenInterval: true,
    afterCollect: (now, ok) => {
      if (ok) demand.check(now);
      // Load shedding (issue 25, off by default): after the peak warning, from the same projection.
      if (ok) void loadShedder.evaluate(now);
      dataWatch.check(now);
    },
  });
  const dataWatch = new DataWatch({ db, collector, alerts: features.alerts, logger });
  const loadShedder = new LoadShedder({
    db,
    audit,
    config: features.analysis.loadShedding,
    iot,
    demand,
    tariffs: energy.tariffs,
    alerts: features.alerts,
    logger,
    timezone: energy.timezone,
  });
  // Its safety restores on their own timer, whatever the collector does; at stop every shed point is restored. Registered
  // after the gateway client and the database, so (hooks run in reverse) it runs before they close, after the collector stops.
  const loadSheddingGuard = new LoadSheddingGuard(loadShedder, { now: options.collectorNow ?? Date.now, logger });
  features.analysis.loadShedding.afterReplace(() => loadSheddingGuard.applyNow());
  loadSheddingGuard.start();
  jobs.add('analysis', loadSheddingGuard.job);
  lifecycle.onClose('load shedding (restores shed points)', () => loadSheddingGuard.stop());
  // A time-zone move cut short by a stop is carried to its end before the first collection.
  features.zoneMove.pauseCollection(collector);
  features.energy.history.takeTurnsWith(collector);
  await features.zoneMove.resume();
  if (config.collectIntervalMs > 0 && iot.simulator) ensureSimulatorMeters(db, features.energy.meters, iot.simulator.building.catalogue(), logger);
  if (config.collectIntervalMs > 0) {
    collector.start();
    jobs.add('metering', collector.job);
  }
  lifecycle.onClose('energy collector', () => collector.stop());
  // Energy anomalies of each finished site day (issue 25): hourly, each day checked once.
  const anomalies = features.analysis.anomalies(iot, features.alerts, logger);
  const anomalyRuns = new Repeating(() => anomalies.checkYesterday(), 3_600_000, 'energy anomaly check');
  if (config.collectIntervalMs > 0) {
    anomalyRuns.start();
    jobs.add('analysis', anomalyRuns);
  }
  lifecycle.onClose('energy anomaly check', () => anomalyRuns.stop());
  // Budgets whose year-end forecast passes them (issue 42): hourly, an alert once per budget and year.
  const budgetRuns = new Repeating(
    async () => {
      try {
        features.billing.budgets.check((alarm) => features.alerts.fromGatewayAlarm(alarm));
      } catch (error) {
        logger.error({ err: error }, 'budget check failed');
      }
    },
    3_600_000,
    'budget check',
  );
  if (config.collectIntervalMs > 0) {
    budgetRuns.start();
    jobs.add('billing', budgetRuns);
  }
  lifecycle.onClose('budget check', () => budgetRuns.stop());
  const startedAt = Date.now();
  const deps: AppDeps = {
    ...features,
    ...buildPortalServices({ db, audit, config, logger, auth, iot, collector, features, startedAt }),
    collector,
    loadShedder,
    config,
    db,
    logger,
    mailer,
    auth,
    audit,
    iot,
    backups: new BackupScheduler({ db, dataDir: config.dataDir, logger, target: config.backupTarget }),
    reportRuns,
    notifier,
    lifecycle,
    jobs,
    startedAt,
  };
  // Fleet sync: ticks always, sends only while the box is joined (the link row); a join or leave needs no restart.
  const fleetSync = new FleetSync({
    db,
    logger,
    catchUpDelayMs: config.fleetSync.catchUpDelayMs,
    intervalMs: config.fleetSync.intervalMs,
    health: () => {
      const collected = collector.health();
      const backup = deps.backups.health();
      return { version, collector: collected.state, gateway: gatewayCondition(iot.health(), collected), lastBackupAt: backup.lastGoodAt };
    },
  });
  const fleetTicks = new Repeating(
    () => fleetSync.tick().catch((error) => logger.error({ err: error }, 'fleet sync failed')),
    // It looks every 30 s at most (a join is noticed soon); it sends every EMS_FLEET_SYNC_INTERVAL (FleetSync decides).
    Math.min(30_000, config.fleetSync.intervalMs),
    'fleet sync',
  );
  fleetTicks.start();
  jobs.add('fleet', fleetTicks);
  lifecycle.onClose('fleet sync', () => fleetTicks.stop());
  const sweep = new Repeating(async () => deps.auth.codes.sweep(), 60_000, 'verification code sweep');
  sweep.start();
  jobs.add('access', sweep);
  lifecycle.onClose('code sweeper', () => sweep.stop());
  deps.backups.start();
  jobs.add('operations', deps.backups.job);
  jobs.add('operations', deps.backups.reloadJob);
  lifecycle.onClose('backup scheduler', () => deps.backups.stop());

  try {
    await ensureInitialAdmin(db, config.dataDir, logger, { hash: hashPassword, verify: verifyPassword }, options.announce);
  } catch (error) {
    await lifecycle.close(() => {});
    throw error;
  }

  // Nothing is uploading yet: temp files in tmp/ are leftovers of a crash.
  const staleUploads = sweepStaleUploads(path.join(config.dataDir, 'tmp'));
  if (staleUploads > 0) logger.warn({ removed: staleUploads }, 'removed unfinished uploads left by an earlier run');
  const app = createApp(deps, { publicMiddleware: [staticModels(path.join(config.dataDir, 'models'))] });
  const service: Service = {
    app,
    deps,
    async listen(bound) {
      const listener = bound ?? (await bindListener(config));
      listener.attach(app.callback());
      service.listener = listener;
      service.server = listener.server;
      return { url: listener.url, port: listener.port };
    },
    async close() {
      const server = service.server;
      if (server) {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        // A keep-alive connection turns idle when its in-flight request finishes: close it then, not at the deadline.
        const sweep = setInterval(() => server.closeIdleConnections(), 50);
        const timer = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS);
        await closed;
        clearInterval(sweep);
        clearTimeout(timer);
      }
      await lifecycle.close((name, error) => logger.error({ err: error, hook: name }, 'error while shutting down'));
    },
  };
  return service;
}
