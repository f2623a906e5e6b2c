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

/**
 * A task run now and then again `intervalMs` after each run ends: runs never overlap, and stop() waits for the one in
 * flight. The task must not throw (a failure is the task's to log).
 *
 * The one runner for periodic work. Its users: the energy collector (EMS_COLLECT_INTERVAL), the gateway alarm poller
 * (EMS_ALARM_POLL_INTERVAL), escalation checks (10 s), the gateway reachability probe (PROBE_INTERVAL_MS), the
 * verification-code sweep (60 s), the daily energy-anomaly check (hourly), the load-shedding guard (5 s, whatever the
 * collector does: src/analysis/loadSheddingGuard.ts) and the WAL checkpoint check (10 s,
 * src/platform/db/walCheckpoint.ts). Jobs at wall-clock times are cron expressions, timed by src/platform/jobs/cron.ts: backups (CronTimer, the
 * box's clock) and report plans (nextCronRun, the site's time zone); see docs/design-decisions.md for the clock rule.
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
  ) {
    this.schedule = every(intervalMs);
  }

  start(): void {
    const tick = () => {
      this.nextAt = null;
      this.running = this.record.track(this.task).finally(() => {
        this.running = undefined;
        if (this.timer !== undefined) {
          this.timer = setTimeout(tick, this.intervalMs);
          this.nextAt = Date.now() + this.intervalMs;
        }
      });
    };
    this.timer = setTimeout(tick, 0);
    this.nextAt = Date.now();
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
