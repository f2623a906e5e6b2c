// The live channel (issue 53): one server-sent event stream per browser tab carrying power, the newest interval,
// alert changes and job states, so the overview, alerts, meter and wallboard screens move without polling.
// One sampler (a named job, every second) compares what each kind would say now with what it last said and
// publishes only a change; a new alert also samples at once. Events are numbered `<boot>-<seq>` and the last
// BUFFERED are kept, so a client that comes back with Last-Event-ID gets exactly what it missed; one whose id is
// unknown (older than the buffer, another boot) gets the current state of every kind, marked `reset`.
import { TooManyRequests } from '../../platform/errors.ts';

export type LiveKind = 'power' | 'interval' | 'alerts' | 'alert' | 'jobs';

/** What the sampler reads; each answers the kind's current state (JSON-comparable), or null when it has none. */
export type LiveSources = {
  power: () => unknown;
  interval: () => unknown;
  alerts: () => unknown;
  jobs: () => unknown;
  /** New alerts since the given id (id ascending), and the newest alert id now. */
  newAlerts: (afterId: number) => { id: number }[];
  newestAlertId: () => number;
};

export type LiveLimits = {
  /** A comment line is sent after this long without an event, so proxies keep the stream and clients see it alive. */
  heartbeatMs: number;
  /** Open streams one user may hold at once (one per tab); one more is refused with 429. */
  perUser: number;
  /** Open streams of the whole box at once (all users). */
  total: number;
};

type Stored = { seq: number; kind: LiveKind; text: string };

/** Where a stream writes; `end` closes it. */
export type LiveSink = { write(chunk: string): void; end(): void };

/**
 * Who holds a stream: a signed-in user (every event), or a public page (the lobby wallboard) that is told only that
 * power, the intervals or the alerts changed, never what (its payload, GET /api/wallboard, says what it may show).
 */
export type LiveHolder = { userId: number } | { address: string };

type Subscriber = { key: string; public: boolean; sink: LiveSink; lastWriteAt: number; closeAt: number | null };

/** Public streams one address may hold (a lobby screen or two, not a crowd). */
export const PUBLIC_PER_ADDRESS = 4;
const PUBLIC_KINDS: ReadonlySet<LiveKind> = new Set(['power', 'interval', 'alerts']);

/** How many past events a returning client can be given; a minute of every kind changing each second fits. */
const BUFFERED = 512;
const SAMPLED: Exclude<LiveKind, 'alert'>[] = ['power', 'interval', 'alerts', 'jobs'];

export class LiveEvents {
  private readonly boot = Date.now().toString(36);
  private seq = 0;
  private readonly buffer: Stored[] = [];
  private readonly last = new Map<LiveKind, string>();
  private readonly subscribers = new Set<Subscriber>();
  private alertMark: number | null = null;
  private soonTimer: NodeJS.Immediate | undefined;

  constructor(
    private readonly sources: LiveSources,
    readonly limits: LiveLimits,
    private readonly now: () => number = Date.now,
  ) {}

  /** Streams open now, in all or for one holder. */
  open(holder?: LiveHolder): number {
    if (holder === undefined) return this.subscribers.size;
    const key = keyOf(holder);
    let count = 0;
    for (const subscriber of this.subscribers) if (subscriber.key === key) count++;
    return count;
  }

  /** The id of the newest event (what a client that saw everything sends back as Last-Event-ID). */
  latestId(): string {
    return `${this.boot}-${this.seq}`;
  }

  /**
   * Opens a stream: refused (429) past the user's or the box's bound, before anything is written. Then the events
   * missed since `lastEventId` (or the current state of every kind, `reset`), and from then on every change.
   * `closeAt`: when the stream ends by itself (the access token's expiry: the client comes back with a fresh one).
   */
  subscribe(holder: LiveHolder, sink: LiveSink, lastEventId: string | undefined, closeAt: number | null = null): () => void {
    const open = this.open(holder);
    if ('userId' in holder && open >= this.limits.perUser) {
      throw new TooManyRequests(`At most ${this.limits.perUser} live streams per user (one per open tab); close a tab or wait`, 5);
    }
    if ('address' in holder) {
      if (open >= PUBLIC_PER_ADDRESS) throw new TooManyRequests(`At most ${PUBLIC_PER_ADDRESS} wallboard streams per address`, 5);
      // Public streams never take more than a quarter of the box's places: staff tabs keep theirs.
      let publicOpen = 0;
      for (const subscriber of this.subscribers) if (subscriber.public) publicOpen++;
      if (publicOpen >= this.limits.total / 4) throw new TooManyRequests(`The box serves at most ${this.limits.total / 4} wallboard streams at once`, 5);
    }
    if (this.subscribers.size >= this.limits.total) throw new TooManyRequests(`The box serves at most ${this.limits.total} live streams at once`, 5);
    // What changed while nobody listened is published first, so the buffer a returning client replays is complete.
    this.sample();
    const subscriber: Subscriber = { key: keyOf(holder), public: 'address' in holder, sink, lastWriteAt: this.now(), closeAt };
    const retry = `retry: ${Math.min(5000, this.limits.heartbeatMs)}\n`;
    const missed = this.since(lastEventId);
    let text = retry;
    if (missed) {
      for (const event of missed) text += frame(event, this.boot, subscriber.public);
    } else if (!subscriber.public) {
      for (const kind of SAMPLED) {
        const data = this.last.get(kind);
        if (data !== undefined) text += `event: ${kind}\ndata: ${data}\n\n`;
      }
    }
    text += `id: ${this.latestId()}\nevent: hello\ndata: ${JSON.stringify({ reset: !missed, heartbeatMs: this.limits.heartbeatMs })}\n\n`;
    sink.write(text);
    this.subscribers.add(subscriber);
    return () => this.subscribers.delete(subscriber);
  }

