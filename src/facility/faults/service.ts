// Faults and their stats snapshot: every write updates the snapshot row inside its own synchronous transaction.
import { desc, eq, sql } from 'drizzle-orm';
import type { Actor, AuditLog } from '../../platform/db/auditTrail.ts';
import { AuditedTable, type RowOf } from '../../platform/db/auditedTable.ts';
import type { Db } from '../../platform/db/client.ts';
import { Kept } from '../../platform/db/kept.ts';
import { contains, equals, oneOf, slot, timeWindow, type PageResult } from '../../platform/db/listQuery.ts';
import { faults, faultStats } from '../../platform/db/schema/index.ts';
import { BadRequest } from '../../platform/errors.ts';
import type { FaultCreateInput, FaultListFilters, FaultStatsView, FaultUpdateInput, FaultView } from './schemas.ts';
import { round } from '../../platform/numbers.ts';

type FaultRow = RowOf<typeof faults>;

/** Statuses in which a fault counts as repaired (for resolvedAt and the MTTR). */
function isDone(status: FaultView['status']): boolean {
  return status === 'resolved' || status === 'closed';
}

const sumWhere = (condition: ReturnType<typeof sql>) => sql<number>`coalesce(sum(${condition}), 0)`;

export class FaultService {
  private readonly table;
  private readonly recount;
  private readonly storeStats;
  private readonly readStats;
  /**
   * Whether the snapshot row can be built on: kept (a single `true`) until another connection commits, since emsctl, a
   * manual SQL fix or a restore may change faults without the deltas. This connection's fault writes keep the row
   * current themselves (applyToStats), so the cache reads no table of this connection: only the other half of the rule.
   */
  private readonly rowCurrent: Kept<true>;

  constructor(
    private readonly db: Db,
    audit: AuditLog,
  ) {
    this.table = new AuditedTable(db, audit, faults, {
      resource: 'faults',
      notFound: 'Fault not found',
      orderBy: [desc(faults.reportedAt), desc(faults.id)],
      // resolvedAt is stamped on the move into resolved/closed, kept between them, cleared on reopening.
      lifecycle: (next, before, now) => ({ ...next, resolvedAt: !isDone(next.status) ? null : before && isDone(before.status) ? next.resolvedAt : now }),
      check: assertChronology,
      afterWrite: (before, after, now) => this.applyToStats(before, after, now),
    });
    // Only run at start (recountStats); each write then applies its own before/after delta, O(1) instead of a table scan.
    // unixepoch(..., 'subsec') keeps milliseconds, the same arithmetic as repairHours() below.
    this.recount = db.orm
      .select({
        total: sql<number>`count(*)`,
        open: sumWhere(sql`${faults.status} = 'open'`),
        inProgress: sumWhere(sql`${faults.status} = 'in_progress'`),
        resolved: sumWhere(sql`${faults.status} = 'resolved'`),
        closed: sumWhere(sql`${faults.status} = 'closed'`),
        low: sumWhere(sql`${faults.severity} = 'low'`),
        medium: sumWhere(sql`${faults.severity} = 'medium'`),
        high: sumWhere(sql`${faults.severity} = 'high'`),
        critical: sumWhere(sql`${faults.severity} = 'critical'`),
        mttrHours: sql<number | null>`avg(CASE WHEN ${faults.status} IN ('resolved', 'closed') AND ${faults.resolvedAt} IS NOT NULL
          THEN (unixepoch(${faults.resolvedAt}, 'subsec') - unixepoch(${faults.reportedAt}, 'subsec')) / 3600.0 END)`,
      })
      .from(faults)
      .prepare();
    const stored = {
      total: slot('total'),
      open: slot('open'),
      inProgress: slot('inProgress'),
      resolved: slot('resolved'),
      closed: slot('closed'),
      bySeverity: slot('bySeverity'),
      mttrHours: slot('mttrHours'),
      updatedAt: slot('updatedAt'),
    };
    this.storeStats = db.orm
      .insert(faultStats)
      .values({ id: 1, ...stored })
      .onConflictDoUpdate({ target: faultStats.id, set: stored })
      .prepare();
    this.readStats = db.orm.select().from(faultStats).where(eq(faultStats.id, 1)).prepare();
    this.rowCurrent = new Kept(db.sqlite, { name: 'faults.statsRowCurrent', tables: [], max: 1 });
  }

