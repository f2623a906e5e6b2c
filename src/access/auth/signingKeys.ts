// The JWT signing secret: pinned by EMS_JWT_SECRET, or generated once and kept in app_settings so `emsctl secret rotate` can replace it.
import { createSecretKey, randomBytes, type KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { eq, sql } from 'drizzle-orm';
import type { Db } from '../../platform/db/client.ts';
import { Kept } from '../../platform/db/kept.ts';
import { appSettings } from '../../platform/db/schema/index.ts';

export const JWT_SECRET_SETTING = 'jwt_secret';
/** Verified tokens remembered; a dashboard session sends the same token on every request until it expires. */
const VERIFIED_CACHE_MAX = 1000;

export type AccessClaims = { userId: number; username: string };

export function generateSecret(): string {
  return randomBytes(48).toString('base64');
}

/** Stores a secret unless one exists; returns the stored one. Safe when the CLI and the server race on an empty DB. */
export function ensureStoredSecret(db: Db): string {
  db.orm.insert(appSettings).values({ key: JWT_SECRET_SETTING, value: generateSecret(), updatedAt: new Date().toISOString() }).onConflictDoNothing().run();
  return storedSecret(db).get()!.value;
}

/** Read by a running server when app_settings changed; the row exists once ensureStoredSecret ran. */
function storedSecret(db: Db) {
  return db.orm.select({ value: appSettings.value }).from(appSettings).where(eq(appSettings.key, JWT_SECRET_SETTING)).prepare();
}

export function rotateStoredSecret(db: Db): void {
  db.orm
    .insert(appSettings)
    .values({ key: JWT_SECRET_SETTING, value: generateSecret(), updatedAt: new Date().toISOString() })
    .onConflictDoUpdate({ target: appSettings.key, set: { value: sql`excluded.value`, updatedAt: sql`excluded.updated_at` } })
    .run();
}

export class SigningKeys {
  /**
   * The key of EMS_JWT_SECRET, or of the secret in app_settings: that one is kept until app_settings is written or
   * another connection commits (`emsctl secret rotate`), so a rotated secret applies from the next request. A KeyObject
   * built once per secret: jsonwebtoken otherwise rebuilds it on every call (~0.5 ms against ~12 µs).
   */
  private readonly current: () => KeyObject;
  /**
   * Tokens jwt.verify answered, with their exp (seconds), kept by the same rule (a rotation drops them). A hit skips the
   * ~12 µs verify on every authenticated request; only a byte-identical token hits, and exp is still checked.
   */
  private readonly verified: Kept<{ claims: AccessClaims; exp: number } | null>;

  constructor(
    db: Db,
    pinnedSecret: string | undefined,
    private readonly accessTtlSec: number,
  ) {
    if (pinnedSecret) {
      const key = createSecretKey(Buffer.from(pinnedSecret));
      this.current = () => key;
    } else {
      let last = { secret: ensureStoredSecret(db), key: undefined as KeyObject | undefined };
      const statement = storedSecret(db);
      const kept = new Kept<KeyObject>(db.sqlite, { name: 'auth.signingKey', tables: ['app_settings'], max: 1 });
      this.current = () =>
        kept.get('key', () => {
          const secret = statement.get()?.value ?? last.secret;
          if (!last.key || secret !== last.secret) last = { secret, key: createSecretKey(Buffer.from(secret)) };
          return last.key!;
        });
    }
    this.verified = new Kept(db.sqlite, { name: 'auth.verifiedTokens', tables: ['app_settings'], max: VERIFIED_CACHE_MAX });
  }

  sign(claims: AccessClaims): string {
    return jwt.sign({ userId: claims.userId, username: claims.username }, this.current(), { algorithm: 'HS256', expiresIn: this.accessTtlSec });
  }

  /** The claims of a valid token, or null: wrong signature, other algorithm, expired or malformed. */
  verify(token: string): AccessClaims | null {
    const checked = this.check(token);
    return checked === 'expired' ? null : checked;
  }

  /** The claims of a valid token; 'expired' for one this service signed whose time is up (refreshing helps); else null. */
  check(token: string): AccessClaims | 'expired' | null {
    // The key is looked up only to verify a token not seen yet: both caches follow app_settings and other connections'
    // commits, so while a verified token is kept the key it was verified with is still the current one.
    const known = this.verified.get(token, () => this.verifyOnce(token, this.current()));
    if (!known) return null;
    // jsonwebtoken's own rule: expired once the clock reaches exp.
    return Math.floor(Date.now() / 1000) < known.exp ? known.claims : 'expired';
  }

  /** jwt.verify, pinned to HS256 (a failure is kept too: a bad token stays bad, and a flood of one costs no HMAC each). */
  private verifyOnce(token: string, key: KeyObject): { claims: AccessClaims; exp: number } | null {
    try {
      let payload: string | jwt.JwtPayload;
      try {
        payload = jwt.verify(token, key, { algorithms: ['HS256'] });
      } catch (error) {
        // jsonwebtoken checks the signature before the time: an expired token is one this key signed. Its claims are
        // kept with their past exp, so check() can tell "expired" from "invalid".
        if (!(error instanceof jwt.TokenExpiredError)) return null;
        payload = jwt.decode(token) ?? '';
      }
      if (typeof payload !== 'object' || !Number.isSafeInteger(payload.userId) || typeof payload.username !== 'string') return null;
      const claims = { userId: payload.userId as number, username: payload.username };
      return { claims, exp: typeof payload.exp === 'number' ? payload.exp : Number.POSITIVE_INFINITY };
    } catch {
      return null;
    }
  }
}
