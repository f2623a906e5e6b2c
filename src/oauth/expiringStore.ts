// A bounded in-memory map whose entries expire: pending sign-in states and bind tokens live here, never in the database.

export type ExpiringStoreOptions = { ttlMs: number; maxEntries: number; now?: () => number };

type Entry<T> = { value: T; expiresAt: number };

/** How often a write also drops expired entries; reads check expiry themselves. */
const SWEEP_EVERY_MS = 60_000;

export class ExpiringStore<T> {
  private readonly entries = new Map<string, Entry<T>>();
  private readonly ttlMs: number;
  private readonly maxEntries: number;
  private readonly now: () => number;
  private lastSweep = 0;

  constructor(options: ExpiringStoreOptions) {
    this.ttlMs = options.ttlMs;
    this.maxEntries = options.maxEntries;
    this.now = options.now ?? Date.now;
  }

  get size(): number {
    return this.entries.size;
  }

  set(key: string, value: T): void {
    const now = this.now();
    if (now - this.lastSweep >= SWEEP_EVERY_MS || this.entries.size >= this.maxEntries) this.sweep();
    // Still full of live entries (a flood of unfinished sign-ins): the oldest gives way, so memory stays bounded
    // and new sign-ins keep working. Map iteration order is insertion order.
    while (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
    this.entries.set(key, { value, expiresAt: now + this.ttlMs });
  }

  /** The live value without using it up. */
  peek(key: string): T | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  /** Single use: the value is removed whether or not it had expired. */
  take(key: string): T | undefined {
    const value = this.peek(key);
    this.entries.delete(key);
    return value;
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  sweep(): void {
    const now = this.now();
    this.lastSweep = now;
    for (const [key, entry] of this.entries) if (entry.expiresAt <= now) this.entries.delete(key);
  }
}
