// The fleet's clock is its primary database's, not the instance's: staleness, sync lag, backup age and the quarantine
// of intervals from the future are judged against now() of the primary, so several instances (and a replica whose host
// clock drifts) agree on them however their own clocks are set. The offset between this instance's clock and the
// database's is measured with one `select clock_timestamp()` (the midpoint of the round trip) and re-measured every
// RESAMPLE_MS; between samples a reading costs nothing. If the primary cannot be asked (a failover under way) the last
// offset is kept, so the portfolio read from a replica still answers.
import type pg from 'pg';

/** How long a measured offset is used before it is measured again. */
export const RESAMPLE_MS = 60_000;

export class DatabaseClock {
  private offsetMs = 0;
  private sampledAt = Number.NEGATIVE_INFINITY;
  private sampling: Promise<void> | null = null;

  constructor(
    private readonly primary: pg.Pool,
    /** This instance's own clock (tests set one that is off by hours). */
    private readonly local: () => number = Date.now,
  ) {}

  /** Milliseconds since the epoch by the primary database's clock. */
  async now(): Promise<number> {
    if (this.local() - this.sampledAt > RESAMPLE_MS) {
      this.sampling ??= this.sample().finally(() => {
        this.sampling = null;
      });
      await this.sampling;
    }
    return this.local() + this.offsetMs;
  }

  /** The last measured offset (database minus instance), in milliseconds. */
  get offset(): number {
    return this.offsetMs;
  }

  private async sample(): Promise<void> {
    const before = this.local();
    try {
      const result = await this.primary.query<{ ms: string }>('select (extract(epoch from clock_timestamp()) * 1000)::bigint::text as ms');
      const after = this.local();
      // Whole milliseconds, as Date.now() reads (a skew is stored as an integer).
      this.offsetMs = Math.round(Number(result.rows[0]!.ms) - (before + after) / 2);
      this.sampledAt = after;
    } catch {
      // The primary is away: keep the last offset (0 before the first sample) and ask again in 5 seconds.
      this.sampledAt = this.local() - RESAMPLE_MS + 5_000;
    }
  }
}
