// Whatever load shedding switched off is switched back on, whatever the collector does (issue 39): the safety restores
// (maximum shed duration, disabled, no contract, points left by an earlier run, restores the gateway refused) run on
// their own timer, right after a settings change, and for every shed point when the service stops (a bounded wait,
// before the gateway client closes). A restore that cannot be written is a critical alert, an error line and a field of
// /api/health, and is tried again, after a wait that doubles from 5 s to a minute (src/analysis/restoreBackoff.ts). For the box itself dying, see docs/load-shedding.md (the gateway-side
// fail-safe an installer configures).
import type { Logger } from '../platform/logger.ts';
import { Repeating } from '../platform/jobs/lifecycle.ts';
import type { LoadShedder } from './loadShedding.ts';

/** How often the safety restores run. */
export const GUARD_INTERVAL_MS = 5_000;
/** How long a stop (and a settings change) waits for the restores before going on; the service's stop limit is 60 s. */
export const STOP_WAIT_MS = 8_000;

export class LoadSheddingGuard {
  /** Its timer, for the job registry (/metrics: ems_job_*). */
  readonly job: Repeating;

  constructor(
    private readonly shedder: Pick<LoadShedder, 'enforce' | 'adoptLeftovers' | 'stop' | 'reportStillShed'>,
    private readonly deps: { now: () => number; logger: Logger; intervalMs?: number; stopWaitMs?: number },
  ) {
    this.job = new Repeating(
      async () => {
        await this.shedder.enforce(this.deps.now());
      },
      deps.intervalMs ?? GUARD_INTERVAL_MS,
      'load shedding guard',
    );
  }

  /** Takes over the points a previous run left shed, then runs the safety restores now and every interval. */
  start(): void {
    this.shedder.adoptLeftovers(this.deps.now());
    this.job.start();
  }

  /** After a settings change: the safety restores now (disabled restores every shed point), waited for at most STOP_WAIT_MS. */
  async applyNow(): Promise<void> {
    await this.bounded(this.shedder.enforce(this.deps.now()));
  }

  /**
   * The service is stopping: no more evaluations, and every shed point is restored, waited for at most STOP_WAIT_MS. What
   * could not be restored in that time is logged at error and raised as a critical alert (the next start restores it).
   */
  async stop(): Promise<void> {
    this.shedder.stop();
    await this.job.stop();
    const done = await this.bounded(this.shedder.enforce(this.deps.now(), 'the service is stopping'));
    if (done === 'timeout') {
      const codes = this.shedder.reportStillShed(this.deps.now(), `no restore confirmed within ${(this.deps.stopWaitMs ?? STOP_WAIT_MS) / 1000} s of the stop`);
      this.deps.logger.error({ points: codes }, 'load shedding: shed points could not be restored before the service stopped');
    }
  }

  private async bounded(work: Promise<unknown>): Promise<'done' | 'timeout'> {
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), this.deps.stopWaitMs ?? STOP_WAIT_MS);
    });
    try {
      return await Promise.race([work.then(() => 'done' as const), limit]);
    } finally {
      clearTimeout(timer);
    }
  }
}
