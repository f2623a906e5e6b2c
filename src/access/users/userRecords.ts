// User rows: the lookups every authenticated request makes, creation with uniqueness checks, the admin count.
import { count, eq, sql } from 'drizzle-orm';
import { Conflict } from '../../platform/errors.ts';
import type { Db } from '../../platform/db/client.ts';
import { users, type Role } from '../../platform/db/schema/index.ts';
import { Kept } from '../../platform/db/kept.ts';

export type UserRow = typeof users.$inferSelect;
/** A user as anyone may see it: never the password hash or the avatar's storage internals. */
export type PublicUser = Omit<UserRow, 'passwordHash' | 'avatarStoredName' | 'avatarMimeType'>;
/** Who is calling, as the route layer knows it on every request. */
export type AuthUser = Pick<UserRow, 'id' | 'username' | 'email' | 'role'>;

export function presentUser(row: UserRow): PublicUser {
  return {
    id: row.id,
    username: row.username,
    email: row.email,
    role: row.role,
    displayName: row.displayName,
    phone: row.phone,
    avatarUrl: row.avatarUrl,
    lastLoginAt: row.lastLoginAt,
    mustChangePassword: row.mustChangePassword,
    language: row.language,
    theme: row.theme,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

const login = sql.placeholder('login');

/** Users whose rows are kept (least recently used dropped first). */
const KEPT_USERS = 256;

/**
 * Prepared once: these run on every authenticated request. The caller's row is kept until the users table is written
 * (a role change, a removal) or another connection commits (emsctl), frozen: a read by id costs a data_version read
 * instead of a query through drizzle (~3 µs against ~12 µs).
 */
export class UserLookup {
  private readonly byId;
  private readonly authById;
  private readonly byLogin;
  private readonly byEmail;
  private readonly keptAuth: Kept<AuthUser | undefined>;
  private readonly keptRows: Kept<UserRow | undefined>;

  constructor(db: Db) {
    this.keptAuth = new Kept(db.sqlite, { name: 'users.auth', tables: ['users'], max: KEPT_USERS });
    this.keptRows = new Kept(db.sqlite, { name: 'users.rows', tables: ['users'], max: KEPT_USERS });
    const orm = db.orm;
    this.byId = orm
      .select()
      .from(users)
      .where(eq(users.id, sql.placeholder('id')))
      .prepare();
    this.authById = orm
      .select({ id: users.id, username: users.username, email: users.email, role: users.role })
      .from(users)
      .where(eq(users.id, sql.placeholder('id')))
      .prepare();
    // COLLATE NOCASE matches the unique indexes: Admin and admin are one account.
    this.byLogin = orm
      .select()
      .from(users)
      .where(sql`${users.username} = ${login} COLLATE NOCASE OR ${users.email} = ${login} COLLATE NOCASE`)
      .limit(1)
      .prepare();
    this.byEmail = orm
      .select()
      .from(users)
      .where(sql`${users.email} = ${sql.placeholder('email')} COLLATE NOCASE`)
      .prepare();
  }

  authUser(id: number): AuthUser | undefined {
    return this.keptAuth.get(String(id), () => frozen(this.authById.get({ id })));
  }

  findById(id: number): UserRow | undefined {
    return this.keptRows.get(String(id), () => frozen(this.byId.get({ id })));
  }

  /** The login name may be a username or an email. */
  findByLogin(login: string): UserRow | undefined {
    return this.byLogin.get({ login });
  }

  /** Exactly this username (any case), not an email: what emsctl names a user by. */
  findByUsername(username: string): UserRow | undefined {
    const row = this.byLogin.get({ login: username });
    return row && row.username.toLowerCase() === username.toLowerCase() ? row : undefined;
  }

  findByEmail(email: string): UserRow | undefined {
    return this.byEmail.get({ email });
  }
}

function frozen<V extends object>(value: V | undefined): V | undefined {
  return value && Object.freeze(value);
}

export type NewUser = {
  username: string;
  email: string;
  passwordHash: string;
  role: Role;
  displayName?: string | null;
  phone?: string | null;
  mustChangePassword?: boolean;
};

export function assertUnique(db: Db, username: string, email: string, exceptId?: number): void {
  const clash = db.orm
    .select({ sameName: sql<number>`${users.username} = ${username} COLLATE NOCASE` })
    .from(users)
    .where(sql`(${users.username} = ${username} COLLATE NOCASE OR ${users.email} = ${email} COLLATE NOCASE) AND ${users.id} IS NOT ${exceptId ?? null}`)
    .limit(1)
    .get();
  if (clash) throw new Conflict(clash.sameName ? 'That username is already taken' : 'That email is already registered');
}

/** Synchronous so callers can put it in one transaction with what follows (a refresh token, an OAuth link, an audit entry). */
export function insertUser(db: Db, user: NewUser): UserRow {
  assertUnique(db, user.username, user.email);
  const now = new Date().toISOString();
  return db.orm
    .insert(users)
    .values({ ...user, displayName: user.displayName ?? null, phone: user.phone ?? null, createdAt: now, updatedAt: now })
    .returning()
    .get();
}

export function setPasswordHash(db: Db, userId: number, passwordHash: string): void {
  db.orm.update(users).set({ passwordHash, mustChangePassword: false, updatedAt: new Date().toISOString() }).where(eq(users.id, userId)).run();
}

export function countUsers(db: Db, role?: Role): number {
  return (
    db.orm
      .select({ n: count() })
      .from(users)
      .where(role && eq(users.role, role))
      .get()?.n ?? 0
  );
}
