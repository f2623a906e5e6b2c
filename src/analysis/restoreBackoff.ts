// When a restore the gateway did not confirm is tried again (issue 56): not at every run of the guard (every 5 s, each
// try an error line, an audit entry and a write to the gateway, for as long as the gateway refuses: 17,280 a day), but
// after a wait that doubles from RETRY_FIRST_MS to RETRY_MAX_MS, counted on the monotonic clock (a wall clock that
// steps or is sped up cannot make it wait longer). A point restored, or shed again, starts from the first wait again.

/** The first wait after a failed restore (the guard's interval). */
export const RETRY_FIRST_MS = 5_000;
/** The longest wait between two tries: a shed load is never left more than a minute without one. */
export const RETRY_MAX_MS = 60_000;

export class RestoreBackoff {
  private readonly failing = new Map<number, { failures: number; nextAt: number }>();

  constructor(private readonly monotonic: () => number) {}

  /** Whether a restore of the point may be tried now (never failed, or its wait is over). */
  due(pointId: number): boolean {
    const entry = this.failing.get(pointId);
    return !entry || this.monotonic() >= entry.nextAt;
  }

  /** A restore failed: the next try after the doubled wait. Answers that wait (ms). */
  failed(pointId: number): number {
    const failures = (this.failing.get(pointId)?.failures ?? 0) + 1;
    const waitMs = Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** (failures - 1));
    this.failing.set(pointId, { failures, nextAt: this.monotonic() + waitMs });
    return waitMs;
  }

  /** Restored (or no longer shed): tried at once next time. */
  clear(pointId: number): void {
    this.failing.delete(pointId);
  }
}
