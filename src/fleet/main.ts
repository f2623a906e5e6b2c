// Entry point of the fleet service (`npm run start:fleet`, systemd/ems-fleet.service): config, migrations, serve.
// Stateless: any number of instances may serve one database side by side.
import { createLogger, startupFailureLine } from '../platform/logger.ts';
import { version } from '../platform/packageRoot.ts';
import { createFleetApp, listenFleet } from './app.ts';
import { type FleetConfig, FleetConfigError, loadFleetConfig } from './config.ts';
import { DatabaseClock } from './clock.ts';
import { migrateFleetDb, openFleetDb } from './db.ts';
import { fleetUpkeep } from './upkeep.ts';

async function main(): Promise<void> {
  let config: FleetConfig;
  try {
    config = loadFleetConfig();
  } catch (error) {
    if (error instanceof FleetConfigError) {
      process.stderr.write(startupFailureLine(`configuration error: ${error.message}`));
      process.exit(2);
    }
    throw error;
  }
  const logger = createLogger(config.logLevel);
  try {
    await migrateFleetDb(config.databaseUrl);
  } catch (error) {
    const message = `the fleet database cannot be reached or migrated: ${(error as Error).message}`;
    logger.fatal(message);
    process.stderr.write(startupFailureLine(message));
    process.exit(3);
  }
  const db = openFleetDb(config.databaseUrl, { poolSize: config.poolSize });
  // The portfolio from a streaming replica when one is configured (docs/fleet.md "Replica and failover").
  const readDb = config.readDatabaseUrl ? openFleetDb(config.readDatabaseUrl, { poolSize: config.readPoolSize }) : undefined;
  const app = createFleetApp({ db, readDb, logger, maxConcurrentIngests: config.maxConcurrentIngests, sso: config.sso });
  const { server, url } = await listenFleet(app, config);
  // The EUI figures after a month turn and, when EMS_FLEET_KEEP_RAW_MONTHS is set, the raw months dropped (upkeep.ts).
  const clock = new DatabaseClock(db.pool);
  const upkeep = fleetUpkeep(db.pool, { keepRawMonths: config.keepRawMonths, logger, now: () => clock.now() });
  upkeep.start();
  logger.info(
    { version, url, tls: Boolean(config.tls), database: new URL(config.databaseUrl).pathname.slice(1), readReplica: Boolean(readDb) },
    'EMS fleet started',
  );
  const stop = (signal: string) => {
    logger.info({ signal }, 'shutting down');
    server.close();
    server.closeIdleConnections();
    void upkeep
      .stop()
      .finally(() => Promise.allSettled([db.pool.end(), readDb?.pool.end()]))
      .finally(() => process.exit(0));
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

await main();
