// What emsctl uses of operations/ (cli/commands/backup.ts, status.ts): the backups, their checks, retention and
// schedule, and the service lock. A face beside index.ts, for emsctl only: loaded lazily by a command, without the
// module and its routes (index.ts would load most of the service; docs/development.md, importGraph.test.ts).
export { BackupBusy, BackupInvalid, BackupNotFound, backupsDir, listBackups, restoreBackup, ServiceRunning } from './backup/archive.ts';
export { readChecks } from './backup/checks.ts';
export { runningService } from './backup/locks.ts';
export { describeRetention } from './backup/retention.ts';
export { CRON_MESSAGE, changeSchedule, nextRunOf, readStoredSchedule, type ScheduleChanges } from './backup/schedule.ts';
export { performBackup, performDrill, presentSchedule } from './backup/service.ts';
