// User management: listing, creation, profile and role changes, passwords, deletion, unlock, the first admin.
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { desc, eq, sql } from 'drizzle-orm';
import type { Actor, AuditLog } from '../../platform/db/auditTrail.ts';
import type { Db } from '../../platform/db/client.ts';
import { contains, equals, PagedQuery, slot, type PageResult } from '../../platform/db/listQuery.ts';
import { refreshTokens, users } from '../../platform/db/schema/index.ts';
import { issueSetupLink, retireSetupLinks } from './setupLink.ts';
import { countUsers, insertUser, assertUnique, presentUser, setPasswordHash, UserLookup, type UserRow } from './userRecords.ts';
import { BadRequest, Conflict, Forbidden, NotFound } from '../../platform/errors.ts';
import type { Logger } from '../../platform/logger.ts';
import { ROLES, type Role } from '../../platform/roles.ts';
import type { UserUpdate, UserView } from './schemas.ts';

export function generatePassword(): string {
  return randomBytes(12).toString('base64url');
}

export const INITIAL_ADMIN_FILE = 'initial-admin-password';

/**
 * First start with an empty users table: an `admin` with a random password, logged and written 0600. On every later
 * start while that file is still there, the password is logged again (a first start's line may have scrolled out of
 * the journal) — as long as it is still admin's password; a stale file is named, its content is not logged.
 */
export async function ensureInitialAdmin(
  db: Db,
  dataDir: string,
  logger: Logger,
  passwords: { hash(password: string): Promise<string>; verify(password: string, hash: string): Promise<boolean> },
  announce?: (line: string) => void,
  /** EMS_PUBLIC_URL: where the one-time set-up link points (setupLink.ts); unset: no link, the file only. */
  publicUrl?: string,
): Promise<void> {
  const file = path.join(dataDir, INITIAL_ADMIN_FILE);
  const offerLink = (userId: number) => publicUrl && announceSetupLink(db, dataDir, publicUrl, userId, logger, announce);
  if (countUsers(db) > 0) return remindInitialAdmin(db, file, logger, passwords.verify, announce, offerLink);
  const password = generatePassword();
  const passwordHash = await passwords.hash(password);
  const created = db.sqlite.transaction(() => {
    if (countUsers(db) > 0) return null;
    return insertUser(db, { username: 'admin', email: 'admin@localhost', passwordHash, role: 'admin', mustChangePassword: true });
  })();
  if (!created) return;
  fs.writeFileSync(file, `${password}\n`, { mode: 0o600 });
  fs.chmodSync(file, 0o600);
  // The one deliberate exception to "no passwords in logs": the operator needs it, and it is also in the 0600 file.
  logger.warn({ username: 'admin', initialPassword: password, file }, 'created the initial admin account; change its password after the first sign-in');
  announce?.(initialPasswordLine(password, file));
  offerLink(created.id);
}

/** The set-up link, logged and as a human line beside the password's. */
function announceSetupLink(db: Db, dataDir: string, publicUrl: string, userId: number, logger: Logger, announce?: (line: string) => void): void {
  const link = issueSetupLink(db, dataDir, publicUrl, userId);
  logger.warn({ username: 'admin', setupLink: link.url, expiresAt: link.expiresAt, file: link.file }, 'one-time set-up link for the first admin');
  announce?.(`ems: *** OR OPEN ${link.url} to choose admin's password (works once, until ${link.expiresAt}; also in ${link.file}) ***\n`);
}

/** The human line beside the JSON one: easy to spot in a terminal or in `journalctl -u ems` (docs/operating.md). */
export function initialPasswordLine(password: string, file: string): string {
  return `ems: *** FIRST SIGN-IN: user admin, password ${password} (also in ${file}; change it after signing in) ***\n`;
}

