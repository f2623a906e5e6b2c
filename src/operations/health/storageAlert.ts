// A full data disk is a critical alert (issue 56): raised when the storage watch first counts the disk full (a write
// refused for SQLITE_FULL/ENOSPC, or under MIN_FREE_BYTES left), cleared when space is back. The alert cannot be
// written while the disk is full: it is held in memory meanwhile (GET /api/health shows it as `storageAlert`, not
// written) and written, raised at the time the disk filled, at the first check that can write it (with its clearing,
// when space came back first). One alert per episode; a restart clears an alert an earlier run left open once the disk
// has room.
import type { AlertService } from '../../facility/index.ts';
import type { Logger } from '../../platform/logger.ts';
import type { StorageWatch } from '../../platform/db/storageWatch.ts';

/** The alert's source (its alarm key is `<source>@<since>`). */
export const STORAGE_FULL_CODE = 'system.storage.full';
/** How often the job looks (the watch itself is read on every /api/health too). */
export const STORAGE_CHECK_MS = 10_000;

export type StorageAlertView = { since: string; written: boolean };

export class StorageAlert {
  private episode: { since: string; written: boolean } | null = null;
  private startChecked = false;

  constructor(
    private readonly deps: {
      watch: Pick<StorageWatch, 'state'>;
      alerts: Pick<AlertService, 'fromGatewayAlarm' | 'openAlarmKeyOf'>;
      logger: Logger;
      dataDir: string;
      now?: () => number;
    },
  ) {}

  /** The episode in hand (null: the disk has room and nothing is left to write). */
  view(): StorageAlertView | null {
    return this.episode ? { ...this.episode } : null;
  }

  check(): void {
    const now = new Date((this.deps.now ?? Date.now)()).toISOString();
    const full = this.deps.watch.state() === 'full';
    if (!this.startChecked) {
      this.startChecked = true;
      // An alert an earlier run raised and could not clear (it stopped while the disk was full): this run's episode.
      const open = this.deps.alerts.openAlarmKeyOf(STORAGE_FULL_CODE);
      if (open) this.episode = { since: open.slice(STORAGE_FULL_CODE.length + 1), written: true };
    }
    if (full && !this.episode) {
      this.episode = { since: now, written: false };
      this.deps.logger.error({ dataDir: this.deps.dataDir, since: now }, 'the data disk is full: writes are refused until space is freed');
    }
    if (!this.episode) return;
    const { since } = this.episode;
    if (full && this.episode.written) return;
    try {
      this.deps.alerts.fromGatewayAlarm({
        key: `${STORAGE_FULL_CODE}@${since}`,
        code: STORAGE_FULL_CODE,
        level: 'critical',
        message: 'The data disk is full',
        detail: `The disk of ${this.deps.dataDir} is full since ${since}: writes are refused (507) and backups skip. Free space (emsctl status lists what takes it).`,
        raisedAt: since,
        clearedAt: full ? null : now,
      });
    } catch (error) {
      // Still no room for the alert itself: it stays held (shown on /api/health) and is written at a later check.
      this.deps.logger.debug({ err: error }, 'the disk-full alert could not be written yet');
      return;
    }
    if (full) this.episode.written = true;
    else {
      this.deps.logger.info({ since, clearedAt: now }, 'the data disk has room again: the disk-full alert is cleared');
      this.episode = null;
    }
  }
}
