// Opaque refresh tokens: 32 random bytes, only a SHA-256 stored, one per user, rotated in one synchronous transaction.
import { createHash, randomBytes } from 'node:crypto';

/** A rotated token presented again this soon after its rotation, by the same client, is a concurrent refresh, not a replay (see rotate). */
export const REUSE_GRACE_MS = 10_000;
const RECENT_ROTATIONS_CAP = 10_000;
import { and, eq, gt, lte, sql } from 'drizzle-orm';
import type { Db } from '../../platform/db/client.ts';
import { refreshTokens, retiredRefreshTokens } from '../../platform/db/schema/index.ts';

export function hashRefreshToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export class RefreshTokens {
  private readonly deleteForUser;
  private readonly insert;
  private readonly findByHash;
  private readonly deleteById;
  readonly issue: (userId: number) => string;
  /**
   * The new pair's token; `reused` when the token was already rotated away (the user's session is ended); null when
   * unknown or expired. `client` names the caller (address and User-Agent), for the grace of a concurrent refresh.
   */
  readonly rotate: (token: string, client: string) => { userId: number; token: string } | { reused: number } | null;
  private readonly retire;
  private readonly findRetired;
  private readonly sweepRetired;

  constructor(
    private readonly db: Db,
    private readonly ttlSec: number,
  ) {
    const orm = db.orm;
    const hash = sql.placeholder('hash');
    const now = sql.placeholder('now');
    this.deleteForUser = orm
      .delete(refreshTokens)
      .where(eq(refreshTokens.userId, sql.placeholder('userId')))
      .prepare();
    this.insert = orm
      .insert(refreshTokens)
      .values({ userId: sql.placeholder('userId'), tokenHash: hash, expiresAt: sql.placeholder('expiresAt'), createdAt: now })
      .prepare();
    this.findByHash = orm
      .select({ id: refreshTokens.id, userId: refreshTokens.userId, expiresAt: refreshTokens.expiresAt })
      .from(refreshTokens)
      .where(eq(refreshTokens.tokenHash, hash))
      .prepare();
    this.deleteById = orm
      .delete(refreshTokens)
      .where(eq(refreshTokens.id, sql.placeholder('id')))
      .prepare();
    // A hash is retired once; a second retirement of it (never expected) takes the newer row, as INSERT OR REPLACE did.
    this.retire = orm
      .insert(retiredRefreshTokens)
      .values({ tokenHash: hash, userId: sql.placeholder('userId'), expiresAt: sql.placeholder('expiresAt') })
      .onConflictDoUpdate({ target: retiredRefreshTokens.tokenHash, set: { userId: sql`excluded.user_id`, expiresAt: sql`excluded.expires_at` } })
      .prepare();
    this.findRetired = orm
      .select({ userId: retiredRefreshTokens.userId })
      .from(retiredRefreshTokens)
      .where(and(eq(retiredRefreshTokens.tokenHash, hash), gt(retiredRefreshTokens.expiresAt, now)))
      .prepare();
    this.sweepRetired = orm.delete(retiredRefreshTokens).where(lte(retiredRefreshTokens.expiresAt, now)).prepare();
    const sqlite = db.sqlite;

    /** Deletes the user's earlier token first: one session per user (SPEC.md state table). */
    this.issue = sqlite.transaction((userId: number) => {
      this.deleteForUser.run({ userId });
      return this.store(userId);
    });

    // No await inside: better-sqlite3 runs this start to finish, so of N concurrent refreshes of one token exactly one wins.
    // A token rotated away and presented again means two parties hold the family: whoever holds the current token
    // loses it too (RFC 9700 §4.14.2, reuse detection) — unless it is the current token's direct predecessor, presented
    // within REUSE_GRACE_MS of its rotation by the same client (address and User-Agent): that is the same browser's
    // second tab refreshing at the same moment (the losers get 401 and keep the session the winner got, as Auth0's
    // reuse interval and Okta's grace period do; RFC 9700 §4.14.2 allows it when bound to the client). The same token
    // from another client, an older token, or the same one later, ends the session.
    this.rotate = sqlite.transaction((token: string, client: string) => {
      const hash = hashRefreshToken(token);
      const now = Date.now();
      const row = this.findByHash.get({ hash });
      if (!row) {
        const retired = this.findRetired.get({ hash, now });
        if (!retired) return null;
        const rotation = this.recentlyRotated.get(hash);
        if (rotation && now - rotation.at < REUSE_GRACE_MS && rotation.client === hashRefreshToken(client) && this.findByHash.get({ hash: rotation.successor }))
          return null;
        this.deleteForUser.run({ userId: retired.userId });
        return { reused: retired.userId };
      }
      if (row.expiresAt <= now) return null;
      this.deleteById.run({ id: row.id });
      this.sweepRetired.run({ now });
      this.retire.run({ hash, userId: row.userId, expiresAt: row.expiresAt });
      const next = this.store(row.userId);
      this.rememberRotation(hash, { at: now, successor: hashRefreshToken(next), client: hashRefreshToken(client) });
      return { userId: row.userId, token: next };
    });
  }

  /** Rotations of the last REUSE_GRACE_MS, oldest first (a Map keeps insertion order); bounded by the window and a cap. */
  private readonly recentlyRotated = new Map<string, { at: number; successor: string; client: string }>();

  private rememberRotation(hash: string, rotation: { at: number; successor: string; client: string }): void {
    const now = rotation.at;
    for (const [oldHash, { at }] of this.recentlyRotated) {
      if (now - at < REUSE_GRACE_MS && this.recentlyRotated.size < RECENT_ROTATIONS_CAP) break;
      this.recentlyRotated.delete(oldHash);
    }
    this.recentlyRotated.set(hash, rotation);
  }

  private store(userId: number): string {
    const token = randomBytes(32).toString('base64');
    const now = Date.now();
    this.insert.run({ userId, hash: hashRefreshToken(token), expiresAt: now + this.ttlSec * 1000, now });
    return token;
  }

  revokeForUser(userId: number): number {
    return this.deleteForUser.run({ userId }).changes;
  }

  revokeAll(): number {
    return this.db.orm.delete(refreshTokens).run().changes;
  }
}
