// emsctl user … and role …: account administration through the same user service as the API, audited as `emsctl`.
// The user service and its dependencies load when a user command runs (role list needs none of it).
import type { Command } from 'commander';
import { ROLES, type Role } from '../../src/platform/roles.ts';
import type { Db } from '../../src/platform/db/client.ts';
import type { Config } from '../../src/platform/config.ts';
import type { Caller, UserDirectory, UserView } from '../../src/access/cli.ts';
import { CliError, UsageError, printResult, printRows, requireGiven, withDb } from '../context.ts';

/** emsctl runs as root on the box: an admin without an account, named in the audit trail. */
const EMSCTL: Caller = { id: null, username: 'emsctl', role: 'admin' };

function parseRole(value: string): Role {
  if (!(ROLES as readonly string[]).includes(value)) throw new UsageError(`unknown role "${value}"; roles are: ${ROLES.join(', ')}`);
  return value as Role;
}

async function readStdinPassword(): Promise<string> {
  if (process.stdin.isTTY) throw new UsageError('--password-stdin expects the password on standard input (e.g. printf %s "$PW" | emsctl …)');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const password = Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
  return password;
}

async function checkedPassword(password: string): Promise<string> {
  const { assertPasswordLength } = await import('../../src/access/cli.ts');
  try {
    assertPasswordLength(password);
  } catch {
    throw new CliError('password must be 8 to 72 bytes long');
  }
  return password;
}

async function newPassword(fromStdin: boolean | undefined): Promise<string> {
  if (fromStdin) return checkedPassword(await readStdinPassword());
  const { generatePassword } = await import('../../src/access/cli.ts');
  return generatePassword();
}

/** The user service on emsctl's database connection; its typed errors become one-line emsctl errors. */
async function withUsers<T>(command: Command, fn: (users: UserDirectory, db: Db, config: Config) => T | Promise<T>): Promise<T> {
  const [{ LoginThrottle }, { AuditLog }, { AppError }, { buildUserDirectory }, { createLogger }] = await Promise.all([
    import('../../src/access/cli.ts'),
    import('../../src/platform/db/auditTrail.ts'),
    import('../../src/platform/errors.ts'),
    import('../../src/access/index.ts'),
    import('../../src/platform/logger.ts'),
  ]);
  return withDb(command, async (db, config) => {
    const users = buildUserDirectory({ db, audit: new AuditLog(db), dataDir: config.dataDir, logger: createLogger('silent'), throttle: new LoginThrottle(db) });
    try {
      return await fn(users, db, config);
    } catch (error) {
      if (error instanceof AppError) {
        // The service's message, with the detail when there is one (e.g. which field was refused).
        const detail = error.details?.[0];
        throw new CliError(detail ? `${error.message}: ${detail.path.replace(/^body\./, '')} ${detail.message}` : error.message);
      }
      throw error;
    }
  });
}

/** One user in --json output: the same object as in "user list", plus what the command adds. */
function userResult(user: UserView, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { ...user, ...extra };
}

export function registerUserCommands(program: Command): void {
  const user = program.command('user').description('manage user accounts');

  user
    .command('list')
    .description('list users')
    .action(async (_options, command: Command) => {
      await withUsers(command, (users) => {
        const rows: Record<string, unknown>[] = [];
        // Oldest first, as an operator reads a short list; every page of the service's own listing.
        for (let page = 1; ; page++) {
          const result = users.list({ page, pageSize: 200 });
          rows.push(...result.items);
          if (page * result.pageSize >= result.total) break;
        }
        rows.sort((a, b) => Number(a.id) - Number(b.id));
        printRows(command, rows, ['id', 'username', 'email', 'role', 'lastLoginAt', 'createdAt']);
      });
    });

  user
    .command('add')
    // Both checked in the action, so that one error names everything missing (commander stops at the first).
    .argument('[username]', "the new account's name (required)")
    .description('create a user; without --password-stdin a password is generated and printed once')
    .option('--email <email>', 'email address (required)')
    .option('--role <role>', `one of ${ROLES.join(', ')}`, 'viewer')
    .option('--password-stdin', 'read the password from standard input')
    .action(async (username: string | undefined, options: { email?: string; role: string; passwordStdin?: boolean }, command: Command) => {
      requireGiven([
        ['<username>', username],
        ['--email <email>', options.email],
      ]);
      const role = parseRole(options.role);
      // The API's own schema for the name, so emsctl and the API cannot drift apart.
      const [{ Value }, { Username }] = await Promise.all([import('@sinclair/typebox/value'), import('../../src/access/index.ts')]);
      if (!Value.Check(Username, username)) throw new UsageError('username must be 3-32 characters of a-z, A-Z, 0-9, _ . -');
      if (!/^[^\s@]+@[^\s@]+$/.test(options.email!)) throw new UsageError(`"${options.email}" is not an email address`);
      const generated = !options.passwordStdin;
      const password = await newPassword(options.passwordStdin);
      await withUsers(command, async (users) => {
        const created = await users.create(EMSCTL, { username: username!, email: options.email!, password, role });
        printResult(
          command,
          userResult(created, generated ? { password } : {}),
          `created ${created.username} (${created.role})${generated ? `\npassword: ${password}` : ''}`,
        );
      });
    });

  user
    .command('set-role <username> <role>')
    .description('change a user role (takes effect on the next request)')
    .action(async (username: string, roleName: string, _options, command: Command) => {
      const role = parseRole(roleName);
      await withUsers(command, (users) => {
        const target = users.byUsername(username);
        const changed = users.setRole(EMSCTL, target.id, role);
        printResult(command, userResult(changed), `${target.username} is now ${role}`);
      });
    });

  user
    .command('set-password <username>')
    .description('set a password; without --password-stdin a password is generated and printed once')
    .option('--password-stdin', 'read the password from standard input')
    .action(async (username: string, options: { passwordStdin?: boolean }, command: Command) => {
      const generated = !options.passwordStdin;
      const password = await newPassword(options.passwordStdin);
      await withUsers(command, async (users) => {
        const target = users.byUsername(username);
        await users.setPassword(EMSCTL, target.id, { newPassword: password }, 'emsctl');
        printResult(
          command,
          userResult(target, generated ? { password } : {}),
          `password of ${target.username} changed${generated ? `\npassword: ${password}` : ''}`,
        );
      });
    });

  user
    .command('remove <username>')
    .description('delete a user and their avatar; their sessions end at once')
    .action(async (username: string, _options, command: Command) => {
      await withUsers(command, async (users) => {
        const target = users.byUsername(username);
        await users.deleteUser(EMSCTL, target.id);
        printResult(command, userResult(target, { removed: true }), `removed ${target.username}`);
      });
    });

  user
    .command('unlock <username>')
    .description('clear the failed sign-in counter of a user (ends a 429 lockout)')
    .action(async (username: string, _options, command: Command) => {
      await withUsers(command, (users) => {
        const target = users.byUsername(username);
        const { cleared } = users.unlock(EMSCTL, target.id);
        printResult(command, userResult(target, { cleared }), cleared ? `unlocked ${target.username}` : `${target.username} had no failed sign-ins recorded`);
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
