// Fleet users who sign in (issue 55 item 5): invited by an admin of every site (name, role, the sites they are limited
// to), they set a password with the invitation (bcrypt, the box's cost, on the box's worker threads) or sign in with
// the organisation's OIDC issuer; a sign-in makes a session (a bearer token, 12 hours, kept as its SHA-256). Password
// checks follow the box's lockout rules: 10 failures per account and 100 per client address in a 15-minute window,
// counted before the comparison in one statement, so parallel guesses cannot all pass the check. The printed token
// (`fleetctl user add`) stays: it is how the first admin gets in.
import type pg from 'pg';
import { hashPassword, MAX_FAILURES_PER_ADDRESS, MAX_FAILURES_PER_USER, verifyPassword, WINDOW_MS } from '../access/index.ts';
import { hashSecret, newSecret } from './credentials.ts';
import { inTransaction, siteListRefusal, sqlState } from './db.ts';
import { FleetError } from './errors.ts';
import type { FleetRole } from './schema.ts';

export const SESSION_HOURS = 12;
export const INVITATION_DAYS = 7;
const PASSWORD_MAX_BYTES = 72;

/** bcrypt of a password nobody has: an unknown name costs the same comparison as a known one. */
let decoy: Promise<string> | undefined;

export type FleetPerson = {
  id: number;
  name: string;
  email: string | null;
  role: FleetRole;
  sites: string[] | null;
  signIn: Array<'token' | 'password' | 'sso'>;
  invitationOpen: boolean;
};

export async function createSession(pool: pg.Pool, userId: number): Promise<{ token: string; expiresAt: string }> {
  const token = newSecret('session');
  const result = await pool.query<{ expires_at: Date }>(
    `insert into fleet_sessions (token_hash, user_id, expires_at) values ($1, $2, now() + make_interval(hours => $3)) returning expires_at`,
    [hashSecret(token), userId, SESSION_HOURS],
  );
  // Sessions that lapsed go as new ones are made (no job of their own).
  await pool.query("delete from fleet_sessions where expires_at < now() - interval '1 day'");
  return { token, expiresAt: result.rows[0]!.expires_at.toISOString() };
}

export async function endSession(pool: pg.Pool, token: string | undefined): Promise<void> {
  if (token) await pool.query('delete from fleet_sessions where token_hash = $1', [hashSecret(token)]);
}

/**
 * Counts one failure for the key up front (a new window when the last one has passed) and answers how long the key is
 * locked for: 0 while the count is within `limit`. One upsert decides, so concurrent attempts each see their own count.
 */
async function reserve(pool: pg.Pool, key: string, limit: number): Promise<number> {
  const result = await pool.query<{ failures: number; wait_ms: number }>(
    `insert into fleet_login_throttle (key, failures, window_started_at) values ($1, 1, now())
     on conflict (key) do update set
       failures = case when fleet_login_throttle.window_started_at <= now() - make_interval(secs => $2 / 1000.0) then 1 else fleet_login_throttle.failures + 1 end,
       window_started_at = case when fleet_login_throttle.window_started_at <= now() - make_interval(secs => $2 / 1000.0) then now() else fleet_login_throttle.window_started_at end
     returning failures, (extract(epoch from window_started_at + make_interval(secs => $2 / 1000.0) - now()) * 1000)::float8 as wait_ms`,
    [key, WINDOW_MS],
  );
  const row = result.rows[0]!;
  return row.failures > limit ? Math.max(1000, row.wait_ms) : 0;
}

/** A name and a password: a session, 401 for a wrong pair (whichever part is wrong), 429 once a budget is spent. */
export async function signInWithPassword(pool: pg.Pool, name: string, password: string, address: string): Promise<{ token: string; expiresAt: string }> {
  const found = await pool.query<{ id: string; password_hash: string | null }>(
    'select id, password_hash from fleet_users where lower(name) = lower($1) or lower(email) = lower($1)',
    [name],
  );
  const user = found.rows[0];
  const accountKey = user ? `user:${user.id}` : `login:${name.toLowerCase()}`;
  // The account's budget first: an attempt refused for it does not spend the address's.
  for (const [key, limit] of [
    [accountKey, MAX_FAILURES_PER_USER],
    [`ip:${address}`, MAX_FAILURES_PER_ADDRESS],
  ] as const) {
    const wait = await reserve(pool, key, limit);
    if (wait > 0) throw new FleetError('throttled', 'too many failed sign-in attempts; try again later', { retryAfterSec: Math.ceil(wait / 1000) });
  }
  decoy ??= hashPassword('decoy password, never anyone’s');
  const tooLong = Buffer.byteLength(password, 'utf8') > PASSWORD_MAX_BYTES;
  const match = (await verifyPassword(password, user?.password_hash ?? (await decoy))) && !tooLong && Boolean(user?.password_hash);
  if (!user || !match) throw new FleetError('unauthenticated', 'the name or the password is wrong');
  // A right password clears the account's failures and gives the address its attempt back (the box's rule).
  await pool.query(
    `with cleared as (delete from fleet_login_throttle where key = $1)
     update fleet_login_throttle set failures = failures - 1 where key = $2 and failures > 0`,
    [accountKey, `ip:${address}`],
  );
  return createSession(pool, Number(user.id));
}