  /** Samples once more as soon as the event loop is free (a new alert, a collection): no second's wait. */
  soon(): void {
    if (this.soonTimer || this.subscribers.size === 0) return;
    this.soonTimer = setImmediate(() => {
      this.soonTimer = undefined;
      this.sample();
    });
  }

  /**
   * The job's tick: publish what changed, send heartbeats, end streams whose time is up. Costs nothing while no
   * stream is open (the next subscriber samples first).
   */
  tick(): void {
    if (this.subscribers.size === 0) return;
    this.sample();
    const now = this.now();
    for (const subscriber of this.subscribers) {
      if (subscriber.closeAt !== null && now >= subscriber.closeAt) {
        this.subscribers.delete(subscriber);
        subscriber.sink.end();
      } else if (now - subscriber.lastWriteAt >= this.limits.heartbeatMs) {
        subscriber.sink.write(': heartbeat\n\n');
        subscriber.lastWriteAt = now;
      }
    }
  }

  /** Ends every stream (the service stops). */
  close(): void {
    if (this.soonTimer) clearImmediate(this.soonTimer);
    this.soonTimer = undefined;
    for (const subscriber of this.subscribers) subscriber.sink.end();
    this.subscribers.clear();
  }

  private sample(): void {
    for (const kind of SAMPLED) {
      const text = JSON.stringify(this.sources[kind]() ?? null);
      if (this.last.get(kind) !== text) this.publish(kind, text);
    }
    // New alerts one by one (the client announces a new critical one); the first sample only takes the mark.
    const newest = this.sources.newestAlertId();
    if (this.alertMark === null) this.alertMark = newest;
    else if (newest > this.alertMark) {
      for (const alert of this.sources.newAlerts(this.alertMark)) this.publish('alert', JSON.stringify(alert));
      this.alertMark = newest;
    }
  }

  private publish(kind: LiveKind, text: string): void {
    if (kind !== 'alert') this.last.set(kind, text);
    const event: Stored = { seq: ++this.seq, kind, text };
    this.buffer.push(event);
    if (this.buffer.length > BUFFERED) this.buffer.shift();
    const chunks = { staff: frame(event, this.boot, false), public: frame(event, this.boot, true) };
    const now = this.now();
    for (const subscriber of this.subscribers) {
      const chunk = subscriber.public ? chunks.public : chunks.staff;
      if (!chunk) continue;
      subscriber.sink.write(chunk);
      subscriber.lastWriteAt = now;
    }
  }

  /** The events after `lastEventId`, or undefined when it cannot be answered exactly (none, another boot, too old). */
  private since(lastEventId: string | undefined): Stored[] | undefined {
    if (!lastEventId) return undefined;
    const match = /^([0-9a-z]+)-(\d+)$/.exec(lastEventId);
    if (!match || match[1] !== this.boot) return undefined;
    const seen = Number(match[2]);
    if (seen > this.seq) return undefined;
    if (seen === this.seq) return [];
    const first = this.buffer[0];
    if (!first || first.seq > seen + 1) return undefined;
    return this.buffer.filter((event) => event.seq > seen);
  }
}

/** An event as a holder sees it: whole for staff; for a public page only `changed` and its kind, or nothing. */
function frame(event: Stored, boot: string, isPublic: boolean): string {
  if (!isPublic) return `id: ${boot}-${event.seq}\nevent: ${event.kind}\ndata: ${event.text}\n\n`;
  return PUBLIC_KINDS.has(event.kind) ? `id: ${boot}-${event.seq}\nevent: changed\ndata: {"kind":"${event.kind}"}\n\n` : '';
}

function keyOf(holder: LiveHolder): string {
  return 'userId' in holder ? `user:${holder.userId}` : `address:${holder.address}`;
}
