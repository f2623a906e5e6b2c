// emsctl fleet join <fleet URL> <code> | status | leave: the box's link to a fleet service (docs/fleet.md). Safe while
// the service runs: the service reads the link on each sync tick.
import type { Command } from 'commander';
import { CliError, printResult, withDb } from '../context.ts';

export function registerFleetCommands(program: Command): void {
  const fleet = program.command('fleet').description('sync this box to a fleet service (off until joined)');
  fleet
    .command('join <fleetUrl> <code>')
    .description('join a fleet with a one-time enrolment code from its admin; the box then sends its data, history first')
    .action(async (fleetUrl: string, code: string, _options: unknown, command: Command) => {
      const { joinFleet, FleetJoinError } = await import('../../src/fleetSync/cli.ts');
      const result = await withDb(command, async (db) => {
        try {
          return await joinFleet(db, fleetUrl, code);
        } catch (error) {
          if (error instanceof FleetJoinError) throw new CliError(error.message);
          throw error;
        }
      });
      printResult(command, result, `joined the fleet at ${result.fleetUrl} as site "${result.siteName}" (${result.siteId}); the first batch goes within 30 s`);
    });
  fleet
    .command('status')
    .description('the link, what waits to be sent and the last error')
    .action(async (_options: unknown, command: Command) => {
      const { syncState } = await import('../../src/fleetSync/cli.ts');
      const state = await withDb(command, (db) => syncState(db));
      const text =
        state.state === 'off'
          ? 'fleet sync: off (not joined; emsctl fleet join <fleet URL> <code>)'
          : [
              `fleet sync: ${state.state}`,
              ...(state.rejoinNeeded ? ['RE-JOIN NEEDED: emsctl fleet leave --force, then emsctl fleet join <fleet URL> <new code>'] : []),
              `fleet:        ${state.fleetUrl} (site ${state.siteId})`,
              `this box:     install id ${state.installId}`,
              `unsent rows:  ${state.unsentRows} (cursor ${state.cursor})`,
              `last stored:  ${state.lastSuccessAt ?? 'never'}`,
              `last attempt: ${state.lastAttemptAt ?? 'never'}`,
              ...(state.lastError ? [`last error:   ${state.lastError}${state.lastErrorCode ? ` [${state.lastErrorCode}]` : ''}`] : []),
            ].join('\n');
      printResult(command, state, text);
    });
  fleet
    .command('leave')
    .description("leave the fleet: the fleet revokes this box's credential and the box stops sending")
    .option('--force', 'leave locally even when the fleet cannot be reached')
    .action(async (options: { force?: boolean }, command: Command) => {
      const { leaveFleet, FleetJoinError } = await import('../../src/fleetSync/cli.ts');
      const result = await withDb(command, async (db) => {
        try {
          return await leaveFleet(db, options);
        } catch (error) {
          if (error instanceof FleetJoinError) throw new CliError(error.message);
          throw error;
        }
      });
      printResult(
        command,
        result,
        `left the fleet at ${result.fleetUrl}${result.revoked ? '' : ' (the fleet was not told: ask its admin to revoke this site)'}`,
      );
    });
}
