// The service's periodic work, by name: every job registers here when the composition root starts it, so one list
// says what runs, how often, and how its last run went (/metrics: ems_job_*). A job is a Repeating (every N ms) or a
// timer at wall-clock times (cron) that reports its next run; both describe themselves the same way.

/** What a job says of itself; times are epoch ms, null until it happened. */
export type JobState = {
  runs: number;
  failures: number;
  running: boolean;
  lastStartedAt: number | null;
  lastDurationMs: number | null;
  nextAt: number | null;
};

export interface Job {
  readonly name: string;
  /** How it is timed, in words: "every 60 s", "cron 0 3 * * * (box time)". */
  readonly schedule: string;
  state(): JobState;
}

export type JobView = JobState & { name: string; owner: string; schedule: string };

export class JobRegistry {
  private readonly jobs = new Map<string, { owner: string; job: Job }>();

  /** A name is registered once: two jobs of one name would hide each other in the list. */
  add(owner: string, job: Job): void {
    if (this.jobs.has(job.name)) throw new Error(`job "${job.name}" is registered twice`);
    this.jobs.set(job.name, { owner, job });
  }

  list(): JobView[] {
    return [...this.jobs.values()].map(({ owner, job }) => ({ name: job.name, owner, schedule: job.schedule, ...job.state() }));
  }
}

/** Counts runs of a task and times them: the bookkeeping every job kind shares. */
export class RunRecord {
  runs = 0;
  failures = 0;
  running = false;
  lastStartedAt: number | null = null;
  lastDurationMs: number | null = null;

  async track<T>(task: () => Promise<T>): Promise<T> {
    this.runs++;
    this.running = true;
    this.lastStartedAt = Date.now();
    const started = performance.now();
    try {
      return await task();
    } catch (error) {
      this.failures++;
      throw error;
    } finally {
      this.running = false;
      this.lastDurationMs = Math.round(performance.now() - started);
    }
  }

  state(nextAt: number | null): JobState {
    const { runs, failures, running, lastStartedAt, lastDurationMs } = this;
    return { runs, failures, running, lastStartedAt, lastDurationMs, nextAt };
  }
}

export const every = (ms: number) => (ms % 60_000 === 0 ? `every ${ms / 60_000} min` : ms % 1000 === 0 ? `every ${ms / 1000} s` : `every ${ms} ms`);
