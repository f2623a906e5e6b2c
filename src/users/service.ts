// User records: lookups used on every request, creation with uniqueness checks, password changes, the first admin.
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Db } from '../db/client.ts';
import type { Role } from '../db/schema/users.ts';
import { Conflict } from '../http/errors.ts';
import type { AuthUser } from '../http/route.ts';
import type { Logger } from '../logger.ts';
import { hashPassword } from '../auth/passwords.ts';
import type { UserView } from './schemas.ts';

export type UserRow = {
  id: number;
  username: string;
  email: string;
  passwordHash: string;
  role: Role;
  displayName: string | null;
  phone: string | null;
  avatarUrl: string | null;
  lastLoginAt: string | null;
  createdAt: string;
  updatedAt: string;
};

const USER_COLUMNS = `id, username, email, password_hash AS passwordHash, role, display_name AS displayName, phone,
  avatar_url AS avatarUrl, last_login_at AS lastLoginAt, created_at AS createdAt, updated_at AS updatedAt`;

export function presentUser(row: UserRow): UserView {
  return {
    id: row.id,
    username: row.username,
    email: row.email,
    role: row.role,
    displayName: row.displayName,
    phone: row.phone,
    avatarUrl: row.avatarUrl,
    lastLoginAt: row.lastLoginAt,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

/** Prepared statements: these run on every authenticated request (a drizzle builder query costs ~10x). */
export class UserLookup {
  private readonly byId;
  private readonly authById;
  private readonly byLogin;
  private readonly byEmail;

  constructor(db: Db) {
    this.byId = db.sqlite.prepare(`SELECT ${USER_COLUMNS} FROM users WHERE id = ?`);
    this.authById = db.sqlite.prepare('SELECT id, username, email, role FROM users WHERE id = ?');
    this.byLogin = db.sqlite.prepare(`SELECT ${USER_COLUMNS} FROM users WHERE username = @login COLLATE NOCASE OR email = @login COLLATE NOCASE LIMIT 1`);
    this.byEmail = db.sqlite.prepare(`SELECT ${USER_COLUMNS} FROM users WHERE email = ? COLLATE NOCASE`);
  }

  authUser(id: number): AuthUser | undefined {
    return this.authById.get(id) as AuthUser | undefined;
  }

  findById(id: number): UserRow | undefined {
    return this.byId.get(id) as UserRow | undefined;
  }

  /** The login name may be a username or an email. */
  findByLogin(login: string): UserRow | undefined {
    return this.byLogin.get({ login }) as UserRow | undefined;
  }

  findByEmail(email: string): UserRow | undefined {
    return this.byEmail.get(email) as UserRow | undefined;
  }
}

export type NewUser = { username: string; email: string; passwordHash: string; role: Role; displayName?: string | null; phone?: string | null };

export function assertUnique(db: Db, username: string, email: string, exceptId?: number): void {
  const clash = db.sqlite
    .prepare(
      'SELECT username = @username COLLATE NOCASE AS sameName FROM users WHERE (username = @username COLLATE NOCASE OR email = @email COLLATE NOCASE) AND id IS NOT @exceptId LIMIT 1',
    )
    .get({ username, email, exceptId: exceptId ?? null }) as { sameName: number } | undefined;
  if (clash) throw new Conflict(clash.sameName ? 'That username is already taken' : 'That email is already registered');
}

/** Synchronous so callers can put it in one transaction with what follows (a refresh token, an OAuth link). */
export function insertUser(db: Db, user: NewUser): UserRow {
  assertUnique(db, user.username, user.email);
  const now = new Date().toISOString();
  const result = db.sqlite
    .prepare(
      `INSERT INTO users (username, email, password_hash, role, display_name, phone, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .run(user.username, user.email, user.passwordHash, user.role, user.displayName ?? null, user.phone ?? null, now, now);
  return new UserLookup(db).findById(Number(result.lastInsertRowid))!;
}

export function setPasswordHash(db: Db, userId: number, passwordHash: string): void {
  db.sqlite.prepare('UPDATE users SET password_hash = ?, updated_at = ? WHERE id = ?').run(passwordHash, new Date().toISOString(), userId);
}

export function countAdmins(db: Db): number {
  return (db.sqlite.prepare("SELECT count(*) AS n FROM users WHERE role = 'admin'").get() as { n: number }).n;
}

export function generatePassword(): string {
  return randomBytes(12).toString('base64url');
}

export const INITIAL_ADMIN_FILE = 'initial-admin-password';

/** First start with an empty users table: an `admin` with a random password, printed once and written 0600. */
export async function ensureInitialAdmin(db: Db, dataDir: string, logger: Logger): Promise<void> {
  const count = (db.sqlite.prepare('SELECT count(*) AS n FROM users').get() as { n: number }).n;
  if (count > 0) return;
  const password = generatePassword();
  const passwordHash = await hashPassword(password);
  const created = db.sqlite.transaction(() => {
    if ((db.sqlite.prepare('SELECT count(*) AS n FROM users').get() as { n: number }).n > 0) return false;
    insertUser(db, { username: 'admin', email: 'admin@localhost', passwordHash, role: 'admin' });
    return true;
  })();
  if (!created) return;
  const file = path.join(dataDir, INITIAL_ADMIN_FILE);
  fs.writeFileSync(file, `${password}\n`, { mode: 0o600 });
  fs.chmodSync(file, 0o600);
  // The one deliberate exception to "no passwords in logs": the operator needs it once, and it is also in the 0600 file.
  logger.warn({ username: 'admin', initialPassword: password, file }, 'created the initial admin account; change its password after the first sign-in');
}
