// How many code emails one client address, and the box as a whole, may ask for: no client can fill the code store
// or turn the appliance into a mail cannon.
import { TooManyRequests } from '../../platform/errors.ts';

export const SEND_WINDOW_MS = 10 * 60_000;
/** A person asking for a code again and again stays well below this; a script does not. */
export const SENDS_PER_ADDRESS = 20;
/** All addresses together; also bounds how many code-store entries a window can add. */
export const SENDS_GLOBAL = 200;

type Window = { startedAt: number; count: number };

export class SendBudget {
  private readonly byAddress = new Map<string, Window>();
  private global: Window = { startedAt: 0, count: 0 };

  constructor(
    private readonly now: () => number = Date.now,
    private readonly limits = { perAddress: SENDS_PER_ADDRESS, global: SENDS_GLOBAL, windowMs: SEND_WINDOW_MS },
  ) {}

  /** Counts one send for the address, or throws 429 with Retry-After. Synchronous: requests in flight cannot overshoot. */
  take(address: string): void {
    const now = this.now();
    const { windowMs } = this.limits;
    if (now - this.global.startedAt >= windowMs) {
      this.global = { startedAt: now, count: 0 };
      // A new global window: every per-address window older than it has ended too.
      for (const [key, window] of this.byAddress) if (now - window.startedAt >= windowMs) this.byAddress.delete(key);
    }
    let own = this.byAddress.get(address);
    if (own && now - own.startedAt >= windowMs) own = undefined;
    if (own && own.count >= this.limits.perAddress) {
      throw new TooManyRequests('Too many codes requested from this address; try again later', (own.startedAt + windowMs - now) / 1000);
    }
    if (this.global.count >= this.limits.global) {
      throw new TooManyRequests('Too many codes requested; try again later', (this.global.startedAt + windowMs - now) / 1000);
    }
    this.global.count += 1;
    if (own) own.count += 1;
    else this.byAddress.set(address, { startedAt: now, count: 1 });
  }
}
