// A site's alert acknowledged from the portfolio (issue 55 item 5). An admin of the site asks (the request is kept in
// `alert_ack_requests`, audited); the request travels to the site's box in the answer to its next batch
// (`acknowledgeAlerts`: a field an older box ignores), the box acknowledges the alert itself (its audit trail names the
// fleet user) and its following batch brings the alert back acknowledged, which ends the request. Nothing here writes
// the site's alert: the fleet's copy changes only when the box says so. An older fleet sends no such field.
import type pg from 'pg';
import { inTransaction } from './db.ts';
import { FleetError } from './errors.ts';

/** At most this many requests go in one answer (the box reads at most 64 KiB of it); the rest go in the next ones. */
export const ACKS_PER_ANSWER = 100;

export type AckRequest = { siteId: string; alertId: number; requestedBy: string; requestedAt: string };
/** What the box is asked to do, in the ingest answer: the alert (its id and time) and who asked when. */
export type AlertAckForBox = { id: number; occurredAt: string; by: string; at: string };

/** A route's `:alertId`: the box's alert number. Anything else names no alert (404). */
export function alertIdOf(text: string | undefined): number {
  const id = /^[1-9][0-9]{0,15}$/.test(text ?? '') ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(id)) throw new FleetError('not_found', 'no such alert at this site');
  return id;
}

/**
 * Asks the site's box to acknowledge one of its alerts: 404 for an alert the fleet does not hold for the site, 409 when
 * it is not active there (acknowledged or resolved already). Asking again while a request waits answers that request.
 */
export async function requestAcknowledgement(pool: pg.Pool, siteId: string, alertId: number, user: string): Promise<AckRequest> {
  return inTransaction(pool, async (client) => {
    const found = await client.query<{ status: string; title: string; occurred_at: Date }>(
      'select status, title, occurred_at from site_alerts where site_id = $1 and alert_id = $2 for share',
      [siteId, alertId],
    );
    const alert = found.rows[0];
    if (!alert) throw new FleetError('not_found', 'no such alert at this site');
    if (alert.status !== 'active') throw new FleetError('alert_not_active', `the alert is ${alert.status} at the site already`);
    // Requests whose alert is no longer active there (acknowledged, resolved, deleted, its id re-used) are done with.
    await client.query(
      `delete from alert_ack_requests r where r.site_id = $1 and not exists (
         select 1 from site_alerts a where a.site_id = r.site_id and a.alert_id = r.alert_id and a.occurred_at = r.alert_occurred_at and a.status = 'active')`,
      [siteId],
    );
    const kept = await client.query<{ user_name: string; requested_at: Date; created: boolean }>(
      `insert into alert_ack_requests (site_id, alert_id, alert_occurred_at, user_name) values ($1, $2, $3, $4)
       on conflict (site_id, alert_id) do update set site_id = excluded.site_id
       returning user_name, requested_at, (xmax = 0) as created`,
      [siteId, alertId, alert.occurred_at, user],
    );
    const request = kept.rows[0]!;
    if (request.created) {
      await client.query("insert into site_audit (site_id, user_name, action, reason, detail) values ($1, $2, 'acknowledge-alert', null, $3)", [
        siteId,
        user,
        { alertId, title: alert.title },
      ]);
    }
    return { siteId, alertId, requestedBy: request.user_name, requestedAt: request.requested_at.toISOString() };
  });
}

/** The requests the site's box has still to carry out (its alert still active at the fleet), oldest first. */
export async function pendingForBox(pool: pg.Pool, siteId: string): Promise<AlertAckForBox[]> {
  const result = await pool.query<{ alert_id: string; alert_occurred_at: Date; user_name: string; requested_at: Date }>(
    `select r.alert_id, r.alert_occurred_at, r.user_name, r.requested_at from alert_ack_requests r
     join site_alerts a on a.site_id = r.site_id and a.alert_id = r.alert_id and a.occurred_at = r.alert_occurred_at and a.status = 'active'
     where r.site_id = $1 order by r.requested_at, r.alert_id limit $2`,
    [siteId, ACKS_PER_ANSWER],
  );
  return result.rows.map((r) => ({ id: Number(r.alert_id), occurredAt: r.alert_occurred_at.toISOString(), by: r.user_name, at: r.requested_at.toISOString() }));
}

/** The ingest answer with the requests waiting for this box (the key left out when none wait: the answer as before). */
export async function withAckRequests<T extends { siteId: string }>(pool: pg.Pool, answer: T): Promise<T & { acknowledgeAlerts?: AlertAckForBox[] }> {
  const pending = await pendingForBox(pool, answer.siteId);
  return pending.length > 0 ? { ...answer, acknowledgeAlerts: pending } : answer;
}

type ListedAlert = { siteId: string; source: 'site' | 'fleet'; id: string; status: string; occurredAt: string };

/**
 * A page of the alert list with each active site alert's waiting request (`ackRequest`: who asked, when). Read from
 * the primary, a few rows by key, so the one who asked sees the request at once, whatever a replica's lag.
 */
export async function withAckState<P extends { items: ListedAlert[] }>(
  pool: pg.Pool,
  page: P,
): Promise<P & { items: Array<P['items'][number] & { ackRequest?: { by: string; at: string } }> }> {
  const asked = page.items.filter((a) => a.source === 'site' && a.status === 'active');
  if (asked.length === 0) return page;
  const result = await pool.query<{ site_id: string; alert_id: string; alert_occurred_at: Date; user_name: string; requested_at: Date }>(
    `select r.site_id, r.alert_id, r.alert_occurred_at, r.user_name, r.requested_at
     from alert_ack_requests r join unnest($1::uuid[], $2::bigint[]) as k(site_id, alert_id) on r.site_id = k.site_id and r.alert_id = k.alert_id`,
    [asked.map((a) => a.siteId), asked.map((a) => a.id)],
  );
  const byKey = new Map(result.rows.map((r) => [`${r.site_id} ${r.alert_id}`, r]));
  return {
    ...page,
    items: page.items.map((item) => {
      const request = item.source === 'site' && item.status === 'active' ? byKey.get(`${item.siteId} ${item.id}`) : undefined;
      return request && request.alert_occurred_at.getTime() === Date.parse(item.occurredAt)
        ? { ...item, ackRequest: { by: request.user_name, at: request.requested_at.toISOString() } }
        : item;
    }),
  };
}
