// emsctl backup run | list | restore <file>: the same backup module the service's schedule uses.
import type { Command } from 'commander';
import { BackupBusy, BackupInvalid, BackupNotFound, backupsDir, listBackups, restoreBackup, ServiceRunning } from '../../src/backup/archive.ts';
import { performBackup } from '../../src/backup/service.ts';
import { createLogger } from '../../src/logger.ts';
import { CliError, cliConfig, printResult, printRows, withDb } from '../context.ts';

function megabytes(bytes: number | null): string {
  return bytes === null ? '-' : `${(bytes / 1048576).toFixed(1)} MB`;
}

export function registerBackupCommands(program: Command): void {
  const backup = program.command('backup').description('backups of the database and the uploaded files (<data dir>/backups/)');

  backup
    .command('run')
    .description('take a backup now (safe while the service runs), keeping as many as the schedule\'s retention says')
    .action(async (_options, command: Command) => {
      await withDb(command, async (db, config) => {
        // One copy step: stepwise, every write of the running service (another connection) would restart the copy.
        const outcome = await performBackup(db, config.dataDir, createLogger('silent'), { trigger: 'emsctl', pagesPerStep: 0x7fffffff });
        if (outcome.status === 'skipped') throw new CliError(`backup not taken: ${outcome.reason}`);
        if (outcome.status === 'failed') throw new CliError(`backup failed: ${outcome.error}`);
        const { name, file, sizeBytes, fileCount, filesBytes, durationMs, deleted } = outcome.backup;
        const text = [
          `backup written: ${file} (${megabytes(sizeBytes)}, ${fileCount} files / ${megabytes(filesBytes)} hard-linked, ${durationMs} ms)`,
          ...deleted.map((old) => `deleted beyond retention: ${old}`),
        ].join('\n');
        printResult(command, { name, file, sizeBytes, fileCount, filesBytes, durationMs, deleted }, text);
      });
    });

  backup
    .command('list')
    .description('list the backups, newest first')
    .action((_options, command: Command) => {
      const { dataDir } = cliConfig(command);
      const rows = listBackups(dataDir).map((info) => ({
        name: info.name,
        createdAt: info.createdAt,
        sizeBytes: info.sizeBytes,
        size: megabytes(info.sizeBytes),
        fileCount: info.fileCount,
        filesBytes: info.filesBytes,
        files: info.fileCount === null ? 'none' : `${info.fileCount} (${megabytes(info.filesBytes)})`,
      }));
      if (!rows.length && !(command.optsWithGlobals() as { json?: boolean }).json) {
        process.stdout.write(`no backups in ${backupsDir(dataDir)}\n`);
        return;
      }
      printRows(command, rows, ['name', 'createdAt', 'size', 'files']);
    });

  backup
    .command('restore')
    .argument('<file>', 'a name from "emsctl backup list", or a path to a backup file')
    .option('--db-only', 'restore the database alone (for a backup without its .files folder); uploads stay as they are')
    .description('replace the database and the uploaded files with a backup; the service must be stopped first')
    .action((file: string, options: { dbOnly?: boolean }, command: Command) => {
      const { dataDir } = cliConfig(command);
      let result;
      try {
        result = restoreBackup(dataDir, file, { dbOnly: options.dbOnly });
      } catch (error) {
        if (error instanceof ServiceRunning || error instanceof BackupBusy) throw new CliError(`refusing to restore: ${error.message}`);
        if (error instanceof BackupNotFound) throw new CliError(error.message);
        if (error instanceof BackupInvalid) throw new CliError(`refusing to restore: the backup does not verify: ${error.message}`);
        throw error;
      }
      const text = [
        `restored ${result.restored}${result.dbOnly ? ' (database only)' : ` with ${result.fileCount} files`}`,
        `what it replaced is kept in ${result.replacedDir}`,
        'start the service again (systemctl start ems); it applies any newer migrations on start',
      ].join('\n');
      printResult(command, result, text);
    });
}
