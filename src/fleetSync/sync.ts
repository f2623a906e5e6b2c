// The sync job on the site box: while the box is joined to a fleet, each tick sends what the fleet has not yet
// acknowledged, batch after batch until nothing is left, then waits for the next tick. The cursor moves only on the
// fleet's acknowledgement. After an outage: the newest day first, then a random delay, then history oldest-first.
// Refusals are kept in the link row (emsctl fleet status, /api/health) with the rows: nothing is dropped.
import { createHash } from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { Db } from '../platform/db/client.ts';
import { fleetLink } from '../platform/db/schema/index.ts';
import { siteDay } from '../platform/time/calendar.ts';
import type { Logger } from '../platform/logger.ts';
import {
  ALERTS_PER_BATCH,
  DAYS_PER_BATCH,
  forgetAcknowledgedDeletions,
  heldPart,
  historyBatch,
  metadata,
  newestDayBatch,
  ROWS_PER_BATCH,
  resequenceAbove,
  SentIntervals,
  type SiteBatch,
} from './batch.ts';
import { acknowledgeFromFleet, type FleetAck, type FleetAlertPort, fleetAcksIn } from './fleetAcks.ts';
import { identityOf, isSealed, openCredential, sealCredential } from './identity.ts';
import { readAnswer, readLink, REJOIN_NEEDED, type FleetLink, unsentRows } from './link.ts';
import { forgetAcknowledgedDrops, type HeldDay } from '../metering/index.ts';
import type { Agent } from 'undici';

export type SyncHealth = () => { version: string; collector: string; gateway: string; lastBackupAt: string | null };

export type FleetSyncOptions = {
  db: Db;
  logger: Logger;
  health: SyncHealth;
  /**
   * What the collector holds ahead of its rows (IntervalStore.heldDays): sent at the end of every send, so the fleet
   * follows the box between its hourly writes. Absent: the rows alone.
   */
  held?: () => readonly HeldDay[];
  /** Upper bound of the random wait between the newest day and the history after an outage (ms). */
  catchUpDelayMs: number;
  /** How often to send while nothing is pending (EMS_FLEET_SYNC_INTERVAL); a first send after joining goes at the next tick. */
  intervalMs?: number;
  /**
   * Held rows go at most this often (HELD_EVERY_MS, 15 minutes): the syncs between carry the written rows and a
   * heartbeat. Tests set it.
   */
  heldEveryMs?: number;
  /** Batches sent in one tick at most (the event loop is yielded between them). */
  maxBatchesPerTick?: number;
  /** Meter days per batch (DAYS_PER_BATCH); tests make it small to see the bounded batches. */
  daysPerBatch?: number;
  random?: () => number;
  now?: () => number;
  /** The box's alerts, for the acknowledgements a fleet user made in the portfolio (fleetAcks.ts). Absent: ignored. */
  alerts?: FleetAlertPort;
};

/**
 * How long the box keeps its connection to the fleet open between sends (issue 55): longer than the sync interval (5
 * minutes), so each send reuses one TLS connection instead of a new handshake (the fleet keeps idle connections
 * FLEET_KEEP_ALIVE_MS too: src/fleet/app.ts listenFleet). A connection the fleet closed meanwhile is simply made again.
 */
export const BOX_KEEP_ALIVE_MS = 10 * 60_000;

/** The box's one connection to its fleet, kept alive between sends (global fetch takes it as its dispatcher). */
export async function fleetDispatcher(): Promise<Agent> {
  // Loaded on the first send: a box that never joins a fleet does not load undici (test/ops/memoryAtStart.test.ts).
  const { Agent } = await import('undici');
  return new Agent({ keepAliveTimeout: BOX_KEEP_ALIVE_MS, keepAliveMaxTimeout: BOX_KEEP_ALIVE_MS, connections: 1 });
}

