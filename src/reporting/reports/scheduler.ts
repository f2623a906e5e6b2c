// Runs each enabled report plan on its cron in the site time zone: one timer, plans re-read on every wake, missed times caught up once.
import { eq } from 'drizzle-orm';
import type { Db } from '../../platform/db/client.ts';
import { platformConfig, reportPlans } from '../../platform/db/schema/index.ts';
import type { Logger } from '../../platform/logger.ts';
import { nextCronRun } from '../../platform/jobs/cron.ts';
import type { Job, JobState } from '../../platform/jobs/jobs.ts';
import { Repeating } from '../../platform/jobs/lifecycle.ts';
import type { Clock, ReportRunner, RunTrigger } from './runs.ts';

/** Plan changes (API, emsctl, a restore) are noticed within this, even when no run is due sooner. */
const POLL_MS = 10_000;
/** A due time found later than this after it passed was missed (the service was down), not just reached. */
const LATE_MS = 60_000;

type ScheduledPlan = { id: number; cron: string; lastRunAt: string | null; updatedAt: string; timezone: string };
type Slot = { signature: string; nextAt: number | null };

export class ReportScheduler {
  private readonly slots = new Map<number, Slot>();
  private readonly enabledPlans;
  /** The scheduler's wake-ups on the job runner: at the soonest plan's time, and every POLL_MS at most (plan changes). */
  readonly wakeJob: Repeating;
  private stopped = true;
  private started = 0;
  private lastStartedAt: number | null = null;

  constructor(private readonly deps: { db: Db; logger: Logger; runner: ReportRunner; clock: Clock; pollMs?: number }) {
    this.enabledPlans = deps.db.orm
      .select({
        id: reportPlans.id,
        cron: reportPlans.cron,
        lastRunAt: reportPlans.lastRunAt,
        updatedAt: reportPlans.updatedAt,
        timezone: platformConfig.timezone,
      })
      .from(reportPlans)
      .innerJoin(platformConfig, eq(platformConfig.id, 1))
      .where(eq(reportPlans.enabled, true))
      .prepare();
    const poll = deps.pollMs ?? POLL_MS;
    this.wakeJob = new Repeating(async () => this.wake(), poll, 'report plan wake-ups', {
      delayMs: () => this.untilDue(),
      schedule: `at the soonest plan's time, every ${poll / 1000} s at most`,
      unref: true,
    });
  }

  start(): void {
    this.stopped = false;
    this.deps.runner.removeOrphanFolders();
    this.wakeJob.start();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.wakeJob.stop();
    await this.deps.runner.stop();
  }

  /** The plans' schedule as one named job: its runs are the plan runs it started, its next time the soonest plan's. */
  get job(): Job {
    return {
      name: 'report plans',
      schedule: "each enabled plan's cron (site time zone)",
      state: (): JobState => {
        const next = Math.min(...[...this.slots.values()].map((slot) => slot.nextAt ?? Infinity));
        const running = [...this.slots.keys()].some((id) => this.deps.runner.isRunning(id));
        return {
          runs: this.started,
          failures: 0,
          running,
          lastStartedAt: this.lastStartedAt,
          lastDurationMs: null,
          nextAt: Number.isFinite(next) ? next : null,
        };
      },
    };
  }

  /** When each enabled plan runs next (epoch ms), as of the last tick. */
  nextRuns(): Map<number, number | null> {
    return new Map([...this.slots].map(([id, slot]) => [id, slot.nextAt]));
  }

  /**
   * Starts every run that is due at `now` and returns their completions. A plan seen for the first time, or changed
   * (cron, enabled, time zone, any edit), counts its next time from its last run or its last edit, whichever is later:
   * a time that passed meanwhile — while the service was down — runs once now ('catch-up'), however many were missed.
   */
  tick(now = this.deps.clock.now()): Promise<unknown>[] {
    const started: Promise<unknown>[] = [];
    const plans: ScheduledPlan[] = this.enabledPlans.all();
    const seen = new Set<number>();
    for (const plan of plans) {
      seen.add(plan.id);
      const signature = `${plan.cron}|${plan.timezone}|${plan.updatedAt}`;
      let slot = this.slots.get(plan.id);
      if (!slot || slot.signature !== signature) {
        const reference = Math.max(Date.parse(plan.updatedAt), plan.lastRunAt ? Date.parse(plan.lastRunAt) : 0);
        slot = { signature, nextAt: this.next(plan, reference) };
        this.slots.set(plan.id, slot);
      }
      if (slot.nextAt === null || slot.nextAt > now) continue;
      const trigger: RunTrigger = now - slot.nextAt > LATE_MS ? 'catch-up' : 'schedule';
      slot.nextAt = this.next(plan, now);
      if (this.deps.runner.isRunning(plan.id)) {
        this.deps.logger.warn({ planId: plan.id }, 'report run skipped: the previous run of this plan is still in progress');
        continue;
      }
      try {
        started.push(this.deps.runner.start(plan.id, trigger, null).finished);
        this.started++;
        this.lastStartedAt = now;
      } catch (error) {
        this.deps.logger.error({ err: error, planId: plan.id }, 'report run could not start');
      }
    }
    for (const id of this.slots.keys()) if (!seen.has(id)) this.slots.delete(id);
    return started;
  }

  private next(plan: ScheduledPlan, after: number): number | null {
    try {
      return nextCronRun(plan.cron, plan.timezone, after);
    } catch (error) {
      // Plans are validated on write; a hand-edited row must not stop the other plans.
      this.deps.logger.error({ err: error, planId: plan.id, cron: plan.cron }, 'report plan has an unusable cron expression');
      return null;
    }
  }

  /** Starts what is due; the runs go on after it returns (their completions are the runner's). */
  private wake(): void {
    if (this.stopped) return;
    try {
      this.tick();
    } catch (error) {
      this.deps.logger.error({ err: error }, 'report scheduler tick failed');
    }
  }

  /** Until the soonest plan's time (the job runner caps it at the poll interval). */
  private untilDue(): number {
    const due = Math.min(...[...this.slots.values()].map((slot) => slot.nextAt ?? Infinity));
    return due - this.deps.clock.now();
  }
}
