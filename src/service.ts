// Assembles the running service: data dir, database, auth, features; listen() and a bounded graceful close().
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type Koa from 'koa';
import type { AppDeps } from './appDeps.ts';
import { createApp } from './app.ts';
import { AuditLog } from './db/auditTrail.ts';
import { AuthService } from './auth/service.ts';
import { holdServiceLock } from './backup/locks.ts';
import { BackupScheduler } from './backup/service.ts';
import type { Config } from './config.ts';
import { closeDatabase, databasePath, openDatabase, restrictFileModes, type Db } from './db/client.ts';
import { Lifecycle } from './lifecycle.ts';
import { createLogger, type Logger } from './logger.ts';
import { createMailer } from './mail/mailer.ts';
import { startIotGateway } from './iot/service.ts';
import { startReports } from './reports/start.ts';
import { AlarmNotifier } from './alarms/notifier.ts';
import { AlarmPoller } from './alarms/poller.ts';
import { ensureInitialAdmin } from './users/service.ts';
import { buildFeatureServices } from './features.ts';
import { hashPassword } from './auth/passwords.ts';
import { staticModels } from './models/staticModels.ts';
import { sweepStaleUploads } from './uploads/receiveUpload.ts';

export const DATA_SUBDIRS = ['uploads', 'models', 'avatars', 'backups', 'tmp', 'reports'] as const;

export type Service = {
  app: Koa;
  deps: AppDeps;
  server?: http.Server;
  listen(): Promise<{ url: string; port: number }>;
  close(): Promise<void>;
};

/** How long a shutdown waits for in-flight requests before cutting connections. */
const SHUTDOWN_GRACE_MS = 10_000;

export function prepareDataDir(dataDir: string): void {
  restrictFileModes(dataDir);
  for (const sub of DATA_SUBDIRS) fs.mkdirSync(path.join(dataDir, sub), { recursive: true, mode: 0o750 });
}

/** Slow or stalled clients cannot hold the server: header, request and keep-alive limits. */
export function applyServerTimeouts(server: http.Server): void {
  server.headersTimeout = 20_000;
  // Large enough for a 100 MiB upload over a slow LAN link.
  server.requestTimeout = 15 * 60_000;
  server.keepAliveTimeout = 5_000;
  server.maxHeadersCount = 100;
}

export async function createService(config: Config, options: { logger?: Logger } = {}): Promise<Service> {
  const logger = options.logger ?? createLogger(config.logLevel);
  prepareDataDir(config.dataDir);
  // Tells emsctl restore that a service runs here; released last, after the database is closed.
  const serviceLock = holdServiceLock(config.dataDir);
  let db: Db;
  try {
    db = openDatabase(databasePath(config.dataDir));
  } catch (error) {
    serviceLock.release();
    throw error;
  }
  const lifecycle = new Lifecycle();
  lifecycle.onClose('service lock', () => serviceLock.release());
  lifecycle.onClose('database', () => closeDatabase(db));

  const mailer = createMailer({ smtpUrl: config.smtpUrl, from: config.mailFrom, logger });
  lifecycle.onClose('mailer', () => mailer.close());

  const audit = new AuditLog(db);
  const iot = await startIotGateway({ config, db, logger, audit, lifecycle });

  const auth = new AuthService({
    db,
    logger,
    mailer,
    jwtSecret: config.jwtSecret,
    accessTokenTtlSec: config.accessTokenTtlSec,
    refreshTokenTtlSec: config.refreshTokenTtlSec,
    codeTtlSec: config.codeTtlSec,
  });
  const features = buildFeatureServices({ db, audit, dataDir: config.dataDir, logger, throttle: auth.throttle });
  // Writes keep the fault snapshot by deltas; one recount at start gives them a base that matches the table.
  features.faults.recountStats();
  const reportRuns = startReports({ config, db, logger, audit, mailer, lifecycle, alerts: features.alerts });
  const notifier = new AlarmNotifier({ db, mailer, logger, publicUrl: config.publicUrl });
  features.alerts.onCreated((alert) => notifier.alertRaised(alert));
  notifier.start();
  lifecycle.onClose('alert notifications', () => notifier.stop());
  const alarmPoller = new AlarmPoller({ iot, alerts: features.alerts, logger, intervalMs: config.alarmPollIntervalMs });
  if (config.alarmPollIntervalMs > 0) alarmPoller.start();
  lifecycle.onClose('gateway alarm poller', () => alarmPoller.stop());
  const deps: AppDeps = {
    ...features,
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
    startedAt: Date.now(),
  };
  const sweep = setInterval(() => deps.auth.codes.sweep(), 60_000);
  sweep.unref();
  lifecycle.onClose('code sweeper', () => clearInterval(sweep));
  deps.backups.start();
  lifecycle.onClose('backup scheduler', () => deps.backups.stop());

  try {
    await ensureInitialAdmin(db, config.dataDir, logger, hashPassword);
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
    async listen() {
      const server = http.createServer(app.callback());
      applyServerTimeouts(server);
      service.server = server;
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(config.port, config.host, () => {
          server.off('error', reject);
          resolve();
        });
      });
      const { port } = server.address() as AddressInfo;
      const host = config.host.includes(':') ? `[${config.host}]` : config.host;
      return { url: `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`, port };
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