async function remindInitialAdmin(
  db: Db,
  file: string,
  logger: Logger,
  verify: (password: string, hash: string) => Promise<boolean>,
  announce?: (line: string) => void,
  offerLink?: (userId: number) => void,
): Promise<void> {
  let password: string;
  try {
    password = fs.readFileSync(file, 'utf8').trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    logger.warn({ file, error: (error as NodeJS.ErrnoException).code }, 'cannot read the initial admin password file');
    return;
  }
  const admin = new UserLookup(db).findByUsername('admin');
  if (admin && password && (await verify(password, admin.passwordHash))) {
    // A box installed before the flag existed: the generated password is still in use, so ask for a new one too.
    if (!admin.mustChangePassword) db.orm.update(users).set({ mustChangePassword: true }).where(eq(users.id, admin.id)).run();
    logger.warn({ username: 'admin', initialPassword: password, file }, 'the initial admin password is still in use; sign in, change it and delete the file');
    announce?.(initialPasswordLine(password, file));
    offerLink?.(admin.id);
  } else {
    forgetInitialPassword(file, logger);
    retireSetupLinks(db, path.dirname(file));
  }
}

/**
 * The file holds admin's first password only: once that password is changed (the app's forced change, emsctl, a
 * reset) it would mislead whoever reads it next, so it goes (README: "First sign-in").
 */
function forgetInitialPassword(file: string, logger: Logger): void {
  try {
    fs.rmSync(file);
    logger.info({ file }, "admin's initial password was changed: its file is deleted");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
      logger.warn({ file, error: (error as NodeJS.ErrnoException).code }, 'cannot delete the initial admin password file');
  }
}

// ---- User management (the /api/users routes and emsctl): every write in one transaction with its audit entry. ----

export type UserListFilters = { page: number; pageSize: number; q?: string; role?: Role };
export type NewUserInput = { username: string; email: string; password: string; role?: Role; displayName?: string | null; phone?: string | null };
export type PasswordChange = { currentPassword?: string; newPassword: string };
/** Who asks, with the role their permission checks use; emsctl acts as an admin without an account (id null). */
export type Caller = Actor & { role: Role };

/** The fields a user may change on their own record; username and role need an admin. */
const USER_EDITABLE = ['username', 'email', 'displayName', 'phone', 'role', 'language', 'theme'] as const satisfies readonly (keyof UserUpdate)[];
const SELF_EDITABLE = new Set(['email', 'displayName', 'phone', 'language', 'theme']);

/** Hashing and the sign-in throttle belong to auth; they are handed in, so users does not import auth. */
export type UserDirectoryDeps = {
  db: Db;
  audit: AuditLog;
  passwords: {
    hash(password: string): Promise<string>;
    verify(password: string, hash: string): Promise<boolean>;
    assertLength(password: string, field?: string): void;
  };
  throttle: {
    /** Reserves one password check (counted as a failure until `succeeded()`); throws 429 while the budget is spent. */
    reserve(userId: number | undefined, login: string, address: string): { succeeded(): void };
    /** Clears the account's failed sign-in counter; true when there was one. */
    unlock(user: { id: number; username: string; email: string }): boolean;
  };
  dataDir: string;
  logger: Logger;
};

export class UserDirectory {
  private readonly db: Db;
  private readonly audit: AuditLog;
  readonly lookup: UserLookup;
  private readonly pages: PagedQuery<typeof users>;
  private readonly saveProfile;
  private readonly saveRole;
  private readonly remove;
  private readonly revokeRefresh;

  constructor(private readonly deps: UserDirectoryDeps) {
    this.db = deps.db;
    this.audit = deps.audit;
    this.lookup = new UserLookup(deps.db);
    const orm = deps.db.orm;
    const id = eq(users.id, sql.placeholder('id'));
    this.pages = new PagedQuery(deps.db, users, [desc(users.createdAt), desc(users.id)]);
    this.saveProfile = orm
      .update(users)
      .set({
        username: slot('username'),
        email: slot('email'),
        displayName: slot('displayName'),
        phone: slot('phone'),
        role: slot('role'),
        language: slot('language'),
        theme: slot('theme'),
        updatedAt: slot('updatedAt'),
      })
      .where(id)
      .returning()
      .prepare();
    this.saveRole = orm
      .update(users)
      .set({ role: slot('role'), updatedAt: slot('updatedAt') })
      .where(id)
      .returning()
      .prepare();
    this.remove = orm.delete(users).where(id).returning().prepare();
    this.revokeRefresh = orm
      .delete(refreshTokens)
      .where(eq(refreshTokens.userId, sql.placeholder('id')))
      .prepare();
  }

