// Opaque refresh tokens: 32 random bytes, only a SHA-256 stored, one per user, rotated in one synchronous transaction.
import { createHash, randomBytes } from 'node:crypto';

/** A rotated token presented again this soon after its rotation is a concurrent refresh, not a replay (see rotate). */
export const REUSE_GRACE_MS = 10_000;
const RECENT_ROTATIONS_CAP = 10_000;
import type { Db } from '../db/client.ts';

export function hashRefreshToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export class RefreshTokens {
  private readonly deleteForUser;
  private readonly insert;
  private readonly findByHash;
  private readonly deleteById;
  readonly issue: (userId: number) => string;
  /** The new pair's token; `reused` when the token was already rotated away (the user's session is ended); null when unknown or expired. */
  readonly rotate: (token: string) => { userId: number; token: string } | { reused: number } | null;
  private readonly retire;
  private readonly findRetired;
  private readonly sweepRetired;

  constructor(
    private readonly db: Db,
    private readonly ttlSec: number,
  ) {
    const sqlite = db.sqlite;
    this.deleteForUser = sqlite.prepare('DELETE FROM refresh_tokens WHERE user_id = ?');
    this.insert = sqlite.prepare('INSERT INTO refresh_tokens (user_id, token_hash, expires_at, created_at) VALUES (?, ?, ?, ?)');
    this.findByHash = sqlite.prepare('SELECT id, user_id AS userId, expires_at AS expiresAt FROM refresh_tokens WHERE token_hash = ?');
    this.deleteById = sqlite.prepare('DELETE FROM refresh_tokens WHERE id = ?');
    this.retire = sqlite.prepare('INSERT OR REPLACE INTO refresh_tokens_retired (token_hash, user_id, expires_at) VALUES (?, ?, ?)');
    this.findRetired = sqlite.prepare('SELECT user_id AS userId FROM refresh_tokens_retired WHERE token_hash = ? AND expires_at > ?');
    this.sweepRetired = sqlite.prepare('DELETE FROM refresh_tokens_retired WHERE expires_at <= ?');

    /** Deletes the user's earlier token first: one session per user (SPEC.md state table). */
    this.issue = sqlite.transaction((userId: number) => {
      this.deleteForUser.run(userId);
      return this.store(userId);
    });

    // No await inside: better-sqlite3 runs this start to finish, so of N concurrent refreshes of one token exactly one wins.
    // A token rotated away and presented again means two parties hold the family: whoever holds the current token
    // loses it too (RFC 9700 §4.14.2, reuse detection) — unless it is the current token's direct predecessor, presented
    // within REUSE_GRACE_MS of its rotation: that is the same browser's second tab refreshing at the same moment (the
    // losers get 401 and keep the session the winner got, as Auth0's reuse interval and Okta's grace period do). A
    // replay seconds after the owner's own refresh is the case this leaves open; any older token, or later, ends it.
    this.rotate = sqlite.transaction((token: string) => {
      const hash = hashRefreshToken(token);
      const now = Date.now();
      const row = this.findByHash.get(hash) as { id: number; userId: number; expiresAt: number } | undefined;
      if (!row) {
        const retired = this.findRetired.get(hash, now) as { userId: number } | undefined;
        if (!retired) return null;
        const rotation = this.recentlyRotated.get(hash);
        if (rotation && now - rotation.at < REUSE_GRACE_MS && this.findByHash.get(rotation.successor)) return null;
        this.deleteForUser.run(retired.userId);
        return { reused: retired.userId };
      }
      if (row.expiresAt <= now) return null;
      this.deleteById.run(row.id);
      this.sweepRetired.run(now);
      this.retire.run(hash, row.userId, row.expiresAt);
      const next = this.store(row.userId);
      this.rememberRotation(hash, hashRefreshToken(next), now);
      return { userId: row.userId, token: next };
    });
  }

  /** Rotations of the last REUSE_GRACE_MS, oldest first (a Map keeps insertion order); bounded by the window and a cap. */
  private readonly recentlyRotated = new Map<string, { at: number; successor: string }>();

  private rememberRotation(hash: string, successor: string, now: number): void {
    for (const [oldHash, { at }] of this.recentlyRotated) {
      if (now - at < REUSE_GRACE_MS && this.recentlyRotated.size < RECENT_ROTATIONS_CAP) break;
      this.recentlyRotated.delete(oldHash);
    }
    this.recentlyRotated.set(hash, { at: now, successor });
  }

  private store(userId: number): string {
    const token = randomBytes(32).toString('base64');
    const now = Date.now();
    this.insert.run(userId, hashRefreshToken(token), now + this.ttlSec * 1000, now);
    return token;
  }

  revokeForUser(userId: number): number {
    return this.deleteForUser.run(userId).changes;
  }

  revokeAll(): number {
    return this.db.sqlite.prepare('DELETE FROM refresh_tokens').run().changes;
  }
}
