// emsctl: administration of an EMS appliance from its own shell. Each command group lives in cli/commands/; the
// registrations are light and each action imports the service code it needs when it runs, so a simple command
// (role list, status) does not pay for loading the rest (test/bench/emsctl.ts measures it).
import { Command, CommanderError } from 'commander';
import { version } from '../src/platform/packageRoot.ts';
import { CliError, UsageError } from './context.ts';
import { registerUserCommands } from './commands/users.ts';
import { registerSystemCommands } from './commands/system.ts';
import { registerBackupCommands } from './commands/backup.ts';
import { registerGatewayCommands } from './commands/gateway.ts';
import { registerStatusCommand } from './commands/status.ts';
import { registerFleetCommands } from './commands/fleet.ts';
import { registerSiteCommands } from './commands/site.ts';

// --json anywhere before "--": errors too are JSON, {"error": "..."} on standard error (standard output stays empty,
// so `emsctl --json … | jq` never parses an error as a result). Read from argv: commander's own complaints come
// before its options are parsed.
const json = process.argv.slice(2, process.argv.includes('--') ? process.argv.indexOf('--') : undefined).includes('--json');
const fail = (message: string) => process.stderr.write(json ? `${JSON.stringify({ error: message })}\n` : `emsctl: ${message}\n`);

const program = new Command('emsctl')
  .description('Administer the EMS service on this box (safe while it runs)')
  .version(version)
  .option('--data-dir <dir>', 'data directory (default: $EMS_DATA_DIR or ./data)')
  .option(
    '--env-file <file>',
    'settings file (default: /etc/ems/ems.env when it exists and no --data-dir or EMS_DATA_DIR is given); the environment wins over it',
  )
  .option('--json', 'machine-readable output: a list is an array, one thing an object with the same fields; errors {"error": "..."} on stderr')
  .exitOverride()
  // commander's own complaints (a missing option, an unknown command) in the one-line form of every other error.
  .configureOutput({ outputError: (text) => fail(text.replace(/^error: /, '').trim()) });

registerUserCommands(program);
registerSystemCommands(program);
registerBackupCommands(program);
registerGatewayCommands(program);
registerSiteCommands(program);
registerStatusCommand(program);
registerFleetCommands(program);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    process.exitCode = error.exitCode === 0 ? 0 : 2;
  } else {
    fail(error instanceof CliError ? error.message : `unexpected error: ${(error as Error).message}`);
    // docs/operating.md: 2 for a usage error (as commander's own), 1 for a refused command.
    process.exitCode = error instanceof UsageError ? 2 : 1;
  }
}
