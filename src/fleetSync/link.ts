// The box's link to a fleet (the fleet_link row): joining exchanges a one-time enrolment code for the site's own
// credential; leaving revokes it on the fleet and removes the row. emsctl and the running service share this file:
// the service reads the row on every sync tick, so a join or leave takes effect without a restart.
import { count, eq, gt } from 'drizzle-orm';
import type { Db } from '../platform/db/client.ts';
import { alerts, fleetLink, meterDays, syncDeletedAlerts } from '../platform/db/schema/index.ts';
import { droppedCount } from './droppedDays.ts';
import { identityOf, openCredential, sealCredential } from './identity.ts';

export type FleetLink = typeof fleetLink.$inferSelect;

export class FleetJoinError extends Error {}

export function readLink(db: Db): FleetLink | undefined {
  return db.orm.select().from(fleetLink).where(eq(fleetLink.id, 1)).get();
}

/** Rows written since the fleet last acknowledged (meter days, alerts, deleted alerts and days): what the box still has to send. */
export function unsentRows(db: Db, cursor: number): number {
  const days = db.orm.select({ n: count() }).from(meterDays).where(gt(meterDays.syncSeq, cursor)).get()?.n ?? 0;
  const alertRows = db.orm.select({ n: count() }).from(alerts).where(gt(alerts.syncSeq, cursor)).get()?.n ?? 0;
  const deleted = db.orm.select({ n: count() }).from(syncDeletedAlerts).where(gt(syncDeletedAlerts.syncSeq, cursor)).get()?.n ?? 0;
  return days + alertRows + deleted + droppedCount(db, cursor);
}

function fleetBase(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new FleetJoinError(`"${url}" is not a URL (expected e.g. https://fleet.example.com)`);
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')
    throw new FleetJoinError('the fleet URL must start with https:// (or http:// on a trusted network)');
  return parsed.origin + parsed.pathname.replace(/\/+$/, '');
}

/** The most of a fleet answer the box reads: an acknowledgement or a refusal is under 1 KiB. */
export const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * A fleet answer's JSON, read to at most `limit` bytes: a longer answer (declared or streamed) is cut off unread and
 * gives null, as does one that is not JSON. A proxy's page, a wrong server or a hostile one cannot fill the box's memory.
 */
export async function readAnswer(response: Response, limit = MAX_ANSWER_BYTES): Promise<unknown> {
  const body = response.body;
  if (!body) return null;
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (declared > limit) {
    await body.cancel().catch(() => {});
    return null;
  }
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > limit) {
        await reader.cancel().catch(() => {});
        return null;
      }
      chunks.push(value);
    }
  } catch {
    return null;
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return null;
  }
}

async function post(url: string, body: unknown, credential?: string): Promise<Response> {
  try {
    return await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(credential ? { authorization: `Bearer ${credential}` } : {}) },
      body: JSON.stringify(body ?? {}),
      signal: AbortSignal.timeout(15_000),
    });
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    throw new FleetJoinError(`the fleet at ${new URL(url).origin} cannot be reached: ${cause?.code ?? cause?.message ?? (error as Error).message}`);
  }
}

/** `emsctl fleet join`: one enrolment, then the link row (cursor 0: the whole history is queued). */
export async function joinFleet(db: Db, url: string, code: string, now = new Date()): Promise<{ siteId: string; siteName: string; fleetUrl: string }> {
  const existing = readLink(db);
  if (existing) throw new FleetJoinError(`this box is already joined to ${existing.fleetUrl} (emsctl fleet leave first)`);
  const base = fleetBase(url);
  const response = await post(`${base}/api/fleet/enrol`, { code });
  const body = (await readAnswer(response)) as { siteId?: string; credential?: string; siteName?: string; error?: string } | null;
  if (response.status !== 201 || !body?.siteId || !body.credential) {
    throw new FleetJoinError(`the fleet refused the enrolment (${response.status}): ${body?.error ?? 'no reason given'}`);
  }
  db.orm
    .insert(fleetLink)
    .values({
      id: 1,
      fleetUrl: base,
      siteId: body.siteId,
      credential: sealCredential(identityOf(db), body.siteId, body.credential),
      joinedAt: now.toISOString(),
      cursor: 0,
      notBefore: 0,
    })
    .run();
  return { siteId: body.siteId, siteName: body.siteName ?? '', fleetUrl: base };
}

