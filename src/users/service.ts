// User records: lookups used on every request, creation with uniqueness checks, password changes, the first admin.
import { contains, equals, PagedList } from '../http/listQuery.ts';
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Db } from '../db/client.ts';
import { ROLES, type Role } from '../db/schema/users.ts';
import { BadRequest, Conflict, Forbidden, NotFound } from '../http/errors.ts';
import type { AuthUser } from '../http/route.ts';
import type { Logger } from '../logger.ts';
import { assertPasswordLength, hashPassword, verifyPassword } from '../auth/passwords.ts';
import type { LoginThrottle } from '../auth/loginThrottle.ts';
import type { AuditLog } from '../audit/service.ts';
import type { UserUpdate, UserView } from './schemas.ts';

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

// ---- User management (the /api/users routes): every write in one transaction with its audit entry. ----

export type UserListFilters = { page: number; pageSize: number; q?: string; role?: Role };
export type UserPage = { items: UserView[]; total: number; page: number; pageSize: number };
export type NewUserInput = { username: string; email: string; password: string; role?: Role; displayName?: string | null; phone?: string | null };
export type PasswordChange = { currentPassword?: string; newPassword: string };

/** The fields a user may change on their own record; username and role need an admin. */
const USER_EDITABLE = ['username', 'email', 'displayName', 'phone', 'role'] as const satisfies readonly (keyof UserUpdate)[];
const SELF_EDITABLE = new Set(['email', 'displayName', 'phone']);

const LIST_COLUMNS = `id, username, email, role, display_name AS displayName, phone, avatar_url AS avatarUrl,
  last_login_at AS lastLoginAt, created_at AS createdAt, updated_at AS updatedAt`;

type UserDirectoryDeps = {
  db: Db;
  audit: AuditLog;
  throttle: Pick<LoginThrottle, 'reserve'>;
  dataDir: string;
  logger: Logger;
};

export class UserDirectory {
  private readonly db: Db;
  private readonly audit: AuditLog;
  private readonly lookup: UserLookup;
  private readonly pages: PagedList<Omit<UserRow, 'passwordHash'>>;
  private readonly update;
  private readonly updateRole;
  private readonly remove;
  private readonly avatarOf;
  private readonly revokeRefresh;

  constructor(private readonly deps: UserDirectoryDeps) {
    this.db = deps.db;
    this.audit = deps.audit;
    this.lookup = new UserLookup(deps.db);
    const sqlite = deps.db.sqlite;
    this.pages = new PagedList(sqlite, 'users', LIST_COLUMNS, 'created_at DESC, id DESC');
    this.update = sqlite.prepare(
      'UPDATE users SET username = @username, email = @email, display_name = @displayName, phone = @phone, role = @role, updated_at = @updatedAt WHERE id = @id',
    );
    this.updateRole = sqlite.prepare('UPDATE users SET role = ?, updated_at = ? WHERE id = ?');
    this.remove = sqlite.prepare('DELETE FROM users WHERE id = ?');
    this.avatarOf = sqlite.prepare('SELECT avatar_stored_name FROM users WHERE id = ?').pluck();
    this.revokeRefresh = sqlite.prepare('DELETE FROM refresh_tokens WHERE user_id = ?');
  }

  list(filters: UserListFilters): UserPage {
    const { items: rows, total } = this.pages.page(
      [...contains(['username', 'email', 'display_name'], filters.q), ...equals('role', 'role', filters.role)],
      filters.page,
      filters.pageSize,
    );
    return { items: rows.map((row) => presentUser(row as UserRow)), total, page: filters.page, pageSize: filters.pageSize };
  }

  /** Admins read anyone; everyone else only themselves. */
  get(actor: AuthUser, id: number): UserView {
    if (actor.role !== 'admin' && actor.id !== id) throw new Forbidden('You can only read your own user record');
    return presentUser(this.existing(id));
  }

  async create(actor: AuthUser, input: NewUserInput): Promise<UserView> {
    assertPasswordLength(input.password);
    // Checked before bcrypt so a duplicate costs no hashing; checked again inside the transaction by insertUser.
    assertUnique(this.db, input.username, input.email);
    const passwordHash = await hashPassword(input.password);
    return this.db.sqlite.transaction(() => {
      const row = insertUser(this.db, { ...input, role: input.role ?? ROLES[0], passwordHash });
      const view = presentUser(row);
      this.audit.record({ actor, action: 'create', resource: 'users', resourceId: row.id, after: view });
      return view;
    })();
  }