  page(filters: FaultListFilters): PageResult<FaultView> {
    return this.table.page(
      [
        ...oneOf(faults.status, 'status', filters.status),
        ...oneOf(faults.severity, 'severity', filters.severity),
        ...equals(faults.area, 'area', filters.area),
        ...contains([faults.device, faults.code, faults.description, faults.assignee], filters.q),
        ...timeWindow(faults.reportedAt, filters.from, filters.to),
      ],
      filters.page,
      filters.pageSize,
    );
  }

  get(id: number): FaultView {
    return this.table.get(id);
  }

  stats(): FaultStatsView {
    // A recount (a write) when another connection committed since the last one; else the row is read as it stands.
    const row = (this.rowCurrent.has('row') ? this.snapshot() : undefined) ?? this.recountStats();
    // The row keeps full precision (later deltas build on it); a ten-thousandth of an hour (0.36 s) is finer than anyone reads an MTTR.
    return { ...row, mttrHours: row.mttrHours === null ? null : round(row.mttrHours, 4) };
  }

  /**
   * Rebuilds the snapshot from the table. Run once when the service starts, so rows that changed outside this
   * service (a restored backup, a manual edit) cannot leave the deltas building on a wrong base.
   */
  recountStats(): FaultStatsView {
    let stats: FaultStatsView | undefined;
    // The row is current as of before the recount: a commit elsewhere while it runs drops the mark again.
    this.rowCurrent.clear();
    this.rowCurrent.get('row', () => {
      stats = this.recountRow();
      return true;
    });
    return stats!;
  }

  /** The recount itself; inside a write's transaction nothing is marked (it may still roll back). */
  private recountRow(): FaultStatsView {
    return this.table.transaction(() => {
      const { low, medium, high, critical, ...counts } = this.recount.get()!;
      const stats: FaultStatsView = { ...counts, bySeverity: { low, medium, high, critical }, updatedAt: new Date().toISOString() };
      this.store(stats);
      return stats;
    });
  }

  create(input: FaultCreateInput, actor: Actor): FaultView {
    return this.table.create({ ...input, reportedAt: input.reportedAt && new Date(input.reportedAt).toISOString() }, actor);
  }

  update(id: number, input: FaultUpdateInput, actor: Actor): FaultView {
    return this.table.update(id, { ...input, reportedAt: input.reportedAt && new Date(input.reportedAt).toISOString() }, actor);
  }

  delete(id: number, actor: Actor): void {
    this.table.delete(id, actor);
  }

  private snapshot(): FaultStatsView | undefined {
    const row = this.readStats.get();
    if (!row) return undefined;
    const { id: _id, bySeverity, ...counts } = row;
    return { ...counts, bySeverity: { low: 0, medium: 0, high: 0, critical: 0, ...bySeverity } };
  }

  private store(stats: FaultStatsView): void {
    this.storeStats.run({ ...stats, bySeverity: JSON.stringify(stats.bySeverity) });
  }

  /**
   * Must run inside the caller's transaction, after its write: the snapshot and the table commit together or not at all.
   * Takes the old row out and puts the new one in. Counts are exact integers; the MTTR goes through its sum, whose
   * float error (~1e-16 relative per write) stays far below the 4 decimals shown.
   */
  private applyToStats(before: FaultRow | null, after: FaultRow | null, now: string): void {
    // Inside the write's transaction: a kept mark still answers; a recount here is not marked (the next stats() recounts once more).
    const stats = this.rowCurrent.has('row') ? this.snapshot() : undefined;
    // No row to build on (deleted by hand), or faults changed through another connection: a recount already sees this write.
    if (!stats) return void this.recountRow();
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
    this.store({ ...stats, mttrHours: repaired > 0 ? repairHoursSum / repaired : null, updatedAt: now });
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
