// emsctl user … and role …: account administration straight against the database.
import type { Command } from 'commander';
import { ROLES, type Role } from '../../src/db/schema/users.ts';
import { assertPasswordLength, hashPassword } from '../../src/auth/passwords.ts';
import { unlockUser } from '../../src/auth/loginThrottle.ts';
import { RefreshTokens } from '../../src/auth/refreshTokens.ts';
import { countAdmins, generatePassword, insertUser, setPasswordHash, UserLookup } from '../../src/users/service.ts';
import { HttpError } from '../../src/http/errors.ts';
import type { Db } from '../../src/db/client.ts';
import { CliError, printResult, printRows, withDb } from '../context.ts';

function parseRole(value: string): Role {
  if (!(ROLES as readonly string[]).includes(value)) throw new CliError(`unknown role "${value}"; roles are: ${ROLES.join(', ')}`);
  return value as Role;
}

async function readStdinPassword(): Promise<string> {
  if (process.stdin.isTTY) throw new CliError('--password-stdin expects the password on standard input (e.g. printf %s "$PW" | emsctl …)');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const password = Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
  return password;
}

function checkedPassword(password: string): string {
  try {
    assertPasswordLength(password);
  } catch {
    throw new CliError('password must be 8 to 72 bytes long');
  }
  return password;
}

function requireUser(db: Db, username: string) {
  const user = new UserLookup(db).findByLogin(username);
  if (!user || user.username.toLowerCase() !== username.toLowerCase()) throw new CliError(`no user named "${username}"`);
  return user;
}

/** The last admin can be neither removed nor demoted: someone must be able to administer the box. */
function assertNotLastAdmin(db: Db, role: Role, action: string): void {
  if (role === 'admin' && countAdmins(db) <= 1) throw new CliError(`refusing to ${action} the last admin`);
}

export function registerUserCommands(program: Command): void {
  const user = program.command('user').description('manage user accounts');

  user
    .command('list')
    .description('list users')
    .action(async (_options, command: Command) => {
      await withDb(command, (db) => {
        const rows = db.sqlite
          .prepare('SELECT id, username, email, role, last_login_at AS lastLoginAt, created_at AS createdAt FROM users ORDER BY id')
          .all() as Record<string, unknown>[];
        printRows(command, rows, ['id', 'username', 'email', 'role', 'lastLoginAt', 'createdAt']);
      });
    });

  user
    .command('add <username>')
    .description('create a user; without --password-stdin a password is generated and printed once')
    .requiredOption('--email <email>', 'email address')
    .option('--role <role>', `one of ${ROLES.join(', ')}`, 'viewer')
    .option('--password-stdin', 'read the password from standard input')
    .action(async (username: string, options: { email: string; role: string; passwordStdin?: boolean }, command: Command) => {
      const role = parseRole(options.role);
      if (!/^[a-zA-Z0-9_.-]{3,32}$/.test(username)) throw new CliError('username must be 3-32 characters of a-z, A-Z, 0-9, _ . -');
      if (!/^[^\s@]+@[^\s@]+$/.test(options.email)) throw new CliError(`"${options.email}" is not an email address`);
      const generated = !options.passwordStdin;
      const password = generated ? generatePassword() : checkedPassword(await readStdinPassword());
      const passwordHash = await hashPassword(password);
      await withDb(command, (db) => {
        let created;
        try {
          created = insertUser(db, { username, email: options.email, passwordHash, role });
        } catch (error) {
          if (error instanceof HttpError) throw new CliError(error.message);
          throw error;
        }
        const result: Record<string, unknown> = { id: created.id, username: created.username, email: created.email, role: created.role };
        if (generated) result.password = password;
        printResult(command, result, `created ${created.username} (${created.role})${generated ? `\npassword: ${password}` : ''}`);
      });
    });

  user
    .command('set-role <username> <role>')
    .description('change a user role (takes effect on the next request)')
    .action(async (username: string, roleName: string, _options, command: Command) => {
      const role = parseRole(roleName);
      await withDb(command, (db) => {
        db.sqlite.transaction(() => {
          const target = requireUser(db, username);
          if (target.role !== role) assertNotLastAdmin(db, target.role, 'demote');
          db.sqlite.prepare('UPDATE users SET role = ?, updated_at = ? WHERE id = ?').run(role, new Date().toISOString(), target.id);
        })();
        printResult(command, { username, role }, `${username} is now ${role}`);
      });
    });

  user
    .command('set-password <username>')
    .description('set a password; without --password-stdin a password is generated and printed once')
    .option('--password-stdin', 'read the password from standard input')
    .action(async (username: string, options: { passwordStdin?: boolean }, command: Command) => {
      const generated = !options.passwordStdin;
      const password = generated ? generatePassword() : checkedPassword(await readStdinPassword());
      const passwordHash = await hashPassword(password);
      await withDb(command, (db) => {
        const target = requireUser(db, username);
        setPasswordHash(db, target.id, passwordHash);
        const result: Record<string, unknown> = { username: target.username };
        if (generated) result.password = password;
        printResult(command, result, `password of ${target.username} changed${generated ? `\npassword: ${password}` : ''}`);
      });
    });

  user
    .command('remove <username>')
    .description('delete a user; their sessions end at once')
    .action(async (username: string, _options, command: Command) => {
      await withDb(command, (db) => {
        db.sqlite.transaction(() => {
          const target = requireUser(db, username);
          assertNotLastAdmin(db, target.role, 'remove');
          new RefreshTokens(db, 1).revokeForUser(target.id);
          db.sqlite.prepare('DELETE FROM users WHERE id = ?').run(target.id);
        })();
        printResult(command, { username, removed: true }, `removed ${username}`);
      });
    });

  user
    .command('unlock <username>')
    .description('clear the failed sign-in counter of a user (ends a 429 lockout)')
    .action(async (username: string, _options, command: Command) => {
      await withDb(command, (db) => {
        const cleared = unlockUser(db, requireUser(db, username));
        printResult(command, { username, cleared }, cleared ? `unlocked ${username}` : `${username} had no failed sign-ins recorded`);
      });
    });

  program
    .command('role')
    .description('roles')
    .command('list')
    .description('list roles, lowest first')
    .action((_options, command: Command) => {
      printRows(
        command,
        ROLES.map((name, rank) => ({ name, rank })),
        ['name', 'rank'],
      );
    });
}
