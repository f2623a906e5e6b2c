// Failed-login counters per username and per client address, kept in SQLite so `emsctl user unlock` reaches a running server.
import type { Db } from '../db/client.ts';
import { TooManyRequests } from '../http/errors.ts';

export const WINDOW_MS = 15 * 60_000;
export const MAX_FAILURES_PER_USER = 10;
/** Higher than per user: many staff behind one reverse proxy share an address. */
export const MAX_FAILURES_PER_ADDRESS = 100;

export const userKey = (username: string) => `user:${username.toLowerCase()}`;
const addressKey = (address: string) => `ip:${address}`;

export class LoginThrottle {
  private readonly get;
  private readonly bump;
  private readonly clear;
  private readonly purge;

  constructor(
    db: Db,
    private readonly now: () => number = Date.now,
  ) {
    const sqlite = db.sqlite;
    this.get = sqlite.prepare('SELECT failures, window_started_at AS windowStartedAt FROM login_throttle WHERE key = ?');
    // A window that has passed starts over at 1.
    this.bump = sqlite.prepare(`INSERT INTO login_throttle (key, failures, window_started_at) VALUES (@key, 1, @now)
      ON CONFLICT(key) DO UPDATE SET
        failures = CASE WHEN window_started_at <= @cutoff THEN 1 ELSE failures + 1 END,
        window_started_at = CASE WHEN window_started_at <= @cutoff THEN @now ELSE window_started_at END`);
    this.clear = sqlite.prepare('DELETE FROM login_throttle WHERE key = ?');
    this.purge = sqlite.prepare('DELETE FROM login_throttle WHERE window_started_at <= ?');
  }

  private waitMs(key: string, limit: number): number {
    const row = this.get.get(key) as { failures: number; windowStartedAt: number } | undefined;
    if (!row || row.failures < limit) return 0;
    return Math.max(0, row.windowStartedAt + WINDOW_MS - this.now());
  }

  /** Throws 429 with Retry-After while either counter is at its limit. */
  assertAllowed(username: string, address: string): void {
    const wait = Math.max(this.waitMs(userKey(username), MAX_FAILURES_PER_USER), this.waitMs(addressKey(address), MAX_FAILURES_PER_ADDRESS));
    if (wait > 0) throw new TooManyRequests('Too many failed sign-in attempts; try again later', wait / 1000);
  }

  recordFailure(username: string, address: string): void {
    const now = this.now();
    const cutoff = now - WINDOW_MS;
    this.purge.run(cutoff);
    this.bump.run({ key: userKey(username), now, cutoff });
    this.bump.run({ key: addressKey(address), now, cutoff });
  }

  recordSuccess(username: string): void {
    this.clear.run(userKey(username));
  }
}

/** Used by `emsctl user unlock`. */
export function unlockUser(db: Db, username: string): boolean {
  return db.sqlite.prepare('DELETE FROM login_throttle WHERE key = ?').run(userKey(username)).changes > 0;
}