  list(filters: UserListFilters): PageResult<UserView> {
    const result = this.pages.page(
      [...contains([users.username, users.email, users.displayName], filters.q), ...equals(users.role, 'role', filters.role)],
      filters.page,
      filters.pageSize,
    );
    return { ...result, items: result.items.map(presentUser) };
  }

  /** Admins read anyone; everyone else only themselves. */
  get(actor: Caller, id: number): UserView {
    if (actor.role !== 'admin' && actor.id !== id) throw new Forbidden('You can only read your own user record');
    return presentUser(this.existing(id));
  }

  /** The user of that exact username (any case); NotFound otherwise. */
  byUsername(username: string): UserView {
    const row = this.lookup.findByUsername(username);
    if (!row) throw new NotFound(`No user named "${username}"`);
    return presentUser(row);
  }

  async create(actor: Caller, input: NewUserInput): Promise<UserView> {
    this.deps.passwords.assertLength(input.password);
    // Checked before bcrypt so a duplicate costs no hashing; checked again inside the transaction by insertUser.
    assertUnique(this.db, input.username, input.email);
    const passwordHash = await this.deps.passwords.hash(input.password);
    return this.db.sqlite.transaction(() => {
      const row = insertUser(this.db, { ...input, role: input.role ?? ROLES[0], passwordHash });
      const view = presentUser(row);
      this.audit.record({ actor, action: 'create', resource: 'users', resourceId: row.id, after: view });
      return view;
    })();
  }

  /** Partial update. Admins change any field; a user editing itself only email, displayName and phone. */
  updateUser(actor: Caller, id: number, input: UserUpdate): UserView {
    const isAdmin = actor.role === 'admin';
    if (!isAdmin && actor.id !== id) throw new Forbidden('You can only edit your own user record');
    // IMMEDIATE: the last-admin check and the write cannot interleave with an emsctl process on the same file.
    return this.db.sqlite
      .transaction(() => {
        const row = this.existing(id);
        // Only the writable fields are looked at, whatever else a caller put in the object.
        const changed = USER_EDITABLE.filter((key) => input[key] !== undefined && input[key] !== row[key]);
        if (changed.length === 0) return presentUser(row);
        const refused = changed.filter((key) => !SELF_EDITABLE.has(key));
        if (!isAdmin && refused.length > 0) throw new Forbidden(`Only an admin can change ${refused.join(' and ')}`);
        const next: UserRow = { ...row, ...Object.fromEntries(changed.map((key) => [key, input[key]])) };
        if (changed.includes('username') || changed.includes('email')) assertUnique(this.db, next.username, next.email, id);
        if (row.role === 'admin' && next.role !== 'admin') this.assertNotLastAdmin('demote');
        const saved = this.saveProfile.get({ ...next, updatedAt: new Date().toISOString() })!;
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
        if (changed.includes('role'))
          this.audit.record({ actor, action: 'role', resource: 'users', resourceId: id, before: { role: row.role }, after: { role: next.role } });
        return presentUser(saved);
      })
      .immediate();
  }

  setRole(actor: Caller, id: number, role: Role): UserView {
    return this.db.sqlite
      .transaction(() => {
        const row = this.existing(id);
        if (row.role === role) return presentUser(row);
        if (row.role === 'admin') this.assertNotLastAdmin('demote');
        const saved = this.saveRole.get({ id, role, updatedAt: new Date().toISOString() })!;
        this.audit.record({ actor, action: 'role', resource: 'users', resourceId: id, before: { role: row.role }, after: { role } });
        return presentUser(saved);
      })
      .immediate();
  }

