// emsctl secret …, tokens …, db …: service-wide operations (status is in status.ts).
// Each action imports what it uses when it runs (emsctl loads no service code up front).
import type { Command } from 'commander';
import { CliError, printResult, withDb } from '../context.ts';

export function registerSystemCommands(program: Command): void {
  program
    .command('secret')
    .description('the access-token signing secret')
    .command('rotate')
    .description('new signing secret: every access token issued so far is rejected within 1 s; refresh tokens keep working')
    .action(async (_options, command: Command) => {
      const { rotateStoredSecret } = await import('../../src/access/cli.ts');
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
      const { RefreshTokens } = await import('../../src/access/cli.ts');
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
}
