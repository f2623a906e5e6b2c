// emsctl backup run | list | restore <file> | drill [file] | schedule show|set: the same backup modules the service's schedule uses.
// The backup modules load when a backup command runs (see cli/emsctl.ts).
import type { Command } from 'commander';
import type { ScheduleChanges } from '../../src/operations/cli.ts';
import type { Config } from '../../src/platform/config.ts';
import type { Db } from '../../src/platform/db/client.ts';
import { CliError, UsageError, cliConfig, integerOption, printResult, printRows, wantsJson, withDb } from '../context.ts';
import { formatBytes } from '../sizes.ts';
import { localTimeZone, zonedTime } from '../zonedTime.ts';

/** One backup in --json output, in "backup list" and "backup run" alike. */
function backupEntry(info: { name: string; createdAt: string; sizeBytes: number; fileCount: number | null; filesBytes: number | null }) {
  return { name: info.name, createdAt: info.createdAt, sizeBytes: info.sizeBytes, fileCount: info.fileCount, filesBytes: info.filesBytes };
}

/** emsctl acts without an account; the audit trail names it. */
const EMSCTL = { id: null, username: 'emsctl' };

/** The schedule as the API shows it; the cron runs in the box's time zone, and so does the next run shown. */
async function showSchedule(command: Command, db: Db, config: Config, heading?: string): Promise<void> {
  const [{ readChecks }, { describeRetention }, { nextRunOf, readStoredSchedule }, { presentSchedule }] = await Promise.all([
    import('../../src/operations/cli.ts'),
    import('../../src/operations/cli.ts'),
    import('../../src/operations/cli.ts'),
    import('../../src/operations/cli.ts'),
  ]);
  const stored = readStoredSchedule(db);
  const view = presentSchedule(stored, readChecks(config.dataDir), config.backupTarget, stored.enabled ? nextRunOf(stored.cron) : null);
  const target = view.target;
  const zone = localTimeZone();
  const text = [
    ...(heading ? [heading] : []),
    `enabled        ${view.enabled ? 'yes' : 'no'}`,
    // Local time: the box's time zone, named, which is the one the backup's cron timer runs in.
    `cron           ${view.cron} (local time: ${zone})`,
    `next run       ${view.nextRunAt ? `${zonedTime(view.nextRunAt)} ${zone} (${view.nextRunAt})` : '-'}`,
    `retention      ${describeRetention(view.retention)}`,
    `target         ${target ? `${target.dir} (last copy: ${target.status}${target.at ? ` at ${target.at}` : ''}${target.error ? `: ${target.error}` : ''})` : 'none (EMS_BACKUP_TARGET)'}`,
    `last run       ${view.lastRunAt ? `${view.lastRunAt} ${view.lastStatus}` : 'never'}`,
    `last file      ${view.lastFile ?? '-'}`,
    `restore drill  ${view.drill ? `${view.drill.at} ${view.drill.status}${view.drill.error ? `: ${view.drill.error}` : ''}` : 'never'}`,
  ].join('\n');
  printResult(command, { ...view, timeZone: zone }, text);
}

type SetOptions = { cron?: string; at?: string; hour?: number; enable?: boolean; disable?: boolean; daily?: number; weekly?: number; monthly?: number };

/** --at 02:15 / --hour 2 → a nightly cron; --cron as given. One way of saying the time at a time. */
function cronFromOptions(options: SetOptions): string | undefined {
  const given = [options.cron, options.at, options.hour].filter((value) => value !== undefined);
  if (given.length > 1) throw new UsageError('give one of --cron, --at and --hour');
  if (options.hour !== undefined) return `0 ${options.hour} * * *`;
  if (options.at !== undefined) {
    const match = /^([01]?\d|2[0-3]):([0-5]\d)$/.exec(options.at);
    if (!match) throw new UsageError(`--at: expected a local time HH:MM such as 03:30, got "${options.at}"`);
    return `${Number(match[2])} ${Number(match[1])} * * *`;
  }
  return options.cron;
}

