// Faults and their stats snapshot: every write updates the snapshot row inside its own synchronous transaction.
import type Database from 'better-sqlite3';
import type { AuditLog } from '../audit/service.ts';
import type { Db } from '../db/client.ts';
import { BadRequest, NotFound } from '../http/errors.ts';
import type { AuthUser } from '../http/route.ts';
import { auditChanges } from '../db/auditTrail.ts';
import { contains, equals, oneOf, PagedList, timeWindow, type PageResult } from '../http/listQuery.ts';
import type { FaultCreateInput, FaultListFilters, FaultStatsView, FaultUpdateInput, FaultView } from './schemas.ts';

type Actor = Pick<AuthUser, 'id' | 'username'>;

const COLUMNS = `id, device, code, description, severity, status, area, assignee, reported_at AS reportedAt, resolved_at AS resolvedAt,
  created_at AS createdAt, updated_at AS updatedAt`;

const RESOURCE = 'faults';

/** Statuses in which a fault counts as repaired (for resolvedAt and the MTTR). */
function isDone(status: FaultView['status']): boolean {
  return status === 'resolved' || status === 'closed';
}

export class FaultService {
  private readonly list;
  private readonly byId: Database.Statement;
  private readonly insert: Database.Statement;
  private readonly save: Database.Statement;
  private readonly remove: Database.Statement;
  private readonly recount: Database.Statement;
  private readonly storeStats: Database.Statement;
  private readonly readStats: Database.Statement;

  constructor(
    private readonly db: Db,
    private readonly audit: AuditLog,
  ) {
    this.list = new PagedList<FaultView>(db.sqlite, 'faults', COLUMNS, 'reported_at DESC, id DESC');
    this.byId = db.sqlite.prepare(`SELECT ${COLUMNS} FROM faults WHERE id = ?`);
    this.insert = db.sqlite.prepare(
      `INSERT INTO faults (device, code, description, severity, status, area, assignee, reported_at, resolved_at, created_at, updated_at)
       VALUES (@device, @code, @description, @severity, @status, @area, @assignee, @reportedAt, @resolvedAt, @updatedAt, @updatedAt)`,
    );
    this.save = db.sqlite.prepare(
      `UPDATE faults SET device = @device, code = @code, description = @description, severity = @severity, status = @status, area = @area,
         assignee = @assignee, reported_at = @reportedAt, resolved_at = @resolvedAt, updated_at = @updatedAt
       WHERE id = @id`,
    );
    this.remove = db.sqlite.prepare('DELETE FROM faults WHERE id = ?');
    // Only run at start (recountStats); each write then applies its own before/after delta, O(1) instead of a table scan.
    // unixepoch(..., 'subsec') keeps milliseconds, the same arithmetic as repairHours() below.
    this.recount = db.sqlite.prepare(
      `SELECT count(*) AS total,
         coalesce(sum(status = 'open'), 0) AS open, coalesce(sum(status = 'in_progress'), 0) AS inProgress,
         coalesce(sum(status = 'resolved'), 0) AS resolved, coalesce(sum(status = 'closed'), 0) AS closed,
         coalesce(sum(severity = 'low'), 0) AS low, coalesce(sum(severity = 'medium'), 0) AS medium,
         coalesce(sum(severity = 'high'), 0) AS high, coalesce(sum(severity = 'critical'), 0) AS critical,
         avg(CASE WHEN status IN ('resolved', 'closed') AND resolved_at IS NOT NULL
             THEN (unixepoch(resolved_at, 'subsec') - unixepoch(reported_at, 'subsec')) / 3600.0 END) AS mttrHours
       FROM faults`,
    );
    this.storeStats = db.sqlite.prepare(
      `INSERT INTO fault_stats (id, total, open, in_progress, resolved, closed, by_severity, mttr_hours, updated_at)
       VALUES (1, @total, @open, @inProgress, @resolved, @closed, @bySeverity, @mttrHours, @updatedAt)
       ON CONFLICT (id) DO UPDATE SET total = excluded.total, open = excluded.open, in_progress = excluded.in_progress,
         resolved = excluded.resolved, closed = excluded.closed, by_severity = excluded.by_severity,
         mttr_hours = excluded.mttr_hours, updated_at = excluded.updated_at`,
    );
    this.readStats = db.sqlite.prepare(
      `SELECT total, open, in_progress AS inProgress, resolved, closed, by_severity AS bySeverity, mttr_hours AS mttrHours, updated_at AS updatedAt
       FROM fault_stats WHERE id = 1`,
    );
  }

  page(filters: FaultListFilters): PageResult<FaultView> {
    return this.list.page(
      [
        ...oneOf('status', 'status', filters.status),
        ...oneOf('severity', 'severity', filters.severity),
        ...equals('area', 'area', filters.area),
        ...contains(['device', 'code', 'description', 'assignee'], filters.q),
        ...timeWindow('reported_at', filters.from, filters.to),
      ],
      filters.page,
      filters.pageSize,
    );
  }

  get(id: number): FaultView {
    const row = this.byId.get(id) as FaultView | undefined;
    if (!row) throw new NotFound('Fault not found');
    return row;
  }

  stats(): FaultStatsView {
    const row = this.snapshot() ?? this.recountStats();
    // The row keeps full precision (later deltas build on it); a ten-thousandth of an hour (0.36 s) is finer than anyone reads an MTTR.
    return { ...row, mttrHours: row.mttrHours === null ? null : Math.round(row.mttrHours * 10_000) / 10_000 };
  }

