// Password-check budget per account and per client address, kept in SQLite so `emsctl user unlock` reaches a running server.
import { and, eq, gt, inArray, lte, sql } from 'drizzle-orm';
import type { Db } from '../../platform/db/client.ts';
import { loginThrottle } from '../../platform/db/schema/index.ts';
import { TooManyRequests } from '../../platform/errors.ts';

export const WINDOW_MS = 15 * 60_000;
export const MAX_FAILURES_PER_USER = 10;
/** Higher than per user: many staff behind one reverse proxy share an address. */
export const MAX_FAILURES_PER_ADDRESS = 100;

/**
 * One counter per account, whichever name (username or email) was typed: the key is the user id when the login
 * names an account, else the lower-cased login (guesses at unknown names are limited too, and tell nothing).
 */
export const accountKey = (userId: number | undefined, login: string) => (userId === undefined ? `login:${login.toLowerCase()}` : `user:${userId}`);
const addressKey = (address: string) => `ip:${address}`;

/** A password check that has been counted as a failure up front; `succeeded()` gives the attempt back. */
export type Attempt = { succeeded(): void };

/** A budget that is spent: told once per lockout window, on the first refused attempt. */
export type Lockout = { what: 'account' | 'address'; key: string; login: string; address: string; retryAfterSec: number };

/** Lockouts already told, by counter key; bounded even when a flood locks many names at once. */
const MAX_TOLD_LOCKOUTS = 10_000;

export class LoginThrottle {
  private readonly get;
  private readonly bump;
  private readonly giveBack;
  private readonly clear;
  private readonly purge;
  private readonly reserveBoth;

  constructor(
    private readonly db: Db,
    private readonly now: () => number = Date.now,
    private readonly onLockout: (lockout: Lockout) => void = () => {},
  ) {
    const orm = db.orm;
    const key = eq(loginThrottle.key, sql.placeholder('key'));
    const cutoffSlot = sql.placeholder('cutoff');
    const nowSlot = sql.placeholder('now');
    // Prepared once: every sign-in attempt runs these.
    this.get = orm.select({ failures: loginThrottle.failures, windowStartedAt: loginThrottle.windowStartedAt }).from(loginThrottle).where(key).prepare();
    // A window that has passed starts over at 1 (both CASEs read the row as it was before this update).
    const passed = sql`${loginThrottle.windowStartedAt} <= ${cutoffSlot}`;
    this.bump = orm
      .insert(loginThrottle)
      .values({ key: sql.placeholder('key'), failures: 1, windowStartedAt: nowSlot })
      .onConflictDoUpdate({
        target: loginThrottle.key,
        set: {
          failures: sql`CASE WHEN ${passed} THEN 1 ELSE ${loginThrottle.failures} + 1 END`,
          windowStartedAt: sql`CASE WHEN ${passed} THEN ${nowSlot} ELSE ${loginThrottle.windowStartedAt} END`,
        },
      })
      .prepare();
    this.giveBack = orm
      .update(loginThrottle)
      .set({ failures: sql`${loginThrottle.failures} - 1` })
      .where(and(key, gt(loginThrottle.failures, 0)))
      .prepare();
    this.clear = orm.delete(loginThrottle).where(key).prepare();
    this.purge = orm.delete(loginThrottle).where(lte(loginThrottle.windowStartedAt, cutoffSlot)).prepare();
    // Check and count in one synchronous transaction: requests in flight at once cannot all pass the check
    // before any of them is counted (each bcrypt compare happens only after its attempt was reserved).
    this.reserveBoth = db.sqlite.transaction((account: string, address: string) => {
      const now = this.now();
      const cutoff = now - WINDOW_MS;
      const wait = Math.max(this.waitMs(account, MAX_FAILURES_PER_USER, now), this.waitMs(address, MAX_FAILURES_PER_ADDRESS, now));
      if (wait > 0) return wait;
      this.purge.run({ cutoff });
      this.bump.run({ key: account, now, cutoff });
      this.bump.run({ key: address, now, cutoff });
      return 0;
    });
  }

  /** Counter key → start of the window whose lockout was told (each refused attempt after the first stays quiet). */
  private readonly told = new Map<string, number>();

  /** The start of the key's window while its budget is spent, else undefined. */
  private lockedSince(key: string, limit: number, now: number): number | undefined {
    const row = this.get.get({ key });
    if (!row || row.failures < limit || row.windowStartedAt + WINDOW_MS <= now) return undefined;
    return row.windowStartedAt;
  }

  private waitMs(key: string, limit: number, now: number): number {
    const since = this.lockedSince(key, limit, now);
    return since === undefined ? 0 : since + WINDOW_MS - now;
  }

  private tell(what: Lockout['what'], key: string, login: string, address: string, wait: number): void {
    const since = this.lockedSince(key, what === 'account' ? MAX_FAILURES_PER_USER : MAX_FAILURES_PER_ADDRESS, this.now());
    if (since === undefined || this.told.get(key) === since) return;
    if (this.told.size >= MAX_TOLD_LOCKOUTS) {
      const cutoff = this.now() - WINDOW_MS;
      for (const [told, start] of this.told) if (start <= cutoff) this.told.delete(told);
      if (this.told.size >= MAX_TOLD_LOCKOUTS) this.told.delete(this.told.keys().next().value!);
    }
    this.told.set(key, since);
    this.onLockout({ what, key, login, address, retryAfterSec: Math.ceil(wait / 1000) });
  }

  /**
   * Reserves one password check for the account and the address, counted as a failure until `succeeded()`.
   * Throws 429 (with Retry-After) while either budget is spent. Call it before comparing, never after.
   */
  reserve(userId: number | undefined, login: string, address: string): Attempt {
    const account = accountKey(userId, login);
    const ip = addressKey(address);
    const wait = this.reserveBoth.immediate(account, ip) as number;
    if (wait > 0) {
      const accountLocked = this.waitMs(account, MAX_FAILURES_PER_USER, this.now()) > 0;
      this.tell(accountLocked ? 'account' : 'address', accountLocked ? account : ip, login, address, wait);
      throw new TooManyRequests('Too many failed sign-in attempts; try again later', wait / 1000, 'AUTH_THROTTLED');
    }
    let settled = false;
    return {
      succeeded: () => {
        if (settled) return;
        settled = true;
        // A right password clears the account's failures and gives the address its attempt back.
        this.db.sqlite.transaction(() => {
          this.clear.run({ key: account });
          this.giveBack.run({ key: ip });
        })();
      },
    };
  }
}

/** Used by `emsctl user unlock`: clears the account's counter (by id) and any counter kept under its names. */
export function unlockUser(db: Db, user: { id: number; username: string; email: string }): boolean {
  const keys = [accountKey(user.id, ''), accountKey(undefined, user.username), accountKey(undefined, user.email)];
  return db.orm.delete(loginThrottle).where(inArray(loginThrottle.key, keys)).run().changes > 0;
}
