// Shutdown hooks: features register what to stop (timers, pools, the DB); they run in reverse order.
import { every, type Job, type JobState, RunRecord } from './jobs.ts';

export class Lifecycle {
  private readonly hooks: Array<{ name: string; close: () => void | Promise<void> }> = [];

  onClose(name: string, close: () => void | Promise<void>): void {
    this.hooks.push({ name, close });
  }

  async close(onError: (name: string, error: unknown) => void): Promise<void> {
    while (this.hooks.length) {
      const hook = this.hooks.pop()!;
      try {
        await hook.close();
      } catch (error) {
        onError(hook.name, error);
      }
    }
  }
}

/** How a Repeating is timed besides its interval. */
export type RepeatingOptions = {
  /**
   * The wait after each run, asked when the run ends (ms, at most the interval): a job that knows when it is next due
   * (the report plans' soonest time) wakes then instead of at the next interval. Default: the interval.
   */
  delayMs?: () => number;
  /** The schedule in words when `delayMs` makes "every N s" untrue. */
  schedule?: string;
  /** The timer does not keep the process alive (a job whose stop is not awaited by every caller: tests that build it alone). */
  unref?: boolean;
};

/**
 * A task run now and then again `intervalMs` after each run ends: runs never overlap, and stop() waits for the one in
 * flight. The task must not throw (a failure is the task's to log).
 *
 * The one runner for periodic work: every loop of the service is a Repeating registered by name in the composition
 * root's JobRegistry, so /metrics (ems_job_*) lists them all — the collector, the alarm poller, escalations, the
 * gateway probe, the code sweep, the anomaly and budget checks, the load-shedding guard, the WAL checkpoint, fleet
 * sync, the backup schedule's re-read (10 s) and the report plans' wake-ups (at the soonest plan, 10 s at most).
 * test/structure/jobLoops.test.ts refuses a timer loop anywhere else. Jobs at wall-clock times are cron expressions,
 * timed by src/platform/jobs/cron.ts: backups (CronTimer, the box's clock) and report plans (nextCronRun, the site's
 * time zone); see docs/design-decisions.md for the clock rule.
 */
export class Repeating implements Job {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private nextAt: number | null = null;
  private readonly record = new RunRecord();
  readonly schedule: string;

  constructor(
    private readonly task: () => Promise<unknown>,
    private readonly intervalMs: number,
    /** The job's name in the registry (src/platform/jobs/jobs.ts) and /metrics. */
    readonly name = 'unnamed',
    private readonly options: RepeatingOptions = {},
  ) {
    this.schedule = options.schedule ?? every(intervalMs);
  }

  start(): void {
    const arm = (delay: number) => {
      this.timer = setTimeout(tick, delay);
      if (this.options.unref) this.timer.unref();
      this.nextAt = Date.now() + delay;
    };
    const tick = () => {
      this.nextAt = null;
      this.running = this.record.track(this.task).finally(() => {
        this.running = undefined;
        if (this.timer !== undefined) arm(Math.max(0, Math.min(this.intervalMs, this.options.delayMs?.() ?? this.intervalMs)));
      });
    };
    arm(0);
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.nextAt = null;
    await this.running;
  }

  state(): JobState {
    return this.record.state(this.nextAt);
  }
}
