// Alerts: filtered pages (a benchmark hot path) and the active → acknowledged → resolved lifecycle with who and when.
import { desc } from 'drizzle-orm';
import type { Actor, AuditLog } from '../db/auditTrail.ts';
import { AuditedTable, type RowOf } from '../db/auditedTable.ts';
import type { Db } from '../db/client.ts';
import { contains, equals, oneOf, timeWindow, type PageResult } from '../db/listQuery.ts';
import { alerts } from '../db/schema/index.ts';
import { Conflict } from '../errors.ts';
import type { AlertCreateInput, AlertListFilters, AlertUpdateInput, AlertView } from './schemas.ts';

type AlertRow = RowOf<typeof alerts>;
type AlertStatus = AlertView['status'];

/** Where each status may go next; an alert never moves backwards. */
const NEXT: Record<AlertStatus, readonly AlertStatus[]> = {
  active: ['acknowledged', 'resolved'],
  acknowledged: ['resolved'],
  resolved: [],
};

export class AlertService {
  private readonly table;

  constructor(db: Db, audit: AuditLog) {
    this.table = new AuditedTable(db, audit, alerts, {
      resource: 'alerts',
      notFound: 'Alert not found',
      // occurred_at DESC, id DESC walks alerts_occurred_idx (or alerts_status_idx under a status filter) backwards: no sort step.
      orderBy: [desc(alerts.occurredAt), desc(alerts.id)],
      updateAction: (before, next) => (next.status !== before.status ? statusAction(next.status) : 'update'),
    });
  }

  page(filters: AlertListFilters): PageResult<AlertView> {
    return this.table.page(
      [
        ...oneOf(alerts.status, 'status', filters.status),
        ...oneOf(alerts.level, 'level', filters.level),
        ...equals(alerts.area, 'area', filters.area),
        ...contains([alerts.title, alerts.message, alerts.source], filters.q),
        ...timeWindow(alerts.occurredAt, filters.from, filters.to),
      ],
      filters.page,
      filters.pageSize,
    );
  }

  get(id: number): AlertView {
    return this.table.get(id);
  }

  /** A new alert is always active; lifecycle fields start empty. */
  /** `actor` null: raised by the service itself (a report that could not be delivered). */
  create(input: AlertCreateInput, actor: Actor | null): AlertView {
    return this.table.create({ ...input, status: 'active', occurredAt: input.occurredAt && new Date(input.occurredAt).toISOString() }, actor);
  }

  /** Partial update; a status in the body goes through the same lifecycle rules as acknowledge/resolve. */
  update(id: number, input: AlertUpdateInput, actor: Actor): AlertView {
    const { status, ...fields } = input;
    const patch = { ...fields, occurredAt: fields.occurredAt && new Date(fields.occurredAt).toISOString() };
    if (status === undefined) return this.table.update(id, patch, actor);
    return this.table.update(id, patch, actor, (next, before, now) => (status === before.status ? next : moved(next, status, actor, now)));
  }

  /** POST /alerts/:id/acknowledge and /resolve: a repeated or backwards move is 409, never a silent overwrite of who/when. */
  transition(id: number, to: 'acknowledged' | 'resolved', actor: Actor): AlertView {
    return this.table.update(id, {}, actor, (next, _before, now) => moved(next, to, actor, now));
  }

  delete(id: number, actor: Actor): void {
    this.table.delete(id, actor);
  }
}

function moved(alert: AlertRow, to: AlertStatus, actor: Actor, now: string): AlertRow {
  if (!NEXT[alert.status].includes(to)) throw new Conflict(`The alert is ${alert.status} and cannot become ${to}`);
  if (to === 'acknowledged') return { ...alert, status: to, acknowledgedAt: now, acknowledgedBy: actor.id };
  // Resolving straight from active leaves the acknowledgement empty: nobody acknowledged it.
  return { ...alert, status: to, resolvedAt: now, resolvedBy: actor.id };
}

function statusAction(status: AlertStatus): string {
  return status === 'acknowledged' ? 'acknowledge' : status === 'resolved' ? 'resolve' : 'update';
}
