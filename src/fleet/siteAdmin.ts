// Sites administered from the fleet app (issue 55 item 5): rename, revoke and re-admit, which box is the site, and a
// second box's quarantine released or discarded. Every change is kept in `site_audit` with who made it and, for the
// second box, the reason given. A site outside the admin's list reads as no site (404), as everywhere.
import type pg from 'pg';
import { chooseBox, revokeSite } from './enrolment.ts';
import { FleetError } from './errors.ts';
import type { AuditAction } from './siteAdminSchemas.ts';

export type SiteAuditEntry = { id: number; at: string; user: string; action: AuditAction; reason: string | null; detail: Record<string, unknown> };

export async function audit(pool: pg.Pool, siteId: string, user: string, action: AuditAction, reason: string | null, detail: Record<string, unknown> = {}) {
  await pool.query('insert into site_audit (site_id, user_name, action, reason, detail) values ($1, $2, $3, $4, $5)', [siteId, user, action, reason, detail]);
}

export async function renameSite(pool: pg.Pool, siteId: string, name: string, user: string): Promise<void> {
  const result = await pool.query<{ before: string }>(
    'update sites s set name = $2 from (select name as before from sites where id = $1) old where s.id = $1 returning old.before',
    [siteId, name.trim()],
  );
  if (result.rowCount === 0) throw new FleetError('not_found', 'no such site');
  await audit(pool, siteId, user, 'rename', null, { from: result.rows[0]!.before, to: name.trim() });
}

export async function revokeSiteAudited(pool: pg.Pool, siteId: string, user: string): Promise<void> {
  await revokeSite(pool, siteId);
  await audit(pool, siteId, user, 'revoke', null);
}

/** A revoked site's credential is taken again; a site that is not revoked stays as it is (and nothing is audited). */
export async function readmitSite(pool: pg.Pool, siteId: string, user: string): Promise<void> {
  const result = await pool.query<{ was_revoked: boolean }>(
    'update sites s set revoked_at = null from (select revoked_at is not null as was_revoked from sites where id = $1) old where s.id = $1 returning old.was_revoked',
    [siteId],
  );
  if (result.rowCount === 0) throw new FleetError('not_found', 'no such site');
  if (result.rows[0]!.was_revoked) await audit(pool, siteId, user, 'readmit', null);
}

export async function chooseBoxAudited(pool: pg.Pool, siteId: string, installId: string, user: string): Promise<void> {
  await chooseBox(pool, siteId, installId);
  await audit(pool, siteId, user, 'choose-box', null, { installId });
}

/**
 * A second box's quarantine (its batches refused with 409 `second_box`, an alarm open): `release` makes it the site's
 * box, `discard` keeps the site's box and clears the alarm; the discarded box stays refused and its batches raise the
 * alarm no more (ingest.ts looks the discard up here). With no second-box alarm open there is nothing to decide: 409.
 */
export async function decideSecondBox(
  pool: pg.Pool,
  siteId: string,
  decision: { decision: 'release' | 'discard'; installId: string; reason: string },
  user: string,
): Promise<void> {
  const found = await pool.query<{ install_id: string | null; open: boolean }>(
    `select install_id, exists (select 1 from fleet_alarms where site_id = $1 and kind = 'second_box' and cleared_at is null) as open from sites where id = $1`,
    [siteId],
  );
  const site = found.rows[0];
  if (!site) throw new FleetError('not_found', 'no such site');
  if (!site.open) throw new FleetError('nothing_to_decide', 'no second box is quarantined at this site');
  if (decision.decision === 'release') {
    await chooseBox(pool, siteId, decision.installId);
    await audit(pool, siteId, user, 'release-second-box', decision.reason, { installId: decision.installId, previous: site.install_id });
    return;
  }
  if (decision.installId === site.install_id) {
    throw new FleetError('invalid_request', "installId is the site's own box: discard names the other one", { details: { field: '/installId' } });
  }
  await pool.query(`update fleet_alarms set cleared_at = now() where site_id = $1 and kind = 'second_box' and cleared_at is null`, [siteId]);
  await pool.query('update sites set last_refusal = null where id = $1', [siteId]);
  await audit(pool, siteId, user, 'discard-second-box', decision.reason, { installId: decision.installId, kept: site.install_id });
}

export async function siteAuditPage(
  pool: pg.Pool,
  siteId: string,
  page: { page: number; pageSize: number },
): Promise<{ items: SiteAuditEntry[]; total: number; page: number; pageSize: number }> {
  const exists = await pool.query('select 1 from sites where id = $1', [siteId]);
  if (exists.rowCount === 0) throw new FleetError('not_found', 'no such site');
  const result = await pool.query<{
    id: string;
    at: Date;
    user_name: string;
    action: AuditAction;
    reason: string | null;
    detail: Record<string, unknown>;
    total: string;
  }>(`select id, at, user_name, action, reason, detail, count(*) over () as total from site_audit where site_id = $1 order by id desc limit $2 offset $3`, [
    siteId,
    page.pageSize,
    (page.page - 1) * page.pageSize,
  ]);
  return {
    items: result.rows.map((r) => ({ id: Number(r.id), at: r.at.toISOString(), user: r.user_name, action: r.action, reason: r.reason, detail: r.detail })),
    total: Number(result.rows[0]?.total ?? 0),
    page: page.page,
    pageSize: page.pageSize,
  };
}
