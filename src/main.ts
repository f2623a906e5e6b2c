// Entry point: config, service, listen, graceful shutdown on SIGTERM/SIGINT.
import { ConfigError, loadConfig, type Config } from './config.ts';
import { DatabaseOpenError } from './db/client.ts';
import { createLogger } from './logger.ts';
import { version } from './packageRoot.ts';
import { createService } from './service.ts';

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

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`ems: configuration error: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  const logger = createLogger(config.logLevel);
  let service;
  try {
    service = await createService(config, { logger });
  } catch (error) {
    if (error instanceof DatabaseOpenError) {
      logger.fatal(error.message);
      process.stderr.write(`ems: ${error.message}\n`);
      process.exit(3);
    }
    throw error;
  }
  const { url } = await service.listen();
  logger.info({ version, url, startupMs: Math.round(performance.now() - bootStarted), config: configSummary(config) }, 'EMS started');

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
}

main().catch((error) => {
  process.stderr.write(`ems: failed to start: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