export function registerBackupCommands(program: Command): void {
  const backup = program.command('backup').description('backups of the database and the uploaded files (<data dir>/backups/)');

  backup
    .command('run')
    .description("take a backup now (safe while the service runs), copy it to EMS_BACKUP_TARGET if set, and apply the schedule's retention")
    .action(async (_options, command: Command) => {
      const [{ performBackup }, { createLogger }] = await Promise.all([import('../../src/operations/cli.ts'), import('../../src/platform/logger.ts')]);
      await withDb(command, async (db, config) => {
        // One copy step: stepwise, every write of the running service (another connection) would restart the copy.
        const { listBackups } = await import('../../src/operations/cli.ts');
        const outcome = await performBackup(db, config.dataDir, createLogger('silent'), {
          trigger: 'emsctl',
          target: config.backupTarget,
          pagesPerStep: 0x7fffffff,
        });
        if (outcome.status === 'skipped') throw new CliError(`backup not taken: ${outcome.reason}`);
        if (outcome.status === 'failed') throw new CliError(`backup failed: ${outcome.error}`);
        const { name, file, sizeBytes, fileCount, filesBytes, durationMs, deleted, target } = outcome.backup;
        // The fields of its "backup list" entry first, then what the run adds.
        const listed = listBackups(config.dataDir).find((info) => info.name === name);
        const text = [
          `backup written: ${file} (${formatBytes(sizeBytes)}, ${fileCount} files / ${formatBytes(filesBytes)} hard-linked, ${durationMs} ms)`,
          ...deleted.map((old) => `deleted beyond retention: ${old}`),
          ...(target?.status === 'ok'
            ? [`copied to ${target.dir} and verified there`, ...target.deleted.map((old) => `deleted from the target beyond retention: ${old}`)]
            : []),
          ...(target?.status === 'failed' ? [`warning: not copied to ${target.dir}: ${target.error} (the local backup is kept)`] : []),
        ].join('\n');
        printResult(command, { ...(listed ? backupEntry(listed) : { name, sizeBytes, fileCount, filesBytes }), file, durationMs, deleted, target }, text);
      });
    });

  backup
    .command('list')
    .description('list the backups, newest first')
    .action(async (_options, command: Command) => {
      const { dataDir } = cliConfig(command);
      const { backupsDir, listBackups } = await import('../../src/operations/cli.ts');
      const rows = listBackups(dataDir).map(backupEntry);
      if (!rows.length && !wantsJson(command)) {
        process.stdout.write(`no backups in ${backupsDir(dataDir)}\n`);
        return;
      }
      printRows(command, rows, ['name', 'createdAt', 'size', 'files'], (row) => ({
        ...row,
        size: formatBytes(row.sizeBytes as number),
        files: row.fileCount === null ? 'none' : `${row.fileCount as number} (${formatBytes(row.filesBytes as number | null)})`,
      }));
    });

  backup
    .command('restore')
    .argument('<file>', 'a name from "emsctl backup list", or a path to a backup file')
    .option('--db-only', 'restore the database alone (for a backup without its .files folder); uploads stay as they are')
    .description('replace the database and the uploaded files with a backup; the service must be stopped first')
    .action(async (file: string, options: { dbOnly?: boolean }, command: Command) => {
      const { dataDir } = cliConfig(command);
      const { BackupBusy, BackupInvalid, BackupNotFound, restoreBackup, ServiceRunning } = await import('../../src/operations/cli.ts');
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
        result.upkeep.kept
          ? "the backup schedule, its retention and the last backup's record are this box's, as before the restore"
          : `the backup schedule, its retention and the last backup's record are now THE BACKUP'S (${result.upkeep.reason}): check them with emsctl backup schedule show`,
        'start the service again (systemctl start ems); it applies any newer migrations on start',
      ].join('\n');
      printResult(command, result, text);
    });

  backup
    .command('drill')
    .argument('[file]', 'a name from "emsctl backup list" (default: the newest)')
    .description(
      'restore drill now: restore a backup into a temp dir, integrity_check, rows per table, files; the live data is not touched (safe while the service runs)',
    )
    .action(async (file: string | undefined, _options, command: Command) => {
      const { dataDir } = cliConfig(command);
      const [{ BackupNotFound }, { performDrill }, { createLogger }] = await Promise.all([
        import('../../src/operations/cli.ts'),
        import('../../src/operations/cli.ts'),
        import('../../src/platform/logger.ts'),
      ]);
      let drill;
      try {
        drill = performDrill(dataDir, createLogger('silent'), { backup: file, trigger: 'emsctl' });
      } catch (error) {
        if (error instanceof BackupNotFound) throw new CliError(error.message);
        throw error;
      }
      if (!drill) throw new CliError('restore drill not run: a backup or restore is in progress');
      const text =
        drill.status === 'ok'
          ? `restore drill passed: ${drill.backup} restored, integrity_check ok, ${drill.tables} tables / ${drill.rows} rows as when it was taken, ${drill.files} files, ${drill.durationMs} ms`
          : `restore drill FAILED${drill.backup ? ` for ${drill.backup}` : ''}: ${drill.error}`;
      printResult(command, drill, text);
      if (drill.status !== 'ok') process.exitCode = 1;
    });

  const schedule = backup.command('schedule').description('when backups run and how many are kept (the running service picks a change up within 10 s)');

  schedule
    .command('show')
    .description('the schedule, its next and last run, the backup target and the last restore drill')
    .action(async (_options, command: Command) => {
      await withDb(command, (db, config) => showSchedule(command, db, config));
    });

  schedule
    .command('set')
    .description('change the schedule; options left out keep their value')
    .option('--cron <expression>', 'node-cron expression in the box\'s time zone (emsctl backup schedule show names it), e.g. "30 3 * * *"')
    .option('--at <HH:MM>', "nightly at this time of the box's time zone, e.g. 03:30")
    .option('--hour <hour>', 'nightly at this full hour (0-23)', integerOption('--hour', 0, 23))
    .option('--enable', 'switch scheduled backups on')
    .option('--disable', 'switch scheduled backups off (not recommended)')
    .option('--daily <n>', 'days that keep their newest backup (1-1000)', integerOption('--daily', 1, 1000))
    .option('--weekly <n>', 'ISO weeks that keep their newest backup (0-1000)', integerOption('--weekly', 0, 1000))
    .option('--monthly <n>', 'months that keep their newest backup (0-1000)', integerOption('--monthly', 0, 1000))
    .action(async (options: SetOptions, command: Command) => {
      if (options.enable && options.disable) throw new UsageError('give --enable or --disable, not both');
      const changes: ScheduleChanges = {};
      const cron = cronFromOptions(options);
      if (cron !== undefined) changes.cron = cron;
      if (options.enable || options.disable) changes.enabled = Boolean(options.enable);
      const retention = { daily: options.daily, weekly: options.weekly, monthly: options.monthly };
      const given = Object.fromEntries(Object.entries(retention).filter(([, value]) => value !== undefined));
      if (Object.keys(given).length) changes.retention = given;
      if (!Object.keys(changes).length) throw new UsageError('nothing to change: give --cron/--at/--hour, --enable/--disable, --daily, --weekly or --monthly');
      const [{ CRON_MESSAGE, changeSchedule }, { AppError }] = await Promise.all([
        import('../../src/operations/cli.ts'),
        import('../../src/platform/errors.ts'),
      ]);
      await withDb(command, async (db, config) => {
        try {
          changeSchedule(db, changes, EMSCTL);
        } catch (error) {
          if (error instanceof AppError) throw new UsageError(`--cron: ${CRON_MESSAGE}`);
          throw error;
        }
        await showSchedule(command, db, config, 'backup schedule changed:');
      });
    });
}