/** `emsctl fleet leave`: revoke on the fleet (so the credential is dead even if a copy survives), then drop the link. */
export async function leaveFleet(db: Db, options: { force?: boolean } = {}): Promise<{ fleetUrl: string; revoked: boolean }> {
  const link = readLink(db);
  if (!link) throw new FleetJoinError('this box is not joined to a fleet');
  let revoked = false;
  try {
    const credential = openCredential(identityOf(db), link.siteId, link.credential);
    if (credential === null) throw new FleetJoinError(`${REJOIN_NEEDED}; --force leaves locally (ask the fleet admin to revoke site ${link.siteId})`);
    const response = await post(`${link.fleetUrl}/api/fleet/leave`, {}, credential);
    await response.body?.cancel().catch(() => {});
    revoked = response.status === 204 || response.status === 401;
    if (!revoked && !options.force) throw new FleetJoinError(`the fleet answered ${response.status} to leave; --force leaves locally anyway`);
  } catch (error) {
    if (!options.force) throw error;
  }
  db.orm.delete(fleetLink).where(eq(fleetLink.id, 1)).run();
  return { fleetUrl: link.fleetUrl, revoked };
}

/** Said when the stored credential was sealed on another machine (this database was restored from another box's backup). */
export const REJOIN_NEEDED =
  "this box's fleet credential was sealed on another machine (the database was restored from another box's backup): a re-join is needed (emsctl fleet leave --force, then emsctl fleet join with a new code)";

export type SyncState = {
  /** ok: the last batch was stored (unsentRows says how much is waiting); failing: unreachable or busy; refused: see lastError. */
  state: 'off' | 'ok' | 'failing' | 'refused';
  fleetUrl: string | null;
  siteId: string | null;
  cursor: number | null;
  unsentRows: number;
  lastSuccessAt: string | null;
  lastAttemptAt: string | null;
  lastError: string | null;
  lastErrorCode: string | null;
  /** This box's install id (sent with every batch; made at its first start, never in a backup). */
  installId: string;
  /** The stored credential cannot be opened on this machine: leave (--force) and join again. */
  rejoinNeeded: boolean;
};

/** Refusal codes the fleet gives for a batch it will never take as it is: the site keeps the rows and says why. */
export const REFUSALS = new Set([
  'invalid_batch',
  'batch_too_large',
  'unknown_meter',
  'out_of_range',
  'sequence_backwards',
  'sequence_gap',
  'unauthenticated',
  'second_box',
  'rejoin_needed',
]);

export function syncState(db: Db): SyncState {
  const link = readLink(db);
  const { installId } = identityOf(db);
  if (!link) {
    return {
      state: 'off',
      fleetUrl: null,
      siteId: null,
      cursor: null,
      unsentRows: 0,
      lastSuccessAt: null,
      lastAttemptAt: null,
      lastError: null,
      lastErrorCode: null,
      installId,
      rejoinNeeded: false,
    };
  }
  const unsent = unsentRows(db, link.cursor);
  const rejoinNeeded = openCredential(identityOf(db), link.siteId, link.credential) === null;
  const state = rejoinNeeded || (link.lastErrorCode && REFUSALS.has(link.lastErrorCode)) ? 'refused' : link.lastError ? 'failing' : 'ok';
  return {
    state,
    fleetUrl: link.fleetUrl,
    siteId: link.siteId,
    cursor: link.cursor,
    unsentRows: unsent,
    lastSuccessAt: link.lastSuccessAt,
    lastAttemptAt: link.lastAttemptAt,
    lastError: rejoinNeeded ? REJOIN_NEEDED : link.lastError,
    lastErrorCode: rejoinNeeded ? 'rejoin_needed' : link.lastErrorCode,
    installId,
    rejoinNeeded,
  };
}