/** An outage is this long without a stored batch: the next contact sends the newest day first. */
const OUTAGE_MS = 10 * 60_000;
/**
 * A stored batch that moved nothing (a heartbeat: the cursor, the catch-up state and the error fields as they were)
 * writes the link row only when its lastSuccessAt is this old: every link-row write is a WAL frame on the box's flash.
 * The process keeps the exact times in memory for its own decisions (when to send, whether it was an outage).
 */
const HEARTBEAT_PERSIST_MS = 15 * 60_000;
/**
 * A batch with held rows that the fleet refused as invalid (a fleet older than this box does not know the field) is
 * sent without them for this long; the rows are not held up, and the fleet gets today at the hourly writes meanwhile.
 */
const HELD_RETRY_MS = 60 * 60_000;
/**
 * What the collector holds goes to the fleet at most every 15 minutes (issue 55), not at every 5-minute sync: two syncs
 * in three are then a heartbeat (or the hourly write's rows), which cost the fleet a third of a held send. The fleet's
 * newest interval is then at most ~30 minutes old between the hourly writes (the open interval of the last held send,
 * 15 minutes, plus that interval), well inside the staleness rule's hour. A held part goes at once whenever what the
 * fleet holds is not known (after a restart, a 409, a lost answer): see `forget`. Half a minute of slack: the job looks
 * every 30 s, so three 5-minute syncs are 15 minutes give or take a tick.
 */
export const HELD_EVERY_MS = 15 * 60_000;
const HELD_SLACK_MS = 30_000;

export class FleetSync {
  private failures = 0;
  /** The last tick ran out of batches with rows still waiting: the next tick goes on at once. */
  private backlog = false;
  /** The metadata hash the fleet last stored in this process: a new process sends it once again. */
  private sentMetadata: string | undefined;
  private readonly now: () => number;
  private readonly random: () => number;
  /** The recent meter days as the fleet stored them: a live batch carries only the intervals that changed. */
  private readonly sent = new SentIntervals();
  private dispatcher: Promise<Agent> | undefined;
  private sentSite: string | undefined;
  /** This process's last attempt and last stored batch (the link row may hold older times: see HEARTBEAT_PERSIST_MS). */
  private lastAttemptMs: number | undefined;
  private lastSuccessMs: number | undefined;
  /** Until when held rows are not sent (the fleet refused a batch carrying them: see HELD_RETRY_MS). */
  private heldOffUntil = 0;
  /** The alert acknowledgements the last stored batch's answer carried (fleetAcks.ts). */
  private fleetAcks: FleetAck[] = [];
  /**
   * When the fleet last stored a send that looked at what is held (with a held part, or with none because nothing
   * held had changed); undefined: never in this process, or what the fleet holds is not known.
   */
  private heldLookedMs: number | undefined;

  constructor(private readonly options: FleetSyncOptions) {
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
  }

  private update(values: Partial<FleetLink>): void {
    this.options.db.orm.update(fleetLink).set(values).where(eq(fleetLink.id, 1)).run();
  }