/** An invitation (an admin of every site): the user exists at once, without a way in until the code is used. */
export async function invite(
  pool: pg.Pool,
  person: { name: string; email?: string; role: FleetRole; sites?: string[] },
): Promise<{ id: number; invitation: string; expiresAt: string }> {
  const invitation = newSecret('invite');
  try {
    return await inTransaction(pool, async (client) => {
      const result = await client.query<{ id: string; invitation_expires_at: Date }>(
        `insert into fleet_users (name, email, role, invitation_hash, invitation_expires_at) values ($1, $2, $3, $4, now() + make_interval(days => $5))
         returning id, invitation_expires_at`,
        [person.name, person.email ?? null, person.role, hashSecret(invitation), INVITATION_DAYS],
      );
      const id = Number(result.rows[0]!.id);
      await setSites(client, id, person.sites ?? []);
      return { id, invitation, expiresAt: result.rows[0]!.invitation_expires_at.toISOString() };
    });
  } catch (error) {
    if (sqlState(error) === '23505') throw new FleetError('invalid_request', 'a fleet user with this name or email exists', { details: { field: '/name' } });
    throw siteListRefusal(error);
  }
}

async function setSites(client: pg.PoolClient, userId: number, sites: string[]): Promise<void> {
  await client.query('delete from fleet_user_sites where user_id = $1', [userId]);
  if (sites.length > 0) await client.query('insert into fleet_user_sites (user_id, site_id) select $1, unnest($2::uuid[])', [userId, [...new Set(sites)]]);
}

/** The invited person sets their password with the code (once, before it lapses) and is signed in. */
export async function acceptInvitation(pool: pg.Pool, invitation: string, password: string): Promise<{ token: string; expiresAt: string }> {
  if (Buffer.byteLength(password, 'utf8') > PASSWORD_MAX_BYTES) {
    throw new FleetError('invalid_request', `password must be 8 to ${PASSWORD_MAX_BYTES} bytes long`, { details: { field: '/password' } });
  }
  const hash = await hashPassword(password);
  const result = await pool.query<{ id: string }>(
    `update fleet_users set password_hash = $2, invitation_hash = null, invitation_expires_at = null
     where invitation_hash = $1 and invitation_expires_at > now() returning id`,
    [hashSecret(invitation), hash],
  );
  if (!result.rows[0]) throw new FleetError('invitation_invalid', 'this invitation is unknown, used or lapsed: ask a fleet admin for a new one');
  return createSession(pool, Number(result.rows[0].id));
}

export async function listPeople(pool: pg.Pool): Promise<FleetPerson[]> {
  const result = await pool.query<{
    id: string;
    name: string;
    email: string | null;
    role: FleetRole;
    sites: string[] | null;
    token: boolean;
    password: boolean;
    sso: boolean;
    open: boolean;
  }>(
    `select u.id, u.name, u.email, u.role, (select array_agg(site_id::text order by site_id) from fleet_user_sites s where s.user_id = u.id) as sites,
       u.token_hash is not null as token, u.password_hash is not null as password, u.oidc_subject is not null as sso,
       u.invitation_hash is not null and u.invitation_expires_at > now() as open
     from fleet_users u order by lower(u.name), u.id`,
  );
  return result.rows.map((r) => ({
    id: Number(r.id),
    name: r.name,
    email: r.email,
    role: r.role,
    sites: r.sites,
    signIn: [...(r.token ? (['token'] as const) : []), ...(r.password ? (['password'] as const) : []), ...(r.sso ? (['sso'] as const) : [])],
    invitationOpen: r.open,
  }));
}

/** A user's role and sites (an admin of every site); the last admin of every site cannot be limited or demoted. */
export async function updatePerson(pool: pg.Pool, id: number, change: { role?: FleetRole; sites?: string[] }): Promise<void> {
  try {
    await inTransaction(pool, async (client) => {
      // One change of admins at a time: two admins demoting each other at once cannot both pass the check below.
      await client.query('select pg_advisory_xact_lock(4204305)');
      const found = await client.query('update fleet_users set role = coalesce($2, role) where id = $1 returning id', [id, change.role ?? null]);
      if (found.rowCount === 0) throw new FleetError('not_found', 'no such fleet user');
      if (change.sites) await setSites(client, id, change.sites);
      const admins = await client.query<{ n: number }>(
        `select count(*)::int as n from fleet_users u where u.role = 'admin' and not exists (select 1 from fleet_user_sites s where s.user_id = u.id)`,
      );
      if (admins.rows[0]!.n === 0) throw new FleetError('last_admin', 'the fleet needs an admin of every site: make another one first');
    });
  } catch (error) {
    throw siteListRefusal(error);
  }
}
