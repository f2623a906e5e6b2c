// Shutdown hooks: features register what to stop (timers, pools, the DB); they run in reverse order.
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
 * verification-code sweep (60 s), the daily energy-anomaly check (hourly) and the WAL checkpoint check (10 s,
 * src/platform/db/walCheckpoint.ts). Jobs at wall-clock times are cron expressions, timed by src/platform/jobs/cron.ts: backups (CronTimer, the
 * box's clock) and report plans (nextCronRun, the site's time zone); see docs/design-decisions.md for the clock rule.
 */
export class Repeating {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;

  constructor(
    private readonly task: () => Promise<unknown>,
    private readonly intervalMs: number,
  ) {}

  start(): void {
    const tick = () => {
      this.running = this.task().finally(() => {
        this.running = undefined;
        if (this.timer !== undefined) this.timer = setTimeout(tick, this.intervalMs);
      });
    };
    this.timer = setTimeout(tick, 0);
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