  /**
   * Your own password needs the current one (failures count towards the sign-in throttle, so a stolen access
   * token cannot be used to guess it). An admin may set anyone else's without it. The user's refresh token is deleted
   * in the same transaction as the new hash (a changed password is the remedy for a stolen session, OWASP ASVS 3.3);
   * the route gives the caller's own device a new pair when the change is the caller's own (AuthService.renewSession).
   */
  async setPassword(actor: Caller, id: number, change: PasswordChange, address: string): Promise<void> {
    const self = actor.id === id;
    if (!self && actor.role !== 'admin') throw new Forbidden("Only an admin can set another user's password");
    const target = this.existing(id);
    this.deps.passwords.assertLength(change.newPassword, 'newPassword');
    if (self) {
      if (change.currentPassword === undefined) {
        throw new BadRequest('Invalid body', [{ path: 'body.currentPassword', message: 'is required to change your own password' }]);
      }
      const attempt = this.deps.throttle.reserve(target.id, target.username, address);
      if (!(await this.deps.passwords.verify(change.currentPassword, target.passwordHash))) {
        throw new BadRequest('Current password is incorrect', [{ path: 'body.currentPassword', message: 'is incorrect' }]);
      }
      attempt.succeeded();
    }
    const passwordHash = await this.deps.passwords.hash(change.newPassword);
    this.db.sqlite.transaction(() => {
      this.existing(id); // deleted while bcrypt ran?
      setPasswordHash(this.db, id, passwordHash);
      this.revokeRefresh.run({ id });
      this.audit.record({ actor, action: 'password', resource: 'users', resourceId: id });
    })();
    if (target.username === 'admin') forgetInitialPassword(path.join(this.deps.dataDir, INITIAL_ADMIN_FILE), this.deps.logger);
  }

  /** Ends a sign-in lockout (admins and emsctl); audited even when there was nothing to clear. */
  unlock(actor: Caller, id: number): { cleared: boolean } {
    if (actor.role !== 'admin') throw new Forbidden('Only an admin can unlock a user');
    return this.db.sqlite.transaction(() => {
      const row = this.existing(id);
      const cleared = this.deps.throttle.unlock(row);
      this.audit.record({ actor, action: 'unlock', resource: 'users', resourceId: id, after: { cleared } });
      return { cleared };
    })();
  }

  /**
   * Deletes the user, its refresh token and its avatar file; its access tokens fail at once because auth re-reads
   * the user. Resolves once the avatar file is gone (emsctl exits right after).
   */
  async deleteUser(actor: Caller, id: number): Promise<void> {
    const removed = this.db.sqlite
      .transaction(() => {
        const row = this.existing(id);
        if (row.role === 'admin') this.assertNotLastAdmin('delete');
        this.revokeRefresh.run({ id });
        this.remove.get({ id });
        this.audit.record({ actor, action: 'delete', resource: 'users', resourceId: id, before: presentUser(row) });
        return row;
      })
      .immediate();
    if (removed.avatarStoredName) await this.removeAvatarFile(removed.avatarStoredName);
  }

  private async removeAvatarFile(storedName: string): Promise<void> {
    // Stored names are generated by the service; basename() keeps a damaged row from pointing outside avatars/.
    const file = path.join(this.deps.dataDir, 'avatars', path.basename(storedName));
    try {
      await fs.promises.rm(file, { force: true });
    } catch (error) {
      this.deps.logger.warn({ err: { message: (error as Error).message }, file }, 'could not remove the avatar of a deleted user');
    }
  }

  private existing(id: number): UserRow {
    const row = this.lookup.findById(id);
    if (!row) throw new NotFound('User not found');
    return row;
  }

  private assertNotLastAdmin(action: 'delete' | 'demote'): void {
    if (countUsers(this.db, 'admin') <= 1) {
      throw new Conflict(
        action === 'delete' ? 'Cannot delete the last admin: make another user admin first' : 'Cannot demote the last admin: make another user admin first',
      );
    }
  }
}