  /** Partial update. Admins change any field; a user editing itself only email, displayName and phone. */
  updateUser(actor: AuthUser, id: number, input: UserUpdate): UserView {
    const isAdmin = actor.role === 'admin';
    if (!isAdmin && actor.id !== id) throw new Forbidden('You can only edit your own user record');
    // IMMEDIATE: the last-admin check and the write cannot interleave with an emsctl process on the same file.
    return this.db.sqlite.transaction(() => {
      const row = this.existing(id);
      // Only the writable fields are looked at, whatever else a caller put in the object.
      const changed = USER_EDITABLE.filter((key) => input[key] !== undefined && input[key] !== row[key]);
      if (changed.length === 0) return presentUser(row);
      const refused = changed.filter((key) => !SELF_EDITABLE.has(key));
      if (!isAdmin && refused.length > 0) throw new Forbidden(`Only an admin can change ${refused.join(' and ')}`);
      const next = { ...row, ...Object.fromEntries(changed.map((key) => [key, input[key]])) } as UserRow;
      if (changed.includes('username') || changed.includes('email')) assertUnique(this.db, next.username, next.email, id);
      if (row.role === 'admin' && next.role !== 'admin') this.assertNotLastAdmin('demote');
      this.update.run({ id, username: next.username, email: next.email, displayName: next.displayName, phone: next.phone, role: next.role, updatedAt: new Date().toISOString() });
      // A role change is its own 'role' entry, the same as PUT /users/:id/role writes, so ?action=role finds every one.
      const profile = changed.filter((key) => key !== 'role');
      if (profile.length > 0) {
        this.audit.record({
          actor,
          action: 'update',
          resource: 'users',
          resourceId: id,
          before: Object.fromEntries(profile.map((key) => [key, row[key]])),
          after: Object.fromEntries(profile.map((key) => [key, next[key]])),
        });
      }
      if (changed.includes('role')) this.audit.record({ actor, action: 'role', resource: 'users', resourceId: id, before: { role: row.role }, after: { role: next.role } });
      return presentUser(this.existing(id));
    }).immediate();
  }

  setRole(actor: AuthUser, id: number, role: Role): UserView {
    return this.db.sqlite.transaction(() => {
      const row = this.existing(id);
      if (row.role === role) return presentUser(row);
      if (row.role === 'admin') this.assertNotLastAdmin('demote');
      this.updateRole.run(role, new Date().toISOString(), id);
      this.audit.record({ actor, action: 'role', resource: 'users', resourceId: id, before: { role: row.role }, after: { role } });
      return presentUser(this.existing(id));
    }).immediate();
  }

  /**
   * Your own password needs the current one (failures count towards the sign-in throttle, so a stolen access
   * token cannot be used to guess it). An admin may set anyone else's without it. Sessions are kept, as for a reset.
   */
  async setPassword(actor: AuthUser, id: number, change: PasswordChange, address: string): Promise<void> {
    const self = actor.id === id;
    if (!self && actor.role !== 'admin') throw new Forbidden("Only an admin can set another user's password");
    const target = this.existing(id);
    assertPasswordLength(change.newPassword, 'newPassword');
    if (self) {
      if (change.currentPassword === undefined) {
        throw new BadRequest('Invalid body', [{ path: 'body.currentPassword', message: 'is required to change your own password' }]);
      }
      const attempt = this.deps.throttle.reserve(target.id, target.username, address);
      if (!(await verifyPassword(change.currentPassword, target.passwordHash))) {
        throw new BadRequest('Current password is incorrect', [{ path: 'body.currentPassword', message: 'is incorrect' }]);
      }
      attempt.succeeded();
    }
    const passwordHash = await hashPassword(change.newPassword);
    this.db.sqlite.transaction(() => {
      this.existing(id); // deleted while bcrypt ran?
      setPasswordHash(this.db, id, passwordHash);
      this.audit.record({ actor, action: 'password', resource: 'users', resourceId: id });
    })();
  }

  /** Deletes the user and its refresh token; its access tokens fail at once because auth re-reads the user. */
  deleteUser(actor: AuthUser, id: number): void {
    const avatar = this.db.sqlite.transaction(() => {
      const row = this.existing(id);
      if (row.role === 'admin') this.assertNotLastAdmin('delete');
      const storedAvatar = this.avatarOf.get(id) as string | null;
      this.revokeRefresh.run(id);
      this.remove.run(id);
      this.audit.record({ actor, action: 'delete', resource: 'users', resourceId: id, before: presentUser(row) });
      return storedAvatar;
    }).immediate();
    if (avatar) this.removeAvatarFile(avatar);
  }

  private removeAvatarFile(storedName: string): void {
    // Stored names are generated by the service; basename() keeps a damaged row from pointing outside avatars/.
    const file = path.join(this.deps.dataDir, 'avatars', path.basename(storedName));
    fs.rm(file, { force: true }, (error) => {
      if (error) this.deps.logger.warn({ err: { message: error.message }, file }, 'could not remove the avatar of a deleted user');
    });
  }

  private existing(id: number): UserRow {
    const row = this.lookup.findById(id);
    if (!row) throw new NotFound('User not found');
    return row;
  }

  private assertNotLastAdmin(action: 'delete' | 'demote'): void {
    if (countAdmins(this.db) <= 1) {
      throw new Conflict(
        action === 'delete'
          ? 'Cannot delete the last admin: make another user admin first'
          : 'Cannot demote the last admin: make another user admin first',
      );
    }
  }
}
