// emsctl: administration of an EMS appliance from its own shell. Each command group lives in cli/commands/.
import { Command, CommanderError } from 'commander';
import { version } from '../src/packageRoot.ts';
import { CliError } from './context.ts';
import { registerUserCommands } from './commands/users.ts';
import { registerSystemCommands } from './commands/system.ts';
import { registerBackupCommands } from './commands/backup.ts';
import { registerGatewayCommands } from './commands/gateway.ts';
import { registerStatusCommand } from './commands/status.ts';

const program = new Command('emsctl')
  .description('Administer the EMS service on this box (safe while it runs)')
  .version(version)
  .option('--data-dir <dir>', 'data directory (default: $EMS_DATA_DIR or ./data)')
  .option('--json', 'machine-readable output')
  .exitOverride()
  // commander's own complaints (a missing option, an unknown command) in the one-line form of every other error.
  .configureOutput({ outputError: (text, write) => write(`emsctl: ${text.replace(/^error: /, '').trim()}\n`) });

registerUserCommands(program);
registerSystemCommands(program);
registerBackupCommands(program);
registerGatewayCommands(program);
registerStatusCommand(program);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    process.exitCode = error.exitCode === 0 ? 0 : 2;
  } else {
    const message = error instanceof CliError ? error.message : `unexpected error: ${(error as Error).message}`;
    process.stderr.write(`emsctl: ${message}\n`);
    process.exitCode = 1;
  }
}
