// The one-time set-up link (issue 53): at first start (and at each start while admin still has the generated
// password) the box prints a link and writes it to <data dir>/setup-link; opening it lets the first admin choose a
// password without reading <data dir>/initial-admin-password (kept as the fallback). Only the token's SHA-256 is
// stored (setup_links); it is used once — the claim is one conditional UPDATE, so of any number sent at once exactly
// one wins — and it expires after SETUP_LINK_TTL_MS. A fresh start issues a fresh link and retires the earlier one.
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { and, eq, gt, isNull } from 'drizzle-orm';
import type { AuditLog } from '../../platform/db/auditTrail.ts';
import type { Db } from '../../platform/db/client.ts';
import { setupLinks } from '../../platform/db/schema/index.ts';
import { setPasswordHash, UserLookup, type UserRow } from './userRecords.ts';

export const SETUP_LINK_FILE = 'setup-link';
/** A week: long enough for an installer to come back to the box, short enough not to lie around. */
export const SETUP_LINK_TTL_MS = 7 * 24 * 3600_000;
/** 32 random bytes, base64url. */
export const SETUP_TOKEN_PATTERN = '^[A-Za-z0-9_-]{43}$';

function hashOf(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** The staff app's set-up page; the token rides in the fragment, so it reaches no server log or proxy. */
export function setupLinkUrl(publicUrl: string, token: string): string {
  return `${publicUrl.replace(/\/$/, '')}/first-sign-in#${token}`;
}

/** A new link for `userId` (earlier unused ones retired), written 0600 to the data dir; returns the URL and its expiry. */
export function issueSetupLink(db: Db, dataDir: string, publicUrl: string, userId: number, now = Date.now()): { url: string; expiresAt: string; file: string } {
  const token = randomBytes(32).toString('base64url');
  db.sqlite.transaction(() => {
    db.orm
      .delete(setupLinks)
      .where(and(eq(setupLinks.userId, userId), isNull(setupLinks.usedAt)))
      .run();
    db.orm
      .insert(setupLinks)
      .values({ userId, tokenHash: hashOf(token), createdAt: now, expiresAt: now + SETUP_LINK_TTL_MS })
      .run();
  })();
  const url = setupLinkUrl(publicUrl, token);
  const expiresAt = new Date(now + SETUP_LINK_TTL_MS).toISOString();
  const file = path.join(dataDir, SETUP_LINK_FILE);
  fs.writeFileSync(file, `${url}\n`, { mode: 0o600 });
  fs.chmodSync(file, 0o600);
  return { url, expiresAt, file };
}

/** Retires every unused link and its file (admin's password was changed some other way). */
export function retireSetupLinks(db: Db, dataDir: string): void {
  db.orm.delete(setupLinks).where(isNull(setupLinks.usedAt)).run();
  fs.rmSync(path.join(dataDir, SETUP_LINK_FILE), { force: true });
}

/** The user a link still opens (unused, not expired), without using it; null otherwise. */
export function setupLinkUser(db: Db, token: string, now = Date.now()): number | null {
  const row = db.orm
    .select({ userId: setupLinks.userId })
    .from(setupLinks)
    .where(and(eq(setupLinks.tokenHash, hashOf(token)), isNull(setupLinks.usedAt), gt(setupLinks.expiresAt, now)))
    .get();
  return row?.userId ?? null;
}

/** Uses the link: the user id for the one caller that gets it, null for every other (used, expired, unknown). Call in a transaction with what it allows. */
export function claimSetupLink(db: Db, token: string, now = Date.now()): number | null {
  const row = db.orm
    .update(setupLinks)
    .set({ usedAt: now })
    .where(and(eq(setupLinks.tokenHash, hashOf(token)), isNull(setupLinks.usedAt), gt(setupLinks.expiresAt, now)))
    .returning({ userId: setupLinks.userId })
    .get();
  return row?.userId ?? null;
}

/**
 * Uses the link and sets the password it was issued for, with its audit entry, in one transaction: the user for the
 * one caller that gets it, undefined for every other.
 */
export function setPasswordBySetupLink(db: Db, audit: AuditLog, token: string, passwordHash: string): UserRow | undefined {
  return db.sqlite.transaction(() => {
    const userId = claimSetupLink(db, token);
    if (userId === null) return undefined;
    setPasswordHash(db, userId, passwordHash);
    const row = new UserLookup(db).findById(userId);
    audit.record({ actor: row ? { id: userId, username: row.username } : null, action: 'user.setup_link', resource: 'user', resourceId: String(userId) });
    return row;
  })();
}
