// The floor's running parts, built once by the composition root on the opened database: the WAL index and its
// checkpoint job, the mailer, the audit log.
import { AuditLog } from '../db/auditTrail.ts';
import { closeDatabase, type Db } from '../db/client.ts';
import { CHECK_INTERVAL_MS, WalIndex, walCheckpointJob } from '../db/walCheckpoint.ts';
import type { Config } from '../config.ts';
import { Repeating } from '../jobs/lifecycle.ts';
import type { Module } from '../jobs/module.ts';
import type { Logger } from '../logger.ts';
import { createMailer, type Mailer } from '../mail/mailer.ts';

export type Platform = { audit: AuditLog; mailer: Mailer };

export function buildPlatform({ config, db, logger }: { config: Config; db: Db; logger: Logger }): Module<Platform> {
  // The -shm descriptor the checkpoint job reads through is closed after the database (hooks run in reverse): closed
  // before, it would drop the connection's locks on the file (src/platform/db/walCheckpoint.ts).
  const walIndex = new WalIndex(db.path);
  // The WAL checkpoints SQLite would run inside a COMMIT, off the event loop (src/platform/db/walCheckpoint.ts); stopped
  // before the database closes.
  const checkpoints = new Repeating(
    walCheckpointJob(walIndex, (error) => logger.error({ err: error }, 'WAL checkpoint failed')),
    CHECK_INTERVAL_MS,
    'WAL checkpoint',
  );
  const mailer = createMailer({ smtpUrl: config.smtpUrl, from: config.mailFrom, logger });
  return {
    context: 'platform',
    services: { audit: new AuditLog(db), mailer },
    running: [
      { name: 'WAL index', stop: () => walIndex.close() },
      { name: 'database', stop: () => closeDatabase(db) },
      { name: 'WAL checkpoints', start: () => checkpoints.start(), jobs: [checkpoints], stop: () => checkpoints.stop() },
      { name: 'mailer', stop: () => mailer.close() },
    ],
  };
}
