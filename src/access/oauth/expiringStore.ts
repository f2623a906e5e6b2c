// A bounded in-memory map whose entries expire: pending sign-in states and bind tokens live here, never in the database.

/** `maxPerOwner`: how many live entries one owner (a client address) may hold; its oldest gives way past that. */
export type ExpiringStoreOptions = { ttlMs: number; maxEntries: number; maxPerOwner?: number; now?: () => number };

type Entry<T> = { value: T; expiresAt: number; owner?: string };

/** How often a write also drops expired entries; reads check expiry themselves. */
const SWEEP_EVERY_MS = 60_000;

export class ExpiringStore<T> {
  private readonly entries = new Map<string, Entry<T>>();
  private readonly ttlMs: number;
  private readonly maxEntries: number;
  private readonly now: () => number;
  private readonly maxPerOwner: number;
  /** Each owner's keys, oldest first (a Set keeps insertion order). */
  private readonly byOwner = new Map<string, Set<string>>();
  private lastSweep = 0;

  constructor(options: ExpiringStoreOptions) {
    this.ttlMs = options.ttlMs;
    this.maxEntries = options.maxEntries;
    this.now = options.now ?? Date.now;
    this.maxPerOwner = options.maxPerOwner ?? options.maxEntries;
  }

  get size(): number {
    return this.entries.size;
  }

  set(key: string, value: T, owner?: string): void {
    const now = this.now();
    if (now - this.lastSweep >= SWEEP_EVERY_MS || this.entries.size >= this.maxEntries) this.sweep();
    // A flood from one owner evicts only its own oldest entries: other people's pending sign-ins survive it.
    const own = owner === undefined ? undefined : this.byOwner.get(owner);
    while (own && own.size >= this.maxPerOwner) this.delete(own.values().next().value as string);
    // Still full of live entries (a flood from many owners): the oldest gives way, so memory stays bounded
    // and new sign-ins keep working. Map iteration order is insertion order.
    while (this.entries.size >= this.maxEntries) this.delete(this.entries.keys().next().value as string);
    this.entries.set(key, { value, expiresAt: now + this.ttlMs, owner });
    if (owner !== undefined) {
      if (!this.byOwner.has(owner)) this.byOwner.set(owner, new Set());
      this.byOwner.get(owner)!.add(key);
    }
  }

  /** The live value without using it up. */
  peek(key: string): T | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.delete(key);
      return undefined;
    }
    return entry.value;
  }

  /** Single use: the value is removed whether or not it had expired. */
  take(key: string): T | undefined {
    const value = this.peek(key);
    this.delete(key);
    return value;
  }

  delete(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    if (entry.owner === undefined) return;
    const own = this.byOwner.get(entry.owner);
    own?.delete(key);
    if (own?.size === 0) this.byOwner.delete(entry.owner);
  }

  sweep(): void {
    const now = this.now();
    this.lastSweep = now;
    for (const [key, entry] of this.entries) if (entry.expiresAt <= now) this.delete(key);
  }
}
