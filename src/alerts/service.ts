// Alerts: filtered pages (a benchmark hot path) and the active → acknowledged → resolved lifecycle with who and when.
import type Database from 'better-sqlite3';
import type { AuditLog } from '../audit/service.ts';
import type { Db } from '../db/client.ts';
import { BadRequest, Conflict, NotFound } from '../http/errors.ts';
import type { AuthUser } from '../http/route.ts';
import { auditChanges } from '../audit/changes.ts';
import { contains, equals, oneOf, PagedList, timeWindow, type PageResult } from '../http/listQuery.ts';
import type { AlertCreateInput, AlertListFilters, AlertUpdateInput, AlertView } from './schemas.ts';

type AlertStatus = AlertView['status'];
type Actor = Pick<AuthUser, 'id' | 'username'>;

const COLUMNS = `id, title, message, level, source, area, status, occurred_at AS occurredAt,
  acknowledged_at AS acknowledgedAt, acknowledged_by AS acknowledgedBy, resolved_at AS resolvedAt, resolved_by AS resolvedBy,
  created_at AS createdAt, updated_at AS updatedAt`;

/** Where each status may go next; an alert never moves backwards. */
const NEXT: Record<AlertStatus, readonly AlertStatus[]> = {
  active: ['acknowledged', 'resolved'],
  acknowledged: ['resolved'],
  resolved: [],
};

const RESOURCE = 'alerts';

export class AlertService {
  private readonly list;
  private readonly byId: Database.Statement;
  private readonly insert: Database.Statement;
  private readonly save: Database.Statement;
  private readonly remove: Database.Statement;

  constructor(
    private readonly db: Db,
    private readonly audit: AuditLog,
  ) {
    // ORDER BY occurred_at DESC, id DESC walks alerts_occurred_idx (or alerts_status_idx under a status filter) backwards: no sort step.
    this.list = new PagedList<AlertView>(db.sqlite, 'alerts', COLUMNS, 'occurred_at DESC, id DESC');
    this.byId = db.sqlite.prepare(`SELECT ${COLUMNS} FROM alerts WHERE id = ?`);
    this.insert = db.sqlite.prepare(
      `INSERT INTO alerts (title, message, level, source, area, status, occurred_at, created_at, updated_at)
       VALUES (@title, @message, @level, @source, @area, 'active', @occurredAt, @now, @now)`,
    );
    this.save = db.sqlite.prepare(
      `UPDATE alerts SET title = @title, message = @message, level = @level, source = @source, area = @area, status = @status,
         occurred_at = @occurredAt, acknowledged_at = @acknowledgedAt, acknowledged_by = @acknowledgedBy,
         resolved_at = @resolvedAt, resolved_by = @resolvedBy, updated_at = @updatedAt
       WHERE id = @id`,
    );
    this.remove = db.sqlite.prepare('DELETE FROM alerts WHERE id = ?');
  }

  page(filters: AlertListFilters): PageResult<AlertView> {
    return this.list.page(
      [
        ...oneOf('status', 'status', filters.status),
        ...oneOf('level', 'level', filters.level),
        ...equals('area', 'area', filters.area),
        ...contains(['title', 'message', 'source'], filters.q),
        ...timeWindow('occurred_at', filters.from, filters.to),
      ],
      filters.page,
      filters.pageSize,
    );
  }

  get(id: number): AlertView {
    const row = this.byId.get(id) as AlertView | undefined;
    if (!row) throw new NotFound('Alert not found');
    return row;
  }

  /** `actor` null: raised by the service itself (a report that could not be delivered). */
  create(input: AlertCreateInput, actor: Actor | null): AlertView {
    return this.db.sqlite.transaction(() => {
      const now = new Date().toISOString();
      const result = this.insert.run({
        title: input.title,
        message: input.message ?? '',
        level: input.level,
        source: input.source ?? null,
        area: input.area ?? null,
        occurredAt: input.occurredAt ? new Date(input.occurredAt).toISOString() : now,
        now,
      });
      const created = this.get(Number(result.lastInsertRowid));
      this.audit.record({ actor, action: 'create', resource: RESOURCE, resourceId: created.id, after: created });
      return created;
    })();
  }

  /** Partial update; a status in the body goes through the same lifecycle rules as acknowledge/resolve. */
  update(id: number, input: AlertUpdateInput, actor: Actor): AlertView {
    return this.db.sqlite.transaction(() => {
      // Unknown fields are dropped by the body schema: a body of nothing but unknown fields arrives here empty.
      if (Object.keys(input).length === 0) throw new BadRequest('Invalid body', [{ path: 'body', message: 'must contain at least one writable field' }]);
      const before = this.get(id);
      const now = new Date().toISOString();
      let next: AlertView = {
        ...before,
        ...(input.title !== undefined && { title: input.title }),
        ...(input.message !== undefined && { message: input.message }),
        ...(input.level !== undefined && { level: input.level }),
        ...(input.source !== undefined && { source: input.source }),
        ...(input.area !== undefined && { area: input.area }),
        ...(input.occurredAt !== undefined && { occurredAt: new Date(input.occurredAt).toISOString() }),
      };
      if (input.status !== undefined && input.status !== before.status) next = moved(next, input.status, actor, now);
      const action = next.status !== before.status ? statusAction(next.status) : 'update';
      return this.write(before, next, action, actor, now);
    })();
  }

  /** POST /alerts/:id/acknowledge and /resolve: a repeated or backwards move is 409, never a silent overwrite of who/when. */
  transition(id: number, to: 'acknowledged' | 'resolved', actor: Actor): AlertView {
    return this.db.sqlite.transaction(() => {
      const before = this.get(id);
      const now = new Date().toISOString();
      return this.write(before, moved(before, to, actor, now), statusAction(to), actor, now);
    })();
  }

  delete(id: number, actor: Actor): void {
    this.db.sqlite.transaction(() => {
      const before = this.get(id);
      this.remove.run(id);
      this.audit.record({ actor, action: 'delete', resource: RESOURCE, resourceId: id, before });
    })();
  }

  /** Writes and audits only a real change: sending the current values back is answered with the row as it is. */
  private write(before: AlertView, next: AlertView, action: string, actor: Actor, now: string): AlertView {
    const changes = auditChanges(before, next);
    if (!changes) return before;
    this.save.run({ ...next, updatedAt: now });
    this.audit.record({ actor, action, resource: RESOURCE, resourceId: before.id, ...changes });
    return this.get(before.id);
  }
}

function moved(alert: AlertView, to: AlertStatus, actor: Actor, now: string): AlertView {
  if (!NEXT[alert.status].includes(to)) throw new Conflict(`The alert is ${alert.status} and cannot become ${to}`);
  if (to === 'acknowledged') return { ...alert, status: to, acknowledgedAt: now, acknowledgedBy: actor.id };
  // Resolving straight from active leaves the acknowledgement empty: nobody acknowledged it.
  return { ...alert, status: to, resolvedAt: now, resolvedBy: actor.id };
}

function statusAction(status: AlertStatus): string {
  return status === 'acknowledged' ? 'acknowledge' : status === 'resolved' ? 'resolve' : 'update';
}
