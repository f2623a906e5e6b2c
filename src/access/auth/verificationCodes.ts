// Emailed 6-digit codes, held in memory: single use, purpose-bound, 5 wrong tries, one send per email per minute, bounded.
import { randomInt, timingSafeEqual } from 'node:crypto';
import { BadRequest, ServiceUnavailable, TooManyRequests } from '../../platform/errors.ts';

export type CodePurpose = 'register' | 'reset';

type Entry = { code: string; expiresAt: number; wrongTries: number };

export const MAX_WRONG_TRIES = 5;
export const RESEND_INTERVAL_MS = 60_000;
export const MAX_ENTRIES = 10_000;

const INVALID = 'Invalid or expired verification code';

export class VerificationCodes {
  private readonly codes = new Map<string, Entry>();
  private readonly lastSent = new Map<string, number>();

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  private key(email: string, purpose: CodePurpose): string {
    return `${purpose}:${email.toLowerCase()}`;
  }

  /** Drops expired codes and send marks; called on every issue, so the maps cannot grow past the live set. */
  sweep(): void {
    const now = this.now();
    for (const [key, entry] of this.codes) if (entry.expiresAt <= now) this.codes.delete(key);
    for (const [key, at] of this.lastSent) if (now - at >= RESEND_INTERVAL_MS) this.lastSent.delete(key);
  }

  /** Throws 429 while the last send to this email and purpose is under a minute old. */
  assertCanSend(email: string, purpose: CodePurpose): void {
    const last = this.lastSent.get(this.key(email, purpose));
    const waitMs = last === undefined ? 0 : last + RESEND_INTERVAL_MS - this.now();
    if (waitMs > 0) throw new TooManyRequests('A code was sent to this address less than a minute ago', waitMs / 1000);
  }

  /** A new code for this email and purpose; it replaces any earlier one. */
  issue(email: string, purpose: CodePurpose): string {
    this.assertCanSend(email, purpose);
    this.sweep();
    const key = this.key(email, purpose);
    if (!this.codes.has(key) && this.codes.size >= MAX_ENTRIES) {
      throw new ServiceUnavailable('Too many verification codes are pending; try again in a few minutes');
    }
    const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
    this.codes.set(key, { code, expiresAt: this.now() + this.ttlMs, wrongTries: 0 });
    this.lastSent.set(key, this.now());
    return code;
  }

  /**
   * Marks a send that was not made (a reset asked for an unknown email), so a repeat within the minute is refused
   * exactly as for a known one: the answers do not tell which emails have accounts.
   */
  markSent(email: string, purpose: CodePurpose): void {
    this.assertCanSend(email, purpose);
    this.sweep();
    this.lastSent.set(this.key(email, purpose), this.now());
  }

  /** Forgets a code whose email could not be sent, so the user may ask again at once. */
  withdraw(email: string, purpose: CodePurpose): void {
    const key = this.key(email, purpose);
    this.codes.delete(key);
    this.lastSent.delete(key);
  }

  /** The live code for this email and purpose, if any (to put in the mail after it was issued). */
  peek(email: string, purpose: CodePurpose): string | undefined {
    const entry = this.codes.get(this.key(email, purpose));
    return entry && entry.expiresAt > this.now() ? entry.code : undefined;
  }

  /** Checks a code without using it up; a wrong guess counts, the fifth voids the code. Throws 400. */
  check(email: string, purpose: CodePurpose, code: string): void {
    const key = this.key(email, purpose);
    const entry = this.codes.get(key);
    if (!entry || entry.expiresAt <= this.now()) {
      if (entry) this.codes.delete(key);
      throw new BadRequest(INVALID);
    }
    const given = Buffer.from(code.padEnd(6).slice(0, 6));
    if (code.length !== 6 || !timingSafeEqual(given, Buffer.from(entry.code))) {
      entry.wrongTries += 1;
      if (entry.wrongTries >= MAX_WRONG_TRIES) this.codes.delete(key);
      throw new BadRequest(INVALID);
    }
  }

  /** Checks and uses up the code in one synchronous step: of two concurrent uses only one gets through. */
  consume(email: string, purpose: CodePurpose, code: string): void {
    this.check(email, purpose, code);
    this.codes.delete(this.key(email, purpose));
  }

  get size(): number {
    return this.codes.size;
  }
}
