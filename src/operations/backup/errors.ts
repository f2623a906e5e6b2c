// The backup errors, kept apart so the worker launcher (offThread.ts) can rebuild them without importing archive.ts.
export class BackupBusy extends Error {
  override name = 'BackupBusy';
}
export class BackupInvalid extends Error {
  override name = 'BackupInvalid';
}
export class BackupNotFound extends Error {
  override name = 'BackupNotFound';
}