  /**
   * Rebuilds the snapshot from the table. Run once when the service starts, so rows that changed outside this
   * service (a restored backup, a manual edit) cannot leave the deltas building on a wrong base.
   */
  recountStats(): FaultStatsView {
    return this.db.sqlite.transaction(() => {
      const counts = this.recount.get() as Record<'total' | 'open' | 'inProgress' | 'resolved' | 'closed' | 'low' | 'medium' | 'high' | 'critical', number> & {
        mttrHours: number | null;
      };
      const stats: FaultStatsView = {
        total: counts.total,
        open: counts.open,
        inProgress: counts.inProgress,
        resolved: counts.resolved,
        closed: counts.closed,
        bySeverity: { low: counts.low, medium: counts.medium, high: counts.high, critical: counts.critical },
        mttrHours: counts.mttrHours,
        updatedAt: new Date().toISOString(),
      };
      this.storeStats.run({ ...stats, bySeverity: JSON.stringify(stats.bySeverity) });
      return stats;
    })();
  }

  create(input: FaultCreateInput, actor: Actor): FaultView {
    return this.db.sqlite.transaction(() => {
      const now = new Date().toISOString();
      const status = input.status ?? 'open';
      const fault = {
        device: input.device,
        code: input.code ?? null,
        description: input.description ?? '',
        severity: input.severity,
        status,
        area: input.area ?? null,
        assignee: input.assignee ?? null,
        reportedAt: input.reportedAt ? new Date(input.reportedAt).toISOString() : now,
        resolvedAt: isDone(status) ? now : null,
        updatedAt: now,
      };
      assertChronology(fault);
      const created = this.get(Number(this.insert.run(fault).lastInsertRowid));
      this.applyToStats(null, created, now);
      this.audit.record({ actor, action: 'create', resource: RESOURCE, resourceId: created.id, after: created });
      return created;
    })();
  }

  /** Partial update. resolvedAt is stamped on the move into resolved/closed, kept between them, cleared on reopening. */
  update(id: number, input: FaultUpdateInput, actor: Actor): FaultView {
    return this.db.sqlite.transaction(() => {
      // Unknown fields are dropped by the body schema: a body of nothing but unknown fields arrives here empty.
      if (Object.keys(input).length === 0) throw new BadRequest('Invalid body', [{ path: 'body', message: 'must contain at least one writable field' }]);
      const before = this.get(id);
      const now = new Date().toISOString();
      const next: FaultView = {
        ...before,
        ...(input.device !== undefined && { device: input.device }),
        ...(input.code !== undefined && { code: input.code }),
        ...(input.description !== undefined && { description: input.description }),
        ...(input.severity !== undefined && { severity: input.severity }),
        ...(input.status !== undefined && { status: input.status }),
        ...(input.area !== undefined && { area: input.area }),
        ...(input.assignee !== undefined && { assignee: input.assignee }),
        ...(input.reportedAt !== undefined && { reportedAt: new Date(input.reportedAt).toISOString() }),
      };
      if (isDone(next.status) && !isDone(before.status)) next.resolvedAt = now;
      if (!isDone(next.status)) next.resolvedAt = null;
      assertChronology(next);
      const changes = auditChanges(before, next);
      if (!changes) return before;
      this.save.run({ ...next, updatedAt: now });
      const after = this.get(id);
      this.applyToStats(before, after, now);
      this.audit.record({ actor, action: 'update', resource: RESOURCE, resourceId: id, ...changes });
      return after;
    })();
  }

  delete(id: number, actor: Actor): void {
    this.db.sqlite.transaction(() => {
      const before = this.get(id);
      this.remove.run(id);
      this.applyToStats(before, null, new Date().toISOString());
      this.audit.record({ actor, action: 'delete', resource: RESOURCE, resourceId: id, before });
    })();
  }

  private snapshot(): FaultStatsView | undefined {
    const row = this.readStats.get() as (Omit<FaultStatsView, 'bySeverity'> & { bySeverity: string }) | undefined;
    return row && { ...row, bySeverity: JSON.parse(row.bySeverity) };
  }

  /**
   * Must run inside the caller's transaction, after its write: the snapshot and the table commit together or not at all.
   * Takes the old row out and puts the new one in. Counts are exact integers; the MTTR goes through its sum, whose
   * float error (~1e-16 relative per write) stays far below the 4 decimals shown.
   */
  private applyToStats(before: FaultView | null, after: FaultView | null, now: string): void {
    const stats = this.snapshot();
    // No row to build on (deleted by hand): a recount already sees this write.
    if (!stats) return void this.recountStats();
    let repairHoursSum = stats.mttrHours === null ? 0 : stats.mttrHours * (stats.resolved + stats.closed);
    for (const [row, sign] of [
      [before, -1],
      [after, 1],
    ] as const) {
      if (!row) continue;
      stats.total += sign;
      stats[STATUS_COUNTER[row.status]] += sign;
      stats.bySeverity[row.severity] += sign;
      if (isDone(row.status) && row.resolvedAt) repairHoursSum += sign * repairHours(row.reportedAt, row.resolvedAt);
    }
    const repaired = stats.resolved + stats.closed;
    this.storeStats.run({
      ...stats,
      bySeverity: JSON.stringify(stats.bySeverity),
      mttrHours: repaired > 0 ? repairHoursSum / repaired : null,
      updatedAt: now,
    });
  }
}

const STATUS_COUNTER = { open: 'open', in_progress: 'inProgress', resolved: 'resolved', closed: 'closed' } as const;

function repairHours(reportedAt: string, resolvedAt: string): number {
  return (Date.parse(resolvedAt) - Date.parse(reportedAt)) / 3_600_000;
}

function assertChronology(fault: { reportedAt: string; resolvedAt: string | null }): void {
  if (fault.resolvedAt !== null && fault.reportedAt > fault.resolvedAt) {
    throw new BadRequest('Invalid body', [{ path: 'body.reportedAt', message: 'must not be later than resolvedAt (the time the fault was resolved)' }]);
  }
}