  /** One tick: sends until the backlog is empty, the fleet says wait, or maxBatchesPerTick batches went. */
  async tick(): Promise<void> {
    const { db } = this.options;
    const first = readLink(db);
    if (first?.siteId !== this.sentSite) {
      // Joined (again): what this process knew of the fleet belongs to the old link.
      this.forget();
      this.sentSite = first?.siteId;
      // The new site at the fleet has none of the metadata (its meters above all: without them every row is refused as
      // `unknown_meter`): the first batch carries it again.
      this.sentMetadata = undefined;
      this.lastAttemptMs = undefined;
      this.lastSuccessMs = undefined;
    }
    // Between sends the job only looks: a box sends every intervalMs, unless it never has (just joined) or the last tick
    // stopped with a backlog left (catch-up), or the clock stepped back past the last attempt (waiting for the clock to
    // catch up held back what the step changed: the days it dropped, for as long as the step).
    const lastAttempt = this.lastAttemptMs ?? (first?.lastAttemptAt ? Date.parse(first.lastAttemptAt) : undefined);
    const since = lastAttempt === undefined ? undefined : this.now() - lastAttempt;
    if (first && since !== undefined && since >= 0 && !this.backlog && since < (this.options.intervalMs ?? 0)) return;
    const limit = this.options.maxBatchesPerTick ?? 200;
    this.backlog = false;
    for (let sent = 0; sent < limit; sent++) {
      const link = readLink(db);
      if (!link || this.now() < link.notBefore) return;
      if (sent === limit - 1) this.backlog = true;
      const lastSuccess = this.lastSuccessMs ?? (link.lastSuccessAt !== null ? Date.parse(link.lastSuccessAt) : undefined);
      const outage = lastSuccess !== undefined && this.now() - lastSuccess > OUTAGE_MS;
      const today = siteDay(metadata(db).site!.timezone, new Date(this.now()));
      const ahead = outage && link.aheadDay !== today && unsentRows(db, link.cursor) > 0;
      const batch = ahead
        ? newestDayBatch(db, link.cursor, today, new Date(this.now()), this.sent)
        : historyBatch(
            db,
            link.cursor,
            new Date(this.now()),
            {
              days: this.options.daysPerBatch ?? DAYS_PER_BATCH,
              alerts: ALERTS_PER_BATCH,
              rows: ROWS_PER_BATCH,
            },
            this.sent,
          );
      // Nothing else waiting: what the collector holds goes too (under `after`, the newest sequence the fleet stored).
      const heldLooked = !ahead && batch.through === link.cursor && this.options.held !== undefined && this.heldDue();
      if (heldLooked) {
        const held = heldPart(db, this.options.held!(), this.sent);
        if (held) batch.held = held;
      }
      const meta = metadata(db);
      const hash = createHash('sha256').update(JSON.stringify(meta)).digest('hex');
      const withMeta = hash !== this.sentMetadata;
      if (
        !withMeta &&
        batch.through === link.cursor &&
        batch.intervals.length === 0 &&
        batch.alerts.length === 0 &&
        !batch.deletedAlerts &&
        !batch.deletedDays &&
        !batch.held &&
        sent > 0
      )
        return;
      const body: SiteBatch = { ...batch, ...(withMeta ? meta : {}), health: this.healthFields(link) };
      const attemptMs = this.now();
      const attemptAt = new Date(attemptMs).toISOString();
      const outcome = await this.send(link, body);
      if (outcome !== 'stored') {
        this.sent.discard();
        return;
      }
      this.sent.commit();
      this.lastSuccessMs = attemptMs;
      if (heldLooked) this.heldLookedMs = attemptMs;
      if (withMeta) this.sentMetadata = hash;
      // One write of the link row per stored batch (its outcome and the cursor together): each write is a WAL frame.
      const stored = { lastAttemptAt: attemptAt, lastSuccessAt: attemptAt, lastError: null, lastErrorCode: null, notBefore: 0 };
      if (ahead) {
        // The newest day is at the fleet; the history follows after a random delay so returning sites do not stampede.
        this.update({ ...stored, aheadDay: today, notBefore: this.now() + Math.floor(this.random() * this.options.catchUpDelayMs) });
        this.options.logger.info({ day: today, rows: batch.intervals.length }, 'fleet sync: newest day sent ahead of the history');
        return;
      }
      const unchanged =
        batch.through === link.cursor &&
        link.lastError === null &&
        link.lastErrorCode === null &&
        link.notBefore === 0 &&
        link.lastSuccessAt !== null &&
        attemptMs - Date.parse(link.lastSuccessAt) < HEARTBEAT_PERSIST_MS;
      if (!unchanged) this.update({ ...stored, cursor: batch.through });
      // Deletions the fleet acknowledged stay for a while, so that a fleet which loses them (a failover) gets them again.
      if (batch.deletedAlerts) forgetAcknowledgedDeletions(db, batch.through);
      if (batch.deletedDays) forgetAcknowledgedDrops(db, batch.through);
      // Alerts a fleet user acknowledged: acknowledged here, and sent so at once (the loop goes on).
      const acknowledged = this.options.alerts ? acknowledgeFromFleet(this.options.alerts, this.fleetAcks) : 0;
      if (batch.through === link.cursor && acknowledged === 0) return; // nothing was waiting: this tick's work is done
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /** Whether this send may carry what the collector holds: not refused lately, and the last held part 15 minutes old. */
  private heldDue(): boolean {
    const now = this.now();
    if (now < this.heldOffUntil) return false;
    return this.heldLookedMs === undefined || now - this.heldLookedMs >= (this.options.heldEveryMs ?? HELD_EVERY_MS) - HELD_SLACK_MS;
  }

  /** What the fleet holds of this box is not known any more: the next send carries everything held again, at once. */
  private forget(): void {
    this.sent.clear();
    this.heldLookedMs = undefined;
  }

  private healthFields(link: FleetLink): Record<string, unknown> {
    const health = this.options.health();
    return { ...health, unsentRows: unsentRows(this.options.db, link.cursor) };
  }

  private async send(link: FleetLink, batch: SiteBatch): Promise<'stored' | 'wait' | 'refused'> {
    this.lastAttemptMs = this.now();
    const attemptAt = new Date(this.lastAttemptMs).toISOString();
    const identity = identityOf(this.options.db);
    const credential = openCredential(identity, link.siteId, link.credential);
    if (credential === null) {
      // Sealed on another machine: this database came from another box's backup. Nothing goes until a re-join.
      if (link.lastErrorCode !== 'rejoin_needed') this.options.logger.warn(`fleet sync: ${REJOIN_NEEDED}`);
      this.update({ lastAttemptAt: attemptAt, lastError: REJOIN_NEEDED, lastErrorCode: 'rejoin_needed' });
      return 'refused';
    }
    // A credential an older box stored in clear is sealed now.
    if (!isSealed(link.credential)) this.update({ credential: sealCredential(identity, link.siteId, credential) });
    let response: Response;
    try {
      response = await fetch(`${link.fleetUrl}/api/fleet/ingest`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${credential}` },
        body: JSON.stringify({ ...batch, installId: identity.installId }),
        signal: AbortSignal.timeout(60_000),
        dispatcher: await (this.dispatcher ??= fleetDispatcher()),
      } as RequestInit);
    } catch (error) {
      // The fleet is unreachable: back off exponentially with jitter (5 s doubling to 5 min).
      this.failures++;
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      const reason = cause?.code ?? cause?.message ?? (error as Error).message;
      const backoff = Math.min(300_000, 5_000 * 2 ** Math.min(this.failures - 1, 6));
      this.update({
        lastAttemptAt: attemptAt,
        lastError: `the fleet cannot be reached: ${reason}`,
        lastErrorCode: 'unreachable',
        notBefore: this.now() + Math.floor(backoff * (0.5 + this.random())),
      });
      if (this.failures === 1) this.options.logger.warn({ reason }, 'fleet sync: the fleet cannot be reached; the rows wait here');
      // The batch may have been stored all the same (the answer lost): what the fleet holds is unknown, so everything
      // held goes again at the next send.
      this.forget();
      return 'wait';
    }
    const body = (await readAnswer(response)) as {
      error?: string;
      code?: string;
      details?: { cursor?: unknown };
      siteId?: unknown;
      after?: unknown;
      acknowledged?: unknown;
    } | null;
    if (response.status === 200 && !(body?.siteId === link.siteId && body.after === batch.after && body.acknowledged === batch.through)) {
      // A 200 that is not the fleet's acknowledgement of this batch (a proxy's sign-in page, another server, an answer
      // cut off at MAX_ANSWER_BYTES): nothing is known stored, so the cursor stays and the rows go again after a back-off.
      this.failures++;
      const backoff = Math.min(300_000, 5_000 * 2 ** Math.min(this.failures - 1, 6));
      const reason = "the answer to the batch was not the fleet's acknowledgement of it (a proxy or another server answering?); the rows stay here";
      this.update({
        lastAttemptAt: attemptAt,
        lastError: reason,
        lastErrorCode: 'not_acknowledged',
        notBefore: this.now() + Math.floor(backoff * (0.5 + this.random())),
      });
      if (link.lastErrorCode !== 'not_acknowledged') this.options.logger.warn({ status: response.status }, `fleet sync: ${reason}`);
      this.forget();
      return 'wait';
    }
    if (response.status === 200) {
      if (this.failures > 0 || link.lastError) this.options.logger.info({ after: link.cursor }, 'fleet sync: the fleet takes batches again');
      this.failures = 0;
      this.fleetAcks = fleetAcksIn(body);
      return 'stored'; // the caller writes the link row once, with the cursor
    }
    if (response.status === 429 || response.status === 503) {
      const retry = Number(response.headers.get('retry-after'));
      const waitMs = (Number.isFinite(retry) && retry > 0 ? Math.min(retry, 600) : 5) * 1000;
      this.update({
        lastAttemptAt: attemptAt,
        notBefore: this.now() + waitMs,
        lastError: `the fleet asked to wait (${response.status})`,
        lastErrorCode: 'busy',
      });
      return 'wait';
    }
    const code = body?.code ?? `http_${response.status}`;
    const message = body?.error ?? `the fleet answered ${response.status}`;
    // A 409 (a re-stamp, a second box): what the fleet holds of this box is not what this process remembers; the next
    // stored batch carries every held interval and day row again.
    if (response.status === 409) this.forget();
    if (batch.held && code === 'invalid_batch') {
      // Most likely a fleet older than this box (it refuses a field it does not know): the rows go on without the held
      // part; the refusal is not kept in the link row, where it would hide the rows' own state.
      this.heldOffUntil = this.now() + HELD_RETRY_MS;
      this.backlog = true;
      this.options.logger.warn(
        { reason: message },
        'fleet sync: the fleet refused the rows the collector holds (is it older than this box?); they go at the hourly writes for now',
      );
      return 'refused';
    }
    if (link.lastErrorCode !== code)
      this.options.logger.warn({ status: response.status, code, reason: message }, 'fleet sync: the fleet refused a batch; the rows stay here');
    this.update({ lastAttemptAt: attemptAt, lastError: message, lastErrorCode: code });
    this.followFleetCursor(link, code, Number(body?.details?.cursor));
    return 'refused';
  }

  /** A 409 naming the fleet's cursor: re-stamp above it (the box went back) or rewind to it (the fleet lost batches). */
  private followFleetCursor(link: FleetLink, code: string, fleetCursor: number): void {
    if (code === 'sequence_backwards' && Number.isSafeInteger(fleetCursor) && fleetCursor > link.cursor) {
      // The fleet holds a later cursor than this box: the box was restored from an older backup, and its sequence went
      // back. Every row above the box's cursor takes a new sequence above the fleet's and goes again, at the next tick.
      const rows = resequenceAbove(this.options.db, link.cursor, fleetCursor);
      this.update({ cursor: fleetCursor });
      this.forget();
      this.backlog = true;
      this.options.logger.warn(
        { boxCursor: link.cursor, fleetCursor, rows },
        'fleet sync: the fleet holds a later sequence than this box (restored from an older backup?); the rows above the box cursor are re-stamped and sent again',
      );
    }
    if (code === 'sequence_gap' && Number.isSafeInteger(fleetCursor) && fleetCursor >= 0 && fleetCursor < link.cursor) {
      // The fleet lost batches it had acknowledged (its primary crashed before the standby had them, then was promoted):
      // the cursor goes back to the fleet's and every row above it goes again, at once. The rows are all still here.
      this.update({ cursor: fleetCursor });
      this.forget();
      this.backlog = true;
      this.options.logger.warn(
        { boxCursor: link.cursor, fleetCursor },
        'fleet sync: the fleet lost batches it had acknowledged (a failover?); they are sent again',
      );
    }
  }
}
