// Entry point: config, the port, the service, then serve; graceful shutdown on SIGTERM/SIGINT, certificate reload on SIGHUP.
import { type Host, hostService } from './app/index.ts';
import { ConfigError, loadConfig, unknownSettings, type Config } from './platform/config.ts';
import { DatabaseOpenError } from './platform/db/client.ts';
import { bindListener, StartupError, type Listener } from './platform/http/listener.ts';
import { createLogger, startupFailureLine, writesToJournal, type Logger } from './platform/logger.ts';
import { version } from './platform/packageRoot.ts';

const bootStarted = performance.now();

function configSummary(config: Config) {
  return {
    host: config.host,
    port: config.port,
    dataDir: config.dataDir,
    jwtSecret: config.jwtSecret ? 'pinned by EMS_JWT_SECRET' : 'stored in the database',
    accessTokenTtlSec: config.accessTokenTtlSec,
    refreshTokenTtlSec: config.refreshTokenTtlSec,
    codeTtlSec: config.codeTtlSec,
    mail: config.smtpUrl ? `smtp ${new URL(config.smtpUrl).host}` : 'log only (EMS_SMTP_URL unset)',
    publicUrl: config.publicUrl,
    portalOrigin: config.portalOrigin ?? null,
    oauthProviders: Object.keys(config.oauth),
    iotGateway: config.iot.baseUrl,
    uploadMaxBytes: config.uploadMaxBytes,
  };
}

/** A start-up that cannot go on: one line on stderr (journald: priority err) and exit 2, so systemd need not retry it. */
function refuseToStart(message: string): never {
  process.stderr.write(startupFailureLine(message));
  process.exit(2);
}

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) refuseToStart(`configuration error: ${error.message}`);
    throw error;
  }
  const logger = createLogger(config.logLevel);
  // A typo in a variable's name (EMS_PROT) would otherwise be ignored without a word.
  for (const { name, closest } of unknownSettings()) {
    logger.warn({ variable: name, closest }, `unknown setting ${name} is ignored (did you mean ${closest}?)`);
  }
  // The port (and certificate) first: a start that cannot serve must not create a database or an admin account.
  let listener: Listener;
  let service: Host;
  try {
    listener = await bindListener(config);
    // The first-start password also as a plain line on stderr (journald keeps it too, at priority notice).
    const announce = (line: string) => process.stderr.write(`${writesToJournal(2) ? '<5>' : ''}${line}`);
    // A restart in place (the guided restore) that cannot start again exits 1: systemd starts it afresh.
    service = await hostService(config, { logger, announce }, listener, () => process.exit(1));
  } catch (error) {
    if (error instanceof StartupError) refuseToStart(error.message);
    if (error instanceof DatabaseOpenError) {
      logger.fatal(error.message);
      process.stderr.write(startupFailureLine(error.message));
      process.exit(3);
    }
    throw error;
  }
  const { url } = service;
  const tls = listener.credentials ? { subject: listener.credentials.subject, validTo: listener.credentials.validTo } : null;
  logger.info({ version, url, tls, startupMs: Math.round(performance.now() - bootStarted), config: configSummary(config) }, 'EMS started');
  if (listener.credentials) warnIfExpiring(logger, listener.credentials.validTo);

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    service.close().then(
      () => {
        logger.info('stopped');
        process.exit(0);
      },
      (error) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  // SIGHUP reloads the certificate (e.g. after a renewal); without TLS there is nothing to reload, and it must not kill the process.
  process.on('SIGHUP', () => {
    if (!listener.credentials) {
      logger.info({ signal: 'SIGHUP' }, 'nothing to reload: the service speaks plain HTTP (EMS_TLS_CERT unset)');
      return;
    }
    try {
      const fresh = listener.reloadTls();
      logger.info({ signal: 'SIGHUP', subject: fresh.subject, validTo: fresh.validTo }, 'TLS certificate reloaded');
      warnIfExpiring(logger, fresh.validTo);
    } catch (error) {
      logger.error({ signal: 'SIGHUP', problem: (error as Error).message }, 'TLS certificate not reloaded: the previous one is still served');
    }
  });
}

/** An expired or nearly expired certificate: browsers will refuse it, so the operator hears about it at start and reload. */
function warnIfExpiring(logger: Logger, validTo: string): void {
  const daysLeft = Math.floor((Date.parse(validTo) - Date.now()) / 86_400_000);
  if (daysLeft < 14) logger.warn({ validTo, daysLeft }, daysLeft < 0 ? 'the TLS certificate has expired' : 'the TLS certificate expires soon');
}

main().catch((error) => {
  process.stderr.write(startupFailureLine(`failed to start: ${(error as Error).stack ?? String(error)}`));
  process.exit(1);
});
