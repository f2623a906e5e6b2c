// Enrolment and revocation: an admin makes a one-time code; a site exchanges it (once) for its own credential, which
// the fleet keeps only as a hash. Revoking a site clears nothing it stored but refuses its credential from then on.
import type pg from 'pg';
import { canonicalCode, hashSecret, newEnrolmentCode, newSecret } from './credentials.ts';
import { inTransaction, siteListRefusal, sqlState } from './db.ts';
import { FleetError } from './errors.ts';
import type { FleetRole } from './schema.ts';

export async function createEnrolmentCode(pool: pg.Pool, siteName: string, validHours = 72): Promise<{ code: string; expiresAt: string }> {
  const code = newEnrolmentCode();
  const result = await pool.query<{ expires_at: Date }>(
    `insert into enrolment_codes (code_hash, site_name, expires_at) values ($1, $2, now() + make_interval(hours => $3)) returning expires_at`,
    [hashSecret(canonicalCode(code)), siteName, validHours],
  );
  return { code, expiresAt: result.rows[0]!.expires_at.toISOString() };
}

/** Redeems a code: one UPDATE … WHERE used_at IS NULL decides, so of two sites racing with one code exactly one wins. */
export async function enrol(pool: pg.Pool, code: string): Promise<{ siteId: string; credential: string; siteName: string }> {
  const credential = newSecret('site');
  return inTransaction(pool, async (client) => {
    const claimed = await client.query<{ site_name: string }>(
      'update enrolment_codes set used_at = now() where code_hash = $1 and used_at is null and expires_at > now() returning site_name',
      [hashSecret(canonicalCode(code))],
    );
    const row = claimed.rows[0];
    if (!row) throw new FleetError('enrolment_code_invalid', 'this enrolment code is unknown, used or expired: ask the fleet admin for a new one');
    // A new site has no EUI sums: its kept figures (none) are this month's already (the ranking's index holds it, 0006).
    const site = await client.query<{ id: string }>(
      `insert into sites (name, credential_hash, eui_month) values ($1, $2, date_trunc('month', now() at time zone 'UTC')::date) returning id`,
      [row.site_name, hashSecret(credential)],
    );
    const siteId = site.rows[0]!.id;
    await client.query('update enrolment_codes set site_id = $2 where code_hash = $1', [hashSecret(canonicalCode(code)), siteId]);
    return { siteId, credential, siteName: row.site_name };
  });
}

/** The site a credential belongs to, or a refusal (unknown and revoked read the same to the caller). */
export async function siteForCredential(pool: pg.Pool, credential: string | undefined): Promise<string> {
  if (credential) {
    const result = await pool.query<{ id: string }>('select id from sites where credential_hash = $1 and revoked_at is null', [hashSecret(credential)]);
    if (result.rows[0]) return result.rows[0].id;
  }
  throw new FleetError('unauthenticated', 'this site credential is unknown or revoked');
}

export async function revokeSite(pool: pg.Pool, siteId: string): Promise<void> {
  const result = await pool.query('update sites set revoked_at = coalesce(revoked_at, now()) where id = $1', [siteId]);
  if (result.rowCount === 0) throw new FleetError('not_found', 'no such site');
}

/** An admin says which box is the site: its install id is kept, the second-box alarm cleared, the refusal shown no more. */
export async function chooseBox(pool: pg.Pool, siteId: string, installId: string): Promise<void> {
  const chosen = await pool.query(
    `with chosen as (update sites set install_id = $2, last_refusal = null where id = $1 returning id),
       cleared as (update fleet_alarms set cleared_at = now() where site_id in (select id from chosen) and kind = 'second_box' and cleared_at is null)
     select id from chosen`,
    [siteId, installId],
  );
  if (chosen.rowCount === 0) throw new FleetError('not_found', 'no such site');
}

/** A site leaving on its own (`emsctl fleet leave`): the same as a revocation, asked with its credential. */
export async function leave(pool: pg.Pool, siteId: string): Promise<void> {
  await revokeSite(pool, siteId);
}

export type FleetUser = { id: number; name: string; role: FleetRole; sites: string[] | null };

export async function addUser(pool: pg.Pool, name: string, role: FleetRole, sites: string[] = []): Promise<{ token: string; id: number }> {
  const token = newSecret('user');
  try {
    return await inTransaction(pool, async (client) => {
      const result = await client.query<{ id: string }>('insert into fleet_users (name, role, token_hash) values ($1, $2, $3) returning id', [
        name,
        role,
        hashSecret(token),
      ]);
      const id = Number(result.rows[0]!.id);
      if (sites.length > 0) {
        await client.query('insert into fleet_user_sites (user_id, site_id) select $1, unnest($2::uuid[])', [id, sites]);
      }
      return { token, id };
    });
  } catch (error) {
    if (sqlState(error) === '23505') throw new FleetError('invalid_request', `a fleet user named ${name} exists`);
    throw siteListRefusal(error);
  }
}

export async function userForToken(pool: pg.Pool, token: string | undefined): Promise<FleetUser> {
  if (token) {
    const result = await pool.query<{ id: string; name: string; role: FleetRole; sites: string[] | null }>(
      // The printed token (fleetctl), or a session a sign-in made (password or single sign-on, src/fleet/people.ts).
      `select u.id, u.name, u.role, (select array_agg(site_id::text) from fleet_user_sites s where s.user_id = u.id) as sites
       from fleet_users u
       where u.token_hash = $1 or u.id = (select user_id from fleet_sessions where token_hash = $1 and expires_at > now())`,
      [hashSecret(token)],
    );
    const row = result.rows[0];
    if (row) return { id: Number(row.id), name: row.name, role: row.role, sites: row.sites };
  }
  throw new FleetError('unauthenticated', 'a fleet user token is required');
}
