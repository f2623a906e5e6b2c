// emsctl secret …, tokens …, db …, status: service-wide operations.
import fs from 'node:fs';
import type { Command } from 'commander';
import { rotateStoredSecret } from '../../src/auth/signingKeys.ts';
import { RefreshTokens } from '../../src/auth/refreshTokens.ts';
import { databasePath } from '../../src/db/client.ts';
import { version } from '../../src/packageRoot.ts';
import { CliError, printResult, withDb } from '../context.ts';

export function registerSystemCommands(program: Command): void {
  program
    .command('secret')
    .description('the access-token signing secret')
    .command('rotate')
    .description('new signing secret: every access token issued so far is rejected within 1 s; refresh tokens keep working')
    .action(async (_options, command: Command) => {
      await withDb(command, (db, config) => {
        if (config.jwtSecret) throw new CliError('EMS_JWT_SECRET pins the signing secret; change it in the environment file and restart instead');
        rotateStoredSecret(db);
        printResult(command, { rotated: true }, 'signing secret rotated: existing access tokens are no longer accepted');
      });
    });

  program
    .command('tokens')
    .description('refresh tokens')
    .command('revoke-all')
    .description('delete every refresh token (with "secret rotate": everyone is signed out)')
    .action(async (_options, command: Command) => {
      await withDb(command, (db) => {
        const revoked = new RefreshTokens(db, 1).revokeAll();
        printResult(command, { revoked }, `revoked ${revoked} refresh token${revoked === 1 ? '' : 's'}`);
      });
    });

  program
    .command('db')
    .description('database')
    .command('check')
    .description('run SQLite integrity_check on the database')
    .action(async (_options, command: Command) => {
      await withDb(command, (db) => {
        const rows = db.sqlite.pragma('integrity_check') as Array<{ integrity_check: string }>;
        const problems = rows.map((row) => row.integrity_check).filter((line) => line !== 'ok');
        printResult(command, { ok: problems.length === 0, problems }, problems.length ? problems.join('\n') : 'integrity_check: ok');
        if (problems.length) process.exitCode = 1;
      });
    });

  program
    .command('status')
    .description('what is on this box: version, data dir, database size, users, sessions')
    .action(async (_options, command: Command) => {
      await withDb(command, (db, config) => {
        const count = (sql: string) => (db.sqlite.prepare(sql).get() as { n: number }).n;
        const file = databasePath(config.dataDir);
        const status = {
          version,
          dataDir: config.dataDir,
          databaseBytes: fs.statSync(file).size + (fs.existsSync(`${file}-wal`) ? fs.statSync(`${file}-wal`).size : 0),
          users: count('SELECT count(*) AS n FROM users'),
          admins: count("SELECT count(*) AS n FROM users WHERE role = 'admin'"),
          activeRefreshTokens: count(`SELECT count(*) AS n FROM refresh_tokens WHERE expires_at > ${Date.now()}`),
          signingSecret: config.jwtSecret ? 'pinned by EMS_JWT_SECRET' : 'stored in the database',
          migrations: count('SELECT count(*) AS n FROM __drizzle_migrations'),
        };
        const text = Object.entries(status)
          .map(([key, value]) => `${key.padEnd(20)} ${value}`)
          .join('\n');
        printResult(command, status, text);
      });
    });
}
