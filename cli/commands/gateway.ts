// emsctl gateway simulate: the IoT gateway simulator as a standalone server, for trying the dashboard or a second EMS against it.
import type { Command } from 'commander';
import { CliError, cliConfig, integerOption, printResult } from '../context.ts';

export function registerGatewayCommands(program: Command): void {
  program
    .command('gateway')
    .description('the upstream IoT gateway')
    .command('simulate')
    .description('run the gateway simulator until interrupted; it accepts EMS_IOT_USERNAME / EMS_IOT_PASSWORD (default ems / ems-simulator) and EMS_SIM_METERS')
    .option('--port <port>', 'port to listen on (0: any free port)', integerOption('--port', 0, 65535), 8090)
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--token-ttl <seconds>', 'lifetime of the tokens it issues', integerOption('--token-ttl', 1, 86_400 * 30), 3600)
    .action(async (options: { port: number; host: string; tokenTtl: number }, command: Command) => {
      const { iot, simMeters } = cliConfig(command);
      const { startGatewaySimulator } = await import('../../src/gateway/cli.ts');
      let simulator;
      try {
        simulator = await startGatewaySimulator({
          host: options.host,
          port: options.port,
          username: iot.username,
          password: iot.password,
          tokenTtlSec: options.tokenTtl,
          subMeters: simMeters,
        });
      } catch (error) {
        throw new CliError(`cannot listen on ${options.host}:${options.port} (${(error as Error).message})`);
      }
      printResult(command, { url: simulator.url }, `gateway simulator listening on ${simulator.url} (Ctrl-C stops it)`);
      await new Promise<void>((resolve) => {
        const stop = () => resolve();
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
      await simulator.close();
    });
}
